"""pyautogui code actions, as OSWorld's code agents and Aguvis write them.

Read: ``pyautogui.click(x=, y=)`` / ``click(x, y)`` (``clicks=2`` is a double click, ``button='right'``
a right click, no point clicks where the pointer is), ``doubleClick``, ``rightClick``, ``tripleClick``
(as a double click, noted), ``moveTo``, ``dragTo`` (from the pointer), ``write``/``typewrite``,
``press``, ``hotkey``, ``scroll``/``vscroll``/``hscroll`` (clicks, positive up / right; ``x=, y=``
optional), and OSWorld's bare ``WAIT``, ``DONE``, ``FAIL`` on a line of their own. The LAST of them
in the reply counts (``time.sleep`` between actions is not one). Relative moves and drags
(``moveRel``, ``drag(dx, dy)``), key sequences (``press(['tab', 'tab'])``) and calls whose
coordinates are expressions are not read (``notes`` say so). Coordinates are the reply's own
numbers (the profile's space: pixels for OSWorld, normalized for Aguvis).
"""

from __future__ import annotations

import re

from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from ..keys import normalize
from . import MAX_REPLY, Parsed
from .calls import Call, find_calls, fmt, number, quote

NAMES = re.compile(r"(?:pyautogui\.)?(?:click|leftClick|doubleClick|rightClick|middleClick|tripleClick|moveTo|dragTo|write|typewrite|press|hotkey|scroll|vscroll|hscroll|moveRel|move|drag|dragRel|mouseDown|mouseUp|keyDown|keyUp)")
BARE = re.compile(r"^[ \t`]*(WAIT|DONE|FAIL)[ \t`.]*$", re.MULTILINE)
RENDERED = {CLICK: "click", DOUBLE_CLICK: "doubleClick", RIGHT_CLICK: "rightClick", MOVE: "moveTo"}
CLICKS = {"click": CLICK, "leftClick": CLICK, "doubleClick": DOUBLE_CLICK, "rightClick": RIGHT_CLICK, "middleClick": CLICK, "tripleClick": DOUBLE_CLICK, "moveTo": MOVE}


def read(text: str) -> Parsed:
    """The reply's last pyautogui action (see the module docstring); never raises."""
    from ...parsing import strip_think

    text = strip_think(text[-MAX_REPLY:])
    found: list[tuple[int, Action | None, tuple[str, ...]]] = []
    for call in find_calls(text, NAMES):
        if "." not in call.name and not _bare_call_allowed(text, call):
            continue
        action, notes = _action(call)
        found.append((call.start, action, notes))
    for match in BARE.finditer(text):
        found.append((match.start(1), Action({"WAIT": WAIT, "DONE": DONE, "FAIL": FAIL}[match.group(1)], seconds=1.0 if match.group(1) == "WAIT" else 0.0), ()))
    if not found:
        return Parsed(None, ("no_action",))
    found.sort(key=lambda f: f[0])
    _, action, notes = found[-1]
    if action is not None and action.kind == DRAG and action.point is None and len(found) > 1:
        before = found[-2][1]
        if before is not None and before.kind == MOVE:  # moveTo(a); dragTo(b): one drag from a to b
            action = Action(DRAG, point=before.point, end=action.end)
            found = found[:-1]
    if len(found) > 1:
        notes = notes + ("several_actions",)
    return Parsed(action, notes if action is not None else notes or ("unreadable_action",))


def _bare_call_allowed(text: str, call: Call) -> bool:
    """A call without the ``pyautogui.`` prefix counts inside code (``from pyautogui import click``), not in prose."""
    return "from pyautogui import" in text


def parse(text: str) -> Action | None:
    """``read(text).action``."""
    return read(text).action


def _point(call: Call) -> tuple[tuple[float, float] | None, bool]:
    """The call's point (``x, y`` positional or named) and whether it is readable (no coordinates at all is readable: the pointer)."""
    xs = call.args[0] if call.args else call.kwargs.get("x")
    ys = call.args[1] if len(call.args) > 1 else call.kwargs.get("y")
    if isinstance(xs, (list, tuple)) and len(xs) == 2 and ys is None:
        xs, ys = xs
    if xs is None and ys is None:
        return None, True
    x, y = number(xs), number(ys)
    if x is None or y is None:
        return None, False
    return (x, y), True


def _action(call: Call) -> tuple[Action | None, tuple[str, ...]]:
    name = call.name.rsplit(".", 1)[-1]
    if name in CLICKS:
        point, ok = _point(call)
        if not ok:
            return None, ("coordinates_not_numbers",)
        kind = CLICKS[name]
        notes: tuple[str, ...] = ()
        if name == "click":
            clicks = number(call.kwargs.get("clicks", 1)) or 1
            button = call.kwargs.get("button", "left")
            if button == "right":
                kind = RIGHT_CLICK
            elif clicks >= 2:
                kind = DOUBLE_CLICK
                notes = ("triple_click_as_double",) if clicks > 2 else ()
            if button == "middle":
                notes = ("middle_click_as_click",)
        elif name == "tripleClick":
            notes = ("triple_click_as_double",)
        elif name == "middleClick":
            notes = ("middle_click_as_click",)
        if kind == MOVE and point is None:
            return None, ("move_without_point",)
        return Action(kind, point=point), notes
    if name == "dragTo":
        point, ok = _point(call)
        if not ok or point is None:
            return None, ("coordinates_not_numbers",)
        return Action(DRAG, end=point), ()
    if name in ("write", "typewrite"):
        value = call.args[0] if call.args else call.kwargs.get("message")
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) and len(v) == 1 for v in value):
            value = "".join(value)
        if isinstance(value, str) and value:
            return Action(TYPE, text=value), ()
        return None, ("key_sequence",) if isinstance(value, (list, tuple)) else ("no_text",)
    if name == "press":
        value = call.args[0] if call.args else call.kwargs.get("keys")
        if isinstance(value, (list, tuple)) and len(value) == 1:
            value = value[0]
        if not isinstance(value, str) or not value:
            return None, ("key_sequence",) if isinstance(value, (list, tuple)) else ("no_key",)
        presses = number(call.kwargs.get("presses", 1)) or 1
        return Action(KEY, keys=(normalize(value),)), (("repeated_press_once",) if presses > 1 else ())
    if name == "hotkey":
        keys = tuple(normalize(k) for k in call.args if isinstance(k, str) and k)
        if len(call.args) == 1 and isinstance(call.args[0], (list, tuple)):
            keys = tuple(normalize(k) for k in call.args[0] if isinstance(k, str) and k)
        return (Action(KEY, keys=keys), ()) if keys else (None, ("no_key",))
    if name in ("scroll", "vscroll", "hscroll"):
        amount = number(call.args[0]) if call.args else number(call.kwargs.get("clicks"))
        if amount is None:
            return None, ("no_amount",)
        x = number(call.args[1]) if len(call.args) > 1 else number(call.kwargs.get("x"))
        y = number(call.args[2]) if len(call.args) > 2 else number(call.kwargs.get("y"))
        point = (x, y) if x is not None and y is not None else None
        delta = (amount, 0.0) if name == "hscroll" else (0.0, -amount)
        return Action(SCROLL, point=point, scroll=delta), ()
    return None, (f"{name}_not_read",)


def render(action: Action, decimals: int = 4) -> str:
    """OSWorld-style code for ``action`` (``DONE``, ``FAIL``, ``WAIT`` bare; points already in the profile's numbers)."""
    def xy(point: tuple[float, float] | None) -> str:
        return f"x={fmt(point[0], decimals)}, y={fmt(point[1], decimals)}" if point else ""

    kind = action.kind
    if kind in (DONE, FAIL):
        return kind.upper()
    if kind == WAIT:
        return "WAIT"
    if kind in RENDERED:
        code = f"pyautogui.{RENDERED[kind]}({xy(action.point)})"
    elif kind == DRAG:
        code = (f"pyautogui.moveTo({xy(action.point)})\n" if action.point else "") + f"pyautogui.dragTo({xy(action.end)})"
    elif kind == SCROLL:
        dx, dy = action.scroll
        where = f", {xy(action.point)}" if action.point else ""
        code = f"pyautogui.hscroll({fmt(dx, 2)}{where})" if dx and not dy else f"pyautogui.scroll({fmt(-dy, 2)}{where})"
    elif kind == TYPE:
        code = f"pyautogui.write({quote(action.text)})"
    elif len(action.keys) == 1:
        code = f"pyautogui.press({quote(action.keys[0])})"
    else:
        code = "pyautogui.hotkey(" + ", ".join(quote(k) for k in action.keys) + ")"
    return f"```python\n{code}\n```"
