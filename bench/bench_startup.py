"""What a process of a grounding run costs before its first case: the CPU of importing the plugin, of collecting a
suite, and of a whole start against pytest's own.

    python bench/bench_startup.py [--repeats 15] [--suite suites/demo] [--before DIR] [--model oracle] [--python PY]

Every pytest process pays this, the controller and each xdist worker alike. For each source tree (this one, and with
``--before`` a checkout of another commit, e.g. ``git worktree add /tmp/before d97d554``), it runs ``--repeats``
times, alternating the trees, in fresh processes:

- ``import``: ``python -c "import guitest.plugin"``;
- ``collect``: ``python -m pytest SUITE --collect-only -q --model=MODEL -p no:cacheprovider`` (start-up, the plugin,
  reading the suite and its samples);
- ``import pytest``: the floor, for scale;

after one run of each that writes the trees' byte code, and prints the median CPU seconds (user + system, of the child
process) of each, and which of the modules a grounding run loads only where it needs them (live, desktop and browser
modules, PIL, jsonschema, the report's modules, openai) importing the plugin loaded.

Then the start of this tree, part by part (the same alternation and medians, the minimum beside each):

- ``import pytest``: ``python -c "import pytest"``, the yardstick (the start may cost at most twice this);
- ``pytest, no plugins``: ``python -m pytest SUITE -k none`` with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` (pytest
  alone, walking the suite's folder);
- ``pytest and its plugins`` (``-p no:guitest``): what the installed plugins add (xdist, which guitest depends on;
  anyio's, which comes with openai's httpx; hypothesis's where it is installed);
- the same without anyio's (``-p no:anyio``), and without hypothesis's too (``-p no:hypothesispytest``, where
  hypothesis is installed: a developer's environment);
- ``the start``: ``python -m pytest SUITE --model=MODEL -k none`` (a run that selects nothing: the plugin, the model,
  reading and checking the suite), and the same with ``-p no:anyio`` (and ``-p no:hypothesispytest``);

and guitest's part: the start less pytest and its plugins. These pytest runs pass ``--noconftest``: this repository's
own ``conftest.py`` (the tests' set-up: it imports the plugin and pytester) would otherwise load guitest into the
runs without it; the command as written, conftest included, is measured too. ``--python`` runs them with another interpreter (a user's
environment: ``python3.11 -m venv /tmp/userenv && /tmp/userenv/bin/pip install -e .'[ocr]'``); the byte code is kept
(``PYTHONDONTWRITEBYTECODE`` unset), as users run.
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
LAZY = (
    "guitest.live",
    "guitest.envs",
    "guitest.desktopenv",
    "guitest.localdesktop",
    "guitest.miniwob.env",
    "playwright",
    "PIL",
    "jsonschema",
    "openai",
    "guitest.reporting.builder",
    "guitest.reporting.writer",
)


NO_ANYIO = "pytest and its plugins but anyio's"
NO_PLUGINS = "pytest and its plugins but anyio's and hypothesis's"


def cpu(args: list[str], tree: Path, extra_env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) of one run of ``args`` with ``tree`` first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS")}  # the byte code cached, as users run
    subprocess.run(args, cwd=tree, env={**env, "PYTHONPATH": str(tree), **(extra_env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def loaded(tree: Path, python: str) -> list[str]:
    code = f"import sys, guitest.plugin; print(sorted(m for m in sys.modules if m.startswith({LAZY!r})))"
    out = subprocess.run([python, "-c", code], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True, check=True)
    return eval(out.stdout)  # noqa: S307 - a list literal this script printed


def trees_table(opts: argparse.Namespace, python: str) -> None:
    """The first table: import and collect per tree."""
    trees = {"this tree": REPO, **({f"before ({opts.before})": opts.before.resolve()} if opts.before else {})}
    commands = {
        "import pytest": [python, "-c", "import pytest"],
        "import": [python, "-c", "import guitest.plugin"],
        "collect": [python, "-m", "pytest", opts.suite, "--collect-only", "-q", f"--model={opts.model}", "-p", "no:cacheprovider"],
    }
    samples: dict[tuple[str, str], list[float]] = {(t, c): [] for t in trees for c in commands}
    for tree in trees.values():  # a first run writes each tree's byte code (and pytest's rewritten plugin) for the rest
        for args in commands.values():
            cpu(args, tree)
    for _ in range(opts.repeats):
        for name, tree in trees.items():  # alternated, so a change in the machine's load falls on both
            for what, args in commands.items():
                samples[(name, what)].append(cpu(args, tree))
    print(f"median CPU seconds over {opts.repeats} runs (user + system), {python}")
    print("| tree | " + " | ".join(commands) + " | of the lazily loaded modules, loaded by the plugin |")
    print("|---" * (len(commands) + 2) + "|")
    for name, tree in trees.items():
        mods = sorted({m.split(".")[0] if not m.startswith("guitest") else m for m in loaded(tree, python)})
        shown = ", ".join(mods) if len(mods) <= 6 else f"{len(mods)} ({', '.join(mods[:4])}, ...)"
        print(f"| {name} | " + " | ".join(f"{statistics.median(samples[(name, c)]):.3f}" for c in commands) + f" | {shown or 'none'} |")


def start_table(opts: argparse.Namespace, python: str) -> None:
    """The second table: the start of this tree against ``import pytest``, part by part."""
    pytest = [python, "-m", "pytest", opts.suite, "-k", "none", "--noconftest"]
    start = [*pytest, f"--model={opts.model}"]
    parts: dict[str, tuple[list[str], dict[str, str]]] = {
        "import pytest": ([python, "-c", "import pytest"], {}),
        "the command as written (this repository's conftest.py included)": ([python, "-m", "pytest", opts.suite, f"--model={opts.model}", "-k", "none"], {}),
        "pytest, no plugins": (pytest, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        "pytest and its plugins": ([*pytest, "-p", "no:guitest"], {}),
        NO_ANYIO: ([*pytest, "-p", "no:guitest", "-p", "no:anyio"], {}),
        NO_PLUGINS: ([*pytest, "-p", "no:guitest", "-p", "no:anyio", "-p", "no:hypothesispytest"], {}),
        "the start": (start, {}),
        "the start, -p no:anyio": ([*start, "-p", "no:anyio"], {}),
        "the start, -p no:anyio -p no:hypothesispytest": ([*start, "-p", "no:anyio", "-p", "no:hypothesispytest"], {}),
    }
    for args, env in parts.values():
        cpu(args, REPO, env)
    samples: dict[str, list[float]] = {name: [] for name in parts}
    for _ in range(opts.repeats):
        for name, (args, env) in parts.items():
            samples[name].append(cpu(args, REPO, env))
    med = {name: statistics.median(v) for name, v in samples.items()}
    low = {name: min(v) for name, v in samples.items()}
    print(f"\nthe start of `pytest {opts.suite} --model={opts.model} -k none`, part by part: CPU seconds over {opts.repeats} runs, {python}")
    print("| what | median | min | x import pytest (medians) |")
    print("|---|---|---|---|")
    for name in samples:
        print(f"| {name} | {med[name]:.3f} | {low[name]:.3f} | {med[name] / med['import pytest']:.2f} |")
    pairs = {
        "": ("the start", "pytest and its plugins"),
        ", both without anyio's plugin": ("the start, -p no:anyio", NO_ANYIO),
        ", both without anyio's and hypothesis's": ("the start, -p no:anyio -p no:hypothesispytest", NO_PLUGINS),
    }
    for label, (ours, theirs) in pairs.items():
        print(f"| guitest's part{label} (the start less pytest and its plugins) | {med[ours] - med[theirs]:.3f} | {low[ours] - low[theirs]:.3f} | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--suite", default="suites/demo")
    parser.add_argument("--model", default="oracle")
    parser.add_argument("--before", type=Path, help="another source tree to compare with (a git worktree of an older commit)")
    parser.add_argument("--python", default=None, help="the interpreter to run (default: this one)")
    opts = parser.parse_args()
    python = opts.python or sys.executable
    trees_table(opts, python)
    start_table(opts, python)


if __name__ == "__main__":
    main()
