"""The guitest scale bench: throughput, per-case harness cost, collection and aggregation.

    python bench/run.py                      # the default groups (about 6-10 minutes on 2 cores)
    python bench/run.py --only throughput    # one group: throughput, reference, harness, e2e-large, collection, report
    python bench/run.py --repeat 3           # best of 3 for the timed pytest runs (default 2)
    python bench/run.py --pythonpath DIR     # bench a scratch copy of guitest (DIR holds its guitest/ package)
    python bench/run.py --only pro --repeat 3 --before 5fc758c   # a whole ScreenSpot-Pro-sized run beside plain clients

Data goes to ``--work`` (default ``/tmp/guitest-bench``), generated once by
``bench/make_data.py``; the loopback server is ``bench/server.py``. Every pytest
scenario runs as a subprocess watched by a /proc poller (every 20 ms: the process
tree's CPU time from ``/proc/PID/stat`` and each process's peak RSS ``VmHWM`` from
``/proc/PID/status``, which the kernel keeps, so a late poll still sees the peak),
and the machine's total busy CPU from ``/proc/stat``, to show how much of the
machine other programs took during the run. The table is printed and written to
``bench/results.md`` (``--out``), the raw figures to ``--work``/results.json.

The ``pro`` group (only when asked for: 25-50 minutes) is the full-size scenario: the
1581 real ScreenSpot-Pro rows with screenshots at their real sizes (``bench/make_pro.py``,
3.6 GB generated once into ``--work``), run at default settings serially and with ``-n 2``,
each repeat interleaved with the plain clients of ``bench/plain_client.py``; then the
report's picture options (``--report-images=embed``, and with ``--before REV`` the code of
an earlier commit), what each costs per screenshot, and the harness CPU per 4K case. Its
tables go to ``bench/results-pro.md`` (``--out-pro``), ready for docs/bench.md.

Internal modes (run as subprocesses by the bench, usable alone): ``--child
reference``, ``--child harness``, ``--child collect``, ``--child report``, ``--child thumbs``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PY = sys.executable
CLK = os.sysconf("SC_CLK_TCK")
LATENCY = 0.1
N_SMALL = 1000
N_LARGE = 16
N_HUGE = 100_000
N_MEM = 10_000
N_PRO = 1581  # the rows of ScreenSpot-Pro
CONC = 32
GROUPS = ["reference", "throughput", "harness", "e2e-large", "collection", "memory", "report", "memory100k", "pro"]
DEFAULT_GROUPS = GROUPS[:-2]  # memory100k (a whole 100,000-case run, 3-5 minutes) and pro (15-30 minutes): ask for them
SUITES_OF = {"reference": ["small"], "throughput": ["small"], "harness": ["large"], "e2e-large": ["large"], "collection": ["huge"], "memory100k": ["huge"], "memory": ["mem"]}
PRO_THUMB_SAMPLE = 28  # screenshots of the full-size suite the per-image thumbnail costs are measured on (2 per size)
PRO_HARNESS_4K = 100  # 3840x2160 rows the in-process harness measures
TARGETS = {"throughput": 1.15, "harness_ms": 150.0, "collect_s": 10.0, "worker_rss_mb": 500.0, "report_s": 2.0}


# -- process-tree monitor ------------------------------------------------------------------------


def _children_map() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        out.setdefault(ppid, []).append(int(name))
    return out


def _proc_cpu(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK
    except (OSError, IndexError, ValueError):
        return None


def _proc_hwm(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _proc_role(pid: int, root: int) -> str:
    if pid == root:
        return "main"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return "worker" if ("execnet" in cmd or "sys.stdin" in cmd or "xdist" in cmd) else "other"


def _machine_busy() -> float:
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts[:8]) - idle) / CLK


class Monitor:
    """Polls a process tree: CPU seconds per process, peak RSS per process (VmHWM), roles."""

    def __init__(self, root: int, extra: dict[str, int] | None = None, interval: float = 0.02) -> None:
        self.root = root
        self.extra = extra or {}
        self.interval = interval
        self.cpu: dict[int, float] = {}
        self.hwm: dict[int, int] = {}
        self.role: dict[int, str] = {}
        self.extra_cpu0 = {k: _proc_cpu(p) or 0.0 for k, p in self.extra.items()}
        self.extra_cpu: dict[str, float] = {}
        self.busy0 = _machine_busy()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        kids = _children_map()
        todo, tree = [self.root], []
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(kids.get(pid, ()))
        for pid in tree:
            cpu, hwm = _proc_cpu(pid), _proc_hwm(pid)
            if cpu is not None:
                self.cpu[pid] = max(cpu, self.cpu.get(pid, 0.0))
            if hwm is not None:
                self.hwm[pid] = max(hwm, self.hwm.get(pid, 0))
            if pid not in self.role:
                self.role[pid] = _proc_role(pid, self.root)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._poll()
            self._stop.wait(self.interval)

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        busy = _machine_busy() - self.busy0
        for k, p in self.extra.items():
            self.extra_cpu[k] = (_proc_cpu(p) or 0.0) - self.extra_cpu0[k]
        mine = sum(self.cpu.values()) + sum(self.extra_cpu.values())
        by_role: dict[str, dict[str, float]] = {}
        for pid, role in self.role.items():
            r = by_role.setdefault(role, {"n": 0, "cpu_s": 0.0, "peak_rss_mb": 0.0})
            r["n"] += 1
            r["cpu_s"] += self.cpu.get(pid, 0.0)
            r["peak_rss_mb"] = max(r["peak_rss_mb"], self.hwm.get(pid, 0) / 2**20)
        return {
            "tree_cpu_s": sum(self.cpu.values()),
            "roles": by_role,
            "extra_cpu_s": self.extra_cpu,
            "machine_busy_s": busy,
            "others_cpu_s": max(0.0, busy - mine),
        }


def run_monitored(cmd: list[str], env: dict[str, str], cwd: Path, extra: dict[str, int] | None = None, timeout: float = 180.0) -> dict[str, Any]:
    """Run ``cmd``; wall time, exit code, output tail and the monitor's figures."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mon = Monitor(proc.pid, extra)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        out += f"\n[bench: killed after {timeout} s]"
    wall = time.perf_counter() - t0
    stats = mon.stop()
    stats.update(wall_s=wall, rc=proc.returncode, tail=out.strip().splitlines()[-3:], cmd=cmd)
    return stats


# -- children: in-process measurements ----------------------------------------------------------


def child_reference(args: argparse.Namespace) -> dict[str, Any]:
    """A plain asyncio client doing the same requests: the physical reference."""
    import asyncio
    import base64
    import glob

    images = sorted(glob.glob(os.path.join(args.suite, "data", "imgs", "*.png")))
    uris = ["data:image/png;base64," + base64.b64encode(Path(p).read_bytes()).decode() for p in images]
    base = args.base_url.rstrip("/")

    def messages(i: int) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": uris[i % len(uris)]}}, {"type": "text", "text": f"Where to click: control {i}? Answer: [x, y]"}]}]

    async def timed(one: Any) -> float:
        """Seconds for the N requests ``one(i)`` makes, all started at once (the client's semaphore bounds them)."""
        t = time.perf_counter()
        out = await asyncio.gather(*(one(i) for i in range(args.n)))
        dt = time.perf_counter() - t
        assert all("Answer" in o for o in out)
        return dt

    async def with_openai() -> float:
        import openai

        client = openai.AsyncOpenAI(api_key="EMPTY", base_url=base, max_retries=0)
        sem = asyncio.Semaphore(args.concurrency)

        async def one(i: int) -> str:
            async with sem:
                r = await client.chat.completions.create(model="bench", messages=messages(i), temperature=0, max_tokens=512)  # type: ignore[arg-type]
                return r.choices[0].message.content or ""

        try:
            return await timed(one)
        finally:
            await client.close()

    async def with_httpx() -> float:
        try:
            import httpx2 as httpx  # what this openai release ships with
        except ImportError:
            import httpx  # type: ignore[no-redef]
        client = httpx.AsyncClient(limits=httpx.Limits(max_connections=args.concurrency), timeout=60)
        sem = asyncio.Semaphore(args.concurrency)

        async def one(i: int) -> str:
            async with sem:
                r = await client.post(base + "/chat/completions", json={"model": "bench", "messages": messages(i), "temperature": 0, "max_tokens": 512})
                return r.json()["choices"][0]["message"]["content"]

        try:
            return await timed(one)
        finally:
            await client.aclose()

    c0 = time.process_time()
    seconds = asyncio.run(with_openai() if args.client == "openai" else with_httpx())
    return {"client": args.client, "n": args.n, "concurrency": args.concurrency, "seconds": seconds, "cpu_s": time.process_time() - c0}


def child_harness(args: argparse.Namespace) -> dict[str, Any]:
    """Per-case harness time over the large screenshots: run_case in-process, the model's generate faked.

    Stages are timed by wrapping the functions the case path calls, where it calls them
    (module attributes), with time.perf_counter; decodes are counted by wrapping
    PIL's ImageFile.load (a call that finds tiles to decode is one decode).
    """
    import inspect
    from collections import Counter

    from PIL import ImageFile

    import guitest.case as case_mod
    import guitest.models.base as base_mod
    import guitest.models.openai_api as oa_mod
    import guitest.tasks.grounding as grounding_mod
    from guitest import images as images_mod
    from guitest.datapath import locate
    from guitest.formats import read_suite_samples
    from guitest.models import load_model
    from guitest.models.base import Reply, Settings
    from guitest.suite import load_suite

    timings: dict[str, float] = Counter()
    decodes: Counter[str] = Counter()

    def timed(module: Any, name: str, label: str) -> None:
        fn = getattr(module, name, None)
        if fn is None:
            return

        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                timings[label] += time.perf_counter() - t

        setattr(module, name, wrapper)

    timed(case_mod, "open_image", "open")
    timed(base_mod, "decode_rgb", "decode")
    timed(base_mod, "resized", "resize")
    timed(oa_mod, "as_file", "file as is")
    timed(oa_mod, "encode", "encode")
    timed(oa_mod, "data_uri", "base64")
    timed(grounding_mod, "parse_answer", "parse")
    timed(grounding_mod, "judge", "parse+score")
    thumb = getattr(images_mod, "thumbnail", None)

    load = ImageFile.ImageFile.load

    def counting_load(self: Any) -> Any:
        if getattr(self, "tile", None):
            decodes[getattr(self, "filename", "?")] += 1
        return load(self)

    ImageFile.ImageFile.load = counting_load  # type: ignore[method-assign]

    suite = load_suite(Path(args.suite) / "suite.yaml")
    data_dir = locate(str(suite.folder), suite.data, args.suite, "bench", str(suite.path))
    samples = read_suite_samples(suite, data_dir)
    if args.only_size:  # e.g. the 3840x2160 rows of the full-size suite
        w, h = (int(v) for v in args.only_size.lower().split("x"))
        samples = [s for s in samples if s.size == (w, h)][: args.n] or samples[:0]
        if not samples:
            raise SystemExit(f"no rows of size {args.only_size} in {args.suite}")
    sizing = {"resize": args.resize} if "resize" in Settings.__dataclass_fields__ else {}
    model = load_model(args.model, Settings(base_url="http://127.0.0.1:9/v1", **sizing), profile=args.profile)

    # the body as the tree's lean client makes it: request_body.dumps where openai_api uses it, else json.dumps
    body_module = getattr(oa_mod, "request_body", None)
    encode_body = body_module.dumps if body_module is not None else (lambda p: json.dumps(p, ensure_ascii=False).encode("utf-8"))

    def fake_generate(prompt: Any, image: Any, case: Any) -> Any:
        messages = model.messages(prompt, image)
        t = time.perf_counter()
        encode_body({"model": "bench", "messages": messages, "temperature": 0, "max_tokens": 512})
        timings["request json"] += time.perf_counter() - t
        return Reply(text="Answer: [0.5, 0.5]")

    model.generate = fake_generate  # type: ignore[method-assign]
    takes_thumb = "thumbnail" in inspect.signature(case_mod.run_case).parameters

    def thumbnail_cb(path: str, image: Any) -> str:
        t = time.perf_counter()
        try:
            return thumb(image)  # type: ignore[misc]
        finally:
            timings["thumbnail"] += time.perf_counter() - t

    # warm up (imports, first-call caches) on one case, then measure
    case_mod.run_case(samples[0], model, None)
    timings.clear()
    decodes.clear()
    per_case = []
    sent_sizes = set()
    c0, t0 = time.process_time(), time.perf_counter()
    for sample in samples:
        t = time.perf_counter()
        if args.thumbnails and takes_thumb and thumb is not None:
            result = case_mod.run_case(sample, model, None, thumbnail=thumbnail_cb)
        else:
            result = case_mod.run_case(sample, model, None)
        per_case.append(time.perf_counter() - t)
        assert result["verdict"] != "error", result
        sent_sizes.add(tuple(result.get("sent_size") or ()))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = len(samples)
    images_used = Counter(s.image for s in samples)
    return {
        "request_body": body_module is not None,
        "resize": args.resize,
        "model": args.model,
        "profile": model.profile.name,
        "thumbnails": bool(args.thumbnails and takes_thumb and thumb is not None),
        "n": n,
        "ms_per_case": 1000 * wall / n,
        "cpu_ms_per_case": 1000 * cpu / n,
        "max_ms": 1000 * max(per_case),
        "stages_ms": {k: round(1000 * v / n, 1) for k, v in sorted(timings.items(), key=lambda kv: -kv[1])},
        "decodes_per_case": sum(decodes.values()) / n,
        "max_decodes_of_one_image_per_use": max(decodes[p] / images_used[p] for p in images_used),
        "sent_sizes": sorted(sent_sizes),
    }


def child_collect(args: argparse.Namespace) -> dict[str, Any]:
    """Where collection time goes, without pytest: suite file, rows read and validated, rows without validation."""
    from guitest import schema
    from guitest.datapath import locate
    from guitest.formats import read_suite_samples
    from guitest.suite import load_suite

    t = time.perf_counter()
    suite = load_suite(Path(args.suite) / "suite.yaml")
    data_dir = locate(str(suite.folder), suite.data, args.suite, "bench", str(suite.path))
    t_suite = time.perf_counter() - t
    schema.validator("formats/screenspot")  # compiled once per process, as in a run
    rss0 = _rss()
    t = time.perf_counter()
    samples = read_suite_samples(suite, data_dir)
    t_read = time.perf_counter() - t
    peak = _rss() - rss0
    rows = json.loads(Path(data_dir, "screenspot_mobile.json").read_text())
    checks = {"jsonschema": schema.validator("formats/screenspot").is_valid}
    if hasattr(schema, "fast_check"):  # the predicate compiled from the schema (newer trees)
        checks["compiled predicate"] = schema.fast_check("formats/screenspot")
    t_checks = {}
    for label, check in checks.items():
        t = time.perf_counter()
        for row in rows:
            check(row)
        t_checks[label] = (time.perf_counter() - t) * len(samples) / len(rows)
    return {
        "n": len(samples),
        "suite_s": t_suite,
        "read_and_validate_s": t_read,
        "row_check_s": t_checks,
        "samples_mb_python_peak": peak / 2**20,
    }


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _synthetic_results(n: int) -> list[dict[str, Any]]:
    import random

    from guitest.verdict import case_result

    rng = random.Random(0)
    out = []
    for i in range(n):
        split = ("mobile", "desktop", "web")[i % 3]
        hit = rng.random() < 0.6
        px, py = rng.random(), rng.random()
        out.append(
            case_result(
                f"{split}-src{i % 7}-{('text', 'icon')[i % 2]}-{i}",
                "hit" if hit else "miss",
                {"split": split, "data_type": ("text", "icon")[i % 2], "data_source": f"src{i % 7}"},
                prediction={"point": [round(px, 6), round(py, 6)], "pixel": [round(px * 1920, 2), round(py * 1080, 2)], "raw": [px, py], "space": "normalized", "via": "answer"},
                response=f"Answer: [{px:.3f}, {py:.3f}]",
                finish_reason="stop",
                truth=[10.0, 20.0, 110.0, 60.0],
                size=[1920, 1080],
                sent_size=[1920, 1080],
                image=f"img{i % 500:05d}.png",
                notes=[],
                instruction=f"click the control number {i}",
            )
        )
    return out


def child_report(args: argparse.Namespace) -> dict[str, Any]:
    """Report aggregation for N synthetic results: build, validate, write_json, markdown, as the plugin does at the end."""
    import inspect
    import tempfile

    from guitest.reporting import report as report_mod

    results = _synthetic_results(args.n)
    times: dict[str, float] = {}
    params = inspect.signature(report_mod.build).parameters
    kwargs = dict(
        suite={"name": "bench", "path": "bench/suite.yaml", "format": "screenspot", "task": "grounding"},
        model={"spec": "oracle", "adapter": "Oracle", "space": "normalized", "profile": {}, "profile_reason": "default", "settings": {}},
        results=results,
        n_selected=len(results),
        missing=[],
        tags=["split", "data_type", "data_source"],
        cross=[["split", "data_type"]],
        average="micro",
        macro_over=None,
        gate={"thresholds": {"accuracy": None, "by": {}}, "failures": [], "notes": [], "passed": None},
        run={"data_root": "/tmp", "data_root_source": "bench", "started": "2026-01-01T00:00:00+0000", "seconds": 1.0, "workers": 0, "pytest_args": [], "merged_into_report_of": None},
    )
    kwargs = {k: v for k, v in kwargs.items() if k in params}
    t = time.perf_counter()
    report = report_mod.build(**kwargs)
    times["build"] = time.perf_counter() - t
    t = time.perf_counter()
    problems = report_mod.validate(report)
    times["validate"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        report_mod.write_json(report, Path(tmp, "r.json"))
        times["write_json"] = time.perf_counter() - t
        size = Path(tmp, "r.json").stat().st_size
    t = time.perf_counter()
    report_mod.markdown(report)
    report_mod.text_table(report)
    times["markdown+table"] = time.perf_counter() - t
    html = None
    try:
        from guitest.reporting import html as html_report  # present in newer trees

        t = time.perf_counter()
        html_report.render(report, {})
        html = time.perf_counter() - t
    except Exception:  # absent or a different signature: not measured
        html = None
    if html is not None:
        times["html"] = html
    return {"n": args.n, "seconds": times, "json_mb": size / 2**20, "schema_problems": len(problems)}


def child_thumbs(args: argparse.Namespace) -> dict[str, Any]:
    """What each way of giving the HTML report its pictures costs per screenshot, over a sample of the full-size suite.

    For ``--n`` screenshots spread over every size of the suite (largest first), CPU ms per
    image of: linking (``thumbnails.picture`` in link mode: the path), decoding the PNG alone,
    a thumbnail from the file (a full decode: what the worker did for every case before, and
    what ``--report-images=embed`` does per file when the report is written), a thumbnail
    from pixels already decoded (the model path's decode shared), Pillow's own
    ``Image.thumbnail(reducing_gap=2)``, and the same screenshots as JPEG files (quality 90)
    with and without reduced DCT decoding (``Image.draft``). Then ``thumbnails.embed`` over the
    sample in 1 thread and in one per core: the wall time, to show the threads' speed-up.
    """
    import io
    import tempfile

    from PIL import Image

    from guitest.reporting import thumbnails
    from guitest.images import thumbnail

    paths_by_size: dict[tuple[int, int], list[str]] = {}
    for f in sorted(Path(args.suite, "data", "annotations").glob("*.json")):
        for row in json.loads(f.read_text()):
            paths_by_size.setdefault(tuple(row["img_size"]), []).append(str(Path(args.suite, "data", "images", row["img_filename"])))
    sizes = sorted(paths_by_size, key=lambda s: -s[0] * s[1])
    picked: list[str] = []
    while len(picked) < args.n and any(paths_by_size.values()):
        for size in sizes:
            if paths_by_size[size] and len(picked) < args.n:
                picked.append(paths_by_size[size].pop(0))

    def cpu_ms(fn: Any, items: list[Any]) -> float:
        c = time.process_time()
        for item in items:
            fn(item)
        return 1000 * (time.process_time() - c) / len(items)

    def decode(path: str) -> None:
        with Image.open(path) as im:
            im.load()

    def pil_thumbnail(path: str) -> None:
        with Image.open(path) as im:
            im.thumbnail((320, 320), reducing_gap=2.0)
            im.convert("RGB").save(io.BytesIO(), "JPEG", quality=70)

    def from_decoded(im: Any) -> None:
        thumbnail(im)

    def jpeg_full(path: str) -> None:
        with Image.open(path) as im:
            thumbnail(im)

    def size_of(path: str) -> tuple[int, int]:
        with Image.open(path) as im:
            return im.size

    out: dict[str, Any] = {"n": len(picked), "sizes": sorted({size_of(p) for p in picked}, key=lambda s: -s[0] * s[1])}
    ms = out["cpu_ms_per_image"] = {}
    ms["link (the path; default)"] = cpu_ms(lambda p: thumbnails.picture(p, None, "link"), picked)
    ms["PNG decode alone"] = cpu_ms(decode, picked)
    ms["thumbnail from the PNG file (a full decode: the worker before; embed per file)"] = cpu_ms(thumbnails.thumbnail_of_file, picked)
    ms["Pillow Image.thumbnail(reducing_gap=2) from the PNG file"] = cpu_ms(pil_thumbnail, picked)
    decoded = []
    for p in picked[: min(len(picked), 12)]:  # a dozen decoded frames in memory at once, not the whole sample
        im = Image.open(p)
        im.load()
        decoded.append(im)
    ms["thumbnail from pixels already decoded (shared with the model path)"] = cpu_ms(from_decoded, decoded)
    decoded.clear()
    with tempfile.TemporaryDirectory() as tmp:
        jpegs = []
        for i, p in enumerate(picked):
            with Image.open(p) as im:
                j = os.path.join(tmp, f"{i}.jpg")
                im.convert("RGB").save(j, "JPEG", quality=90)
                jpegs.append(j)
        ms["JPEG file: thumbnail with a full decode"] = cpu_ms(jpeg_full, jpegs)
        ms["JPEG file: thumbnail with reduced DCT decoding (Image.draft; embed)"] = cpu_ms(thumbnails.thumbnail_of_file, jpegs)
    four_k = [p for p in picked if size_of(p) == (3840, 2160)]
    if four_k:
        out["cpu_ms_per_4k_image"] = {
            "PNG decode alone": cpu_ms(decode, four_k),
            "thumbnail from the PNG file": cpu_ms(thumbnails.thumbnail_of_file, four_k),
        }
    pictures = {str(i): p for i, p in enumerate(picked)}
    walls = out["embed_wall_s"] = {}
    for threads in sorted({1, os.cpu_count() or 1}):
        t = time.perf_counter()
        made = thumbnails.embed(pictures, threads=threads)
        walls[threads] = time.perf_counter() - t
        assert len(made) == len(picked)
    out["thumbnail_kb"] = sum(len(v) for v in made.values()) / len(made) / 1024
    return out


CHILDREN = {"reference": child_reference, "harness": child_harness, "collect": child_collect, "report": child_report, "thumbs": child_thumbs}


# -- the bench ------------------------------------------------------------------------------------


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
        import threading
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
        cmd = [PY, str(Path(__file__).resolve()), "--child", mode, "--json", str(out_file), *extra]
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
        shown.append(c.replace(url, "$URL").replace(str(Path(__file__).resolve()), "bench/run.py").replace(str(HERE) + "/", "bench/"))
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


# -- the table ------------------------------------------------------------------------------------


def render(res: dict[str, Any]) -> str:
    runs = res["runs"]
    m = res.get("machine", {})
    out = [
        "# guitest bench results",
        "",
        f"{res['started']} .. {res.get('finished', '')}; {m.get('cpus')} CPUs ({m.get('cpu', '?')}), Python {m.get('python')}, "
        f"guitest at {m.get('commit', '?')}{' + uncommitted changes' if m.get('guitest_dirty') else ''}. "
        "Wall times are the best of the repeats; `others` is the CPU time other programs used on the machine during the run (from /proc/stat). "
        f"Before each timed run the bench waited (up to 20 s) for a quiet second; busy cores seen then, median {statistics.median(res.get('quiet') or [0]):.2f}, max {max(res.get('quiet') or [0]):.2f}.",
        "",
    ]

    def g(name: str) -> dict[str, Any] | None:
        return runs.get(name)

    # throughput
    if g("default_n0_c32"):
        ref = g("ref_openai_c32")
        ref64 = g("ref_openai_c64")
        out += [
            "## Throughput: 1000 small cases (320x240), 100 ms replies",
            "",
            "ideal = 1000 x 0.1 s / requests in flight (32 per worker, so 64 with `-n 2 --concurrency=32`; the issue's target is judged at `--concurrency=32` "
            "against 1000 x 0.1 s / 32 = 3.125 s, with and without `-n 2`); floor = ceil(1000 / in flight) x 0.1 s, "
            "the least any client can take. start-up = the same command with every case deselected (`--deselect SUITE/suite.yaml`: interpreter, plugins, "
            "adapter, xdist workers, collection; `--collect-only` cannot serve for `-n 2`, xdist switches itself off under it). "
            "run phase = first case started to last case finished, as the controller saw them (`bench/bench_timing.py`): the figure the targets are judged on (the best of the repeats, all of them in brackets), "
            "since wall - start-up mixes two noisy runs on a shared machine. ref = the plain asyncio client (AsyncOpenAI) doing the same 1000 requests at the same "
            "total concurrency (its time is its request loop only). end = `pytest_sessionfinish` (guitest builds and writes its reports).",
            "",
            "| scenario | in flight | ideal s | floor s | wall s | start-up s | wall - start-up s | run phase s | cases/s | run / ideal | run / 3.125 s | target (`--concurrency=32`: <= 1.15 x 3.125 s) | run / ref | mean in flight | end s | CPU s (main, workers, server) | run-phase CPU s (main; workers) | others' CPU s | peak RSS MB (main / worker) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, inflight, start, refrun in (
            ("default_n0_c32", 32, "startup_n0", ref),
            ("default_n0_c32_cache_off", 32, "startup_n0", ref),
            ("default_n0_c64", 64, "startup_n0", ref64),
            ("default_n2_c32", 64, "startup_n2", ref64),
            ("default_n2_c16", 32, "startup_n2", ref),
            ("stdlib_n0_c32", 32, "startup_n0", ref),
            ("stdlib_n2_c32", 64, "startup_n2", ref64),
            ("stdlib_n2_c16", 32, "startup_n2", ref),
            ("openai_n0_c32", 32, "startup_n0", ref),
            ("openai_n2_c32", 64, "startup_n2", ref64),
            ("openai_n2_c16", 32, "startup_n2", ref),
            ("oracle_n0", None, "startup_n0", None),
            ("oracle_n2", None, "startup_n2", None),
        ):
            r = g(name)
            if not r:
                continue
            s0 = g(start)
            wall = r["wall_s"]
            startup = s0["wall_s"] if s0 else float("nan")
            run_s = r.get("timing", {}).get("run_s")
            end_s = r.get("timing", {}).get("sessionfinish_s")
            ideal = N_SMALL * LATENCY / inflight if inflight else None
            floor = math.ceil(N_SMALL / inflight) * LATENCY if inflight else None
            roles = r["roles"]
            cpu = f"{roles.get('main', {}).get('cpu_s', 0):.1f}, {roles.get('worker', {}).get('cpu_s', 0):.1f}, {r.get('extra_cpu_s', {}).get('server', 0):.1f}"
            rss = (
                f"{roles.get('main', {}).get('peak_rss_mb', 0):.0f} / {roles.get('worker', {}).get('peak_rss_mb', 0):.0f}"
                if "worker" in roles
                else f"{roles.get('main', {}).get('peak_rss_mb', 0):.0f} / -"
            )
            ratio = run_s / ideal if (ideal and run_s) else None
            refs = f"{run_s / refrun['seconds']:.2f}" if (refrun and run_s) else "-"
            # the issue's target: at --concurrency=32, within 15% of 1000 x 0.1 / 32 = 3.125 s, with and without -n 2
            issue_ratio = run_s / (N_SMALL * LATENCY / CONC) if run_s and inflight else None
            verdict = "met" if issue_ratio is not None and issue_ratio <= TARGETS["throughput"] else "NOT met"
            verdict = verdict if name.endswith(f"_c{CONC}") else "-"
            timing = r.get("timing", {})
            run_cpu = _f(timing.get("run_cpu_s"), 2) + ("; " + ", ".join(_f(w.get("run_cpu_s"), 2) for w in timing["workers"].values()) if timing.get("workers") else "")
            mean_in_flight = _f((r.get("server") or {}).get("mean_inflight"), 1)
            phases = r.get("run_phases") or []
            repeats = f" (repeats: {', '.join(f'{p:.2f}' for p in phases)})" if len(phases) > 1 else ""
            out.append(
                f"| `{name}` | {inflight or '-'} | {_f(ideal, 3)} | {_f(floor, 2)} | {wall:.2f} | {startup:.2f} | {wall - startup:.2f} | {_f(run_s, 2)}{repeats} | "
                f"{(N_SMALL / run_s) if run_s else 0:.0f} | {_f(ratio, 2)} | {_f(issue_ratio, 2)} | {verdict} | {refs} | {mean_in_flight} | {_f(end_s, 2)} | {cpu} | {run_cpu} | {r['others_cpu_s']:.1f} | {rss} |"
            )
        p0, p2 = g("plain_pytest_n0"), g("plain_pytest_n2")
        if p0 and p2:
            out += [
                "",
                f"pytest-xdist's own cost, without guitest: 1000 empty tests take {p0['wall_s']:.2f} s serially and {p2['wall_s']:.2f} s with `-n 2` "
                f"(CPU of all processes {p0['tree_cpu_s']:.1f} s and {p2['tree_cpu_s']:.1f} s; others' CPU {p0['others_cpu_s']:.1f} and {p2['others_cpu_s']:.1f} s).",
            ]
        out += ["", "Reference clients (1000 requests, same payloads):", "", "| client | concurrency | seconds | / ideal | client CPU s |", "|---|---|---|---|---|"]
        for name, conc in (("ref_openai_c32", 32), ("ref_openai_c64", 64), ("ref_httpx_c32", 32), ("ref_httpx_c64", 64)):
            r = g(name)
            if r:
                out.append(f"| {r['client']} (asyncio) | {conc} | {r['seconds']:.2f} | {r['seconds'] / (N_SMALL * LATENCY / conc):.2f} | {r['cpu_s']:.2f} |")
        co = g("collect_only_n0")
        if co:
            out += ["", f"`pytest SUITE --collect-only -q` on the 1000-case suite takes {co['wall_s']:.2f} s."]
        srv = (g("default_n2_c32") or {}).get("server")
        if srv:
            out += [
                "",
                f"Server check (`default_n2_c32`): {srv['requests']} requests, at most {srv['max_inflight']} in flight, {srv['max_connections']} connections. "
                "mean in flight = the server's time-weighted count of requests in flight between the first request and the last reply (`bench/server.py` `/stats`).",
            ]
        out.append("")
    # harness
    hs = [(k, v) for k, v in runs.items() if k.startswith("harness_")]
    if hs:
        out += [
            "## Per-case harness time: ScreenSpot-Pro-sized screenshots (2560x1440 .. 3840x2160 PNG), one process, one thread",
            "",
            "`run_case` in-process with the openai adapter's preprocess and a fake generate (builds the messages and the request JSON, no network). "
            "Stages in ms per case (wall, one thread; `parse+score` includes `parse`).",
            "",
            "| profile | resize | thumbnails | ms/case | CPU ms/case | target < 150 | stages (ms/case) | decodes per case |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for _k, d in hs:
            stages = ", ".join(f"{s} {v}" for s, v in d["stages_ms"].items())
            out.append(
                f"| {d['profile']} | {d.get('resize', 'auto')} | {'yes' if d['thumbnails'] else 'no'} | {d['ms_per_case']:.0f} | {d['cpu_ms_per_case']:.0f} | "
                f"{'met' if d['cpu_ms_per_case'] < TARGETS['harness_ms'] else 'NOT met'} | {stages} | {d['decodes_per_case']:.2f} |"
            )
        out.append("")
    if g("large_n0"):
        out += [
            "End to end (pytest, openai adapter, loopback server at 100 ms, --concurrency=32, 16 large cases): the judged figure is the run-phase CPU "
            "of every process (controller and workers, from `bench_timing`, so start-up and the report at the end are outside it) / 16: the harness cost "
            "per case per core including pytest, the client and the response cache. The older estimate, (CPU of the whole run - CPU of a separate "
            "start-up run) / 16, is shown beside it; with 16 cases the noise of two start-ups moves it by tens of ms.",
            "",
            "| scenario | wall s | run phase s | run-phase CPU s | CPU ms per case | target < 150 | (whole run - start-up) CPU ms per case | others' CPU s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, start in (("large_n0", "large_startup_n0"), ("large_n2", "large_startup_n2")):
            r, s0 = g(name), g(start)
            if r and s0:
                timing = r.get("timing", {})
                run_cpu = timing.get("run_cpu_s")
                if run_cpu is not None:
                    run_cpu += sum(w.get("run_cpu_s") or 0 for w in (timing.get("workers") or {}).values())
                ms = 1000 * run_cpu / N_LARGE if run_cpu is not None else None
                old_ms = 1000 * (r["tree_cpu_s"] - s0["tree_cpu_s"]) / N_LARGE
                verdict = "-" if ms is None else ("met" if ms < TARGETS["harness_ms"] else "NOT met")
                out.append(f"| `{name}` | {r['wall_s']:.2f} | {_f(timing.get('run_s'), 2)} | {_f(run_cpu, 2)} | {_f(ms, 0)} | {verdict} | {old_ms:.0f} | {r['others_cpu_s']:.1f} |")
        out.append("")
    # collection and memory
    if g("collect_100k_n0") or g("run_100k_oracle_n0"):
        out += [
            "## Collection and memory: 100,000 cases",
            "",
            "| scenario | wall s | target | peak RSS MB of the process that holds the items | target < 500 MB | others' CPU s |",
            "|---|---|---|---|---|---|",
        ]
        r = g("collect_100k_n0_qq")
        if r:
            rss = r["roles"].get("main", {}).get("peak_rss_mb", 0)
            out.append(
                f"| `collect_100k_n0_qq` (`--collect-only -qq`: the same without printing 100,000 ids) | {r['wall_s']:.1f} | < 10 s: {'met' if r['wall_s'] < TARGETS['collect_s'] else 'NOT met'} | {rss:.0f} | {'met' if rss < TARGETS['worker_rss_mb'] else 'NOT met'} | {r['others_cpu_s']:.1f} |"
            )
        r = g("collect_100k_n0")
        if r:
            rss = r["roles"].get("main", {}).get("peak_rss_mb", 0)
            out.append(
                f"| `collect_100k_n0` (`--collect-only`) | {r['wall_s']:.1f} | < 10 s: {'met' if r['wall_s'] < TARGETS['collect_s'] else 'NOT met'} | {rss:.0f} | {'met' if rss < TARGETS['worker_rss_mb'] else 'NOT met'} | {r['others_cpu_s']:.1f} |"
            )
        r = g("run_100k_oracle_n0")
        if r:
            rss = r["roles"].get("main", {}).get("peak_rss_mb", 0)
            done = r["rc"] in (0, 1)
            out.append(
                f"| `run_100k_oracle_n0` (whole run, serial: the one process is the worker) | {r['wall_s']:.1f} | - | {rss:.0f}{'' if done else ' (run cut off)'} | {'met' if rss < TARGETS['worker_rss_mb'] else 'NOT met'} | {r['others_cpu_s']:.1f} |"
            )
        r = g("run_100k_oracle_n2")
        if r:
            rss = r["roles"].get("worker", {}).get("peak_rss_mb", 0)
            main = r["roles"].get("main", {}).get("peak_rss_mb", 0)
            done = r["rc"] in (0, 1)
            out.append(
                f"| `run_100k_oracle_n2` (whole run, `-n 2`: the larger worker; the controller peaked at {main:.0f} MB) | {r['wall_s']:.1f} | - | {rss:.0f}{'' if done else ' (run cut off)'} | {'met' if rss < TARGETS['worker_rss_mb'] else 'NOT met'} | {r['others_cpu_s']:.1f} |"
            )
        c = g("collect_inproc")
        if c:
            out += [
                "",
                f"In-process (no pytest): suite file {c['suite_s']:.2f} s; reading + validating {c['n']} rows {c['read_and_validate_s']:.1f} s; checking the rows alone would take {', '.join(f'{v:.2f} s with {k}' for k, v in c.get('row_check_s', {}).items())}; the process grew by {c['samples_mb_python_peak']:.0f} MB (RSS) while reading them.",
            ]
        s0, s1 = g("mem_10k_startup_n0"), g("mem_10k_oracle_n0")
        coll = (g("collect_100k_n0") or {}).get("roles", {}).get("main", {}).get("peak_rss_mb", 0)
        if s0 and s1:
            a0 = s0["roles"].get("main", {}).get("peak_rss_mb", 0)
            a1 = s1["roles"].get("main", {}).get("peak_rss_mb", 0)
            per = (a1 - a0) / N_MEM * 1024
            out += [
                "",
                f"Serial ({N_MEM:,} cases, oracle, {s1['wall_s']:.0f} s): the process peaked at {a0:.0f} MB with the cases collected and deselected, {a1:.0f} MB after running them: "
                f"{per:.1f} KB per case run. Extrapolated to {N_HUGE:,}: {coll:.0f} MB (collected) + {per * N_HUGE / 1024:.0f} MB = about {coll + per * N_HUGE / 1024:.0f} MB "
                f"({'met' if coll + per * N_HUGE / 1024 < TARGETS['worker_rss_mb'] else 'NOT met'}; `--only memory100k` measures it).",
            ]
        m0, m1 = g("mem_10k_startup_n2"), g("mem_10k_oracle_n2")
        if m0 and m1:
            w0 = m0["roles"].get("worker", {}).get("peak_rss_mb", 0)
            w1 = m1["roles"].get("worker", {}).get("peak_rss_mb", 0)
            c0 = m0["roles"].get("main", {}).get("peak_rss_mb", 0)
            c1 = m1["roles"].get("main", {}).get("peak_rss_mb", 0)
            per_w = (w1 - w0) / (N_MEM / 2) * 1024
            per_c = (c1 - c0) / N_MEM * 1024
            out += [
                "",
                f"Under `-n 2` ({N_MEM:,} cases, oracle, {m1['wall_s']:.0f} s): each worker peaked at {w0:.0f} MB after collecting and {w1:.0f} MB after running its half "
                f"({per_w:.1f} KB per case it ran); the controller (which collects nothing) went from {c0:.0f} to {c1:.0f} MB ({per_c:.1f} KB per case). "
                f"Extrapolated to {N_HUGE:,} cases under `-n 2`: a worker holds the 100,000 collected items "
                f"({coll:.0f} MB, the serial `--collect-only` peak) plus {per_w:.1f} KB for each of the {N_HUGE // 2:,} cases it runs: about {coll + per_w * N_HUGE / 2 / 1024:.0f} MB; "
                f"the controller about {c0 + per_c * N_HUGE / 1024:.0f} MB ({'met' if coll + per_w * N_HUGE / 2 / 1024 < TARGETS['worker_rss_mb'] else 'NOT met'} for the worker).",
            ]
        out.append("")
    r = g("report_100k")
    if r:
        s = r["seconds"]
        core = s.get("build", 0) + s.get("write_json", 0)
        total = sum(s.values())
        out += [
            "## Report aggregation: 100,000 results",
            "",
            "| step | seconds |",
            "|---|---|",
            *[f"| {k} | {v:.2f} |" for k, v in s.items()],
            f"| **aggregation: build** (counts, breakdowns, intervals, headline, task metrics; target < 2) | **{s.get('build', 0):.2f}** ({'met' if s.get('build', 0) < TARGETS['report_s'] else 'NOT met'}) |",
            f"| build + write_json (the JSON file too) | {core:.2f} |",
            f"| all that the plugin does at the end (+ validate, Markdown, HTML) | {total:.2f} |",
            "",
            f"JSON report: {r['json_mb']:.0f} MB; schema problems: {r['schema_problems']}.",
            "",
        ]
    out += [
        "## Commands",
        "",
        "Run from the work folder `$W` (`--work`, default /tmp/guitest-bench) with `PYTHONPATH=bench` (for `-p bench_timing`, left out below); `$URL` is the loopback server "
        "(`python bench/server.py --port-file F --latency 0.1`). Every guitest run also gets `--report-dir=$W/reports`, `-p bench_timing` and, where the tree has the "
        "response cache, a fresh empty `--cache-dir` (so every request reaches the server, as in a first run).",
        "",
    ]
    for name, r in runs.items():
        if "shown" in r and not name.startswith("pro_"):
            out.append(f"- `{name}`: `{r['shown'].replace(str(Path(res.get('work', '/nonexistent'))), '$W')}`")
    return "\n".join(out) + "\n"


def _run_cpu(r: dict[str, Any]) -> float | None:
    """Run-phase CPU of every process of a pytest run (controller and workers), from bench_timing."""
    timing = r.get("timing") or {}
    if timing.get("run_cpu_s") is None:
        return None
    return timing["run_cpu_s"] + sum(w.get("run_cpu_s") or 0 for w in (timing.get("workers") or {}).values())


def render_pro(res: dict[str, Any]) -> str:
    """The full-size scenario's tables (Markdown, ready for docs/bench.md)."""
    runs = res["runs"]
    m = res.get("machine", {})
    data = res.get("pro_data") or {}
    quiet = res.get("quiet") or [0]
    reps = sorted({int(k.rsplit("_r", 1)[1]) for k in runs if k.startswith("pro_plain_openai_r")})
    n_cases = data.get("cases") or N_PRO
    target = TARGETS["throughput"]

    def wall(name: str) -> float | None:
        r = runs.get(name)
        return r["wall_s"] if r and r.get("rc") in (0, 1) else None

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.2f}" if a and b else "-"

    def verdict(a: float | None, b: float | None) -> str:
        return "-" if not (a and b) else ("met" if a / b <= target else "NOT met")

    def phase(name: str) -> str:
        return _f((runs.get(name) or {}).get("timing", {}).get("run_s"), 1)

    out = [
        "# guitest bench: a whole ScreenSpot-Pro-sized run at default settings",
        "",
        f"{res['started']} .. {res.get('finished', '')}; {m.get('cpus')} CPUs ({m.get('cpu', '?')}), Python {m.get('python')}, "
        f"guitest at {m.get('commit', '?')}{' + uncommitted changes' if m.get('guitest_dirty') else ''}"
        + (f" (the guitest package imported from the scratch copy `--pythonpath {res['pythonpath']}`)" if res.get("pythonpath") else "")
        + ". Before each run the bench waited "
        f"(at most --quiet-wait s) for a second in which other programs used under --quiet-cores; busy cores seen then: median "
        f'{statistics.median(quiet):.2f}, max {max(quiet):.2f}. "others" is the CPU other programs used during a run (/proc/stat): '
        "where it is high, the machine was shared and the wall times are upper bounds.",
        "",
        f"Data (`bench/make_pro.py`): {data.get('cases', '?')} cases, the real ScreenSpot-Pro annotation rows, each with its own PNG at the row's "
        f"`img_size` (1920x1080 .. 6016x3384), tiled from real UI screenshots with a photo-like document panel: {data.get('image_bytes', 0) / 1e9:.2f} GB, "
        f"mean {data.get('mean_mb', '?')} MB, largest {data.get('max_mb', '?')} MB, {data.get('bytes_per_pixel', '?')} bytes per pixel "
        "(the real set: 3.4 GB, 2.1 MB mean, 0.37 bytes per pixel). "
        + (
            f"Generating them took {data['generated_s']:.0f} s ({data['made']} images, {data.get('made_cpu_s') or 0:.0f} s of CPU in {os.cpu_count()} processes), once; later runs reuse them."
            if data.get("generated_s")
            else ""
        ),
        "",
        f"Server: `bench/server.py` on loopback, every reply after 100 ms; `--concurrency={CONC}`. The plain client (`bench/plain_client.py`) reads each "
        "file, base64s it, sends it with the instruction and reads the reply, 32 at a time: in one asyncio loop with `openai.AsyncOpenAI` "
        "(what a user of the endpoint writes) or `httpx.AsyncClient` (leaner), or in 32 threads over `http.client` (the standard library, as "
        "guitest's default client). Wall times are whole processes, start-up included, for all of them; "
        f"the target is guitest's wall <= {target} x the plain AsyncOpenAI client's in the same repeat.",
        "",
        "## Default settings beside the plain client (every repeat, in the order run)",
        "",
        "Wall seconds of each run, in the order run; the ratios are guitest's wall over a plain client's of the same repeat.",
        "",
        "| repeat | plain AsyncOpenAI | guitest `-n 0` (run phase) | plain httpx | guitest `-n 2` (run phase) | plain threads | `-n 0` / AsyncOpenAI | `-n 2` / AsyncOpenAI | target | `-n 0`, `-n 2` / httpx | `-n 0`, `-n 2` / threads | others' CPU s (the five runs) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    kinds = ("pro_plain_openai", "pro_default_n0", "pro_plain_httpx", "pro_default_n2", "pro_plain_threads")

    def row(label: str, po: float | None, g0: float | None, ph: float | None, g2: float | None, pt: float | None, p0: str, p2: str, others: str) -> str:
        both = "met" if verdict(g0, po) == verdict(g2, po) == "met" else f"{verdict(g0, po)}, {verdict(g2, po)}"
        return (
            f"| {label} | {_f(po, 1)} | {_f(g0, 1)}{p0} | {_f(ph, 1)} | {_f(g2, 1)}{p2} | {_f(pt, 1)} | {ratio(g0, po)} | {ratio(g2, po)} | {both} | "
            f"{ratio(g0, ph)}, {ratio(g2, ph)} | {ratio(g0, pt)}, {ratio(g2, pt)} | {others} |"
        )

    for i in reps:
        names = [f"{k}_r{i}" for k in kinds]
        others = ", ".join(_f((runs.get(n) or {}).get("others_cpu_s"), 0) for n in names)
        po, g0, ph, g2, pt = (wall(n) for n in names)
        out.append(row(str(i), po, g0, ph, g2, pt, f" ({phase(names[1])})", f" ({phase(names[3])})", others))
    if reps:

        def best(prefix: str) -> float | None:
            vals = [w for w in (wall(f"{prefix}_r{i}") for i in reps) if w]
            return min(vals) if vals else None

        out.append(row("best", *(best(k) for k in kinds), "", "", ""))
    pics: dict[tuple[Any, ...], list[str]] = {}
    for k, r in runs.items():
        p = r.get("pictures") if k.startswith("pro_") else None
        if p:
            pics.setdefault((p["cards"], p["linked_existing"], p["embedded"], p["html_mb"]), []).append(f"`{k}`")
    if pics:
        out += [
            "",
            "The HTML report of each run (`reports/bench_pro.html`, checked after the run):",
            "",
            "| runs | cards | pictures linked (to a file that exists) | pictures embedded | page MB |",
            "|---|---|---|---|---|",
        ]
        out += [f"| {', '.join(names)} | {c} | {linked} | {emb} | {mb} |" for (c, linked, emb, mb), names in pics.items()]
    out += [
        "",
        "## CPU per case",
        "",
        f"CPU of every process of the run (client side: pytest's controller and workers, or the plain client) / {n_cases}; run phase = first case started to "
        "last case finished (`bench_timing`: start-up, collection and the report are outside it); the server's CPU apart.",
        "",
        "| run | wall s | CPU s | CPU ms per case | run-phase CPU ms per case | server CPU s | mean in flight | others' CPU s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in runs.items():
        if not name.startswith("pro_") or "tree_cpu_s" not in r or name.startswith("pro_harness") or name == "pro_thumbs":
            continue
        run_cpu = _run_cpu(r)
        srv = r.get("server") or {}
        out.append(
            f"| `{name}` | {r['wall_s']:.1f} | {r['tree_cpu_s']:.1f} | {1000 * r['tree_cpu_s'] / n_cases:.1f} | {_f(1000 * run_cpu / n_cases if run_cpu is not None else None, 1)} | "
            f"{(r.get('extra_cpu_s') or {}).get('server', 0):.1f} | {_f(srv.get('mean_inflight'), 1)} | {r['others_cpu_s']:.1f} |"
        )
    th = runs.get("pro_thumbs")
    out += ["", "## The report's pictures: what each option costs", ""]
    out += [
        "Whole runs (the plain AsyncOpenAI client run just before each, for the ratio); `end` = `pytest_sessionfinish`, where the reports are written.",
        "",
        "| option | run | wall s | plain s | ratio | end s | the page |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = [(f"before ({res.get('before', '?')}): a thumbnail in the worker for every case", "pro_before_n0", "pro_plain_openai_before")]
    for n in ("0", "2"):  # the default: its best repeat (all of them are in the first table)
        done = [i for i in reps if wall(f"pro_default_n{n}_r{i}")]
        if done:
            i = min(done, key=lambda i: wall(f"pro_default_n{n}_r{i}") or 0)
            rows.append(("link (default): the page links the screenshot files", f"pro_default_n{n}_r{i}", f"pro_plain_openai_r{i}"))
    rows += [(f"embed: thumbnails made when the report is written ({os.cpu_count()} threads)", f"pro_embed_n{n}", f"pro_plain_openai_embed_n{n}") for n in ("0", "2")]
    for label, name, plain in rows:
        r = runs.get(name)
        if not r:
            continue
        p = r.get("pictures") or {}
        page = f"{p.get('embedded', 0)} embedded, {p.get('linked_existing', 0)} linked, {p.get('html_mb', '?')} MB" if p else "-"
        out.append(f"| {label} | `{name}` | {_f(wall(name), 1)} | {_f(wall(plain), 1)} | {ratio(wall(name), wall(plain))} | {_f(r.get('timing', {}).get('sessionfinish_s'), 1)} | {page} |")
    if th:
        out += [
            "",
            f"Per screenshot, in-process, over {th['n']} screenshots (two of each size, largest first), CPU ms per image:",
            "",
            "| what | CPU ms per image |",
            "|---|---|",
            *[f"| {k} | {v:.3f} |" if v < 1 else f"| {k} | {v:.1f} |" for k, v in th["cpu_ms_per_image"].items()],
            *[f"| 3840x2160 only: {k} | {v:.1f} |" for k, v in (th.get("cpu_ms_per_4k_image") or {}).items()],
            "",
            f"`thumbnails.embed` over the same {th['n']} files: "
            + ", ".join(f"{k} thread(s) {v:.2f} s" for k, v in th["embed_wall_s"].items())
            + f"; a thumbnail is {th['thumbnail_kb']:.1f} KB of the page. A cap (only the first K cases, failures first) would cost K x the per-image figure.",
        ]
    hs = [(k, runs[k]) for k in ("pro_harness_4k", "pro_harness_4k_thumb") if k in runs]
    if hs:
        out += [
            "",
            f"## Harness CPU per 4K case (3840x2160 rows of the suite, {hs[0][1]['n']} of them)",
            "",
            "In-process `run_case` with the openai adapter's preprocess and a fake generate (the messages and the request JSON built, no network), one thread:",
            "",
            "| thumbnails | CPU ms per 4K case | stages (ms per case) | decodes per case |",
            "|---|---|---|---|",
        ]
        for _k, d in hs:
            label = "in the worker (before)" if d["thumbnails"] else "none on the request path (default)"
            label += "; body by request_body.dumps" if d.get("request_body") else "; body by json.dumps"
            out.append(f"| {label} | {d['cpu_ms_per_case']:.1f} | {', '.join(f'{s} {v}' for s, v in d['stages_ms'].items())} | {d['decodes_per_case']:.2f} |")
    per_case = []
    for label, prefix, phase_cpu in (
        ("guitest `-n 0`, run phase", "pro_default_n0", True),
        ("guitest `-n 2`, run phase", "pro_default_n2", True),
        ("plain AsyncOpenAI", "pro_plain_openai", False),
        ("plain httpx", "pro_plain_httpx", False),
        ("plain threads", "pro_plain_threads", False),
    ):
        vals = []
        for i in reps:
            r = runs.get(f"{prefix}_r{i}")
            cpu = (_run_cpu(r) if phase_cpu else r["tree_cpu_s"]) if r else None
            if cpu is not None:
                vals.append(f"{1000 * cpu / n_cases:.1f}")
        if vals:
            per_case.append(f"{label} {', '.join(vals)}")
    if per_case:
        out += [
            "",
            f"End to end, every size (mean file {data.get('mean_mb', '?')} MB), CPU ms per case in each repeat (guitest: every process over the run phase; "
            "the plain clients: the whole process): " + "; ".join(per_case) + ".",
        ]
    eps = [(k, runs[k]) for k in ("pro_endpoints_both", "pro_endpoints_dead", "pro_endpoints_killed") if k in runs]
    if eps:
        what = {"both": "both up", "dead": "the second dead from the start", "killed": "the second killed after a sixth of the cases"}
        out += [
            "",
            "## Two endpoints (`--base-url` twice, `--concurrency=16` each, `-n 2`)",
            "",
            "| scenario | wall s (run phase) | cases | verdicts | replies: first, second | the second taken out |",
            "|---|---|---|---|---|---|",
        ]
        for k, r in eps:
            by = {e["which"]: e for e in r.get("endpoints", [])}
            replies = ", ".join(str(by.get(w, {}).get("replies", 0)) for w in ("first", "second"))
            down = by.get("second", {}).get("down")
            verdicts = ", ".join(f"{v} {n}" for v, n in sorted(r.get("verdicts", {}).items()))
            out.append(f"| {what[k.rsplit('_', 1)[1]]} | {_f(r.get('wall_s'), 1)} ({_f(r.get('timing', {}).get('run_s'), 1)}) | {r.get('cases', '-')} | {verdicts} | {replies} | {down or 'no'} |")
    out += ["", "## Commands", "", "Run from the work folder `$W` (see bench/results.md for the conventions).", ""]
    for name, r in runs.items():
        if name.startswith("pro_") and "shown" in r:
            out.append(f"- `{name}`: `{r['shown'].replace(str(Path(res.get('work', '/nonexistent'))), '$W')}`")
    return "\n".join(out) + "\n"


def _f(v: float | None, digits: int) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="/tmp/guitest-bench", help="data, reports and raw results (default /tmp/guitest-bench)")
    parser.add_argument("--out", default=str(HERE / "results.md"), help="where to write the Markdown table (default bench/results.md)")
    parser.add_argument("--out-pro", default=str(HERE / "results-pro.md"), help="where to write the full-size scenario's tables (default bench/results-pro.md)")
    parser.add_argument("--only", nargs="*", choices=GROUPS)
    parser.add_argument("--repeat", type=int, default=2, help="repeats of the timed throughput runs; the best is shown (default 2)")
    parser.add_argument("--pythonpath", default=None, help="prepend this to PYTHONPATH of every run (bench a scratch copy of guitest)")
    parser.add_argument("--quiet-wait", type=float, default=20.0, help="before each timed run, wait up to this long for the machine to be quiet (default 20 s)")
    parser.add_argument("--quiet-cores", type=float, default=0.3, help="quiet: other programs use less than this many cores (default 0.3)")
    parser.add_argument("--render", action="store_true", help="only re-render the table from WORK/results.json")
    parser.add_argument("--pro-cases", type=int, default=None, metavar="N", help="pro: only the first N rows (a quick look; default all 1581)")
    parser.add_argument("--before", default=None, metavar="REV", help="pro: also run the default scenario once with guitest/ as it was at this git revision (e.g. the commit before a change)")
    # child modes
    parser.add_argument("--child", choices=sorted(CHILDREN))
    parser.add_argument("--json")
    parser.add_argument("--suite")
    parser.add_argument("--base-url")
    parser.add_argument("--client", choices=["openai", "httpx"], default="openai")
    parser.add_argument("--n", type=int, default=N_SMALL)
    parser.add_argument("--concurrency", type=int, default=CONC)
    parser.add_argument("--model", default="openai:bench")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--thumbnails", action="store_true")
    parser.add_argument("--resize", default="auto", help="harness child: the --resize setting (auto or client)")
    parser.add_argument("--only-size", default=None, help="harness child: only the rows of this image size, e.g. 3840x2160")
    args = parser.parse_args(argv)
    if args.child:
        data = CHILDREN[args.child](args)
        Path(args.json).write_text(json.dumps(data, default=str))
        return
    if args.render:
        res = json.loads(Path(args.work, "results.json").read_text())
        if any(not k.startswith("pro_") for k in res["runs"]):
            text = render(res)
            print(text)
            Path(args.out).write_text(text)
        if any(k.startswith("pro_") for k in res["runs"]):
            text = render_pro(res)
            print(text)
            Path(args.out_pro).write_text(text)
        return
    bench = Bench(args)
    bench.results["work"] = str(bench.work)
    bench.results["pythonpath"] = args.pythonpath
    bench.run()


if __name__ == "__main__":
    main()
