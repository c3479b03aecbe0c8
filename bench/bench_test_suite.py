"""The project's own test suite as CI runs it: wall time, CPU, the slowest tests and files, optionally under a stated
CPU load (issue 46: the README test command within 15 minutes of tests on a quiet 2-core machine, and green on a busy
one).

Run it with the test environment's Python, from the repository (tox makes that environment; its settings are read
from tox.ini's ``setenv`` so the run is the one ``tox -e py311`` makes):

    .tox/py311/bin/python bench/bench_test_suite.py                  # quiet: the figure docs/bench.md quotes
    .tox/py311/bin/python bench/bench_test_suite.py --load 2         # two busy processes per core beside it
    .tox/py311/bin/python bench/bench_test_suite.py --top 20 -- -k "not desktop"   # pytest's own arguments after --

It runs ``python -m pytest -n WORKERS --durations=0`` once and prints: the exit status and pytest's last line, the wall
time, the CPU the whole process tree used (this process's reaped children: every pytest process, browser, desktop and
server the tests start and end), the machine's load average before and after, the ``--top`` slowest tests and the
files by their summed durations. ``--json FILE`` keeps the figures. The busy processes (``--load N``: N per core, each
a tight loop at normal priority) start before the run and are killed after it.
"""

from __future__ import annotations

import argparse
import configparser
import json
import multiprocessing
import os
import re
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DURATION = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(\S+)")


def busy() -> None:  # pragma: no cover (a child that spins until killed)
    while True:
        pass


def tox_setenv() -> dict[str, str]:
    """The environment variables tox.ini's [testenv] sets for the tests."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO / "tox.ini")
    raw = parser.get("testenv", "setenv", fallback="")
    out = {}
    for line in raw.splitlines():
        if "=" in line and not line.strip().startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (tox.ini runs -n 2)")
    parser.add_argument("--load", type=float, default=0.0, help="busy processes per core beside the run (0: a quiet machine)")
    parser.add_argument("--top", type=int, default=20, help="how many of the slowest tests to list")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("pytest_args", nargs="*", help="pytest's own arguments (after --)")
    args = parser.parse_args(argv)

    env = {**os.environ, **tox_setenv()}
    spinners = [multiprocessing.Process(target=busy, daemon=True) for _ in range(round(args.load * (os.cpu_count() or 1)))]
    for spinner in spinners:
        spinner.start()
    load_before = os.getloadavg()
    command = [sys.executable, "-m", "pytest", "-n", str(args.workers), "--durations=0", "-q", "-p", "no:cacheprovider", *args.pytest_args]
    began, cpu_began = time.monotonic(), cpu_seconds()
    try:
        done = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    finally:
        for spinner in spinners:
            spinner.kill()
    wall, cpu = time.monotonic() - began, cpu_seconds() - cpu_began
    load_after = os.getloadavg()

    tests: dict[str, float] = defaultdict(float)
    for line in done.stdout.splitlines():
        match = DURATION.match(line)
        if match:
            tests[match[3]] += float(match[1])
    files: dict[str, float] = defaultdict(float)
    for test, seconds in tests.items():
        files[test.split("::")[0]] += seconds
    last = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "")
    figures = {
        "command": " ".join(command),
        "exit": done.returncode,
        "summary": last.strip("= "),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "busy_processes": len(spinners),
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "slowest": [[round(s, 2), t] for t, s in sorted(tests.items(), key=lambda kv: -kv[1])[: args.top]],
        "files": [[round(s, 1), f] for f, s in sorted(files.items(), key=lambda kv: -kv[1])],
        "tests_summed_s": round(sum(tests.values()), 1),
    }
    print(f"exit {done.returncode}: {figures['summary']}")
    print(f"wall {wall:.0f} s ({wall / 60:.1f} min), CPU {cpu:.0f} s, {len(spinners)} busy process(es) on {os.cpu_count()} cores, load {load_before[0]:.1f} -> {load_after[0]:.1f}")
    print(f"\nthe {args.top} slowest tests (setup, call and teardown summed):")
    for seconds, test in figures["slowest"]:
        print(f"{seconds:8.2f} s  {test}")
    print(f"\nfiles by their tests' summed time (all tests: {figures['tests_summed_s']:.0f} s over {args.workers} workers):")
    for seconds, name in figures["files"][: args.top]:
        print(f"{seconds:8.1f} s  {name}")
    if done.returncode != 0:
        print("\n" + "\n".join(line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
