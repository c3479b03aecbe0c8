"""The action vocabulary of live tasks: one frozen dataclass, the same for every model convention and backend.

Runners (one per model convention under :mod:`guitest.live.runners`) read a reply into
:class:`Action` objects, their points in the reply's own coordinate space (``space``); :func:`to_screen`
maps them, through the same geometry as grounding, to pixels of the screenshot the model was
shown, which is what :meth:`guitest.live.protocol.Environment.step` takes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..geometry import Point, from_original_pixels, to_original_pixels

CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE, DRAG, SCROLL, TYPE, KEY, WAIT, DONE, FAIL = (
    "click", "double_click", "right_click", "move", "drag", "scroll", "type", "key", "wait", "done", "fail",
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
        if self.kind not in KINDS:
            raise ValueError(f"unknown action kind {self.kind!r}; expected one of {', '.join(KINDS)}")

    @property
    def final(self) -> bool:
        return self.kind in FINAL

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
