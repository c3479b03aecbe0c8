"""What a runner is: one model family driven in live tasks the way its own reference runner drives it.

A :class:`Runner` holds, for one convention, everything that decides what the model sees at a step and what its
reply does: the size of the screenshot sent (:meth:`Runner.sizes`), the messages (:meth:`Runner.prompt`: system
prompt, earlier screenshots, the model's own earlier replies as assistant turns or as text), the reading of a reply
into an ordered list of actions (:meth:`Runner.read`), the runner's stop rules and their tolerances
(:meth:`Runner.decide`), the mapping of the reply's numbers to screenshot pixels (:meth:`Runner.to_screen`), and a
reply that reads back as given actions (:meth:`Runner.render`, what baselines and test policies say). Runners are
stateless: what an episode has said so far comes in as its :class:`Past` steps, so the same replies give the same
episode whatever ran before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Sequence

from ...exchange import Prompt, SentImage
from ...report_parts import RunnerRecord
from ..actions import Action, from_screen, to_screen

if TYPE_CHECKING:
    from ...models.base import Model

#: who speaks a turn of a prompt's conversation
USER, ASSISTANT = "user", "assistant"


@dataclass(frozen=True)
class Read:
    """What a runner read in one reply: its actions in order, their points in the reply's own numbers, and notes.
    A part of the reply that could not be read is named in a note (``action 2: coordinates_not_numbers``)."""

    actions: tuple[Action, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Past:
    """One earlier step of the episode, as a runner sends it again: the reply (None when there was none), the
    screenshot sent with it, the actions decided (the reply's own numbers) and the runner's history line."""

    reply: str | None
    image: SentImage
    actions: tuple[Action, ...] = ()
    line: str = ""


@dataclass(frozen=True)
class Runner:
    """One convention's runner (see the module docstring). ``name`` is what ``--runner`` and the report call it,
    ``source`` the reference it follows (file by file), ``convention`` the syntax its replies are written in
    (``guitest``, ``uitars``, ``computer_use``, ``pyautogui``), ``space`` the coordinate space of those replies
    (a space of :mod:`guitest.geometry`; None: the model profile's), ``history_images`` how many earlier
    screenshots a step sends by default (``--history-images`` chooses another), ``reference`` the reference's
    default settings that guitest does not apply itself (its sampling: ``--temperature``, ``--max-tokens``
    choose those), for the record. ``sleep_after_execution``: the seconds the reference's run script waits after
    each action before the next screenshot (OSWorld's ``--sleep_after_execution``, passed to ``DesktopEnv.step``);
    a desktop suite whose ``env_options.settle`` is ``runner`` waits that long (None: the reference sets none).
    ``evaluate_after``: the seconds the reference's episode loop waits from the last action to the evaluation
    (OSWorld's ``lib_run_single.run_single_example``: 20), waited by a suite whose ``env_options.evaluate_after`` is
    ``runner`` (None: the reference sets none)."""

    name: str
    source: str
    convention: str
    space: str | None = None
    history_images: int = 0
    reference: dict[str, Any] = field(default_factory=dict)
    sleep_after_execution: float | None = None
    evaluate_after: float | None = None

    def describe(self, history_images: int | None = None) -> RunnerRecord:
        """The runner as the report records it: name, source, convention, space and the earlier screenshots sent."""
        return {
            "name": self.name,
            "source": self.source,
            "convention": self.convention,
            "space": self.space,
            "history_images": self.history_images if history_images is None else history_images,
            "reference": dict(self.reference),
        }

    def space_for(self, model: "Model | None") -> str:
        """The coordinate space replies are read in: the runner's own, else the model profile's (normalized without one)."""
        if self.space is not None:
            return self.space
        return model.profile.space if model is not None else "normalized"

    # -- what is sent ------------------------------------------------------------------------------------

    def sizes(self, screen: tuple[int, int], model: "Model") -> tuple[int, int]:
        """The size the screenshot (``screen``, its pixel size) is sent at: by default the model profile's sizing."""
        return model.plan_size(screen)

    def resizes(self) -> bool:
        """Whether the screenshot is resized here to :meth:`sizes` before the model's adapter sees it (a runner whose
        reference resizes on the client), rather than planned by the adapter (which may leave it to the server)."""
        return False

    def prompt(self, instruction: str, past: Sequence[Past], sent: SentImage, images: int) -> Prompt:
        """The step's messages: ``past`` the episode's earlier steps, ``sent`` the current screenshot as sent, ``images``
        how many earlier screenshots to send (the most recent ones)."""
        raise NotImplementedError

    # -- what a reply does ---------------------------------------------------------------------------------

    def read(self, text: str) -> Read:
        """The actions of a reply, in order (never raises, whatever the text)."""
        raise NotImplementedError

    def decide(self, read: Read, past: Sequence[Past], step: int, budget: int) -> tuple[tuple[Action, ...], tuple[str, ...]]:
        """The actions that run, after the runner's stop rules (``step`` counts from 0 of ``budget`` model calls), and
        notes on the rules that applied. By default every action read."""
        return read.actions, ()

    def line(self, text: str, actions: Sequence[Action]) -> str:
        """The history line of a step for later prompts: by default the actions as this runner writes them."""
        return action_line(self.render(actions)) if actions else "(no readable action)"

    def render(self, actions: Sequence[Action], decimals: int | None = None) -> str:
        """A reply in this runner's syntax that reads back as ``actions`` (points already in the reply's numbers)."""
        raise NotImplementedError

    # -- coordinates ---------------------------------------------------------------------------------------

    def to_screen(self, action: Action, space: str, sent: tuple[int, int], screen: tuple[int, int]) -> Action:
        """``action`` with its points in screenshot pixels (``sent``: the size of the image sent, ``screen``: of the
        screenshot), read in ``space`` (:meth:`space_for`) unless the action names its own."""
        return to_screen(action, space, sent, screen)

    def from_screen(self, action: Action, space: str, sent: tuple[int, int], screen: tuple[int, int]) -> Action:
        """The inverse of :meth:`to_screen`: the numbers a reply in ``space`` writes for a point on the screen."""
        return from_screen(action, space, sent, screen)


def action_line(reply: str) -> str:
    """A rendered reply without its wrapping (code fences, ``<tool_call>`` tags, UI-TARS's thought): one line."""
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip() and not ln.startswith(("```", "<tool_call>", "</tool_call>", "Thought:"))]
    return " ".join(lines) or reply.strip()


def numbered(kind: str, notes: Sequence[str], count: int) -> tuple[str, ...]:
    """Notes on one part of a reply, named by its place when the reply has several (``action 2: no_text``)."""
    if count <= 1:
        return tuple(notes)
    return tuple(f"{kind}: {n}" for n in notes)


def window(past: Sequence[Past], images: int) -> Sequence[Past]:
    """The ``images`` most recent earlier steps, oldest first: all of them while fewer have passed, none for 0 (the
    references' ``max(0, current_step - history_n)``)."""
    return past[max(len(past) - images, 0) :] if images > 0 else past[:0]


def recent(past: Sequence[Past], images: int) -> list[SentImage]:
    """The screenshots of the ``images`` most recent earlier steps, oldest first."""
    return [p.image for p in window(past, images)]


def whole(value: float) -> float:
    """``value`` cut to a whole number as ``int(x)`` cuts it; a value that is not finite (a reply's ``1e308`` scaled
    to the screen) is kept as it is, for the loop's bounds to refuse (``int(inf)`` raised an OverflowError)."""
    return float(int(value)) if math.isfinite(value) else value


def whole_pixels(action: Action) -> Action:
    """``action`` (screen pixels) with its points cut to whole pixels as pyautogui cuts what OSWorld's agents write
    (``int(x)``), so the point a reference's machine is sent is the one guitest's is sent."""

    def cut(p: tuple[float, float] | None) -> tuple[float, float] | None:
        return None if p is None else (whole(p[0]), whole(p[1]))

    return replace(action, point=cut(action.point), end=cut(action.end))


def merge_drags(actions: Sequence[Action]) -> list[Action]:
    """A move then a drag from the pointer (``moveTo(a)``, ``dragTo(b)``) as one drag from a to b: the same gesture, as
    one action that says where it starts."""
    out: list[Action] = []
    for action in actions:
        if action.kind == "drag" and action.point is None and out and out[-1].kind == "move" and out[-1].point is not None:
            out[-1] = Action("drag", point=out[-1].point, end=action.end, space=action.space)
        else:
            out.append(action)
    return out
