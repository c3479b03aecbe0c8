"""How many remote machines one orchestrator keeps busy: desktop episodes at once, steps per second, CPU per step.

    python bench/bench_orchestrator.py [--machines 4 8 16 32] [--latency 1.0] [--steps 5] [--episodes-per-machine 2] [--workers 0]

What a user runs: ``pytest SUITE --model=openai:agent --base-url=URL --env-url=M1 ... --env-url=MK --concurrency=K``
(serial, or ``-n`` with ``--workers``) on a desktop suite of ``K x --episodes-per-machine`` tasks, each episode
``--steps`` steps (``--max-steps``; the agent never says done). The machines: K fake OSWorld machines
(tests/fakemachine.py) in one other process, each answering ``GET /screenshot`` with a 1920x1080 PNG of the real
screenshots' entropy (bench/make_pro.py, about 1 MB) and every action at once; the model: a loopback
OpenAI-compatible server (tests/fakeserver.py) answering every step after ``--latency`` seconds (a GPU's reply time).
Each step is a screenshot fetched, a request with it sent, a reply read and an action posted.

For each K it prints the wall time, steps per second, the ideal (K machines each taking a step every ``--latency``
seconds), the share of it reached, and the CPU of the pytest processes per step (user + system; the machines' and the
model's processes are not counted). Where the share falls, the orchestrator saturates.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

SUITE = """\
name: fleet
format: osworld
data: {dir: ., base: suite, annotations: "examples/*/*.json"}
task: live
env: desktop
env_options: {evaluate_after: 0, settle: 0, ready_after: 0, reset_desktop: false}
id: "{app}-{task_id}"
"""


def _machines(count: int, shot: bytes, urls: Any, stop: Any) -> None:
    from fakemachine import FakeMachine

    machines = [FakeMachine().__enter__() for _ in range(count)]
    for m in machines:
        m.shot = shot
    urls.put([m.url for m in machines])
    stop.wait()


def cpu_of(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and exit status of one pytest run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 10):
        raise SystemExit(f"pytest exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machines", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the model takes per step")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--episodes-per-machine", type=int, default=2)
    parser.add_argument("--workers", type=int, default=0, help="pytest -n (0: serial)")
    opts = parser.parse_args()
    import io

    import fakeserver
    from make_pro import compose

    buf = io.BytesIO()
    compose((1920, 1080), seed=7).save(buf, "PNG")
    shot = buf.getvalue()
    ctx = multiprocessing.get_context("spawn")
    print(
        f"screenshot 1920x1080, {len(shot) / 1e6:.2f} MB; model {opts.latency:g} s per step; {opts.steps} steps per episode; "
        f"{opts.episodes_per_machine} episodes per machine; {'serial' if not opts.workers else f'-n {opts.workers}'}"
    )
    print("| machines | episodes | steps | wall s | steps/s | ideal steps/s | reached | CPU ms per step |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with fakeserver.serve(root, latency=opts.latency, max_seconds=7200) as model:
            for count in opts.machines:
                urls_q, stop = ctx.Queue(), ctx.Event()
                proc = ctx.Process(target=_machines, args=(count, shot, urls_q, stop), daemon=True)
                proc.start()
                urls = urls_q.get(timeout=60)
                folder = root / f"run-{count}"
                suite = folder / "suites" / "fleet"
                (suite / "examples" / "a").mkdir(parents=True)
                (suite / "suite.yaml").write_text(SUITE)
                episodes = count * opts.episodes_per_machine
                for i in range(episodes):
                    task = {"instruction": f"Task {i}: do the thing.", "evaluator": {"func": "infeasible"}}
                    (suite / "examples" / "a" / f"t{i}.json").write_text(json.dumps(task))
                args = [
                    sys.executable,
                    "-m",
                    "pytest",
                    "suites/fleet",
                    "--model=openai:agent",
                    f"--base-url={model.base_url}",
                    *(f"--env-url={u}" for u in urls),
                    f"--concurrency={count}",
                    f"--max-steps={opts.steps}",
                    "--cache=off",
                    "--allow-unknown-state",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    *(["-n", str(opts.workers)] if opts.workers else []),
                ]
                wall, cpu, _ = cpu_of(args, folder)
                stop.set()
                proc.join(timeout=10)
                report = json.loads((folder / "reports" / "fleet.json").read_text())
                steps = sum(len((c.get("episode") or {}).get("trajectory") or []) for c in report["cases"])
                errors = report["overall"].get("error", 0)
                ideal = count / opts.latency
                rate = steps / wall
                print(f"| {count} | {episodes}{f' ({errors} errors)' if errors else ''} | {steps} | {wall:.1f} | {rate:.1f} | {ideal:.1f} | {rate / ideal:.0%} | {1000 * cpu / max(steps, 1):.1f} |")


if __name__ == "__main__":
    main()
