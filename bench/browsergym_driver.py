"""The BrowserGym side of bench/bench_browsergym.py: guitest's MiniWoB++ oracle through BrowserGym's own environment.

Runs with BrowserGym's python (its own venv: ``pip install browsergym-miniwob==0.14.3``), never guitest's, and
imports nothing of guitest: bench_browsergym.py hands it a job file (JSON) with the episodes, the oracle's
JavaScript per task and the settings, and it writes the result file (JSON) the job names.

    BG_PYTHON bench/browsergym_driver.py --check           # versions, as JSON (bench_browsergym checks the venv)
    BG_PYTHON bench/browsergym_driver.py JOB.json          # run the job's episodes, write its result file

Per task one environment as a user makes it, ``gym.make("browsergym/miniwob.TASK", ...)``, reset with each seed
(BrowserGym launches its browsers in every reset), the oracle's next action read from the page and sent as
BrowserGym's high-level action (``mouse_click`` at the point in its screenshot coordinates, ``keyboard_type``,
``keyboard_press``), until the step's ``terminated`` or the oracle says done or fail, or the budget ends.

BrowserGym removes MiniWoB++'s instruction bar from the page (``remove_human_display``, its default): the
oracle reads the instruction and its bold words there, so for the length of one oracle call the bar's content
is put back (the bar is a fixed 44 px high, so nothing on the task area moves) and ``core.getUtterance``
answers the utterance, both restored before the call returns.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

#: ``(step) => action`` wrapped so that the oracle (``%s``) sees the instruction BrowserGym hid from the page
WRAPPER = """(step) => {
  const oracle = %s;
  const query = document.getElementById('query');
  if (typeof bringBackDisplay !== 'function' || !core.getUtterance_legacy || query.innerHTML !== '') return oracle(step);
  bringBackDisplay();
  const html = query.innerHTML, text = core.getUtterance_legacy();
  removeDisplay();
  const own = core.getUtterance;
  query.innerHTML = html;
  core.getUtterance = () => text;
  try { return oracle(step); } finally { core.getUtterance = own; query.innerHTML = ''; }
}"""
STATE_JS = "() => [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]"
#: a step's parts, from the timestamps BrowserGym's ``env.step`` puts in its info (browsergym/core/env.py)
STEP_PARTS = {"action": "action_exec", "wait": "wait_for_page_loading", "validate": "validation", "observe": "get_observation"}


class Stopwatch:
    """Seconds spent in named methods, added up (wrapped in place, behaviour unchanged): where BrowserGym's reset goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, owner: Any, method: str, name: str) -> None:
        """Time every call of ``owner.method`` under ``name``."""
        inner = getattr(owner, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            begun = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - begun

        setattr(owner, method, timed)

    def take(self) -> dict[str, float]:
        """The seconds since the last take."""
        out, self.seconds = self.seconds, {}
        return out


def instrument() -> Stopwatch:
    """A Stopwatch on what BrowserGym's reset does (browsergym/core/env.py ``reset``): close the last episode's
    browsers, launch two (the task's and the chat's), make their contexts and pages, set up the task (load its page,
    hide the instruction bar, start the episode), extract the first observation. The parts do not nest."""
    import playwright.sync_api as pw
    from browsergym.core import env as bg_env
    from browsergym.miniwob.base import AbstractMiniwobTask

    watch = Stopwatch()
    watch.wrap(pw.Browser, "close", "close browsers")
    watch.wrap(pw.BrowserContext, "close", "close browsers")
    watch.wrap(pw.BrowserType, "launch", "launch browsers")
    watch.wrap(pw.Browser, "new_context", "contexts and pages")
    watch.wrap(pw.BrowserContext, "new_page", "contexts and pages")
    watch.wrap(AbstractMiniwobTask, "setup", "set up the task")
    watch.wrap(bg_env.BrowserEnv, "_get_obs", "observe")
    return watch


def chromium_folder(root: str, executable: str) -> str:
    """Make ``root`` a PLAYWRIGHT_BROWSERS_PATH whose Chromium, at the folder name this Playwright expects
    (``chromium-REVISION/chrome-linux/chrome``, from its browsers.json), is ``executable``; returns the link's path.
    BrowserGym's chat window launches Chromium without ``executable_path``, so Playwright looks there."""
    import playwright

    listing = os.path.join(os.path.dirname(playwright.__file__), "driver", "package", "browsers.json")
    with open(listing) as handle:
        revision = next(b["revision"] for b in json.load(handle)["browsers"] if b["name"] == "chromium")
    folder = os.path.join(root, f"chromium-{revision}", "chrome-linux")
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(folder, "chrome")
    if os.path.islink(link) and os.readlink(link) != executable:
        os.remove(link)
    if not os.path.lexists(link):
        os.symlink(executable, link)
    return link


def versions() -> dict[str, str]:
    """The versions of what this venv runs (BrowserGym, its MiniWoB++ tasks, Playwright, gymnasium, python)."""
    from importlib.metadata import version

    out = {name: version(name) for name in ("browsergym-core", "browsergym-miniwob", "playwright", "gymnasium")}
    out["python"] = sys.version.split()[0]
    return out


def to_highlevel(raw: Any, keys: dict[str, str], scale: float) -> tuple[str | None, str | None]:
    """The oracle's next action as a BrowserGym high-level action: ``(action, None)``, ``(None, 'done')`` or
    ``(None, 'fail: why')``. Points go from CSS pixels to BrowserGym's screenshot coordinates (x ``scale``)."""
    if not isinstance(raw, dict) or raw.get("kind") not in ("click", "type", "key", "done", "fail"):
        return None, f"fail: the scripted solution gave {raw!r}"
    kind = raw["kind"]
    if kind == "click":
        return f"mouse_click({float(raw['x']) * scale!r}, {float(raw['y']) * scale!r})", None
    if kind == "type":
        return f"keyboard_type({str(raw['text'])!r})", None
    if kind == "key":
        return f"keyboard_press({'+'.join(keys.get(k, k) for k in raw['keys'])!r})", None
    return None, "done" if kind == "done" else f"fail: {raw.get('text', '')}"


def episode(env: Any, seed: int, script: str, keys: dict[str, str], max_steps: int, watch: Stopwatch) -> dict[str, Any]:
    """One timed episode: reset, then the oracle's actions until the task ends; the reward as BrowserGym gives it."""
    watch.take()
    started = time.perf_counter()
    obs, _ = env.reset(seed=seed)
    reset_s = time.perf_counter() - started
    reset_parts = watch.take()
    step_parts: dict[str, float] = {}
    page = env.unwrapped.page  # the oracle reads the page; the agent's actions go through env.step
    scale = float(getattr(page, "_bgym_scale_factor", 1.0))
    step_s: list[float] = []
    policy_s = 0.0
    decisions, reward, terminated, end, errors = 0, 0.0, False, "budget", []
    info: dict[str, Any] = {}
    for index in range(max_steps):
        begun = time.perf_counter()
        raw = page.evaluate(script, index)
        action, final = to_highlevel(raw, keys, scale)
        policy_s += time.perf_counter() - begun
        decisions += 1
        if action is None:
            end = final or "done"
            break
        begun = time.perf_counter()
        obs, reward, terminated, _, info = env.step(action)
        step_s.append(time.perf_counter() - begun)
        for part, key in STEP_PARTS.items():
            if f"{key}_start" in info and f"{key}_stop" in info:
                step_parts[part] = step_parts.get(part, 0.0) + info[f"{key}_stop"] - info[f"{key}_start"]
        if obs.get("last_action_error"):
            errors.append(f"step {index + 1}: {obs['last_action_error']}")
        if terminated:
            end = "env_done"
            break
    task_info = info.get("task_info", {})
    if not task_info:
        done, raw_reward = page.evaluate(STATE_JS)
    else:
        done, raw_reward = task_info.get("DONE_GLOBAL"), task_info.get("RAW_REWARD_GLOBAL")
    return {
        "seconds": time.perf_counter() - started,
        "reset_seconds": reset_s,
        "step_seconds": step_s,
        "policy_seconds": policy_s,
        "decisions": decisions,
        "actions": len(step_s),
        "end": end,
        "done": bool(done),
        "raw": float(raw_reward or 0),
        "reward": float(reward),
        "utterance": str(obs.get("goal", "")),
        "errors": errors,
        "reset_parts": reset_parts,
        "step_parts": step_parts,
    }


def run(job: dict[str, Any]) -> dict[str, Any]:
    """Every episode of ``job`` in this process: ``{"wall_seconds", "episodes": [...]}`` in the job's order."""
    os.environ["MINIWOB_URL"] = job["miniwob_url"]
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = job["browsers_path"]
    chromium_folder(job["browsers_path"], job["chromium"])
    import gymnasium as gym
    import browsergym.miniwob  # noqa: F401 - registers the browsergym/miniwob.* environments
    from browsergym.core.action.highlevel import HighLevelActionSet

    watch = instrument()
    settings = job["settings"]
    action_set = HighLevelActionSet(subsets=settings.get("subsets", ["miniwob_all"]))
    kwargs = {key: settings[key] for key in ("slow_mo", "pre_observation_delay", "timeout") if settings.get(key) is not None}
    episodes: list[dict[str, Any]] = []
    started = time.perf_counter()
    by_task: dict[str, list[int]] = {}
    for task, seed in job["jobs"]:
        by_task.setdefault(task, []).append(seed)
    for task, seeds in by_task.items():
        env = gym.make(f"browsergym/miniwob.{task}", headless=True, pw_chromium_kwargs={"executable_path": job["chromium"]}, action_mapping=action_set.to_python_code, **kwargs)
        script = WRAPPER % job["scripts"][task]
        for seed in seeds:
            try:
                result = episode(env, seed, script, job["keys"], job["max_steps"], watch)
            except Exception as exc:  # an episode BrowserGym could not run is reported, and the next one goes on
                result = {"error": f"{type(exc).__name__}: {exc}"[:500]}
                env.close()
            episodes.append({"task": task, "seed": seed, **result})
        env.close()
    return {"wall_seconds": time.perf_counter() - started, "episodes": episodes, "versions": versions()}


def main(argv: list[str]) -> int:
    """``--check`` prints the versions; a job file's path runs its episodes and writes its result file."""
    if argv == ["--check"]:
        print(json.dumps(versions()))
        return 0
    if len(argv) != 1:
        print("usage: browsergym_driver.py JOB.json | --check (bench/bench_browsergym.py writes the job)", file=sys.stderr)
        return 2
    with open(argv[0]) as handle:
        job = json.load(handle)
    result = run(job)
    with open(job["out"], "w") as handle:
        json.dump(result, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
