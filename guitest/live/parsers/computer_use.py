"""Qwen2.5-VL and Qwen3-VL ``computer_use`` tool calls (QwenLM cookbooks ``computer_use.ipynb``,
``utils/agent_function_call.py``)::

    <tool_call>
    {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}
    </tool_call>

Actions read: ``left_click`` (``click``), ``right_click``, ``double_click``, ``triple_click`` (as a
double click, noted), ``middle_click`` (as a click, noted), ``mouse_move``, ``left_click_drag``
(from the pointer to ``coordinate``; from ``start_coordinate`` when given), ``key`` (``keys``: a
list pressed together, or a string ``"ctrl+c"``), ``type`` (``text``), ``scroll`` (``pixels``:
positive scrolls up, taken as wheel notches as the cookbook's pyautogui executor does) and
``hscroll`` (positive right), ``wait`` (``time`` seconds), ``terminate`` (``status`` success ->
done, failure -> fail), ``answer`` (done, with its ``text``). A click without ``coordinate``
clicks where the pointer is. The last call in the reply counts; ``<tool_call>`` tags may be
missing (a bare JSON object with ``name``/``arguments`` or with ``action`` is read too), and
``arguments`` may be a JSON string (the OpenAI tool-call wire form). Coordinates are the reply's
own numbers: pixels of the image sent for Qwen2.5-VL, 0..1000 for Qwen3-VL (the profile's space).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ... import jsonscan, pyliteral
from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from ..keys import combo, normalize
from . import MAX_REPLY, Parsed
from .calls import fmt, number, pick, point_of

TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
CLICKS = {"left_click": CLICK, "click": CLICK, "right_click": RIGHT_CLICK, "double_click": DOUBLE_CLICK, "triple_click": DOUBLE_CLICK, "middle_click": CLICK, "mouse_move": MOVE}


def read(text: str) -> Parsed:
    """The reply's last ``computer_use`` action (see the module docstring); never raises."""
    from ...parsing import strip_think

    text = strip_think(text[-MAX_REPLY:])
    blocks = [(m.start(), m.group(1)) for m in TOOL_CALL.finditer(text)]
    objects = [(pos, obj) for pos, block in blocks for obj in _objects(block)] if blocks else _objects_at(text)
    candidates: list[tuple[int, tuple[Action, tuple[str, ...]]]] = []
    unreadable: list[str] = []
    for pos, obj in objects:
        arguments = _arguments(obj)
        if arguments is None:
            continue
        action, notes = _action(arguments)
        if action is None:
            unreadable.extend(notes)
        else:
            candidates.append((pos, (action, notes)))
    chosen, pick_notes = pick(candidates)
    if chosen is None:
        return Parsed(None, tuple(unreadable[-1:]) or ("no_action",))
    action, notes = chosen
    return Parsed(action, notes + pick_notes)


def parse(text: str) -> Action | None:
    """``read(text).action``."""
    return read(text).action


def _objects(block: str) -> list[Any]:
    """The JSON (or Python-literal) objects in a ``<tool_call>`` block."""
    found = [obj for _, obj in _objects_at(block)]
    if found:
        return found
    try:
        value = pyliteral.literal(block)
    except ValueError:
        return []
    return [value] if isinstance(value, dict) else []


def _objects_at(text: str) -> list[tuple[int, Any]]:
    """Every top-level JSON object in ``text`` with its position."""
    return jsonscan.scan(text, "{", lambda obj: (obj if isinstance(obj, dict) else None, True))


def _arguments(obj: Any) -> dict[str, Any] | None:
    """The tool arguments of a call object (``arguments`` or ``parameters``, possibly a JSON string; OpenAI's
    ``function`` wrapper; or the arguments themselves), when they name an ``action``."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    for key in ("arguments", "parameters", "args", "input"):
        inner = obj.get(key)
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except (ValueError, RecursionError):
                inner = None
        if isinstance(inner, dict):
            obj = inner
            break
    return obj if isinstance(obj.get("action"), str) else None


def _action(args: dict[str, Any]) -> tuple[Action | None, tuple[str, ...]]:
    name = args["action"].strip().lower()
    coordinate = args.get("coordinate")
    point = point_of(coordinate) if coordinate is not None else None
    if coordinate is not None and point is None:
        return None, ("coordinates_not_numbers",)
    if name in CLICKS:
        notes = {"triple_click": ("triple_click_as_double",), "middle_click": ("middle_click_as_click",)}.get(name, ())
        if name == "mouse_move" and point is None:
            return None, ("move_without_point",)
        return Action(CLICKS[name], point=point), notes
    if name == "left_click_drag":
        start = point_of(args.get("start_coordinate")) if args.get("start_coordinate") is not None else None
        return (Action(DRAG, point=start, end=point), ()) if point else (None, ("drag_without_point",))
    if name == "key":
        keys = args.get("keys", args.get("text"))
        if isinstance(keys, str):
            names = combo(keys)
        elif isinstance(keys, list) and keys and all(isinstance(k, str) and k for k in keys):
            names = tuple(normalize(k) for k in keys)
        else:
            names = ()
        return (Action(KEY, keys=names), ()) if names else (None, ("no_key",))
    if name == "type":
        text = args.get("text")
        return (Action(TYPE, text=text), ()) if isinstance(text, str) and text else (None, ("no_text",))
    if name in ("scroll", "hscroll"):
        pixels = number(args.get("pixels"))
        if pixels is None:
            return None, ("no_amount",)
        return Action(SCROLL, point=point, scroll=(pixels, 0.0) if name == "hscroll" else (0.0, -pixels)), ()
    if name == "wait":
        seconds = number(args.get("time", 1))
        return (Action(WAIT, seconds=seconds), ()) if seconds is not None and seconds >= 0 else (None, ("bad_wait",))
    if name == "terminate":
        status = str(args.get("status", "")).lower()
        return Action(FAIL if status == "failure" else DONE, text=status), ()
    if name == "answer":
        text = args.get("text")
        return Action(DONE, text=text if isinstance(text, str) else ""), ("answer",)
    return None, (f"unknown_action_{re.sub(r'[^a-z0-9_]', '', name)[:30]}",)


def render(action: Action, decimals: int = 1) -> str:
    """A ``<tool_call>`` for ``action`` (points already in the profile's numbers)."""
    def xy(point: tuple[float, float]) -> list[float]:
        return [float(fmt(v, decimals)) for v in point]

    kind = action.kind
    args: dict[str, Any]
    if kind in (CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE):
        args = {"action": {CLICK: "left_click", DOUBLE_CLICK: "double_click", RIGHT_CLICK: "right_click", MOVE: "mouse_move"}[kind]}
        if action.point:
            args["coordinate"] = xy(action.point)
    elif kind == DRAG:
        args = {"action": "left_click_drag", "coordinate": xy(action.end or (0, 0))}
        if action.point:
            args["start_coordinate"] = xy(action.point)
    elif kind == SCROLL:
        dx, dy = action.scroll
        args = {"action": "hscroll", "pixels": dx} if dx and not dy else {"action": "scroll", "pixels": -dy}
        if action.point:
            args["coordinate"] = xy(action.point)
    elif kind == TYPE:
        args = {"action": "type", "text": action.text}
    elif kind == KEY:
        args = {"action": "key", "keys": list(action.keys)}
    elif kind == WAIT:
        args = {"action": "wait", "time": action.seconds}
    else:
        args = {"action": "terminate", "status": "success" if kind == DONE else "failure"}
    call = {"name": "computer_use", "arguments": args}
    return f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
