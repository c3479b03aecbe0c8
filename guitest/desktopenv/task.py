"""An OSWorld-format task as a live case carries it: the TaskSpec in a sample's data, and its scripted oracle.

The reader (:mod:`guitest.desktopenv.reader`) stores the task in ``Sample.data`` as plain builtins:

- ``data["task"]``: the :class:`~guitest.live.protocol.TaskSpec` fields (``env``, ``name``,
  ``instruction``, ``config``), ``config`` holding the task file's ``config`` steps and ``evaluator``
  (local paths made absolute), ``snapshot``, ``related_apps`` and ``id``;
- ``data["evaluated_by"]``: ``environment`` or ``judge`` (guitest lacks a metric or getter);
- ``data["unsupported"]``: set-up step types guitest cannot run (the task cannot run here);
- ``data["infeasible"]``: whether the task is infeasible by design;
- ``data["oracle"]``: the scripted solution, a list of actions as :meth:`Action.describe` writes them.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..live.actions import DONE, Action
from ..live.protocol import TaskSpec


def task_spec(data: dict[str, Any]) -> TaskSpec:
    """The TaskSpec a sample's ``data`` carries (``data["task"]``)."""
    task = data["task"]
    return TaskSpec(env=task["env"], name=task["name"], instruction=task.get("instruction", ""), config=task.get("config", {}))


def action_from(entry: dict[str, Any]) -> Action:
    """An action from its plain form (``{"kind": "key", "keys": ["ctrl", "s"]}``, what :meth:`Action.describe` writes,
    ``paste`` included); points are screen pixels."""

    def point(name: str) -> tuple[float, float] | None:
        value = entry.get(name)
        return None if value is None else (float(value[0]), float(value[1]))

    scroll = entry.get("scroll") or (0.0, 0.0)
    return Action(
        kind=entry["kind"],
        point=point("point"),
        end=point("end"),
        text=entry.get("text", ""),
        keys=tuple(entry.get("keys", ())),
        scroll=(float(scroll[0]), float(scroll[1])),
        seconds=float(entry.get("seconds", 0.0)),
        space="screen" if entry.get("point") is not None or entry.get("end") is not None else None,
        paste=bool(entry.get("paste", False)),
    )


def oracle_actions(data: dict[str, Any]) -> list[Action] | None:
    """The task's scripted solution as actions (screen pixels), or None when it has none."""
    entries = data.get("oracle")
    if not entries:
        return None
    return [action_from(e) for e in entries]


class DesktopOracle:
    """The desktop tasks' oracle (:mod:`guitest.live.oracles`): the task row's ``oracle`` actions (screen pixels), one
    per step, then ``done``, acted as they are (a desktop task's solution may use actions no runner says)."""

    spoken = False

    def reason(self, task: TaskSpec, data: Mapping[str, Any]) -> str | None:
        return None if data.get("oracle") else f"desktop task {task.name!r} gives no scripted solution (oracle) for the oracle baseline"

    def next_action(self, env: Any, step: Any, data: Mapping[str, Any]) -> Action:
        actions = oracle_actions(dict(data)) or []
        return actions[step.step] if step.step < len(actions) else Action(DONE)


ORACLE = DesktopOracle()
