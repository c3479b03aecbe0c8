"""The CPU one request costs on a 4K screenshot: guitest's request path beside a minimal client, in process and as
whole processes (start-up included).

    python bench/bench_request_cpu.py [--images 8] [--rounds 4] [--out DIR]
    python bench/bench_request_cpu.py --whole [--cases 270] [--repeats 3] [--python PY] [--pytest-args "-p no:anyio"] [--before DIR]

Screenshots: ``--images`` 3840x2160 PNGs from the bench's tiled generator (bench/make_pro.py, the entropy of the real
ScreenSpot-Pro files: about 3.3 MB each), written once to ``--out``. The endpoint: a loopback HTTP server in another
process that reads each request and answers a fixed chat completion (its CPU is not counted). Each client sends every
screenshot ``--rounds`` times, one request at a time on one kept-alive connection, and the CPU of this process
(user + system, ``time.process_time``) is divided by the requests:

- ``minimal``: read the file, base64-encode it, join the JSON body around it, send it with ``http.client``, read the
  reply (the least a client can do);
- ``guitest``: what a case of an ``openai:`` model does at default settings (the lean client): ``open_image`` (the one
  read), ``preprocess`` (the file sent as it is), ``generate`` (the messages, the request body, the post, the reply
  read);
- ``guitest, str body``: the same with the screenshot's data URI built as a ``str`` and the body's splicing scanning
  it, as before the body took the base64 bytes as they are (guitest/models/request_body.py ``Verbatim``).

Then it checks that both guitest variants sent the same bytes. Serial; under ``-n 2`` each worker process pays the
same per request, on its own core.

``--whole``: the CPU of whole processes per case, start-up, imports, collection and the report included, on the real
ScreenSpot-Pro rows of one size (``--size``, default the 270 rows of 3840x2160; ``--cases`` the first N of them),
their screenshots composed at that size by bench/make_pro.py (about 3.4 MB each), into ``--out``. Against the same
loopback server (the reply carries a usage block, as a serving engine's does), each repeat runs, alternated:

- ``floor``: a Python process that reads the suite's annotation files and, for every row, reads the screenshot,
  base64-encodes it, joins the JSON body around it, sends it with ``http.client`` and reads the reply (:data:`FLOOR`,
  the standard library only: what any client must do);
- ``guitest``: ``python -m pytest SUITE/suite.yaml --model=openai:m --base-url=...`` at default settings (the response
  cache on, every report written), serial and with ``-n 2``, plus ``--pytest-args``. The suite file, not its folder:
  the bench keeps the screenshots beside the suite, where pytest would walk 270 files and 40 folders in every
  process; the real data set lives under the data root, outside the suite's folder; with ``--before DIR``, the same from that
  source tree too (``git archive COMMIT | tar -x -C DIR``);

each also with nothing selected (``-k`` matching no case; for the floor, its imports alone): the start. The CPU is
the user + system time of the process and every process it waited for (``RUSAGE_CHILDREN``: pytest's xdist workers
included), with ``--python`` (default this interpreter) and the byte code kept, as a user runs. The server's CPU is
not counted. It checks that every run sent one request per case and that guitest's ended with exit status 0.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import http.server
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

REPLY = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "(100, 200)"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2771, "completion_tokens": 9, "total_tokens": 2780},
    }
).encode()
INSTRUCTION = "Click the Save button in the toolbar."


def _serve(port: Any, bodies: Any, count: Any = None) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the library's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if bodies is not None:
                bodies.put(body)
            if count is not None:
                with count.get_lock():
                    count.value += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(REPLY)))
            self.end_headers()
            self.wfile.write(REPLY)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port.value = server.server_port
    server.serve_forever()


def screenshots(out: Path, count: int) -> list[Path]:
    from make_pro import compose

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = out / f"shot-{i}.png"
        if not path.exists():
            compose((3840, 2160), seed=1000 + i).save(path)
        paths.append(path)
    return paths


def minimal(paths: list[Path], port: int, rounds: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    start = time.process_time()
    for _ in range(rounds):
        for path in paths:
            data = path.read_bytes()
            b64 = base64.b64encode(data)
            body = b"".join(
                (
                    b'{"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,',
                    b64,
                    b'"}}, {"type": "text", "text": "',
                    INSTRUCTION.encode(),
                    b'"}]}], "temperature": 0.0, "max_tokens": 512}',
                )
            )
            conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            json.loads(conn.getresponse().read())
    used = time.process_time() - start
    conn.close()
    return used / (rounds * len(paths))


def guitest_case(paths: list[Path], port: int, rounds: int, verbatim: bool) -> float:
    from guitest.exchange import Prompt
    from guitest.images import open_image
    from guitest.models import load_model
    from guitest.models.base import Settings
    from guitest.models.openai_api import OpenAIChat

    model = load_model("openai:m", Settings(base_url=f"http://127.0.0.1:{port}/v1"))
    if not verbatim:  # before: the data URI as a str, scanned by the body's splicing
        plain = OpenAIChat.messages
        model.messages = lambda prompt, image, verbatim=False: plain(model, prompt, image, False)  # type: ignore[method-assign]
    prompt = Prompt(user=INSTRUCTION)
    start = time.process_time()
    for _ in range(rounds):
        for path in paths:
            image = open_image(str(path))
            case = types.SimpleNamespace(sent_size=image.size, attempt=0)
            sent = model.preprocess(image, case)  # type: ignore[arg-type]
            model.generate(prompt, sent, case)  # type: ignore[arg-type]
    used = time.process_time() - start
    model.close()
    return used / (rounds * len(paths))


#: the floor client, a process of its own (argv: the suite folder, the server's port): the standard library only
FLOOR = r"""
import base64, glob, http.client, json, os, sys
data = os.path.join(sys.argv[1], "data")
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[2]))
for name in sorted(glob.glob(os.path.join(data, "annotations", "*.json"))):
    with open(name, encoding="utf-8") as f:
        rows = json.load(f)
    for row in rows:
        with open(os.path.join(data, "images", row["img_filename"]), "rb") as f:
            image = f.read()
        body = b"".join((
            b'{"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,',
            base64.b64encode(image),
            b'"}}, {"type": "text", "text": ',
            json.dumps(row["instruction"]).encode(),
            b'}]}], "temperature": 0.0, "max_tokens": 512}',
        ))
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        json.loads(conn.getresponse().read())
"""


def _cpu(args: list[str], cwd: Path, tree: Path = REPO) -> tuple[float, int]:
    """CPU seconds (user + system) of ``args`` and every process it waited for, and its exit status."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(tree)  # that tree's guitest, whatever the interpreter's editable install points at
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 5):  # 5: pytest selected nothing (the start)
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def whole(opts: argparse.Namespace) -> None:
    """``--whole``: whole processes per case (see the module docstring)."""
    from make_pro import make

    size = tuple(int(v) for v in opts.size.lower().split("x"))
    made = make(opts.out / f"pro-{opts.size}-{opts.cases or 'all'}", limit=opts.cases, size=size, name="pro4k")  # type: ignore[arg-type]
    suite = Path(made["folder"])
    n = made["cases"]
    print(f"{n} cases of {opts.size} (the real ScreenSpot-Pro rows of that size), {made['mean_mb']} MB mean, {made['max_mb']} MB largest, {made['bytes_per_pixel']} bytes per pixel")
    ctx = multiprocessing.get_context("spawn")
    port, count = ctx.Value("i", 0), ctx.Value("i", 0)
    server = ctx.Process(target=_serve, args=(port, None, count), daemon=True)
    server.start()
    while not port.value:
        time.sleep(0.01)
    py = opts.python or sys.executable
    work = Path(tempfile.mkdtemp(prefix="guitest-bench-whole-"))
    extra = opts.pytest_args.split()

    def guitest(*more: str) -> list[str]:
        folder = tempfile.mkdtemp(dir=work)  # a fresh cache and report folder: every case asks the server
        return [
            py,
            "-m",
            "pytest",
            str(suite / "suite.yaml"),
            "--model=openai:m",
            f"--base-url=http://127.0.0.1:{port.value}/v1",
            f"--cache-dir={folder}",
            f"--report-dir={folder}",
            "-q",
            *extra,
            *more,
        ]

    nothing = ("-k", "no_case_is_named_this")
    Command = Callable[[], list[str]]
    commands: dict[str, tuple[Command, Command, Path]] = {  # (the run, its start, its tree), made anew each time
        "floor": (lambda: [py, "-c", FLOOR, str(suite), str(port.value)], lambda: [py, "-c", "import base64, glob, http.client, json, os, sys"], REPO),
        "guitest": (lambda: guitest(), lambda: guitest(*nothing), REPO),
        "guitest -n 2": (lambda: guitest("-n", "2"), lambda: guitest("-n", "2", *nothing), REPO),
    }
    if opts.before:
        commands[f"guitest at {opts.before}"] = (lambda: guitest(), lambda: guitest(*nothing), opts.before.resolve())
        commands[f"guitest -n 2 at {opts.before}"] = (lambda: guitest("-n", "2"), lambda: guitest("-n", "2", *nothing), opts.before.resolve())
    runs: dict[str, list[float]] = {name: [] for name in commands}
    starts: dict[str, list[float]] = {name: [] for name in commands}
    for full, start, tree in commands.values():  # once each: byte code written, the screenshots in the page cache
        _cpu(full(), work, tree)
        _cpu(start(), work, tree)
    for _ in range(opts.repeats):
        for name, (full, start, tree) in commands.items():  # alternated, so a change in the machine's load falls on all
            count.value = 0
            seconds, code = _cpu(full(), work, tree)
            if count.value != n or code != 0:
                raise SystemExit(f"{name}: {count.value} requests for {n} cases, exit status {code}")
            runs[name].append(seconds)
            starts[name].append(_cpu(start(), work, tree)[0])
    server.terminate()
    shutil.rmtree(work, ignore_errors=True)
    floor, floor_min = statistics.median(runs["floor"]) / n, min(runs["floor"]) / n
    print(f"whole-process CPU, {opts.repeats} alternated repeats; python {py}; pytest args: {opts.pytest_args or '(none)'}")
    print("| run | CPU s per run: median (each repeat) | CPU ms per case | x floor (medians) | x floor (least of each) | start CPU s (nothing selected) | ms per case after the start |")
    print("|---|---|---|---|---|---|---|")
    for name in commands:
        med, low, start = statistics.median(runs[name]), min(runs[name]), statistics.median(starts[name])
        each = ", ".join(f"{v:.2f}" for v in runs[name])
        print(f"| {name} | {med:.2f} ({each}) | {1000 * med / n:.1f} | {med / n / floor:.2f} | {low / n / floor_min:.2f} | {start:.3f} | {1000 * (med - start) / n:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "guitest-bench-4k")
    parser.add_argument("--whole", action="store_true", help="whole processes per case, start-up included (see above)")
    parser.add_argument("--size", default="3840x2160", help="--whole: the rows of this img_size")
    parser.add_argument("--cases", type=int, default=None, help="--whole: only the first N rows of that size")
    parser.add_argument("--python", default=None, help="--whole: the interpreter of the runs (default: this one)")
    parser.add_argument("--pytest-args", default="", help="--whole: more arguments for the pytest runs, e.g. '-p no:anyio'")
    parser.add_argument("--before", type=Path, default=None, help="--whole: also run guitest from this source tree (e.g. git archive of an older commit)")
    opts = parser.parse_args()
    if opts.whole:
        whole(opts)
        return
    paths = screenshots(opts.out, opts.images)
    sizes = [p.stat().st_size for p in paths]
    print(f"{len(paths)} screenshots 3840x2160, {statistics.mean(sizes) / 1e6:.2f} MB mean ({min(sizes) / 1e6:.2f}-{max(sizes) / 1e6:.2f})")
    ctx = multiprocessing.get_context("spawn")
    port = ctx.Value("i", 0)
    bodies = ctx.Queue()
    server = ctx.Process(target=_serve, args=(port, None), daemon=True)
    server.start()
    while not port.value:
        time.sleep(0.01)
    results: dict[str, list[float]] = {"minimal": [], "guitest": [], "guitest, str body": []}
    for _ in range(opts.repeats):  # alternated: a change in the machine's load falls on all three
        results["minimal"].append(minimal(paths, port.value, opts.rounds))
        results["guitest"].append(guitest_case(paths, port.value, opts.rounds, verbatim=True))
        results["guitest, str body"].append(guitest_case(paths, port.value, opts.rounds, verbatim=False))
    server.terminate()
    base = statistics.median(results["minimal"])
    print(f"CPU ms per request, {opts.repeats} repeats of {opts.rounds * len(paths)} requests (median; each repeat)")
    print("| client | ms per request | x minimal |")
    print("|---|---|---|")
    for name, values in results.items():
        med = statistics.median(values)
        print(f"| {name} | {med * 1000:.1f} ({', '.join(f'{v * 1000:.1f}' for v in values)}) | {med / base:.2f} |")
    # the same bytes either way: one request each to a server that keeps the bodies
    port2 = ctx.Value("i", 0)
    keeper = ctx.Process(target=_serve, args=(port2, bodies), daemon=True)
    keeper.start()
    while not port2.value:
        time.sleep(0.01)
    guitest_case(paths[:1], port2.value, 1, verbatim=True)
    guitest_case(paths[:1], port2.value, 1, verbatim=False)
    first, second = bodies.get(timeout=30), bodies.get(timeout=30)
    keeper.terminate()
    print(f"request bodies identical: {first == second} ({len(first)} bytes)")


if __name__ == "__main__":
    main()
