"""UI-TARS actions (UI-TARS v1 and 1.5; bytedance/UI-TARS ``codes/ui_tars/prompt.py``, ``action_parser.py``).

Read after the last ``Action:``: ``click``/``left_single``, ``left_double``, ``right_single``, ``hover``
(a move), ``drag``/``select`` (``start_box``, ``end_box``; or ``start_point``, ``end_point``),
``hotkey(key='ctrl c')`` (also ``press(key=...)``), ``type(content='...')`` (escapes undone: a final
``\\n`` presses Enter), ``scroll(start_box=..., direction='down')`` (5 wheel notches, as UI-TARS's
own executor scrolls), ``wait()`` (5 s), ``finished(content=...)`` (done), ``call_user()`` (fail:
the agent asks for help). A box argument is any of ``'(x,y)'``, ``'<|box_start|>(x,y)<|box_end|>'``,
``'<point>x y</point>'``, ``'[x1, y1, x2, y2]'`` (its centre). The last action in the region counts.
Coordinates are the reply's own numbers (0..1000 for UI-TARS v1, pixels of the image sent for 1.5).
"""

from __future__ import annotations

import re

from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from ..keys import combo
from . import MAX_REPLY, Parsed
from .calls import Call, direction, find_calls, fmt, pick, point_of, region

NAMES = re.compile(r"click|left_single|left_double|right_single|hover|drag|select|hotkey|press|type|scroll|wait|finished|call_user")
CLICKS = {"click": CLICK, "left_single": CLICK, "left_double": DOUBLE_CLICK, "right_single": RIGHT_CLICK, "hover": MOVE}
NOTCHES = 5.0  # UI-TARS's parsing_response_to_pyautogui_code scrolls pyautogui.scroll(+-5)
WAIT_SECONDS = 5.0  # "wait() #Sleep for 5s and take a screenshot" (the computer-use prompt)
DIRECTIONS = {"down": (0.0, 1.0), "up": (0.0, -1.0), "right": (1.0, 0.0), "left": (-1.0, 0.0)}
START = ("start_box", "point", "start_point", "box")
END = ("end_box", "end_point")


def read(text: str) -> Parsed:
    """The reply's last UI-TARS action (see the module docstring); never raises."""
    part, _ = region(text, MAX_REPLY)
    candidates = [(c.start, a) for c in find_calls(part, NAMES) if (a := _action(c)) is not None]
    action, notes = pick(candidates)
    if action is not None and action.kind == FAIL:
        notes = notes + ("call_user",)
    return Parsed(action, notes)


def parse(text: str) -> Action | None:
    """``read(text).action``."""
    return read(text).action


def _arg(call: Call, names: tuple[str, ...], position: int) -> object:
    for name in names:
        if name in call.kwargs:
            return call.kwargs[name]
    return call.args[position] if len(call.args) > position else None


def _action(call: Call) -> Action | None:
    name = call.name
    if name in CLICKS:
        point = point_of(_arg(call, START, 0))
        return Action(CLICKS[name], point=point) if point else None
    if name in ("drag", "select"):
        start, end = point_of(_arg(call, START, 0)), point_of(_arg(call, END, 1))
        return Action(DRAG, point=start, end=end) if start and end else None
    if name in ("hotkey", "press"):
        value = _arg(call, ("key", "keys", "hotkey"), 0)
        keys = combo(value) if isinstance(value, str) else ()
        return Action(KEY, keys=keys) if keys else None
    if name == "type":
        value = _arg(call, ("content", "text"), 0)
        return Action(TYPE, text=value) if isinstance(value, str) and value else None
    if name == "scroll":
        direction = _arg(call, ("direction",), 1)
        if not isinstance(direction, str):
            return None
        delta = next((d for word, d in DIRECTIONS.items() if word in direction.lower()), None)
        if delta is None:
            return None
        return Action(SCROLL, point=point_of(_arg(call, START, 0)), scroll=(delta[0] * NOTCHES, delta[1] * NOTCHES))
    if name == "wait":
        return Action(WAIT, seconds=WAIT_SECONDS)
    if name == "finished":
        value = _arg(call, ("content",), 0)
        return Action(DONE, text=value if isinstance(value, str) else "")
    if name == "call_user":
        return Action(FAIL, text="call_user")
    return None


def render(action: Action, decimals: int = 1) -> str:
    """``Thought: ...`` and ``Action: ...`` for ``action`` in UI-TARS's syntax (points already in the profile's numbers)."""
    def box(point: tuple[float, float] | None) -> str:
        return f"'({fmt(point[0], decimals)},{fmt(point[1], decimals)})'" if point else "''"

    kind = action.kind
    worded = {
        TYPE: f"type(content={_py(action.text)})",
        KEY: f"hotkey(key={_py(' '.join(action.keys))})",
        WAIT: "wait()",
        DONE: f"finished(content={_py(action.text)})",
        FAIL: "call_user()",
    }
    if kind in worded:
        body = worded[kind]
    elif kind == DRAG:
        body = f"drag(start_box={box(action.point)}, end_box={box(action.end)})"
    elif kind == SCROLL:
        where = f"start_box={box(action.point)}, " if action.point else ""
        body = f"scroll({where}direction='{direction(action.scroll)}')"
    else:
        name = {CLICK: "click", DOUBLE_CLICK: "left_double", RIGHT_CLICK: "right_single", MOVE: "hover"}[kind]
        body = f"{name}(start_box={box(action.point)})"
    return f"Thought: {kind.replace('_', ' ')}.\nAction: {body}"


def _py(text: str) -> str:
    """``text`` as a Python string literal (what UI-TARS's own parser evaluates)."""
    return repr(text)
