"""The oracle of the ``webapp`` backend (:mod:`guitest.live.oracles`): a web task file's ``solution`` steps
(``{"click": "css selector"}``, ``{"double_click": ...}``, ``{"right_click": ...}``, ``{"type": "text"}``,
``{"key": "ctrl+a"}``, ``{"drag": ["from selector", "to selector"]}``), each element found in the page through
``run_js``, then ``done``; said through the model's runner.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import ModelError
from ..live.actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, RIGHT_CLICK, TYPE, Action
from ..live.keys import combo
from ..live.loop import StepInput
from ..live.protocol import TaskSpec

SOLUTION_KINDS = ("click", "double_click", "right_click", "type", "key", "drag")
RESOLVE_JS = """selector => {
  const el = document.querySelector(selector);
  if (!el) return null;
  el.scrollIntoView({block: 'nearest', inline: 'nearest'});
  const r = el.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}"""


class WebSolution:
    """A web task's ``solution`` steps (see the module docstring)."""

    spoken = True

    def reason(self, task: TaskSpec, data: Mapping[str, Any]) -> str | None:
        solution = task.config.get("solution")
        if isinstance(solution, list) and solution:
            return None
        return f"web task {task.name!r} gives no solution steps (config.solution) for the oracle"

    def next_action(self, env: Any, step: StepInput, data: Mapping[str, Any]) -> Action:
        if not callable(getattr(env, "run_js", None)):
            raise ModelError(f"the oracle reads the page through the environment's run_js, which {type(env).__name__} lacks")
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
            start, end = _at(env, value[0], step), _at(env, value[1], step)
            return Action(DRAG, point=start, end=end, space="screen") if start and end else Action(FAIL, text=f"no element {value!r}")
        point = _at(env, str(value), step)
        if point is None:
            return Action(FAIL, text=f"no element matches {value!r}")
        return Action({"click": CLICK, "double_click": DOUBLE_CLICK, "right_click": RIGHT_CLICK}[kind], point=point, space="screen")


def _at(env: Any, selector: str, step: StepInput) -> tuple[float, float] | None:
    """The centre of the element ``selector`` finds, in screenshot pixels; None when there is none."""
    centre = env.run_js(RESOLVE_JS, selector)
    if not centre:
        return None
    scale = step.observation.scale
    return (float(centre[0]) * scale, float(centre[1]) * scale)


ORACLE = WebSolution()
