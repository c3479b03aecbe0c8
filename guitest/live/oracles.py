"""The oracle baseline's scripted solutions, which each environment backend brings beside itself.

An environment's oracle is an object with

- ``reason(task, data) -> str | None``: None when it has a scripted solution for ``task`` (a
  :class:`~guitest.live.protocol.TaskSpec`; ``data`` the case's task row as its reader made it), else why not (the
  plugin skips the case with that reason);
- ``next_action(env, step, data) -> Action``: the next action of the solution on the screen ``step`` shows, in screen
  pixels (``done`` once solved), reading what it needs from ``env`` (a page's DOM through ``run_js``, say); and
- ``spoken``: True when its actions are said through the model's runner and read back as a model's reply would be
  (so the oracle checks the whole path), False when they are acted as they are.

Registered by environment name in :data:`guitest.registry.ORACLES` (built in: ``miniwob``
:mod:`guitest.miniwob.oracle`, ``webapp`` :mod:`guitest.envs.web_solution`, ``desktop`` :mod:`guitest.desktopenv.task`),
with :func:`register` in a ``conftest.py`` or the entry-point group ``guitest.oracles``; an environment without one
has no oracle baseline. Nothing here names an environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol

from ..errors import GuitestError
from ..registry import ORACLES
from .protocol import TaskSpec

if TYPE_CHECKING:
    from .actions import Action
    from .loop import StepInput


class EnvOracle(Protocol):
    """An environment's scripted solutions (see the module docstring)."""

    spoken: bool

    def reason(self, task: TaskSpec, data: Mapping[str, Any]) -> str | None: ...

    def next_action(self, env: Any, step: StepInput, data: Mapping[str, Any]) -> Action: ...


def register(env: str, oracle: EnvOracle) -> None:
    """Make ``oracle`` the scripted solutions of environment backend ``env`` in this process."""
    ORACLES.register(env, oracle)


def for_env(env: str) -> EnvOracle | None:
    """The oracle environment backend ``env`` brings, or None when it brings none."""
    try:
        oracle: EnvOracle = ORACLES.get(env)
    except GuitestError:
        return None
    return oracle


def reason(task: TaskSpec, data: Mapping[str, Any] | None = None) -> str | None:
    """None when the oracle can solve ``task``; else why not (an environment without an oracle says so)."""
    oracle = for_env(task.env)
    if oracle is None:
        return f"the oracle has no scripted solutions for environment backend {task.env!r}"
    return oracle.reason(task, data or {})
