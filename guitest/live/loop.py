"""The agent loop: one episode of one task, step by step, scored by the environment's own check.

:func:`run_episode` resets the environment, then per step asks the policy for a :class:`Decision`
(given a :class:`StepInput`: the instruction, the screen, the screens that followed each action of the
previous decision, the earlier decisions, the step index and the budget) and executes its actions in
order, until the agent says ``done`` or ``fail``, the environment ends the episode, or the budget is
spent; then it asks the environment to evaluate. It returns an :class:`Episode`: every step (reply,
actions, notes, screenshot), how it ended, the evaluation and the time spent in the environment and in
the policy.

Rules, as OSWorld's run loop (``lib_run_single.py``, ``run_single_example``) has them: a step is one
policy decision (one model call), whatever number of actions it holds; the budget counts steps. The
actions of a decision run in order, each through :meth:`~guitest.live.protocol.Environment.step`; a
``done`` or ``fail`` ends the episode after the actions before it have run (actions after it are not
run, noted ``not_run:N``), and so does a screen on which the environment ended the episode. A decision
without actions (nothing readable) uses up its step (noted ``unreadable_action``) and the episode goes
on from the same screen. The actions a step may run are bounded (:func:`~guitest.live.actions.bounded`): at
most :data:`~guitest.live.actions.MAX_ACTIONS` of a decision (the rest noted ``over_cap:N``), each with its numbers
finite and in range (an action out of range is not run, noted ``action K refused: ...``; the others run). An
:class:`~guitest.live.protocol.EnvFailure` (from the environment or from a policy that reads it) or a
:class:`~guitest.errors.ModelError` from the policy ends the
episode with ``end="error"`` and the message, so the case is an error and ``--lf`` runs it again.
Any other exception is a bug and propagates.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..errors import EndpointDown, ModelError
from ..cost.usage import tokens as usage_tokens
from .actions import Action, bounded, takes
from .protocol import EnvFailure, Environment, Evaluation, Observation, TaskSpec
from ..verdict import EpisodeRecord, StepEntry

DONE, FAIL, BUDGET, ENV_DONE, ERROR = "done", "fail", "budget", "env_done", "error"
#: an episode stopped by its token cap (``--max-episode-tokens``), then evaluated as one out of steps is
TOKEN_CAP = "token_cap"
#: how an episode can end
ENDS = (DONE, FAIL, BUDGET, ENV_DONE, ERROR, TOKEN_CAP)
ENVIRONMENT, MODEL = "environment", "model"

#: ``save(name, png) -> reference``: stores a screenshot (``step-01``, ..., ``final``) and returns its path
ScreenshotSink = Callable[[str, bytes], str]


@dataclass(frozen=True)
class Decision:
    """What the policy decided at one step (one model call).

    ``reply``: the model's text (None when there was none, e.g. an empty completion). ``actions``: the
    actions read from it, in the order they are to run, with their points in screenshot pixels
    (``space="screen"``, see :func:`~guitest.live.actions.to_screen`); empty when none could be read.
    A ``done`` or ``fail`` ends the episode after the actions before it; it is the last action that
    runs. ``text``: the actions as the reply wrote them, for the history of later prompts (defaults to
    a description of ``actions``). ``notes``: how it was read (parser notes; a part of the reply that
    could not be read is named in one, e.g. ``action 2: coordinates_not_numbers``). ``finish_reason``:
    the endpoint's. ``cached``: the reply came from the response cache. ``usage``: the tokens the reply's call
    used (:meth:`guitest.cost.usage.Usage.as_dict`; a cached reply's as they were when it was made; None: unknown).
    """

    reply: str | None
    actions: tuple[Action, ...] = ()
    text: str = ""
    notes: tuple[str, ...] = ()
    finish_reason: str | None = None
    cached: bool = False
    usage: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.actions, Action) or not all(isinstance(a, Action) for a in self.actions):
            raise TypeError(f"Decision.actions is a sequence of Action (one action: actions=(action,)), got {self.actions!r}")
        object.__setattr__(self, "actions", tuple(self.actions))

    @property
    def final(self) -> Action | None:
        """The ``done`` or ``fail`` among the actions (the first), or None."""
        return next((a for a in self.actions if a.final), None)

    @property
    def history_text(self) -> str:
        """The line this step contributes to the history of later prompts."""
        if self.text:
            return self.text
        if not self.actions:
            return "(no readable action)"
        return "; ".join(describe(a) for a in self.actions)


@dataclass(frozen=True)
class StepInput:
    """What the policy sees at one step: ``step`` counts from 0, ``budget`` is the episode's step budget.

    ``observation``: the screen now. ``results``: the observations that followed each action of the
    previous decision, in order, one per action that ran (empty at the first step and after a decision
    without actions); when not empty, its last is ``observation``. A policy answering a tool loop
    (each tool call answered by the screen after it) reads them; ``history`` holds the earlier decisions.
    """

    task: TaskSpec
    seed: int | None
    instruction: str
    observation: Observation
    history: tuple[Decision, ...]
    step: int
    budget: int
    results: tuple[Observation, ...] = ()

    @property
    def history_texts(self) -> list[str]:
        """The earlier steps as history lines (see :attr:`Decision.history_text`)."""
        return [d.history_text for d in self.history]

    @property
    def screenshot_digest(self) -> str:
        """The SHA-256 of this step's screenshot (with the history, what makes a step's cache key)."""
        return hashlib.sha256(self.observation.screenshot).hexdigest()


class Policy(Protocol):
    """An agent: one decision per step. Raise :class:`~guitest.errors.ModelError` when the model cannot be asked."""

    def act(self, step: StepInput) -> Decision:
        """The next action for ``step``."""
        ...


@dataclass(frozen=True)
class StepRecord:
    """One step (one decision). ``number`` counts from 1. ``screenshot``: the reference returned by the episode's
    screenshot sink for the screen the agent saw (``png`` holds the bytes instead when there is no sink).
    ``actions``: :meth:`Action.describe` of each action of the decision that was to run, in order (screen pixels; empty
    when nothing was readable; those past the cap and those refused for a number out of range are in ``notes`` instead);
    ``executed``: how many of them ran (fewer when a ``done``/``fail`` or the environment
    ended the episode, or the environment failed, before the rest). ``info``: what the environment reported after
    the last action that ran (plain builtins; the ``notes`` of every action's observation are in ``notes``)."""

    number: int
    reply: str | None
    actions: tuple[dict[str, Any], ...]
    text: str
    notes: tuple[str, ...]
    finish_reason: str | None = None
    cached: bool = False
    screenshot: str | None = None
    png: bytes | None = field(default=None, repr=False)
    policy_seconds: float = 0.0
    env_seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    executed: int = 0
    usage: dict[str, int] | None = None

    def to_dict(self) -> StepEntry:
        """The step as plain builtins (no screenshot bytes); ``executed`` only when fewer actions ran than were read."""
        out: StepEntry = {
            "number": self.number,
            "reply": self.reply,
            "actions": [dict(a) for a in self.actions],
            "text": self.text,
            "notes": list(self.notes),
            "policy_seconds": round(self.policy_seconds, 6),
            "env_seconds": round(self.env_seconds, 6),
        }
        if self.executed < len(self.actions):
            out["executed"] = self.executed
        if self.finish_reason is not None:
            out["finish_reason"] = self.finish_reason
        if self.cached:
            out["cached"] = True
        if self.usage:
            out["usage"] = dict(self.usage)
        if self.screenshot is not None:
            out["screenshot"] = self.screenshot
        if self.info:
            out["info"] = self.info
        return out


@dataclass(frozen=True)
class Episode:
    """One episode: its steps, how it ended (:data:`ENDS`), the environment's evaluation (None after an error),
    the error message and its source (``error_source``: ``environment`` or ``model``), and times: ``wall_seconds`` in all, ``env_seconds`` in reset/step/evaluate,
    ``policy_seconds`` in the policy. ``screen_size`` and ``scale`` are the first observation's."""

    task: str
    env: str
    seed: int | None
    instruction: str
    steps: tuple[StepRecord, ...]
    end: str
    evaluation: Evaluation | None
    error: str | None = None
    error_source: str | None = None
    unreachable: dict[str, str] | None = None  # the model's endpoints were all down (EndpointDown.describe())
    wall_seconds: float = 0.0
    env_seconds: float = 0.0
    policy_seconds: float = 0.0
    screen_size: tuple[int, int] | None = None
    scale: float = 1.0
    final_screenshot: str | None = None
    final_png: bytes | None = field(default=None, repr=False)

    @property
    def success(self) -> bool:
        """Whether the environment judged the episode a success (False after an error)."""
        return bool(self.evaluation and self.evaluation.success)

    @property
    def score(self) -> float | None:
        """The environment's raw score (partial credit kept); None after an error."""
        return self.evaluation.score if self.evaluation else None

    def to_dict(self) -> EpisodeRecord:
        """The episode as plain builtins (the report's per-case record; no screenshot bytes)."""
        return {
            "task": self.task,
            "env": self.env,
            "seed": self.seed,
            "instruction": self.instruction,
            "end": self.end,
            "success": self.success,
            "score": self.score,
            "reason": self.evaluation.reason if self.evaluation else None,
            "decided_by": self.evaluation.decided_by if self.evaluation else None,
            "error": self.error,
            "error_source": self.error_source,
            "steps": len(self.steps),
            "wall_seconds": round(self.wall_seconds, 6),
            "env_seconds": round(self.env_seconds, 6),
            "policy_seconds": round(self.policy_seconds, 6),
            "screen_size": list(self.screen_size) if self.screen_size else None,
            "scale": self.scale,
            "final_screenshot": self.final_screenshot,
            "trajectory": [s.to_dict() for s in self.steps],
        }


def describe(action: Action) -> str:
    """A short text of an action for histories and reports: ``click (120, 45)``, ``type "hello"``, ``key ctrl+a``."""
    parts = [action.kind]
    if action.point is not None:
        parts.append(f"({action.point[0]:.0f}, {action.point[1]:.0f})")
    if action.end is not None:
        parts.append(f"to ({action.end[0]:.0f}, {action.end[1]:.0f})")
    if action.text:
        parts.append(repr(action.text))
    if action.keys:
        parts.append("+".join(action.keys))
    if action.scroll != (0.0, 0.0):
        parts.append(f"by {action.scroll[0]:g}, {action.scroll[1]:g}")
    if action.seconds:
        parts.append(f"{action.seconds:g} s")
    return " ".join(parts)


def run_episode(
    env: Environment,
    task: TaskSpec,
    seed: int | None,
    policy: Policy,
    max_steps: int,
    *,
    save_screenshot: ScreenshotSink | None = None,
    clock: Callable[[], float] = time.perf_counter,
    max_tokens: int | None = None,
) -> Episode:
    """Run one episode of ``task`` with ``seed`` in ``env`` (already open; left open for the next episode),
    at most ``max_steps`` policy decisions; see the module docstring for the rules. Screenshots go to
    ``save_screenshot`` when given (the episode keeps their references), else the episode keeps the bytes.
    ``max_tokens``: once the decisions' calls have used that many tokens (input plus output, cached replies'
    included, so a resumed episode stops where it stopped), no step follows: the episode ends as
    :data:`TOKEN_CAP` and is evaluated as it stands."""
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}")
    run = _Run(task, seed, save_screenshot, clock)
    try:
        obs = run.timer.env_call(env.reset, task, seed)
    except EnvFailure as exc:
        return run.finish(ERROR, None, None, f"environment failed at reset: {exc}", ENVIRONMENT)
    run.first = obs
    run.instruction = obs.instruction or task.instruction
    end = BUDGET
    results: tuple[Observation, ...] = ()
    taken = takes(env)  # the kinds of action this environment takes: any other is refused, never sent
    used = 0  # tokens of the decisions' calls so far
    for index in range(max_steps):
        shot = _keep(save_screenshot, f"step-{index + 1:02d}", obs.screenshot)
        step_input = StepInput(task, seed, run.instruction, obs, tuple(run.history), index, max_steps, results)
        try:
            decision, policy_seconds = run.timer.policy_call(policy.act, step_input)
        except (ModelError, EnvFailure) as exc:
            source = ENVIRONMENT if isinstance(exc, EnvFailure) else MODEL
            down = exc.describe() if isinstance(exc, EndpointDown) else None
            return run.finish(ERROR, obs, None, f"step {index + 1}: {source} failed: {exc}", source, down)
        ran, failure, stop = run.act(env, decision, taken, index + 1, shot, policy_seconds)
        if ran:
            obs = ran[-1]
        results = tuple(ran)
        if failure is not None:
            return run.finish(ERROR, obs, None, f"step {index + 1}: environment failed: {failure}", ENVIRONMENT)
        if stop is not None:
            end = stop
            break
        used += usage_tokens(decision.usage)
        if max_tokens is not None and used >= max_tokens and index + 1 < max_steps:
            end = TOKEN_CAP
            break
    try:
        evaluation = run.timer.env_call(env.evaluate)
    except EnvFailure as exc:
        return run.finish(ERROR, obs, None, f"environment failed at evaluation: {exc}", ENVIRONMENT)
    return run.finish(end, obs, evaluation, None)


class _Run:
    """What one episode has gathered so far (its steps, the decisions behind them, its times) and how it ends."""

    def __init__(self, task: TaskSpec, seed: int | None, save_screenshot: ScreenshotSink | None, clock: Callable[[], float]) -> None:
        self.task, self.seed, self.save, self.clock = task, seed, save_screenshot, clock
        self.started = clock()
        self.timer = _Timer(clock)
        self.steps: list[StepRecord] = []
        self.history: list[Decision] = []
        self.instruction = task.instruction  # the first observation's, once there is one
        self.first: Observation | None = None

    def act(
        self, env: Environment, decision: Decision, taken: frozenset[str], number: int, shot: tuple[str | None, bytes | None], policy_seconds: float
    ) -> tuple[list[Observation], str | None, str | None]:
        """Run ``decision``'s actions that may run and record step ``number`` (``shot``: its screenshot, kept): the
        observations after each action that ran, the environment's failure and how the actions ended the episode
        (:func:`_execute`)."""
        for action in decision.actions:
            _check_mapped(action)
        actions, refused = bounded(decision.actions, taken)
        notes = decision.notes + refused + (("unreadable_action",) if not decision.actions and "unreadable_action" not in decision.notes else ())
        self.history.append(decision)
        ran, env_seconds, failure, stop = _execute(env, actions, self.timer)
        info = dict(ran[-1].info) if ran else {}
        observed = tuple(str(n) for o in ran for n in o.info.get("notes", ()))
        info.pop("notes", None)
        left = len(actions) - len(ran)
        if left:
            notes += (f"not_run:{left}",)
        self.steps.append(
            StepRecord(
                number=number,
                reply=decision.reply,
                actions=tuple(a.describe() for a in actions),
                text=decision.history_text,
                notes=notes + observed,
                finish_reason=decision.finish_reason,
                cached=decision.cached,
                screenshot=shot[0],
                png=shot[1],
                policy_seconds=policy_seconds,
                env_seconds=env_seconds,
                info=info,
                executed=len(ran),
                usage=decision.usage,
            )
        )
        return ran, failure, stop

    def finish(self, end: str, obs: Observation | None, evaluation: Evaluation | None, error: str | None, source: str | None = None, unreachable: dict[str, str] | None = None) -> Episode:
        """The episode, ended as ``end`` on ``obs`` (its screenshot kept as the final one)."""
        ref, png = _keep(self.save, "final", obs.screenshot) if obs is not None and obs.screenshot else (None, None)
        first = self.first
        return Episode(
            task=self.task.name,
            env=self.task.env,
            seed=self.seed,
            instruction=self.instruction,
            steps=tuple(self.steps),
            end=end,
            evaluation=evaluation,
            error=error,
            error_source=source,
            unreachable=unreachable,
            wall_seconds=self.clock() - self.started,
            env_seconds=self.timer.env,
            policy_seconds=self.timer.policy,
            screen_size=first.size if first is not None else None,
            scale=first.scale if first is not None else 1.0,
            final_screenshot=ref,
            final_png=png,
        )


def _execute(env: Environment, actions: tuple[Action, ...], timer: "_Timer") -> tuple[list[Observation], float, str | None, str | None]:
    """Run ``actions`` in order: ``(observations, env_seconds, failure, end)``, one observation per action that ran.
    It stops after a ``done``/``fail`` (a final action goes to the environment too: its check may depend on it, the
    FAIL rule; ``end`` is ``done``/``fail``), after a screen on which the environment ended the episode (``env_done``),
    or at an environment failure (its message; the observations are those before it)."""
    ran: list[Observation] = []
    seconds = 0.0
    for number, action in enumerate(actions, 1):
        try:
            obs, spent = timer.env_timed(env.step, action)
        except EnvFailure as exc:
            where = f"action {number} of {len(actions)} ({action.kind}): " if len(actions) > 1 else ""
            return ran, seconds + timer.last, f"{where}{exc}", None
        seconds += spent
        ran.append(obs)
        if action.final:
            return ran, seconds, None, DONE if action.kind == "done" else FAIL
        if obs.done:
            return ran, seconds, None, ENV_DONE
    return ran, seconds, None, None


def _keep(save: ScreenshotSink | None, name: str, png: bytes) -> tuple[str | None, bytes | None]:
    """``(reference, None)`` when a sink stores the screenshot, else ``(None, png)``."""
    if save is None:
        return None, png
    return save(name, png), None


def _check_mapped(action: Action) -> None:
    """A policy must hand the loop screen pixels: points still in a model's space are a bug of the policy."""
    if (action.point is not None or action.end is not None) and action.space != "screen":
        raise ValueError(f"the policy returned a {action.kind} with points in space {action.space!r}; map them to screenshot pixels with guitest.live.actions.to_screen before returning the Decision")


class _Timer:
    """Sums the time spent in the environment and in the policy."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.spent = {"env": 0.0, "policy": 0.0}
        self.last = 0.0  # the seconds of the last timed call (kept when it raised)

    @property
    def env(self) -> float:
        return self.spent["env"]

    @property
    def policy(self) -> float:
        return self.spent["policy"]

    def timed(self, bucket: str, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        """``(fn(*args), seconds)``, the seconds added to ``bucket`` even when ``fn`` raises."""
        start = self.clock()
        try:
            return fn(*args), self.clock() - start
        finally:
            self.last = self.clock() - start
            self.spent[bucket] += self.last

    def env_timed(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        return self.timed("env", fn, *args)

    def env_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.timed("env", fn, *args)[0]

    def policy_call(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        return self.timed("policy", fn, *args)
