"""One slow endpoint among two: how long a run takes with guitest's picking, and with the picking it replaced.

    python bench/bench_slow_endpoint.py [--cases 600] [--fast 0.05] [--slow 1.0] [--concurrency 4] [--workers 0 2] [--repeats 2]

What a user runs: ``pytest SUITE --model=openai:agent --base-url=FAST --base-url=SLOW --concurrency=C`` (serial and
``-n 2``), the endpoints two loopback OpenAI-compatible servers (tests/fakeserver.py) answering every request after
``--fast`` and ``--slow`` seconds, the suite ``--cases`` small grounding cases (tests/builders.py). Each run is made
twice: with guitest's picking (the least expected wait, guitest/models/endpoints.py), and with the picking it replaced
(the fewest requests in flight; ties: the one that answered fewest), put back for the run by a conftest.py this script
writes. It prints the run's wall time, the replies each endpoint gave, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import fakeserver  # noqa: E402
from builders import write_suite  # noqa: E402

#: the picking guitest used before: the fewest in flight, then the fewest answered (guitest/models/endpoints.py at d97d554)
OLD_PICKING = """
from guitest.models import endpoints

def pick(self, avoid=None):
    with self._lock:
        up = [e for e in self.endpoints if e.down is None]
        if not up:
            return None
        others = [e for e in up if e is not avoid] or up
        return min(others, key=lambda e: (e.in_flight, e.replies + e.failures, e.index))

endpoints.EndpointPool.pick = pick
"""


def rows(cases: int) -> list:
    per = 6
    return [("desktop", f"shot{n}.png", (400, 300), [(10 + 40 * k, 10, 30, 20, f"target {n}-{k}", "text", "windows") for k in range(per)]) for n in range(max(cases // per, 1))]


def run(folder: Path, urls: list[str], concurrency: int, workers: int) -> tuple[float, dict[str, int]]:
    args = [
        sys.executable,
        "-m",
        "pytest",
        "suites/tiny",
        "--model=openai:agent",
        *(f"--base-url={u}" for u in urls),
        f"--concurrency={concurrency}",
        "--cache=off",
        "-q",
        "-p",
        "no:cacheprovider",
        *(["-n", str(workers)] if workers else []),
    ]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=folder, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    report = json.loads((folder / "reports" / "tiny.json").read_text())
    return wall, {e["url"]: e["replies"] for e in report["run"]["endpoints"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--fast", type=float, default=0.05, help="seconds the fast endpoint takes per reply")
    parser.add_argument("--slow", type=float, default=1.0, help="seconds the slow endpoint takes per reply")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--repeats", type=int, default=2)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ours, old = root / "ours", root / "old"
        for folder in (ours, old):
            write_suite(folder / "suites" / "tiny", rows=rows(opts.cases))
        (old / "conftest.py").write_text(OLD_PICKING)
        with fakeserver.serve(root, latency=opts.fast, max_seconds=3600) as fast, fakeserver.serve(root, latency=opts.slow, max_seconds=3600) as slow:
            urls = [fast.base_url, slow.base_url]
            print(f"{opts.cases} cases, fast {opts.fast:g} s and slow {opts.slow:g} s per reply, --concurrency={opts.concurrency} per endpoint")
            print("| workers | picking | wall s (each repeat) | replies fast, slow |")
            print("|---|---|---|---|")
            for workers in opts.workers:
                best = {}
                for name, folder in (("least expected wait (guitest)", ours), ("fewest in flight (before)", old)):
                    walls, shares = [], {}
                    for _ in range(opts.repeats):
                        wall, shares = run(folder, urls, opts.concurrency, workers)
                        walls.append(wall)
                    best[name] = min(walls)
                    print(f"| {workers or 'serial'} | {name} | {', '.join(f'{w:.1f}' for w in walls)} | {shares.get(fast.base_url)}, {shares.get(slow.base_url)} |")
                ratio = best["fewest in flight (before)"] / best["least expected wait (guitest)"]
                print(f"| {workers or 'serial'} | ratio (before / guitest, best of each) | {ratio:.2f}x | |")


if __name__ == "__main__":
    main()
