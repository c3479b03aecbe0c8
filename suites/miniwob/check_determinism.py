"""Check that the same seed gives the same first screen, task by task, in guitest's MiniWoB++ backend.

    python suites/miniwob/check_determinism.py [--seeds 0 1] [--all] [--tasks click-button ...]

For each task of tasks.json (the default selection; ``--all`` adds the flagged ones) and each seed:
reset with the seed, reset with another seed, reset with the seed again, in the same environment;
the two screens of the seed must be the same PNG bytes and the same utterance. Prints the tasks
where they differ (and, for flagged tasks, whether the package's flag is borne out). Exit status 1
when an unflagged task differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from guitest import envs
from guitest.live.protocol import TaskSpec

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--all", action="store_true", help="the flagged tasks too")
    parser.add_argument("--tasks", nargs="+")
    args = parser.parse_args(argv)
    rows = json.load(open(os.path.join(HERE, "tasks.json"), encoding="utf-8"))
    rows = [r for r in rows if (args.all or not r.get("flags")) and (not args.tasks or r["task"] in args.tasks)]
    env = envs.open_env("miniwob", {"zoom": 3})
    differ: list[tuple[str, int, str, list[str]]] = []
    try:
        for row in rows:
            task = TaskSpec("miniwob", row["task"])
            for seed in args.seeds:
                try:
                    first = env.reset(task, seed)
                    env.reset(task, seed + 1000)
                    again = env.reset(task, seed)
                except Exception as exc:  # noqa: BLE001 - a page that fails is reported, the scan goes on
                    differ.append((row["task"], seed, f"error: {exc}", row.get("flags", [])))
                    continue
                what = [w for w, same in (("utterance", first.instruction == again.instruction), ("screenshot", first.screenshot == again.screenshot)) if not same]
                if what:
                    differ.append((row["task"], seed, " and ".join(what) + " differ", row.get("flags", [])))
    finally:
        env.close()
        envs.shutdown()
    for name, seed, what, flags in differ:
        print(f"{name} seed {seed}: {what}" + (f" (flagged: {', '.join(flags)})" if flags else " (NOT flagged)"))
    unflagged = [d for d in differ if not d[3]]
    print(f"{len(rows)} tasks x {len(args.seeds)} seeds checked: {len(differ)} differ, {len(unflagged)} of them unflagged")
    return 1 if unflagged else 0


if __name__ == "__main__":
    sys.exit(main())
