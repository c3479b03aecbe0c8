"""The environment protocol of live tasks: ``reset``, ``step``, ``evaluate``, ``close``.

A backend (a browser running MiniWoB++ or a web app, a desktop machine speaking OSWorld's
and Windows Agent Arena's server protocol, a user's own) implements :class:`Environment`.
Everything that crosses it is a frozen dataclass of plain values; screenshots are PNG bytes.

Coordinates: an :class:`~guitest.live.actions.Action` reaching :meth:`Environment.step`
carries points in pixels of the screenshot the environment last returned; the backend maps
them to its own units (CSS pixels = screenshot pixels / ``Observation.scale``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import GuitestError
from .actions import Action


class EnvFailure(GuitestError):
    """The environment failed (it cannot start, a page crashed, a machine stopped answering): the episode
    is an ``error`` outcome, so ``--lf`` runs it again. The message says what to check."""


@dataclass(frozen=True)
class TaskSpec:
    """One live task as a suite's reader produced it: which environment runs it and how to set it up and check it.

    ``env``: the backend's name (``browser``, ``desktop``, ...). ``name``: the task within it
    (a MiniWoB++ task such as ``click-button``, a web task's id). ``instruction``: the goal, when the
    suite states it (MiniWoB++ makes its own per seed). ``config``: backend-specific set-up and
    evaluation data (start URL, set-up script, success check; OSWorld's ``config`` and ``evaluator``),
    plain builtins.
    """

    env: str
    name: str
    instruction: str = ""
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The task as plain builtins (what a :class:`~guitest.sample.Sample` carries in ``data["task"]``)."""
        return {"env": self.env, "name": self.name, "instruction": self.instruction, "config": dict(self.config)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TaskSpec":
        """A task from :meth:`to_dict`'s builtins."""
        return cls(env=data["env"], name=data["name"], instruction=data.get("instruction", ""), config=dict(data.get("config") or {}))


@dataclass(frozen=True)
class Observation:
    """What the agent sees before it acts.

    ``screenshot``: PNG bytes; ``size``: its pixel size (width, height); ``scale``: screenshot pixels
    per environment pixel (a browser at ``device_scale_factor`` 3 gives 3.0); ``instruction``: the
    goal of the episode; ``text``: optional DOM or accessibility text; ``done``: the environment ended
    the episode (the task page says it is over); ``info``: anything else a backend reports (plain builtins).
    """

    screenshot: bytes
    size: tuple[int, int]
    instruction: str
    scale: float = 1.0
    text: str | None = None
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Evaluation:
    """The environment's own verdict on an episode: ``success``, the raw ``score`` (partial credit kept,
    e.g. MiniWoB++'s raw reward in -1..1), a ``reason``, and who decided (``environment``, or ``judge``
    where the environment has no check of its own)."""

    success: bool
    score: float
    reason: str = ""
    decided_by: str = "environment"


@runtime_checkable
class Environment(Protocol):
    """One live environment, running one episode at a time. Methods raise :class:`EnvFailure` when the
    environment itself fails; a wrong or impossible action is not a failure (the episode goes on)."""

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        """Start an episode of ``task`` (the same ``seed`` gives the same episode) and return the first screen."""
        ...

    def step(self, action: Action) -> Observation:
        """Execute ``action`` (points in pixels of the last screenshot) and return the next screen. The agent's final
        ``done`` or ``fail`` comes here too, before :meth:`evaluate`: a check may depend on it (an infeasible task
        succeeds only when the agent answers FAIL)."""
        ...

    def evaluate(self) -> Evaluation:
        """The environment's check of the episode as it stands now."""
        ...

    def close(self) -> None:
        """Release what the environment holds (pages, contexts, connections). Safe to call twice."""
        ...

    # Optional: ``release()``, called when an episode is over and the environment goes back to its pool, for a
    # backend that holds a shared resource between reset and the next reset (a desktop machine of a pool);
    # ``run_js(expression, arg)`` for backends whose state a scripted oracle may read (the browser ones); ``usable()``, False
    # when an idle environment can no longer run an episode (its page crashed, its browser was ended), so the pool
    # closes it instead of handing it out; ``software()``, what the environment runs on that can change an episode, by
    # kind, each with the versions it reports (``{"browser": ["chromium 131.0.6778.85"]}``), read after each episode
    # into the run's manifest, which ``guitest compare`` compares (the browser backends say their browser's).
