"""Live baselines that need no weights, as :class:`~guitest.live.loop.Policy` objects: ``oracle`` and ``random``.

Both speak through a runner (:mod:`guitest.live.runners`; the model profile's, as a model would): each decision is
rendered as a reply in that runner's syntax and coordinate space, then read back by the runner and mapped to screen
pixels, exactly as a model's reply would be. So the oracle checks the whole path; under any runner it must succeed
wherever it has a scripted solution.

- :class:`OraclePolicy`: a scripted solver reading the page's DOM through the environment's
  ``run_js`` (the ``miniwob`` and ``webapp`` backends have it): MiniWoB++ tasks in
  :data:`guitest.miniwob.oracle.SOLVED`, and web tasks whose task file gives ``solution`` steps
  (``{"click": "css selector"}``, ``{"double_click": ...}``, ``{"right_click": ...}``, ``{"type": "text"}``,
  ``{"key": "ctrl+a"}``, ``{"drag": ["from selector", "to selector"]}``), then ``done``.
  :func:`oracle_reason` says why a task has no solution, so the plugin skips it with that reason.
- :class:`RandomPolicy`: seeded clicks (70%), typing (10%), keys (10%) and scrolls (10%) anywhere on
  the screen, the same for the same (seed, task, episode seed, step); it never says done. A low,
  stable floor.

The OCR agent (click the recognised text the instruction names) is not here yet.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from ..errors import ModelError
from .actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, RIGHT_CLICK, SCROLL, TYPE, Action
from .keys import combo
from .loop import Decision, StepInput
from ..miniwob.oracle import SOLVED, script
from .protocol import TaskSpec
from .runners import GUITEST_RUNNER, Runner
from .runners.runner import action_line

SOLUTION_KINDS = ("click", "double_click", "right_click", "type", "key", "drag")
RESOLVE_JS = """selector => {
  const el = document.querySelector(selector);
  if (!el) return null;
  el.scrollIntoView({block: 'nearest', inline: 'nearest'});
  const r = el.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}"""


def oracle_reason(task: TaskSpec) -> str | None:
    """None when the oracle has a scripted solution for ``task``; else why not (the reason to skip its cases)."""
    if task.env == "miniwob":
        if task.name in SOLVED:
            return None
        return f"no scripted solution for MiniWoB++ task {task.name!r} (the oracle solves {len(SOLVED)} tasks: see guitest/miniwob/oracle.py)"
    if task.env == "webapp":
        solution = task.config.get("solution")
        if isinstance(solution, list) and solution:
            return None
        return f"web task {task.name!r} gives no solution steps (config.solution) for the oracle"
    return f"the oracle has no scripted solutions for environment backend {task.env!r}"


class _Speaker:
    """Says an action (screen pixels) through a runner and reads it back, as a model's reply is read."""

    def __init__(self, runner: Runner, decimals: int | None) -> None:
        self.runner = runner
        self.space = runner.space_for(None)
        self.decimals = decimals if decimals is not None else (6 if self.space == "normalized" else 1)  # as the generic profile writes

    def say(self, action: Action, step: StepInput, notes: tuple[str, ...] = ()) -> Decision:
        size = step.observation.size
        reply = self.runner.render([self.runner.from_screen(action, self.space, size, size)], self.decimals)
        read = self.runner.read(reply)
        mapped = tuple(self.runner.to_screen(a, self.space, size, size) for a in read.actions)
        return Decision(reply=reply, actions=mapped, text=action_line(reply), notes=notes + read.notes)


class OraclePolicy:
    """The scripted solver (see the module docstring) for one environment; ``act`` raises ModelError for a task it cannot solve."""

    def __init__(self, env: Any, runner: Runner = GUITEST_RUNNER, decimals: int | None = None) -> None:
        if not callable(getattr(env, "run_js", None)):
            raise ModelError(f"the oracle reads the page through the environment's run_js, which {type(env).__name__} lacks")
        self.env = env
        self.speaker = _Speaker(runner, decimals)

    def act(self, step: StepInput) -> Decision:
        """The next scripted action, said in the policy's convention."""
        reason = oracle_reason(step.task)
        if reason is not None:
            raise ModelError(reason)
        if step.task.env == "miniwob":
            raw = self.env.run_js(script(step.task.name), step.step)
            action = self._from_js(raw, step)
        else:
            action = self._solution_step(step)
        return self.speaker.say(action, step)

    def _from_js(self, raw: Any, step: StepInput) -> Action:
        scale = step.observation.scale
        if not isinstance(raw, dict) or raw.get("kind") not in ("click", "type", "key", "done", "fail"):
            return Action(FAIL, text=f"the scripted solution gave {raw!r}")
        kind = raw["kind"]
        if kind == "click":
            return Action(CLICK, point=(float(raw["x"]) * scale, float(raw["y"]) * scale), space="screen")
        if kind == "type":
            return Action(TYPE, text=str(raw["text"]))
        if kind == "key":
            return Action(KEY, keys=tuple(str(k) for k in raw["keys"]))
        return Action(DONE if kind == "done" else FAIL, text=str(raw.get("text", "")))

    def _solution_step(self, step: StepInput) -> Action:
        solution = step.task.config["solution"]
        if step.step >= len(solution):
            return Action(DONE)
        entry = solution[step.step]
        kind = next((k for k in SOLUTION_KINDS if k in entry), None) if isinstance(entry, dict) else None
        if kind is None:
            return Action(FAIL, text=f"solution step {step.step + 1} is not one of {', '.join(SOLUTION_KINDS)}: {entry!r}")
        value = entry[kind]
        if kind == "type":
            return Action(TYPE, text=str(value))
        if kind == "key":
            return Action(KEY, keys=combo(str(value)))
        if kind == "drag":
            start, end = self._at(value[0], step), self._at(value[1], step)
            return Action(DRAG, point=start, end=end, space="screen") if start and end else Action(FAIL, text=f"no element {value!r}")
        point = self._at(str(value), step)
        if point is None:
            return Action(FAIL, text=f"no element matches {value!r}")
        return Action({"click": CLICK, "double_click": DOUBLE_CLICK, "right_click": RIGHT_CLICK}[kind], point=point, space="screen")

    def _at(self, selector: str, step: StepInput) -> tuple[float, float] | None:
        centre = self.env.run_js(RESOLVE_JS, selector)
        if not centre:
            return None
        scale = step.observation.scale
        return (float(centre[0]) * scale, float(centre[1]) * scale)


WORDS = ("hello", "submit", "ok", "yes", "no", "abc", "2", "test")
KEYS = ("enter", "tab", "backspace", "space", "down", "up")


class RandomPolicy:
    """Seeded random actions (see the module docstring)."""

    def __init__(self, seed: int = 0, runner: Runner = GUITEST_RUNNER, decimals: int | None = None) -> None:
        self.seed = seed
        self.speaker = _Speaker(runner, decimals)

    def act(self, step: StepInput) -> Decision:
        """A random action drawn from a generator seeded by (seed, task, episode seed, step)."""
        key = f"{self.seed}:{step.task.env}:{step.task.name}:{step.seed}:{step.step}".encode()
        rng = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))
        w, h = step.observation.size
        point = (rng.random() * w, rng.random() * h)
        draw = rng.random()
        if draw < 0.7:
            action = Action(CLICK, point=point, space="screen")
        elif draw < 0.8:
            action = Action(TYPE, text=rng.choice(WORDS))
        elif draw < 0.9:
            action = Action(KEY, keys=(rng.choice(KEYS),))
        else:
            action = Action(SCROLL, point=point, scroll=(0.0, rng.choice((-3.0, 3.0))), space="screen")
        return self.speaker.say(action, step)
