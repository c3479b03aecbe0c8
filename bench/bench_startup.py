"""What a process of a grounding run costs before its first case: the CPU of importing the plugin and of collecting a suite.

    python bench/bench_startup.py [--repeats 15] [--suite suites/demo] [--before DIR] [--model oracle]

Every pytest process pays this, the controller and each xdist worker alike. For each source tree (this one, and with
``--before`` a checkout of another commit, e.g. ``git worktree add /tmp/before d97d554``), it runs ``--repeats``
times, alternating the trees, in fresh processes:

- ``import``: ``python -c "import guitest.plugin"``;
- ``collect``: ``python -m pytest SUITE --collect-only -q --model=MODEL -p no:cacheprovider`` (start-up, the plugin,
  reading the suite and its samples);
- ``import pytest``: the floor, for scale;

after one run of each that writes the trees' byte code, and prints the median CPU seconds (user + system, of the child process) of each, and which live, desktop or browser
modules the plugin loaded (``guitest.live``, ``guitest.envs``, ``guitest.desktopenv``, ``playwright``, ...).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIVE = ("guitest.live", "guitest.envs", "guitest.desktopenv", "guitest.localdesktop", "guitest.miniwob.env", "playwright")


def cpu(args: list[str], tree: Path) -> float:
    """CPU seconds (user + system) of one run of ``args`` with ``tree`` first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # the byte code cached, as users run
    subprocess.run(args, cwd=tree, env={**env, "PYTHONPATH": str(tree)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def loaded(tree: Path) -> list[str]:
    code = f"import sys, guitest.plugin; print(sorted(m for m in sys.modules if m.startswith({LIVE!r})))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True, check=True)
    return eval(out.stdout)  # noqa: S307 - a list literal this script printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--suite", default="suites/demo")
    parser.add_argument("--model", default="oracle")
    parser.add_argument("--before", type=Path, help="another source tree to compare with (a git worktree of an older commit)")
    opts = parser.parse_args()
    trees = {"this tree": REPO, **({f"before ({opts.before})": opts.before.resolve()} if opts.before else {})}
    commands = {
        "import pytest": [sys.executable, "-c", "import pytest"],
        "import": [sys.executable, "-c", "import guitest.plugin"],
        "collect": [sys.executable, "-m", "pytest", opts.suite, "--collect-only", "-q", f"--model={opts.model}", "-p", "no:cacheprovider"],
    }
    samples: dict[tuple[str, str], list[float]] = {(t, c): [] for t in trees for c in commands}
    for tree in trees.values():  # a first run writes each tree's byte code (and pytest's rewritten plugin) for the rest
        for args in commands.values():
            cpu(args, tree)
    for _ in range(opts.repeats):
        for name, tree in trees.items():  # alternated, so a change in the machine's load falls on both
            for what, args in commands.items():
                samples[(name, what)].append(cpu(args, tree))
    print(f"median CPU seconds over {opts.repeats} runs (user + system)")
    print("| tree | " + " | ".join(commands) + " | live/desktop/browser modules loaded by the plugin |")
    print("|---" * (len(commands) + 2) + "|")
    for name, tree in trees.items():
        mods = loaded(tree)
        shown = ", ".join(mods) if len(mods) <= 6 else f"{len(mods)} ({', '.join(mods[:4])}, ...)"
        print(f"| {name} | " + " | ".join(f"{statistics.median(samples[(name, c)]):.3f}" for c in commands) + f" | {shown or 'none'} |")


if __name__ == "__main__":
    main()
