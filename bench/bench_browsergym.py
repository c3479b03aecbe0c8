"""Live speed beside the anchor: the same oracle episodes through BrowserGym's MiniWoB++ environment and through guitest.

    python bench/bench_browsergym.py --bg-python ../venv-bg/bin/python [--seeds 2] [--repeats 2]
                                     [--settings default tuned] [--tasks click-button enter-text ...] [--out FILE.md]

BrowserGym runs in its own venv (it pins playwright 1.44; never install it into guitest's environment):

    python3.11 -m venv ../venv-bg && ../venv-bg/bin/pip install browsergym-miniwob==0.14.3

Episodes: every task of the oracle (:data:`guitest.miniwob.oracle.SOLVED`) x ``--seeds`` seeds (0, 1, ...),
at most ``--max-steps`` actions each. An episode succeeds by the success rule of ``suites/miniwob`` (its
``settings.success_rule``, ``binary``: raw reward 1, or the task's threshold for the five continuous tasks;
``--success-rule`` chooses another, :mod:`guitest.miniwob.rules`), judged on each side's raw reward the same way.
BrowserGym's task ``reset(seed=s)`` seeds the page with
``Math.seedrandom(numpy.random.RandomState(s).randint(0, 1000000))`` (browsergym/miniwob/base.py); guitest's side
is given that number as its MiniWoB++ seed, so both sides get the same task instance (the table counts the episodes
whose utterance is the same on both sides). Both pages come from the same folder (the ``miniwob`` package guitest
uses), both sides launch the same Chromium.

The policy is the same on both sides: guitest's oracle, a JavaScript function per task that reads the page and
returns the next action (guitest/miniwob/oracle.py). guitest's side runs it as ``--model=oracle`` does
(``OraclePolicy``: the reply in guitest's format, parsed, mapped to the screenshot, ``env.step``;
bench_live.oracle_run). BrowserGym's side (bench/browsergym_driver.py, run with ``--bg-python``) evaluates it on
BrowserGym's page and sends the action as BrowserGym's high-level action (``mouse_click(x, y)`` in its screenshot
coordinates, ``keyboard_type``, ``keyboard_press``; the ``miniwob_all`` action subset, else as shipped) through
``env.step``. An episode is timed whole: reset, every step, the reward. Each side is one fresh process with one
browser (BrowserGym: its browsers, as it launches them at each reset); a run's wall time goes from making the
environment to closing it (interpreter start-up and imports excluded, shown apart as the process's whole time).
The sides alternate within each repeat (the order flips every repeat), and the 1-minute load is read before and
after each run: other programs on a shared machine show there.

BrowserGym settings (``--settings``): ``default``, the environment as ``gym.make`` gives it (headless, its
MiniWoB++ tasks' ``slow_mo`` of 100 ms and 5 s timeout, ``pre_observation_delay`` 0.5 s, the chat window, every
observation: DOM snapshot, accessibility tree, screenshot); ``tuned``, the same with ``slow_mo=0`` and
``pre_observation_delay=0`` (the two waits BrowserGym lets a user switch off; it still launches two browsers per
reset and extracts every observation, which it has no switch for).

Prints Markdown: a table of every run, the medians with guitest's lead, where BrowserGym's reset and step go
(its reset's Playwright calls timed in place, its step's own info timestamps), the failed episodes; exits 1 when an episode fails on
either side or guitest is not ahead in every repeat, 2 when BrowserGym's venv is missing (with how to set it up).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "browsergym_driver.py"
MINIWOB_SUITE = HERE.parent / "suites" / "miniwob" / "suite.yaml"
BROWSERGYM_VERSION = "0.14.3"
SETUP = (
    "set up BrowserGym in its own venv (it pins playwright 1.44; never in guitest's environment):\n"
    f"    python3.11 -m venv ../venv-bg && ../venv-bg/bin/pip install browsergym-miniwob=={BROWSERGYM_VERSION}\n"
    "then run: python bench/bench_browsergym.py --bg-python ../venv-bg/bin/python"
)
RESET_PARTS = ("close browsers", "launch browsers", "contexts and pages", "set up the task", "observe")  # the driver's Stopwatch names
STEP_PARTS = ("action", "wait", "validate", "observe")  # from BrowserGym's own step info
SETTINGS: dict[str, dict[str, Any]] = {
    "default": {"subsets": ["miniwob_all"]},
    "tuned": {"subsets": ["miniwob_all"], "slow_mo": 0, "pre_observation_delay": 0.0},
}


def page_seed(seed: int) -> int:
    """The number BrowserGym's MiniWoB++ task gives ``Math.seedrandom`` for ``reset(seed=seed)`` (base.py's setup)."""
    import numpy

    return int(numpy.random.RandomState(seed).randint(0, 1000000))


def check_browsergym(bg_python: str) -> tuple[dict[str, str] | None, str]:
    """BrowserGym's versions as its venv reports them, or None and why not."""
    if not os.path.isfile(bg_python) or not os.access(bg_python, os.X_OK):
        return None, f"BrowserGym's python {bg_python} does not exist"
    done = subprocess.run([bg_python, str(DRIVER), "--check"], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"{bg_python} cannot run BrowserGym ({last})"
    return json.loads(done.stdout), ""


def suite_rule() -> str:
    """The success rule ``suites/miniwob`` runs by (its ``settings.success_rule``, else the default)."""
    import yaml

    from guitest.miniwob import rules

    settings = (yaml.safe_load(MINIWOB_SUITE.read_text()) or {}).get("settings") or {}
    return str(settings.get("success_rule") or rules.DEFAULT)


def _record(
    task: str, seed: int, raw: float, seconds: float, reset_s: float, step_s: list[float], policy_s: float, decisions: int, utterance: str, error: str | None, rule: str, reward: float | None = None
) -> dict[str, Any]:
    """One episode in the form both sides report: success is the raw reward judged by ``rule`` on both
    (:func:`guitest.miniwob.rules.judge`), and no error."""
    from guitest.miniwob import rules

    success = error is None and rules.judge(rule, task, raw)[0]
    return {
        "task": task,
        "seed": seed,
        "raw": raw,
        "success": success,
        "seconds": seconds,
        "reset_s": reset_s,
        "step_s": step_s,
        "policy_s": policy_s,
        "decisions": decisions,
        "actions": len(step_s),
        "utterance": utterance,
        "error": error,
        "reward": reward,
    }


def guitest_side(job: dict[str, Any]) -> dict[str, Any]:
    """Child mode: the oracle over the job's episodes through guitest's environment and loop (bench_live.oracle_run)."""
    from bench_live import oracle_run

    run = oracle_run([(task, page_seed(seed)) for task, seed in job["jobs"]], max_steps=job["max_steps"])
    episodes = []
    for (task, seed), ep in zip(job["jobs"], run["episodes"], strict=True):
        # the decisions that ran an action on the page (the oracle decides one action a step; done and fail run none)
        acts = [s for s in ep.steps if any(a.get("kind") not in ("done", "fail") for a in s.actions[: s.executed])]
        step_s = [s.env_seconds for s in acts]
        reset_s = ep.env_seconds - sum(s.env_seconds for s in ep.steps)  # reset and the reward read (no browser call)
        raw = ep.score if ep.score is not None else 0.0
        episodes.append(_record(task, seed, raw, ep.wall_seconds, reset_s, step_s, ep.policy_seconds, len(ep.steps), ep.instruction, ep.error, job["rule"]))
    return {"wall_seconds": run["open_s"] + run["run_s"] + run["close_s"], "episodes": episodes}


def browsergym_side(raw: dict[str, Any], rule: str) -> dict[str, Any]:
    """The driver's result in the common form, success judged by ``rule``."""
    episodes = []
    for e in raw["episodes"]:
        if "error" in e:
            episodes.append(_record(e["task"], e["seed"], 0.0, 0.0, 0.0, [], 0.0, 0, "", e["error"], rule))
            continue
        error = None if e["done"] else f"the task never ended ({e['end']})"
        if e["errors"]:
            error = "; ".join(e["errors"])
        record = _record(e["task"], e["seed"], e["raw"], e["seconds"], e["reset_seconds"], e["step_seconds"], e["policy_seconds"], e["decisions"], e["utterance"], error, rule, e["reward"])
        episodes.append({**record, "reset_parts": e.get("reset_parts", {}), "step_parts": e.get("step_parts", {})})
    return {"wall_seconds": raw["wall_seconds"], "episodes": episodes, "versions": raw.get("versions", {})}


def run_side(side: str, settings: str, args: argparse.Namespace, jobs: list[list[Any]], tag: str) -> dict[str, Any]:
    """One timed run of one side in a fresh process: the run's figures with the load before and after."""
    from guitest.envs.browser.launch import executable
    from guitest.envs.browser.steps import PLAYWRIGHT_KEYS
    from guitest.miniwob.env import html_dir
    from guitest.miniwob.oracle import script

    work = Path(args.work)
    out = work / f"{tag}.json"
    job = {"jobs": jobs, "max_steps": args.max_steps, "out": str(out), "rule": args.success_rule}
    if side == "guitest":
        command = [sys.executable, str(Path(__file__).resolve()), "--side", "guitest", "--job"]
    else:
        job.update(
            scripts={task: script(task) for task, _ in jobs},
            keys=PLAYWRIGHT_KEYS,
            settings=SETTINGS[settings],
            miniwob_url="file://" + html_dir({}).rstrip("/") + "/miniwob/",
            browsers_path=str(work / "pw-browsers"),
            chromium=executable({}),
        )
        command = [args.bg_python, str(DRIVER)]
    path = work / f"{tag}.job.json"
    path.write_text(json.dumps(job))
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    env = dict(os.environ)
    if side != "guitest":
        env.pop("PYTHONPATH", None)  # BrowserGym's venv imports nothing of this checkout
    done = subprocess.run([*command, str(path)], capture_output=True, text=True, env=env)
    process_s = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"the {side} side failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    result = json.loads(out.read_text())
    result = result if side == "guitest" else browsergym_side(result, args.success_rule)
    return {"side": side, "settings": settings, "process_s": process_s, "load": (load_before, load_after), **result}


def figures(run: dict[str, Any]) -> dict[str, Any]:
    """A run's figures: success, episodes per second over its wall time, medians per episode, reset, step and decision."""
    eps = run["episodes"]
    steps = [s for e in eps for s in e["step_s"]]
    decisions = sum(e["decisions"] for e in eps)
    return {
        "n": len(eps),
        "success": sum(e["success"] for e in eps),
        "wall": run["wall_seconds"],
        "per_s": len(eps) / run["wall_seconds"],
        "episode": statistics.median(e["seconds"] for e in eps),
        "reset": statistics.median(e["reset_s"] for e in eps),
        "step": statistics.median(steps) if steps else 0.0,
        "actions": len(steps),
        "per_step": sum(e["seconds"] for e in eps) / max(1, len(steps)),
        "decision": sum(e["policy_s"] for e in eps) / max(1, decisions),
    }


def label(run: dict[str, Any]) -> str:
    """The run's side as the table names it."""
    return "guitest" if run["side"] == "guitest" else f"BrowserGym, {run['settings']}"


def table(runs: list[dict[str, Any]]) -> list[str]:
    """The Markdown rows: every run, then per side the medians over the repeats and guitest's lead."""
    lines = [
        "| repeat | side | success | wall s | episodes/s | s per episode, median | reset s, median | `step` s, median | s per action (episode s / actions) | oracle s per decision | process s | load before / after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        f = figures(run)
        lines.append(
            f"| {run['repeat']} | {label(run)} | {f['success']}/{f['n']} | {f['wall']:.1f} | {f['per_s']:.2f} | {f['episode']:.3f} | {f['reset']:.3f} | "
            f"{f['step']:.3f} | {f['per_step']:.3f} | {f['decision']:.4f} | {run['process_s']:.1f} | {run['load'][0]:.2f} / {run['load'][1]:.2f} |"
        )
    lines += ["", "| side | episodes/s, median of repeats | s per episode | `step` s | guitest's lead in episodes/s (each repeat) |", "|---|---|---|---|---|"]
    ours = {r["repeat"]: figures(r)["per_s"] for r in runs if r["side"] == "guitest"}
    for name in dict.fromkeys(label(r) for r in runs):
        mine = [r for r in runs if label(r) == name]
        fs = [figures(r) for r in mine]
        lead = "-" if name == "guitest" else ", ".join(f"{ours[r['repeat']] / f['per_s']:.1f}x" for r, f in zip(mine, fs, strict=True) if r["repeat"] in ours)
        lines.append(f"| {name} | {statistics.median(f['per_s'] for f in fs):.2f} | {statistics.median(f['episode'] for f in fs):.3f} | {statistics.median(f['step'] for f in fs):.3f} | {lead} |")
    return lines


def breakdown(runs: list[dict[str, Any]]) -> list[str]:
    """Where BrowserGym's reset and step go, per settings over every repeat: mean seconds per reset and per step."""
    lines = ["| BrowserGym settings | reset s: " + " / ".join(RESET_PARTS) + " / the rest | `step` s: " + " / ".join(STEP_PARTS) + " / the rest |", "|---|---|---|"]
    for settings in dict.fromkeys(r["settings"] for r in runs if r["side"] != "guitest"):
        eps = [e for r in runs if r["side"] != "guitest" and r["settings"] == settings for e in r["episodes"] if e["step_s"]]
        if not eps:
            continue
        resets = [sum(e["reset_parts"].get(p, 0.0) for e in eps) / len(eps) for p in RESET_PARTS]
        reset_rest = sum(e["reset_s"] for e in eps) / len(eps) - sum(resets)
        n_steps = sum(len(e["step_s"]) for e in eps)
        steps = [sum(e["step_parts"].get(p, 0.0) for e in eps) / n_steps for p in STEP_PARTS]
        step_rest = sum(s for e in eps for s in e["step_s"]) / n_steps - sum(steps)
        lines.append(f"| {settings} | {' / '.join(f'{v:.3f}' for v in resets)} / {reset_rest:.3f} | {' / '.join(f'{v:.3f}' for v in steps)} / {step_rest:.3f} |")
    return lines


def notes(runs: list[dict[str, Any]]) -> tuple[list[str], bool]:
    """Failed episodes on each side, the instance check, BrowserGym's own reward count; and whether all succeeded."""
    lines: list[str] = []
    ok = True
    for run in runs:
        for e in run["episodes"]:
            if not e["success"]:
                ok = False
                lines.append(f"- FAILED, repeat {run['repeat']}, {label(run)}: {e['task']} seed {e['seed']}: raw reward {e['raw']:g}; {e['error'] or ''}")
    ours = next((r for r in runs if r["side"] == "guitest"), None)
    theirs = next((r for r in runs if r["side"] != "guitest"), None)
    if ours and theirs:
        pairs = list(zip(ours["episodes"], theirs["episodes"], strict=False))  # the shorter run bounds the comparison
        same = [a["task"] for a, b in pairs if a["utterance"] == b["utterance"]]
        differ = sorted({a["task"] for a, b in pairs if a["utterance"] != b["utterance"]})
        lines.append(f"- Same task instance (the same utterance) on both sides: {len(same)} of {len(pairs)} episodes" + (f"; differing: {', '.join(differ)}" if differ else "") + ".")
    for run in runs:
        if run["side"] != "guitest":
            won = sum(1 for e in run["episodes"] if (e["reward"] or 0) > 0)
            lines.append(f"- BrowserGym's own reward (raw > 0), repeat {run['repeat']}, {run['settings']}: {won}/{len(run['episodes'])}.")
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bg-python", default="../venv-bg/bin/python", help="the python of BrowserGym's venv (default ../venv-bg/bin/python, beside the clone)")
    parser.add_argument("--tasks", nargs="+", default=None, help="MiniWoB++ tasks (default: every task the oracle solves)")
    parser.add_argument("--seeds", type=int, default=2, help="BrowserGym seeds 0..N-1 per task")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--settings", nargs="+", default=["default", "tuned"], choices=sorted(SETTINGS), help="BrowserGym's settings to run")
    parser.add_argument("--max-steps", type=int, default=15)
    parser.add_argument("--success-rule", default=None, help="the MiniWoB++ success rule both sides are judged by (default: suites/miniwob's)")
    parser.add_argument("--work", default="/tmp/guitest-bench-browsergym", help="scratch folder (job and result files, Playwright's browser link)")
    parser.add_argument("--out", default=None, help="also write the Markdown to this file")
    parser.add_argument("--side", choices=["guitest"], help=argparse.SUPPRESS)  # child mode
    parser.add_argument("--job", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.side == "guitest":
        job = json.loads(Path(args.job).read_text())
        Path(job["out"]).write_text(json.dumps(guitest_side(job)))
        return 0

    from guitest.miniwob import rules
    from guitest.miniwob.oracle import SOLVED

    args.success_rule = args.success_rule or suite_rule()
    if args.success_rule not in rules.RULES:
        print(f"--success-rule {args.success_rule}: the rules are {', '.join(rules.RULES)}", file=sys.stderr)
        return 2
    tasks = args.tasks or list(SOLVED)
    unknown = [t for t in tasks if t not in SOLVED]
    if unknown:
        print(f"--tasks: the oracle has no solution for {', '.join(unknown)}; it solves {', '.join(SOLVED)}", file=sys.stderr)
        return 2
    versions, why = check_browsergym(args.bg_python)
    if versions is None:
        print(f"{why}; {SETUP}", file=sys.stderr)
        return 2
    if versions.get("browsergym-miniwob") != BROWSERGYM_VERSION:
        print(f"note: {args.bg_python} has browsergym-miniwob {versions.get('browsergym-miniwob')}; these figures are for {BROWSERGYM_VERSION}", file=sys.stderr)
    os.makedirs(args.work, exist_ok=True)
    jobs = [[task, seed] for task in tasks for seed in range(args.seeds)]
    sides = [("guitest", "")] + [("browsergym", s) for s in args.settings]
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    began = time.strftime("%H:%M")
    runs = []
    for repeat in range(1, args.repeats + 1):
        for side, settings in sides if repeat % 2 else sides[::-1]:
            run = run_side(side, settings, args, jobs, f"r{repeat}-{side}-{settings or 'default'}")
            run["repeat"] = repeat
            runs.append(run)
            f = figures(run)
            print(f"repeat {repeat}, {label(run)}: {f['success']}/{f['n']} succeeded, {f['wall']:.1f} s, {f['per_s']:.2f} episodes/s", file=sys.stderr)
    uptime_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    bg = next(r["versions"] for r in runs if r["side"] != "guitest")
    lines = [
        f"guitest beside BrowserGym: {len(tasks)} tasks x {args.seeds} seeds ({len(jobs)} episodes, at most {args.max_steps} actions), "
        f"{args.repeats} repeats, {began}-{time.strftime('%H:%M')} on {os.cpu_count()} cores; guitest at {commit}{' (with changes)' if dirty else ''}, "
        f"browsergym-miniwob {bg.get('browsergym-miniwob')} (playwright {bg.get('playwright')}, python {bg.get('python')}); "
        f"success by the rule {args.success_rule} ({rules.MEANING[args.success_rule]}).",
        "",
        f"- uptime before: `{uptime_before}`",
        f"- uptime after: `{uptime_after}`",
        "",
        *table(runs),
        "",
        "Where BrowserGym's time goes, mean seconds per reset and per `env.step` over every repeat (the rest: what no part covers):",
        "",
        *breakdown(runs),
        "",
    ]
    extra, ok = notes(runs)
    lines += extra
    ahead = all(figures(g)["per_s"] > figures(b)["per_s"] for g in runs if g["side"] == "guitest" for b in runs if b["side"] != "guitest" and b["repeat"] == g["repeat"])
    lines.append(f"- guitest ahead of BrowserGym in every repeat: {'yes' if ahead else 'NO'}.")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if ok and ahead else 1


if __name__ == "__main__":
    sys.exit(main())
