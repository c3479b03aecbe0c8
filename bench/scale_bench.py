"""The scale bench's scenarios (bench/run.py): the data made once, the loopback server, each pytest run as a watched
subprocess beside the plain clients, the groups in order, the raw figures kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from process_monitor import _machine_busy, run_monitored
from scale_settings import CONC, DEFAULT_GROUPS, HERE, RUN, LATENCY, N_HUGE, N_LARGE, N_MEM, N_SMALL, PRO_HARNESS_4K, PRO_THUMB_SAMPLE, PY, REPO, SUITES_OF
from scale_tables import render, render_pro


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work = Path(args.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run: bytecode (and pytest's rewritten plugin modules) cached
        self.env["PYTHONHASHSEED"] = "0"
        paths = [args.pythonpath] if args.pythonpath else []
        paths.append(str(HERE))  # bench_timing, the plugin that times the run phase
        self.env["PYTHONPATH"] = os.pathsep.join(paths + [self.env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.options = _guitest_options(self.env)
        self.results: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": {}}
        self.server: subprocess.Popen[bytes] | None = None
        self.port = 0

    # data and server

    def suites(self, groups: set[str]) -> dict[str, Path]:
        """The generated suites the ``groups`` need (made once into --work, then reused)."""
        needed = {name for g in groups for name in SUITES_OF.get(g, [])}
        specs = {
            "small": (N_SMALL, "small", None),
            "large": (N_LARGE, "large", None),
            "huge": (N_HUGE, "small", 8),
            "mem": (N_MEM, "small", 8),
        }
        out = {}
        for name, (n, kind, images) in specs.items():
            folder = self.work / f"bench_{name}"
            out[name] = folder
            if name not in needed:
                continue
            marker = folder / ".made"
            if marker.exists() and marker.read_text() == f"{n} {kind}":
                continue
            cmd = [PY, str(HERE / "make_data.py"), str(folder), "--cases", str(n), "--kind", kind, "--name", f"bench_{name}"]
            if images:
                cmd += ["--images", str(images)]
            print(f"generating {folder} ({n} {kind} cases) ...", flush=True)
            subprocess.run(cmd, check=True, env=self.env)
            marker.write_text(f"{n} {kind}")
        return out

    def start_server(self, latency: float = LATENCY) -> None:
        port_file = self.work / "server.port"
        port_file.unlink(missing_ok=True)
        self.server = subprocess.Popen([PY, str(HERE / "server.py"), "--port-file", str(port_file), "--latency", str(latency), "--max-seconds", "7200"], stderr=subprocess.DEVNULL)
        sys.path.insert(0, str(HERE))
        from server import wait_port

        self.port = wait_port(str(port_file))

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(10)

    def server_stats(self, reset: bool = True) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as r:
            stats = json.loads(r.read())
        if reset:
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{self.port}/stats/reset", method="POST"), timeout=5).read()
        return stats

    def quiet(self) -> None:
        """Wait (at most --quiet-wait seconds) until other programs use less than --quiet-cores of CPU over a second."""
        deadline = time.monotonic() + self.args.quiet_wait
        while True:
            b0 = _machine_busy()
            time.sleep(1.0)
            used = _machine_busy() - b0
            if used < self.args.quiet_cores or time.monotonic() > deadline:
                self.results.setdefault("quiet", []).append(round(used, 2))
                return

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # the full-size scenario

    def pro_suite(self) -> Path:
        """The full-size ScreenSpot-Pro suite (bench/make_pro.py; cached in --work, minutes the first time)."""
        folder = self.work / "bench_pro"
        info = self.work / "bench_pro.json"
        print(f"full-size suite {folder} (generated once: minutes the first time) ...", flush=True)
        t = time.perf_counter()
        limit = ["--limit", str(self.args.pro_cases)] if self.args.pro_cases else []
        out = subprocess.run([PY, str(HERE / "make_pro.py"), str(folder), "--name", "bench_pro", *limit], check=True, env=self.env, capture_output=True, text=True).stdout
        made = json.loads(out.strip().splitlines()[-1])
        if made["made"]:  # keep the figures of the run that generated the images, for later runs that reuse them
            info.write_text(json.dumps({"made": made["made"], "generated_s": round(time.perf_counter() - t, 1), "made_cpu_s": made["made_cpu_s"]}))
        kept = json.loads(info.read_text()) if info.exists() else {}
        self.results["pro_data"] = {**made, **{k: kept.get(k) for k in ("made", "generated_s", "made_cpu_s")}}
        print(f"  {self.results['pro_data']}", flush=True)
        return folder

    def plain(self, name: str, suite: Path, client: str, concurrency: int = CONC) -> dict[str, Any]:
        """The plain-client reference (bench/plain_client.py), timed from the outside like a pytest run."""
        out_file = self.work / f"plain_{name}.json"
        out_file.unlink(missing_ok=True)
        cmd = [PY, str(HERE / "plain_client.py"), str(suite.relative_to(self.work)), "--base-url", self.base_url, "--concurrency", str(concurrency), "--client", client, "--json", str(out_file)]
        self.quiet()
        self.server_stats(reset=True)
        r = run_monitored(cmd, self.env, self.work, {"server": self.server.pid} if self.server else None, timeout=1800)
        r["server"] = self.server_stats(reset=True)
        r["plain"] = json.loads(out_file.read_text()) if out_file.exists() else {}
        r["shown"] = " ".join(_shell(c) for c in _display(cmd, self.base_url))
        self.results["runs"][name] = r
        print(
            f"  {name}: {r['wall_s']:.2f} s (loop {r['plain'].get('seconds', float('nan')):.2f} s), rc {r['rc']}, CPU {r['tree_cpu_s']:.1f} s, server {r['extra_cpu_s'].get('server', 0):.1f} s, others' CPU {r['others_cpu_s']:.1f} s",
            flush=True,
        )
        return r

    def check_pictures(self, name: str, suite: Path) -> None:
        """Does the HTML report of run ``name`` show every case with a picture (a data URI, or a link to a file that exists)?"""
        import re
        import urllib.parse

        page = (self.work / "reports" / f"{suite.name}.html").read_text("utf-8")
        srcs = re.findall(r'<figure class="shot"><img src="([^"]*)"', page)
        base = self.work / "reports"
        embedded = sum(s.startswith("data:image/") for s in srcs)
        linked_ok = sum((base / urllib.parse.unquote(s)).is_file() for s in srcs if not s.startswith("data:"))
        self.results["runs"][name]["pictures"] = {"cards": page.count('<article class="card'), "embedded": embedded, "linked_existing": linked_ok, "html_mb": round(len(page.encode()) / 2**20, 1)}

    def pro(self) -> None:
        """Full-size ScreenSpot-Pro runs at default settings, interleaved with the plain client, then the picture options."""
        suite = self.pro_suite()
        urlm = ["--model=openai:bench", f"--base-url={self.base_url}", f"--concurrency={CONC}"]
        print(f"pro: {self.results['pro_data']['cases']} full-size cases, 100 ms replies, interleaved repeats of plain client and guitest", flush=True)
        for i in range(1, self.args.repeat + 1):
            self.plain(f"pro_plain_openai_r{i}", suite, "openai")
            self.pytest(f"pro_default_n0_r{i}", suite, urlm, 1, timeout=1800)
            self.check_pictures(f"pro_default_n0_r{i}", suite)
            self.plain(f"pro_plain_httpx_r{i}", suite, "httpx")
            self.pytest(f"pro_default_n2_r{i}", suite, [*urlm, "-n", "2"], 1, timeout=1800)
            self.check_pictures(f"pro_default_n2_r{i}", suite)
            self.plain(f"pro_plain_threads_r{i}", suite, "threads")
        if "--report-images" in self.options:
            for n in ("0", "2"):
                self.plain(f"pro_plain_openai_embed_n{n}", suite, "openai")
                self.pytest(f"pro_embed_n{n}", suite, [*urlm, "-n", n, "--report-images=embed"], 1, timeout=3600)
                self.check_pictures(f"pro_embed_n{n}", suite)
        if self.args.before:
            tree = self.before_tree(self.args.before)
            saved = self.env["PYTHONPATH"]
            self.env["PYTHONPATH"] = os.pathsep.join([str(tree), saved])
            try:
                self.plain("pro_plain_openai_before", suite, "openai")
                self.pytest("pro_before_n0", suite, urlm, 1, timeout=3600)
                self.check_pictures("pro_before_n0", suite)
            finally:
                self.env["PYTHONPATH"] = saved
        self.pro_endpoints(suite)
        d = self.child("pro_thumbs", "thumbs", ["--suite", str(suite), "--n", str(PRO_THUMB_SAMPLE)], timeout=900)
        print(f"  thumbnails, CPU ms per image: {d['cpu_ms_per_image']}", flush=True)
        for thumbs in (False, True):
            name = f"pro_harness_4k{'_thumb' if thumbs else ''}"
            d = self.child(
                name,
                "harness",
                ["--suite", str(suite), "--model", "openai:bench", "--profile", "generic", "--resize", "auto", "--only-size", "3840x2160", "--n", str(PRO_HARNESS_4K)]
                + (["--thumbnails"] if thumbs else []),
                timeout=900,
            )
            print(f"  {name}: {d['cpu_ms_per_case']:.0f} ms CPU per 4K case, {d['stages_ms']}", flush=True)

    def extra_server(self, tag: str) -> tuple[subprocess.Popen[bytes], int]:
        """A second bench server (the same 100 ms replies) for the several-endpoint runs."""
        from server import wait_port

        port_file = self.work / f"server_{tag}.port"
        port_file.unlink(missing_ok=True)
        proc = subprocess.Popen([PY, str(HERE / "server.py"), "--port-file", str(port_file), "--latency", str(LATENCY), "--max-seconds", "3600"], stderr=subprocess.DEVNULL)
        return proc, wait_port(str(port_file))

    def pro_endpoints(self, suite: Path) -> None:
        """One full-size run over two endpoints (``--base-url`` twice, ``--concurrency`` per endpoint: 16 each, the 32 of
        the single-endpoint runs), ``-n 2``: both up; the second dead from the start (a port nobody listens on); the
        second killed (SIGKILL) once it has answered a sixth of the cases. Each run's report must hold every case, none
        an error; the replies per endpoint come from the report (``run.endpoints``)."""
        import socket
        import urllib.request

        def free_port() -> int:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                return sock.getsockname()[1]

        n_cases = self.results["pro_data"]["cases"]
        print("pro: two endpoints, -n 2, --concurrency=16 each", flush=True)
        for scenario in ("both", "dead", "killed"):
            name = f"pro_endpoints_{scenario}"
            second, port = (None, free_port()) if scenario == "dead" else self.extra_server(scenario)
            killer = None
            if scenario == "killed":

                def kill_after(proc: subprocess.Popen[bytes] = second, url: str = f"http://127.0.0.1:{port}/stats") -> None:
                    while proc.poll() is None:
                        try:
                            with urllib.request.urlopen(url, timeout=5) as r:
                                if json.loads(r.read())["requests"] >= n_cases // 6:
                                    proc.kill()
                                    return
                        except OSError:
                            return
                        time.sleep(0.05)

                killer = threading.Thread(target=kill_after, daemon=True)
            extra = ["--model=openai:bench", f"--base-url={self.base_url}", f"--base-url=http://127.0.0.1:{port}/v1", "--concurrency=16", "-n", "2"]
            try:
                if killer:
                    killer.start()  # it waits for the run's requests: the second server has none before it starts
                r = self.pytest(name, suite, extra, 1, timeout=1800)
            finally:
                if second is not None:
                    second.kill()
                    second.wait(10)
            report = json.loads((self.work / "reports" / f"{suite.name}.json").read_text())
            verdicts: dict[str, int] = {}
            for case in report["cases"]:
                verdicts[case["verdict"]] = verdicts.get(case["verdict"], 0) + 1
            urls = {self.base_url: "first", f"http://127.0.0.1:{port}/v1": "second"}
            r["endpoints"] = [{**e, "which": urls.get(e["url"], e["url"])} for e in report["run"].get("endpoints", [])]
            r["verdicts"] = verdicts
            r["cases"] = len(report["cases"])
            print(f"  {name}: {r['cases']} cases, verdicts {verdicts}, replies {[(e['which'], e['replies'], e['failures'], bool(e['down'])) for e in r['endpoints']]}", flush=True)

    def before_tree(self, rev: str) -> Path:
        """guitest/ as it was at ``rev`` (git archive into --work), to run the same scenario with the code before a change."""
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], check=True, capture_output=True, text=True).stdout.strip()
        tree = self.work / f"before-{commit}"
        if not (tree / "guitest" / "plugin.py").exists():
            tree.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "guitest"], check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        self.results["before"] = commit
        return tree

    # runs

    def startup(self, name: str, suite: Path, extra: list[str], repeat: int = 1) -> dict[str, Any]:
        """The same command with every case deselected (``--deselect SUITE/suite.yaml``, a node id prefix):
        interpreter, plugins, model adapter, xdist workers and collection, no case run.
        (``--collect-only`` would not do for ``-n 2``: xdist switches itself off under it.)"""
        return self.pytest(name, suite, [*extra, f"--deselect={suite.relative_to(self.work)}/suite.yaml"], repeat)

    def pytest(self, name: str, suite: Path, extra: list[str], repeat: int = 1, timeout: float = 180.0, guitest: bool = True) -> dict[str, Any]:
        cmd = [PY, "-m", "pytest", str(suite.relative_to(self.work)), "-q", "-p", "no:cacheprovider", "-p", "bench_timing", *([f"--report-dir={self.work / 'reports'}"] if guitest else []), *extra]
        runs = []
        for i in range(repeat):
            run_cmd = list(cmd)
            if guitest and "--cache" in self.options and not any(a.startswith("--cache") for a in extra):
                # guitest's response cache is on by default: a fresh, empty one per run, so every request
                # reaches the server and the cache's cost (lookup, write) is part of the figure
                cache_dir = self.work / "cache" / f"{name}-{i}"
                shutil.rmtree(cache_dir, ignore_errors=True)
                run_cmd.append(f"--cache-dir={cache_dir}")
            timing_file = self.work / f"timing_{name}_{i}.json"
            timing_file.unlink(missing_ok=True)
            self.env["GUITEST_BENCH_TIMING"] = str(timing_file)
            self.quiet()
            if self.server:
                self.server_stats(reset=True)
            r = run_monitored(run_cmd, self.env, self.work, {"server": self.server.pid} if self.server else None, timeout)
            if self.server:
                r["server"] = self.server_stats(reset=True)
            try:
                r["timing"] = json.loads(timing_file.read_text())
            except (OSError, ValueError):
                r["timing"] = {}
            runs.append(r)
            print(
                f"  {name}: {r['wall_s']:.2f} s (run phase {r['timing'].get('run_s', float('nan')):.2f} s), rc {r['rc']}, tree CPU {r['tree_cpu_s']:.1f} s, others' CPU {r['others_cpu_s']:.1f} s: {' | '.join(r['tail'][-1:])}",
                flush=True,
            )
        best = min(runs, key=lambda r: r["timing"].get("run_s", r["wall_s"]) if r["timing"].get("run_s") else r["wall_s"])
        best = dict(
            best, walls=[round(r["wall_s"], 2) for r in runs], run_phases=[round(r["timing"].get("run_s", -1), 2) for r in runs], shown=" ".join(_shell(c) for c in _display(cmd, self.base_url))
        )
        self.results["runs"][name] = best
        return best

    def child(self, name: str, mode: str, extra: list[str], timeout: float = 180.0) -> dict[str, Any]:
        out_file = self.work / f"child_{name}.json"
        cmd = [PY, str(RUN), "--child", mode, "--json", str(out_file), *extra]
        self.quiet()
        r = run_monitored(cmd, self.env, self.work, {"server": self.server.pid} if self.server else None, timeout)
        if r["rc"] != 0:
            raise RuntimeError(f"{name} failed: {r['tail']}")
        data = json.loads(out_file.read_text())
        data["monitor"] = {k: r[k] for k in ("wall_s", "tree_cpu_s", "roles", "others_cpu_s", "extra_cpu_s")}
        data["shown"] = " ".join(_shell(c) for c in _display(cmd, self.base_url))
        self.results["runs"][name] = data
        return data

    def run(self) -> None:
        only = set(self.args.only or DEFAULT_GROUPS)
        suites = self.suites(only)
        rep = self.args.repeat
        model = ["--model=openai:bench", "--base-url={URL}"]
        self.start_server()
        try:
            if "reference" in only:
                print("reference: a plain asyncio client, same requests", flush=True)
                for client in ("openai", "httpx"):
                    for conc in (CONC, 2 * CONC):
                        best = None
                        for _ in range(rep):
                            d = self.child(
                                f"ref_{client}_c{conc}",
                                "reference",
                                ["--suite", str(suites["small"]), "--base-url", self.base_url, "--client", client, "--n", str(N_SMALL), "--concurrency", str(conc)],
                            )
                            best = d if best is None or d["seconds"] < best["seconds"] else best
                            print(f"  {client} c={conc}: {d['seconds']:.2f} s, client CPU {d['cpu_s']:.2f} s", flush=True)
                        self.results["runs"][f"ref_{client}_c{conc}"] = best
            if "throughput" in only:
                print("throughput: 1000 small cases, 100 ms replies", flush=True)
                urlm = [m.replace("{URL}", self.base_url) for m in model]
                self.pytest("collect_only_n0", suites["small"], ["--collect-only"], 1)
                self.startup("startup_n0", suites["small"], urlm, rep)
                self.startup("startup_n2", suites["small"], [*urlm, "-n", "2"], rep)
                plain = self.work / "plain_pytest"
                plain.mkdir(exist_ok=True)
                (plain / "test_plain.py").write_text(f"import pytest\n\n\n@pytest.mark.parametrize('i', range({N_SMALL}))\ndef test_nothing(i):\n    pass\n")
                self.pytest("plain_pytest_n0", plain, ["-p", "no:guitest"], 1, guitest=False)
                self.pytest("plain_pytest_n2", plain, ["-p", "no:guitest", "-n", "2"], 1, guitest=False)
                self.pytest("oracle_n0", suites["small"], ["--model=oracle"], 1)
                self.pytest("oracle_n2", suites["small"], ["--model=oracle", "-n", "2"], 1)
                # the default client (stdlib since it met the target; the official openai client before), then each client by name
                self.pytest("default_n0_c32", suites["small"], [*urlm, f"--concurrency={CONC}"], rep)
                self.pytest("default_n0_c64", suites["small"], [*urlm, f"--concurrency={2 * CONC}"], 1)
                if "--cache" in self.options:
                    self.pytest("default_n0_c32_cache_off", suites["small"], [*urlm, f"--concurrency={CONC}", "--cache=off"], rep)
                self.pytest("default_n2_c32", suites["small"], [*urlm, f"--concurrency={CONC}", "-n", "2"], rep)
                self.pytest("default_n2_c16", suites["small"], [*urlm, f"--concurrency={CONC // 2}", "-n", "2"], rep)
                if "--http-client" in self.options:
                    for client in ("openai", "stdlib"):
                        self.pytest(f"{client}_n0_c32", suites["small"], [*urlm, f"--concurrency={CONC}", f"--http-client={client}"], rep)
                        self.pytest(f"{client}_n2_c32", suites["small"], [*urlm, f"--concurrency={CONC}", "-n", "2", f"--http-client={client}"], rep)
                        self.pytest(f"{client}_n2_c16", suites["small"], [*urlm, f"--concurrency={CONC // 2}", "-n", "2", f"--http-client={client}"], rep)
            if "harness" in only:
                print("harness: per-case time over ScreenSpot-Pro-sized screenshots, in-process", flush=True)
                variants = [("generic", "auto"), ("qwen2.5-vl", "auto")] + ([("qwen2.5-vl", "client")] if "--resize" in self.options else [])
                for profile, resize in variants:
                    for thumbs in (False, True):
                        name = f"harness_{profile}{'_client_resize' if resize == 'client' else ''}{'_thumb' if thumbs else ''}"
                        d = self.child(name, "harness", ["--suite", str(suites["large"]), "--model", "openai:bench", "--profile", profile, "--resize", resize] + (["--thumbnails"] if thumbs else []))
                        print(f"  {name}: {d['ms_per_case']:.0f} ms/case ({d['cpu_ms_per_case']:.0f} ms CPU), {d['stages_ms']}, decodes/case {d['decodes_per_case']}", flush=True)
            if "e2e-large" in only:
                print("e2e-large: pytest over the large screenshots against the loopback server", flush=True)
                urlm = [m.replace("{URL}", self.base_url) for m in model]
                self.startup("large_startup_n0", suites["large"], urlm, 1)
                self.startup("large_startup_n2", suites["large"], [*urlm, "-n", "2"], 1)
                self.pytest("large_n0", suites["large"], [*urlm, f"--concurrency={CONC}"], 1)
                self.pytest("large_n2", suites["large"], [*urlm, f"--concurrency={CONC}", "-n", "2"], 1)
            if "collection" in only:
                print("collection: 100,000 cases", flush=True)
                d = self.child("collect_inproc", "collect", ["--suite", str(suites["huge"])])
                print(f"  in-process: read+validate {d['read_and_validate_s']:.1f} s (row checks alone: {d['row_check_s']})", flush=True)
                self.pytest("collect_100k_n0", suites["huge"], ["--collect-only"], 1)
                self.pytest("collect_100k_n0_qq", suites["huge"], ["--collect-only", "-q"], 1)  # -qq: no line per id printed
            if "memory100k" in only:
                print("memory100k: a whole 100,000-case run (oracle), serial and -n 2", flush=True)
                self.pytest("run_100k_oracle_n0", suites["huge"], ["--model=oracle"], 1, timeout=600)
                self.pytest("run_100k_oracle_n2", suites["huge"], ["--model=oracle", "-n", "2"], 1, timeout=900)
            if "memory" in only:
                print("memory: 10,000-case runs, serial and -n 2, to see what running adds per case", flush=True)
                self.startup("mem_10k_startup_n0", suites["mem"], ["--model=oracle"], 1)
                self.pytest("mem_10k_oracle_n0", suites["mem"], ["--model=oracle"], 1)
                self.startup("mem_10k_startup_n2", suites["mem"], ["--model=oracle", "-n", "2"], 1)
                self.pytest("mem_10k_oracle_n2", suites["mem"], ["--model=oracle", "-n", "2"], 1)
            if "report" in only:
                print("report: aggregation of 100,000 results", flush=True)
                d = self.child("report_100k", "report", ["--n", str(N_HUGE)])
                print(f"  {d['seconds']}", flush=True)
            if "pro" in only:
                self.pro()
        finally:
            self.stop_server()
        self.results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self.results["machine"] = machine()
        (self.work / "results.json").write_text(json.dumps(self.results, indent=1, default=str))
        self.write_tables(only)

    def write_tables(self, groups: set[str]) -> None:
        """Print the tables and write them: the full-size scenario to --out-pro, the other groups to --out."""
        if groups - {"pro"}:
            text = render(self.results)
            print(text)
            if not self.args.pythonpath or self.args.out != str(HERE / "results.md"):
                Path(self.args.out).write_text(text)
        if "pro" in groups:
            text = render_pro(self.results)
            print(text)
            Path(self.args.out_pro).write_text(text)


def _guitest_options(env: dict[str, str]) -> set[str]:
    """guitest's command-line options in the tree under test (the bench adapts to options that come and go)."""
    out = subprocess.run([PY, "-m", "pytest", "--help", "-p", "no:cacheprovider"], env=env, capture_output=True, text=True).stdout
    return {w.split("=")[0].rstrip(",") for w in out.split() if w.startswith("--")}


def _display(cmd: list[str], url: str) -> list[str]:
    shown: list[str] = []
    skip = False
    for i, c in enumerate(cmd):
        if skip:
            skip = False
            continue
        if c == "-p" and i + 1 < len(cmd) and cmd[i + 1] == "bench_timing":
            skip = True
            continue
        if c == "--json":
            skip = True
            continue
        if "--report-dir=" in c:
            continue
        if c == PY:
            c = "python"
        shown.append(c.replace(url, "$URL").replace(str(RUN), "bench/run.py").replace(str(HERE) + "/", "bench/"))
    return shown


def _shell(s: str) -> str:
    return s if all(ch.isalnum() or ch in "-_=./:$" for ch in s) else f"'{s}'"


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        info["commit"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "guitest"], capture_output=True, text=True).stdout.strip()
        info["guitest_dirty"] = bool(dirty)
    except OSError:
        pass
    return info
