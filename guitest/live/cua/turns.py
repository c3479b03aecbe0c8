"""One reply of a computer-use API, read: its tool calls, each as guitest operations, and how the episode goes on.

A provider's reply holds tool calls (Anthropic's ``tool_use`` blocks, OpenAI's ``computer_call`` items),
each answered by one result (a ``tool_result``, a ``computer_call_output``) that names it by ``Call.id``.
A call is one or more :class:`Op` in order (an OpenAI GA ``computer_call`` batches several): an action
for the environment (points in pixels of the declared display, space ``pixel_sent``; a screenshot is a
0.1 s wait, as OSWorld runs it), or a look at the screen that needs none (a zoom, the cursor position),
or an error the model is told about in the call's result (an action the tool does not have, a coordinate off the display). These
are plain frozen data: the provider modules read replies into them, :mod:`guitest.live.cua.policy`
runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...printable import printable
from ..actions import WAIT, Action

#: what an operation shows in its call's result
SCREENSHOT, ZOOM, CURSOR = "screenshot", "zoom", "cursor"
#: how a ``screenshot`` call runs: as OSWorld's runners run it (``pyautogui.sleep(0.1)``, then the environment's screen)
LOOK_SECONDS = 0.1


def look() -> Action:
    """The action a screenshot runs: a 0.1 s wait, after which the environment's new screen is taken."""
    return Action(WAIT, seconds=LOOK_SECONDS)


@dataclass(frozen=True)
class Op:
    """One operation of a tool call: ``action`` for the environment (space ``pixel_sent``: pixels of the declared
    display), or None for a look (``shows``: ``screenshot``, ``zoom`` of ``region`` (x1, y1, x2, y2 in display pixels),
    ``cursor``); ``error``: why it cannot run (nothing runs, the call's result says so); ``note``: how it was read;
    ``scroll_pixels``: the action's ``scroll`` is in pixels of the display (OpenAI), not wheel notches (Anthropic)."""

    action: Action | None = None
    shows: str = SCREENSHOT
    region: tuple[int, int, int, int] | None = None
    error: str | None = None
    note: str | None = None
    scroll_pixels: bool = False


@dataclass(frozen=True)
class Call:
    """A tool call: the ``id`` its result answers, its operations in order, its input as the reply wrote it (``raw``,
    plain builtins, for the reply text and the trajectory), and the provider's pending safety checks (OpenAI)."""

    id: str
    ops: tuple[Op, ...]
    raw: Any = None
    safety_checks: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Turn:
    """A reply read: its ``calls`` in order; ``text`` (the model's prose, reasoning summaries included); ``end``: None
    while the model calls tools, ``done`` or ``fail`` when it answered without one (the runner's stop rule decided
    which, ``reason`` says why); ``truncated``: cut by the token limit before it was whole (nothing runs);
    ``id``: the provider's id of the reply; ``notes`` for the step record."""

    calls: tuple[Call, ...] = ()
    text: str = ""
    end: str | None = None
    reason: str = ""
    truncated: bool = False
    id: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def ops(self) -> list[tuple[int, Op]]:
        """Every operation in order, with the index of its call."""
        return [(n, op) for n, call in enumerate(self.calls) for op in call.ops]


def number(value: Any) -> float | None:
    """A JSON number of a reply as a finite float; None for anything else: not a number (a string, a bool, null), NaN,
    an infinity, or an integer past the largest float (``10**400``, which ``float()`` refuses with an OverflowError)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        result = float(value)
    except OverflowError:
        return None
    return result if math.isfinite(result) else None


def listed(value: Any) -> list[Any]:
    """``value`` when it is a list (a reply's list field), else an empty list: a reply that writes a number or an
    object where a list belongs holds none of its items."""
    return value if isinstance(value, list) else []


def shown(value: Any, limit: int = 40) -> str:
    """``value`` as a tool error quotes it: its ``repr``, control characters escaped, cut to ``limit`` characters (an
    integer of 401 digits, a list of thousands of items)."""
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's 4300 digits of str()
        text = f"<an integer of {value.bit_length()} bits>"
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
