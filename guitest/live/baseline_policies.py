"""Live baselines that need no weights, as :class:`~guitest.live.loop.Policy` objects: ``oracle`` and ``random``.

Both speak through a runner (:mod:`guitest.live.runners`; the model profile's, as a model would): each decision is
rendered as a reply in that runner's syntax and coordinate space, then read back by the runner and mapped to screen
pixels, exactly as a model's reply would be. So the oracle checks the whole path; under any runner it must succeed
wherever it has a scripted solution.

- :class:`OraclePolicy`: the scripted solutions the task's environment brings (:mod:`guitest.live.oracles` lists the
  built-in ones; an oracle may ask to have its actions acted as they are, not said). :func:`oracle_reason` says why a
  task has none, so the plugin skips it.
- :class:`RandomPolicy`: seeded clicks (70%), typing (10%), keys (10%) and scrolls (10%) anywhere on
  the screen, the same for the same (seed, task, episode seed, step); it never says done. A low,
  stable floor.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Mapping

from ..errors import ModelError
from . import oracles
from .actions import CLICK, KEY, SCROLL, TYPE, Action
from .loop import Decision, StepInput
from .protocol import TaskSpec
from .runners import GUITEST_RUNNER, Runner
from .runners.runner import action_line


def oracle_reason(task: TaskSpec, data: Mapping[str, Any] | None = None) -> str | None:
    """None when the oracle has a scripted solution for ``task`` (``data``: the case's task row); else why not (the reason to skip its cases)."""
    return oracles.reason(task, data)


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
    """The scripted solver of the task's environment (see the module docstring); ``act`` raises ModelError for a task it
    cannot solve. ``data``: the case's task row (an oracle may read its solution there)."""

    def __init__(self, env: Any, runner: Runner = GUITEST_RUNNER, decimals: int | None = None, data: Mapping[str, Any] | None = None) -> None:
        self.env = env
        self.data = data or {}
        self.speaker = _Speaker(runner, decimals)

    def act(self, step: StepInput) -> Decision:
        """The next scripted action: said in the policy's convention, or acted as it is when the environment's oracle says so."""
        oracle = oracles.for_env(step.task.env)
        reason = oracles.reason(step.task, self.data)
        if oracle is None or reason is not None:
            raise ModelError(reason or "no scripted solution")
        action = oracle.next_action(self.env, step, self.data)
        if not oracle.spoken:
            return Decision(reply=None, actions=(action,), notes=("scripted",))
        return self.speaker.say(action, step)


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
