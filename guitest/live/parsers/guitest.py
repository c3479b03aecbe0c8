"""guitest's own action format: one line ``Action: <name>(<arguments>)``, coordinates normalized (0..1 of the screenshot).

The actions (the default prompt, :func:`guitest.live.prompts.guitest_prompt`, lists the same)::

    Action: click(0.42, 0.31)            left click at x=0.42, y=0.31 of the screenshot
    Action: double_click(0.42, 0.31)
    Action: right_click(0.42, 0.31)
    Action: move(0.42, 0.31)             move the pointer (hover)
    Action: drag(0.10, 0.20, 0.60, 0.20) press at the first point, release at the second
    Action: scroll(0.5, 0.5, "down", 3)  3 wheel notches at a point; scroll("down") scrolls where the pointer is
    Action: type("hello")                type text into the focused element (\\n presses Enter)
    Action: key("ctrl+a")                a key or a combination joined by +
    Action: wait(1)                      wait (seconds, default 1)
    Action: done()                       the task is complete
    Action: fail("why")                  the task cannot be done

Keyword forms work too (``click(x=0.42, y=0.31)``, ``type(text="hi")``). The LAST ``Action:`` line
counts, and the last call of these names after it (without one, in the whole reply). Points carry ``space="normalized"``.
"""

from __future__ import annotations

import re

from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from ..keys import combo
from . import MAX_REPLY, Parsed
from .calls import Call, direction, find_calls, fmt, number, pick, quote, region

NAMES = re.compile(r"click|double_click|right_click|move|drag|scroll|type|key|wait|done|fail")
SPACE = "normalized"
DEFAULT_NOTCHES = 3.0
DIRECTIONS = {"down": (0.0, 1.0), "up": (0.0, -1.0), "right": (1.0, 0.0), "left": (-1.0, 0.0)}


def read(text: str) -> Parsed:
    """The reply's action in guitest's format (see the module docstring); never raises."""
    part, _ = region(text, MAX_REPLY)
    candidates = [(c.start, a) for c in find_calls(part, NAMES) if (a := _action(c)) is not None]
    action, notes = pick(candidates)
    return Parsed(action, notes)


def parse(text: str) -> Action | None:
    """``read(text).action``."""
    return read(text).action


def _numbers(call: Call, names: tuple[str, ...]) -> list[float] | None:
    """The call's numeric arguments: positional ones first, then the named ones in order; None if any is not a number."""
    values = list(call.args)
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = list(values[0])
    values += [call.kwargs[n] for n in names if n in call.kwargs]
    out = [number(v) for v in values]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def _action(call: Call) -> Action | None:
    name = call.name
    if name in (CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE):
        values = _numbers(call, ("x", "y"))
        return Action(name, point=(values[0], values[1]), space=SPACE) if values and len(values) == 2 else None
    if name == DRAG:
        values = _numbers(call, ("x1", "y1", "x2", "y2"))
        return Action(DRAG, point=(values[0], values[1]), end=(values[2], values[3]), space=SPACE) if values and len(values) == 4 else None
    if name == SCROLL:
        return _scroll(call)
    if name in (TYPE, KEY, DONE, FAIL):
        value = call.args[0] if call.args else call.kwargs.get("text", call.kwargs.get("keys", call.kwargs.get("reason", "")))
        if not isinstance(value, str):
            return None
        if name == TYPE:
            return Action(TYPE, text=value) if value else None
        if name == KEY:
            keys = combo(value)
            return Action(KEY, keys=keys) if keys else None
        return Action(name, text=value)
    if name == WAIT:
        seconds = number(call.args[0]) if call.args else number(call.kwargs.get("seconds", 1))
        return Action(WAIT, seconds=seconds) if seconds is not None and seconds >= 0 else None
    return None


def _scroll(call: Call) -> Action | None:
    args = list(call.args)
    point = None
    if len(args) >= 2 and number(args[0]) is not None and number(args[1]) is not None:
        point = (number(args[0]), number(args[1]))
        args = args[2:]
    word = args[0] if args else call.kwargs.get("direction")
    amount = number(args[1]) if len(args) > 1 else number(call.kwargs.get("amount", DEFAULT_NOTCHES))
    if not isinstance(word, str) or word.lower() not in DIRECTIONS or amount is None:
        return None
    dx, dy = DIRECTIONS[word.lower()]
    return Action(SCROLL, point=point, scroll=(dx * amount, dy * amount), space=SPACE if point else None)  # type: ignore[arg-type]


def render(action: Action, decimals: int = 4) -> str:
    """``Action: ...`` for ``action`` (points already normalized)."""
    def p(point: tuple[float, float] | None) -> str:
        return ", ".join(fmt(v, decimals) for v in point) if point else ""

    kind = action.kind
    if kind in (CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE):
        body = f"{kind}({p(action.point)})"
    elif kind == DRAG:
        body = f"drag({p(action.point)}, {p(action.end)})"
    elif kind == SCROLL:
        dx, dy = action.scroll
        where = f"{p(action.point)}, " if action.point else ""
        body = f"scroll({where}{quote(direction(action.scroll))}, {fmt(abs(dy or dx), 2)})"
    elif kind == TYPE:
        body = f"type({quote(action.text)})"
    elif kind == KEY:
        body = f"key({quote('+'.join(action.keys))})"
    elif kind == WAIT:
        body = f"wait({fmt(action.seconds or 1, 2)})"
    else:
        body = f"{kind}({quote(action.text)})" if action.text else f"{kind}()"
    return f"Action: {body}"
