"""How fast live MiniWoB++ tasks run in the browser: the environment's overhead per step, and scripted episodes per second.

    python bench/bench_live.py [--steps 60] [--seeds 5] [--processes 1 2] [--tasks click-button enter-text ...]
                               [--runner guitest] [--no-overhead] [--no-oracle]
                               [--pytest-seeds 25] [--pytest-workers 0 2] [--miniwob-workers 2] [--miniwob-concurrency 0 1]

Part 1, overhead per step at zoom 3 (the 160x210 task area as a 480x630 screenshot), on a reused
page of ``click-test``: medians over ``--steps`` of

- ``screenshot``: the PNG of the task area alone;
- ``click``: a click on empty space (the episode goes on);
- ``reward read``: the task's state (done, raw reward, utterance) after one animation frame;
- ``step``: a whole ``env.step(click)`` as the loop sees it (click, settle, state, screenshot), from
  the calling thread through the browser thread and back;
- ``reset``: ``env.reset(task, seed)`` after an episode (a new episode on a fresh document it loads itself, the timer
  switched off);
- ``release+reset``: ``env.release()`` then ``env.reset(task, seed)``, the boundary between two episodes of a task as
  the pool runs it (release starts loading the next document, reset waits for it).

Part 3, through pytest (``--pytest-seeds``, ``--pytest-workers``): the 4 tasks of tests/live_app x N seeds as a
live suite, the agent a loopback OpenAI-compatible server (tests/fakeserver.py) that answers every step at once
with the right action in guitest's own format (a scripted policy; 3 of the 4 tasks right by design), serial and
``-n 2``: episodes per second over the run phase (bench/bench_timing.py).

Part 4, what a user types: ``pytest suites/miniwob --model=oracle -n 2``, at the default ``--concurrency`` and at 1
(``--miniwob-workers``, ``--miniwob-concurrency``): episodes per second over the run phase, success (1.0 expected).

Part 2, the ``oracle`` baseline over its MiniWoB++ subset (every task of
:data:`guitest.miniwob.oracle.SOLVED` x ``--seeds`` seeds) speaking through ``--runner`` (render, read, map,
act; default guitest's own format), one process per ``--processes`` value: episodes per second (wall time from
the first reset to the last evaluation, browser start-up excluded), steps per second, and the success
rate per task, which must be 1.0 everywhere (the check of the whole path). Runs with 2 processes
split the episodes evenly, each process with its own browser, as ``pytest -n 2`` would.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from typing import Any, Callable

from guitest import envs
from guitest.envs.browser.steps import screenshot
from guitest.miniwob.env import STATE_JS
from guitest.live import runners
from guitest.live.actions import Action
from guitest.live.baseline_policies import OraclePolicy
from guitest.live.loop import run_episode
from guitest.miniwob.oracle import SOLVED
from guitest.live.protocol import TaskSpec


def median_ms(fn: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def overhead(steps: int) -> dict[str, float]:
    """Part 1's medians in milliseconds."""
    env = envs.open_env("miniwob", {"zoom": 3})
    task = TaskSpec("miniwob", "click-test")
    env.reset(task, 0)
    blank = Action("click", point=(470.0, 620.0), space="screen")  # bottom-right corner: empty white task area
    out = {
        "screenshot": median_ms(lambda: env.browser.run(lambda page: screenshot(page, env.area)), steps),
        "click": median_ms(lambda: env.browser.run(lambda page: page.mouse.click(156, 206)), steps),
        "reward read": median_ms(lambda: env.browser.run(lambda page: page.evaluate(STATE_JS, {"frames": 1, "limit": 0})), steps),
        "step": median_ms(lambda: env.step(blank), steps),
        "reset": median_ms(lambda: env.reset(task, 0), steps),
        "release+reset": median_ms(lambda: (env.release(), env.reset(task, 0)), steps),
    }
    env.close()
    envs.shutdown()
    return out


def oracle_run(jobs: list[tuple[str, int]], runner: str = "guitest", max_steps: int = 15) -> dict[str, Any]:
    """The oracle over ``jobs`` ((task, seed) pairs, in order) in one MiniWoB++ environment at zoom 3, opened and
    closed here: ``{"open_s", "run_s", "close_s", "episodes"}`` (run_s from the first reset to the last evaluation;
    the Episodes in the jobs' order). bench_browsergym.py times guitest's side with it."""
    begun = time.perf_counter()
    env = envs.open_env("miniwob", {"zoom": 3})
    policy = OraclePolicy(env, runners.get(runner))
    start = time.perf_counter()
    episodes = []
    for name, seed in jobs:
        episodes.append(run_episode(env, TaskSpec("miniwob", name), seed, policy, max_steps))
        env.release()  # as EnvPool does when an episode ends: the next document starts loading
    ended = time.perf_counter()
    env.close()
    envs.shutdown()
    return {"open_s": start - begun, "run_s": ended - start, "close_s": time.perf_counter() - ended, "episodes": episodes}


def _episodes(jobs: list[tuple[str, int]], queue: Any, runner: str) -> None:
    """Run the oracle over ``jobs`` in this process; put (seconds, steps, [(task, seed, success, score)])."""
    run = oracle_run(jobs, runner)
    episodes = run["episodes"]
    queue.put((run["run_s"], sum(len(e.steps) for e in episodes), [(e.task, e.seed, e.success, e.score) for e in episodes]))


def throughput(tasks: list[str], seeds: int, processes: int, runner: str = "guitest") -> dict[str, Any]:
    """Part 2 with ``processes`` processes: episodes and steps per second, failures."""
    jobs = [(t, s) for t in tasks for s in range(seeds)]
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    shares = [jobs[i::processes] for i in range(processes)]
    workers = [ctx.Process(target=_episodes, args=(share, queue, runner)) for share in shares]
    for w in workers:
        w.start()
    parts = [queue.get() for _ in workers]
    for w in workers:
        w.join()
    wall = max(p[0] for p in parts)
    steps = sum(p[1] for p in parts)
    results = [r for p in parts for r in p[2]]
    by_task: dict[str, list[bool]] = {}
    for name, _, success, _ in results:
        by_task.setdefault(name, []).append(success)
    return {
        "processes": processes,
        "episodes": len(results),
        "steps": steps,
        "seconds": wall,
        "episodes_per_second": len(results) / wall,
        "steps_per_second": steps / wall,
        "success_rate": sum(s for _, _, s, _ in results) / len(results),
        "failed": [(n, s, score) for n, s, ok, score in results if not ok],
        "per_task": {t: sum(v) / len(v) for t, v in sorted(by_task.items())},
    }


STEPS = {  # the scripted policy of part 3 on tests/live_app (element centres as fractions of the 800x600 screen)
    "Press the green button": [{"kind": "click", "point": [0.7, 0.2167]}, {"kind": "done"}],
    "Press the blue button": [{"kind": "click", "point": [0.45, 0.6333]}, {"kind": "done"}],
    "Press the red button": [{"kind": "click", "point": [0.2, 0.2167]}, {"kind": "done"}],
    "Write grüße 東京 in the box": [{"kind": "click", "point": [0.3125, 0.7833]}, {"kind": "type", "text": "grüße 東京"}, {"kind": "key", "keys": ["enter"]}, {"kind": "done"}],
}


def through_pytest(seeds: int, workers: int, work: str) -> dict[str, Any]:
    """Part 3: ``pytest`` over tests/live_app's 4 tasks x ``seeds`` seeds, the agent a loopback OpenAI-compatible server
    that answers every step at once with the right action (a scripted policy; guitest's own action format), ``-n workers``.
    Episodes per second over the run phase (first case started to last case finished, bench_timing), success rate."""
    import json
    import shutil
    from pathlib import Path

    import yaml

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent / "tests"))
    import fakeserver

    folder = Path(work) / "live_app"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(here.parent / "tests" / "live_app", folder)
    (folder / "live_suite.yaml").rename(folder / "suite.yaml")
    tasks = yaml.safe_load((folder / "tasks.yaml").read_text())
    for task in tasks:
        task["seeds"] = list(range(seeds))
    (folder / "tasks.yaml").write_text(yaml.safe_dump(tasks))
    script = {key: [{"policy": acts, "convention": "guitest", "space": "normalized"}] * (10 * seeds) for key, acts in STEPS.items()}
    with fakeserver.serve(Path(work), script=script) as server:
        done, run_s, wall = _timed_pytest(
            [str(folder / "suite.yaml"), "--model=openai:agent", f"--base-url={server.base_url}", "--cache=off", f"--report-dir={folder / 'reports'}", *(["-n", str(workers)] if workers else [])],
            work,
            f"live_{workers}",
        )
    report = json.loads((folder / "reports" / "live_app.json").read_text())
    n = report["n_results"]
    return {
        "workers": workers,
        "episodes": n,
        "steps": sum(c["steps"] for c in report["cases"]),
        "run_s": run_s,
        "wall_s": wall,
        "episodes_per_second": n / run_s,
        "success_rate": report["task_metrics"]["success"]["overall"]["success_rate"],
        "exit": done.returncode,
    }


def oracle_through_pytest(workers: int, concurrency: int | None, work: str) -> dict[str, Any]:
    """Part 4: ``pytest suites/miniwob --model=oracle -n workers`` as a user types it (``concurrency`` None: the default),
    episodes per second over the run phase, success rate."""
    import json
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    reports = Path(work) / f"miniwob_{workers}_{concurrency}"
    args = [str(repo / "suites" / "miniwob"), "--model=oracle", f"--report-dir={reports}", *(["-n", str(workers)] if workers else [])]
    done, run_s, wall = _timed_pytest(args + ([f"--concurrency={concurrency}"] if concurrency else []), work, f"miniwob_{workers}_{concurrency}")
    report = json.loads((reports / "miniwob.json").read_text())
    n = report["n_results"]
    return {
        "workers": workers,
        "concurrency": concurrency,
        "episodes": n,
        "run_s": run_s,
        "wall_s": wall,
        "episodes_per_second": n / run_s,
        "success_rate": report["task_metrics"]["success"]["overall"]["success_rate"],
        "exit": done.returncode,
    }


def _timed_pytest(args: list[str], work: str, tag: str) -> tuple[Any, float, float]:
    """``pytest *args`` in a subprocess with bench_timing: (the finished process, run-phase seconds, whole seconds)."""
    import json
    import os
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent
    timing = Path(work) / f"timing_{tag}.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), os.environ.get("PYTHONPATH", "")]), GUITEST_BENCH_TIMING=str(timing))
    command = [sys.executable, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider", "-p", "bench_timing"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
    return done, json.loads(timing.read_text())["run_s"], wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=60, help="samples per overhead median")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per task for the oracle run")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--tasks", nargs="+", default=list(SOLVED))
    parser.add_argument("--runner", default="guitest", choices=tuple(runners.RUNNERS.names()), help="the runner the oracle speaks through (its syntax and coordinates)")
    parser.add_argument("--no-overhead", action="store_true", help="skip part 1")
    parser.add_argument("--no-oracle", action="store_true", help="skip part 2")
    parser.add_argument("--pytest-seeds", type=int, default=25, help="part 3: seeds per task of tests/live_app (4 tasks); 0 skips part 3")
    parser.add_argument("--pytest-workers", type=int, nargs="+", default=[0, 2], help="part 3: -n values (0: serial)")
    parser.add_argument("--miniwob-workers", type=int, nargs="*", default=[2], help="part 4: -n values for pytest suites/miniwob --model=oracle (none: skip)")
    parser.add_argument("--miniwob-concurrency", type=int, nargs="+", default=[0, 1], help="part 4: --concurrency values (0: the default)")
    parser.add_argument("--work", default="/tmp/guitest-bench-live", help="parts 3 and 4's scratch folder")
    args = parser.parse_args(argv)

    if not args.no_overhead:
        print(f"overhead per step at zoom 3, medians of {args.steps}:")
        for name, ms in overhead(args.steps).items():
            print(f"  {name:14s} {ms:7.1f} ms")
    ok = True
    for processes in [] if args.no_oracle else args.processes:
        r = throughput(args.tasks, args.seeds, processes, args.runner)
        print(
            f"oracle ({args.runner}), {r['processes']} process(es): {r['episodes']} episodes, {r['steps']} steps in {r['seconds']:.1f} s: "
            f"{r['episodes_per_second']:.2f} episodes/s, {r['steps_per_second']:.2f} steps/s, success {r['success_rate']:.3f}"
        )
        for name, seed, score in r["failed"]:
            print(f"  FAILED {name} seed {seed}: raw reward {score}")
        ok = ok and not r["failed"]
    if not args.no_oracle:
        print(f"tasks: {len(args.tasks)} ({', '.join(args.tasks)})")
    if args.pytest_seeds:
        os.makedirs(args.work, exist_ok=True)
        for workers in args.pytest_workers:
            r = through_pytest(args.pytest_seeds, workers, args.work)
            print(
                f"pytest, a loopback policy answering at once, -n {r['workers']}: {r['episodes']} episodes, {r['steps']} steps in "
                f"{r['run_s']:.1f} s run phase ({r['wall_s']:.1f} s whole process): {r['episodes_per_second']:.2f} episodes/s, "
                f"success {r['success_rate']:.3f} (the policy is right on all 4 tasks: 1.000 expected)"
            )
            ok = ok and r["exit"] == 0 and r["success_rate"] == 1.0
    for workers in args.miniwob_workers:
        os.makedirs(args.work, exist_ok=True)
        for concurrency in args.miniwob_concurrency:
            r = oracle_through_pytest(workers, concurrency or None, args.work)
            print(
                f"pytest suites/miniwob --model=oracle -n {workers} --concurrency={concurrency or 'default'}: {r['episodes']} episodes in "
                f"{r['run_s']:.1f} s run phase ({r['wall_s']:.1f} s whole process): {r['episodes_per_second']:.2f} episodes/s, success {r['success_rate']:.3f}"
            )
            ok = ok and r["exit"] == 0 and r["success_rate"] == 1.0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
