"""The action vocabulary of live tasks: one frozen dataclass, the same for every model convention and backend.

Runners (one per model convention under :mod:`guitest.live.runners`) read a reply into
:class:`Action` objects, their points in the reply's own coordinate space (``space``); :func:`to_screen`
maps them, through the same geometry as grounding, to pixels of the screenshot the model was
shown, which is what :meth:`guitest.live.protocol.Environment.step` takes.

The vocabulary is open: an environment backend with actions of its own (a phone's ``swipe``, ``long_press``, ``back``)
declares each once with :func:`declare` (its name and arguments) and lists what it takes in its ``takes`` attribute
(:func:`takes`; a backend without one takes the built-in kinds, :data:`KINDS`). guitest's own runner then reads and
writes the declared kinds like its own (``Action: swipe(0.1, 0.5, 0.9, 0.5)``); a runner that follows a reference reads
what its reference reads and no more, so a reply naming another action is noted, not run; and the episode loop refuses
an action of a kind its environment does not take (a note on the step), never handing the backend a kind it lacks.

Bounds (:func:`problem`, :func:`bounded`): an action an environment takes has every number finite and in its range
(:data:`MAX_COORDINATE`, :data:`MAX_SCROLL`, :data:`MAX_SECONDS`), and a step runs at most :data:`MAX_ACTIONS`
actions. The loop holds every decision to them (:func:`guitest.live.loop.run_episode`), so no convention's reader,
adapter or policy can hand an environment a ``time.sleep(nan)`` or a ``pyautogui.scroll(-10**12)``.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ..geometry import Point, from_original_pixels, to_original_pixels

CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE, DRAG, SCROLL, TYPE, KEY, WAIT, DONE, FAIL = (
    "click",
    "double_click",
    "right_click",
    "move",
    "drag",
    "scroll",
    "type",
    "key",
    "wait",
    "done",
    "fail",
)
# the rest of the computer-use APIs' actions (Anthropic's computer tool): a triple or middle click, the left button
# pressed or released where the pointer is (or at a point), a key combination held for ``seconds``
TRIPLE_CLICK, MIDDLE_CLICK, MOUSE_DOWN, MOUSE_UP, HOLD_KEY = "triple_click", "middle_click", "mouse_down", "mouse_up", "hold_key"
KINDS = (CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE, DRAG, SCROLL, TYPE, KEY, WAIT, DONE, FAIL, TRIPLE_CLICK, MIDDLE_CLICK, MOUSE_DOWN, MOUSE_UP, HOLD_KEY)
#: pointer actions that may hold modifier keys (``keys``) while they run: a ctrl+click, a shift+scroll
MODIFIABLE = (CLICK, DOUBLE_CLICK, RIGHT_CLICK, TRIPLE_CLICK, MIDDLE_CLICK, MOVE, DRAG, SCROLL)
#: actions that end the episode (the agent says it is finished, or that the task cannot be done)
FINAL = (DONE, FAIL)
#: actions that need a point (``drag`` also needs ``end``; ``scroll`` may have one)
POINTED = (CLICK, DOUBLE_CLICK, RIGHT_CLICK, TRIPLE_CLICK, MIDDLE_CLICK, MOVE, DRAG)

#: what an argument of a declared kind is: the field of :class:`Action` it fills (a point is two numbers)
ARGUMENTS = ("point", "end", "text", "keys", "seconds")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Kind:
    """A kind of action an environment declares (:func:`declare`): its ``name``, its ``arguments`` in the order
    guitest's own format writes them (each one of :data:`ARGUMENTS`), whether it ends the episode (``final``), and a
    line saying what it does (``doc``, shown in guitest's own step prompt)."""

    name: str
    arguments: tuple[str, ...] = ()
    final: bool = False
    doc: str = ""


_declared: dict[str, Kind] = {}
_declaring = threading.Lock()


def declare(name: str, arguments: Sequence[str] = (), *, final: bool = False, doc: str = "") -> Kind:
    """Declare an action kind of an environment's own, once per process (declaring it again the same way is harmless;
    another way, or a built-in's name, is a ValueError naming the difference)."""
    kind = Kind(name, tuple(arguments), final, doc)
    if not _NAME.fullmatch(name):
        raise ValueError(f"an action kind's name is lower-case letters, digits and _, starting with a letter: {name!r}")
    if name in KINDS:
        raise ValueError(f"{name!r} is a built-in action kind: an environment takes it as it is")
    bad = [a for a in kind.arguments if a not in ARGUMENTS] + [a for a in set(kind.arguments) if kind.arguments.count(a) > 1]
    if bad:
        raise ValueError(f"action kind {name!r}: arguments are some of {', '.join(ARGUMENTS)}, each once; not {', '.join(bad)}")
    with _declaring:
        known = _declared.setdefault(name, kind)
    if known != kind:
        raise ValueError(f"action kind {name!r} is declared already as {known}, not as {kind}")
    return kind


def declared() -> tuple[Kind, ...]:
    """The kinds environments declared in this process, in the order they were declared."""
    return tuple(_declared.values())


def known(kind: str) -> bool:
    """Whether ``kind`` is a built-in action kind or one an environment declared."""
    return kind in KINDS or kind in _declared


def takes(env: Any) -> frozenset[str]:
    """The action kinds environment ``env`` takes: its ``takes`` attribute, else the built-in kinds."""
    given = getattr(env, "takes", None)
    return frozenset(given) if given is not None else frozenset(KINDS)


#: the largest coordinate of a point, either sign, in screenshot pixels: ten times the widest screen a backend shows
#: (what lies off the screenshot within it is the backend's to handle: the desktop moves it onto the screen's edge, the
#: browser notes ``outside_screen`` and does nothing)
MAX_COORDINATE = 100_000.0
#: the most wheel notches a scroll turns, each way (50 000 CSS pixels in the browser; pyautogui sends one wheel event a
#: notch, so 10**12 notches kept a machine busy for the whole command deadline)
MAX_SCROLL = 1_000.0
#: the longest ``wait`` or ``hold_key``, in seconds: the limit of Anthropic's computer-use demo (tools/computer.py,
#: ``duration`` of ``wait`` and ``hold_key``); the backends wait at most their own ``max_wait`` / ``MAX_WAIT`` within it
MAX_SECONDS = 100.0
#: the most actions one step runs (the rest of the decision's are not run, and noted): the same number of actions
#: the pyautogui reader unrolls a loop to (guitest.live.runners.prompt_agent.MAX_ACTIONS)
MAX_ACTIONS = 200


@dataclass(frozen=True)
class Action:
    """One agent action.

    ``point`` (and ``end`` for a drag): None for a click, scroll or drag that starts where the pointer
    is (``pyautogui.click()``, Qwen's ``left_click_drag``); in ``space``: None while it is the reply's numbers in the
    profile's declared space; a parser that knows better names it (``normalized``, ``grid1000``,
    ``pixel_sent``, ``pixel_original``); ``screen`` once mapped by :func:`to_screen` (pixels of the
    screenshot shown, what an environment takes).
    ``text``: what ``type`` types, or the message of ``done``/``fail``. ``keys``: a key or combination
    for ``key`` and ``hold_key``, lower-case names (``ctrl``, ``shift``, ``alt``, ``meta``, ``enter``, ``tab``, ``a``);
    on a pointer action (:data:`MODIFIABLE`), the modifier keys held while it runs.
    ``scroll``: (dx, dy) in wheel notches, positive dy scrolls down. ``seconds``: for ``wait`` and ``hold_key``.
    ``paste``: ``type`` puts its text in at once, as a paste through the clipboard does (OSWorld's UI-TARS runner
    types so), rather than key by key; either way any text, non-ASCII included, arrives.
    """

    kind: str
    point: Point | None = None
    end: Point | None = None
    text: str = ""
    keys: tuple[str, ...] = ()
    scroll: tuple[float, float] = (0.0, 0.0)
    seconds: float = 0.0
    space: str | None = None
    paste: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS and self.kind not in _declared:
            raise ValueError(f"unknown action kind {self.kind!r}; expected one of {', '.join(KINDS + tuple(_declared))} (an environment declares its own with guitest.live.actions.declare)")

    @property
    def final(self) -> bool:
        declared = _declared.get(self.kind)
        return self.kind in FINAL or (declared is not None and declared.final)

    def describe(self) -> dict[str, object]:
        """The action as plain builtins (the report and the trajectory), empty fields left out."""
        out: dict[str, object] = {"kind": self.kind}
        if self.point is not None:
            out["point"] = [round(v, 2) for v in self.point]
        if self.end is not None:
            out["end"] = [round(v, 2) for v in self.end]
        if self.text:
            out["text"] = self.text
        if self.keys:
            out["keys"] = list(self.keys)
        if self.scroll != (0.0, 0.0):
            out["scroll"] = list(self.scroll)
        if self.seconds:
            out["seconds"] = self.seconds
        if self.space is not None:
            out["space"] = self.space
        if self.paste:
            out["paste"] = True
        return out


def problem(action: Action) -> str | None:
    """What is wrong with the numbers of ``action`` (points in screenshot pixels), as a sentence a model can be told:
    a number that is not finite, or out of its range (:data:`MAX_COORDINATE`, :data:`MAX_SCROLL`, :data:`MAX_SECONDS`;
    ``seconds`` from 0). None when every number is in range."""
    for name, point in (("point", action.point), ("end", action.end)):
        if point is not None and not all(math.isfinite(v) and abs(v) <= MAX_COORDINATE for v in point):
            return f"{name} ({_number(point[0])}, {_number(point[1])}) is outside the range of coordinates, -{MAX_COORDINATE:.0f} to {MAX_COORDINATE:.0f} pixels"
    if not all(math.isfinite(v) and abs(v) <= MAX_SCROLL for v in action.scroll):
        dx, dy = action.scroll
        return f"a scroll of ({_number(dx)}, {_number(dy)}) notches is outside the range of scrolls, -{MAX_SCROLL:.0f} to {MAX_SCROLL:.0f} notches each way"
    if not (math.isfinite(action.seconds) and 0 <= action.seconds <= MAX_SECONDS):
        return f"{_number(action.seconds)} seconds is outside the range of waits, 0 to {MAX_SECONDS:.0f} seconds"
    return None


def bounded(actions: Sequence[Action], taken: frozenset[str] | None = None) -> tuple[tuple[Action, ...], tuple[str, ...]]:
    """The actions of one step that may run, in order, and notes on the others: the first :data:`MAX_ACTIONS` are
    considered (``over_cap:N`` notes how many more were not run), and of those each with a :func:`problem`, or of a kind
    not in ``taken`` (the environment's, :func:`takes`), is refused (``action K refused: <why>``, K counting from 1
    among the decision's actions)."""
    kept: list[Action] = []
    notes: list[str] = []
    for number, action in enumerate(actions[:MAX_ACTIONS], 1):
        why = problem(action)
        if why is None and taken is not None and action.kind not in taken:
            why = f"the environment takes no {action.kind!r} action (it takes {', '.join(sorted(taken))})"
        if why is None:
            kept.append(action)
        else:
            notes.append(f"action {number} refused: {why}")
    if len(actions) > MAX_ACTIONS:
        notes.append(f"over_cap:{len(actions) - MAX_ACTIONS}")
    return tuple(kept), tuple(notes)


def _number(value: float) -> str:
    return f"{value:g}" if math.isfinite(value) else str(value)


def to_screen(action: Action, space: str, sent_size: tuple[int, int], screen_size: tuple[int, int]) -> Action:
    """``action`` with its points mapped from its own space (the profile's ``space`` when the action
    names none) to pixels of the screenshot shown (``screen_size``), the image sent being ``sent_size``."""
    own = action.space or space
    if own == "screen":
        return replace(action, space="screen")

    def mapped(p: Point | None) -> Point | None:
        return None if p is None else to_original_pixels(p, own, sent_size, screen_size)

    return replace(action, point=mapped(action.point), end=mapped(action.end), space="screen")


def from_screen(action: Action, space: str, sent_size: tuple[int, int], screen_size: tuple[int, int]) -> Action:
    """The inverse of :func:`to_screen`: ``action`` (points in screenshot pixels) with its points in ``space``,
    as a reply in that space would write them (what baselines and test policies render)."""

    def mapped(p: Point | None) -> Point | None:
        return None if p is None else from_original_pixels(p, space, sent_size, screen_size)

    return replace(action, point=mapped(action.point), end=mapped(action.end), space=space)
