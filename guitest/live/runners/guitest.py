"""guitest's own runner: its step prompt and its action format, ``Action: <name>(<arguments>)``, coordinates normalized.

The actions (the prompt lists the same)::

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

An environment's own kinds (:func:`guitest.live.actions.declare`) are read and written the same way, their arguments
in their declared order (``swipe(0.1, 0.5, 0.9, 0.5)`` for a kind declared with a point and an end), and the step
prompt lists them after the built-in ones with their ``doc`` lines.

Keyword forms work too (``click(x=0.42, y=0.31)``, ``type(text="hi")``). The LAST ``Action:`` marker counts
(reasoning in ``<think>`` removed first); every call of these names after it is read, in order (without a
marker, in the whole reply). Points carry ``space="normalized"``. Each step sends the instruction, the earlier
steps as numbered lines and the current screenshot; ``--history-images`` adds earlier screenshots before it.
No reference: guitest's own protocol, the default for models without a runner of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ...exchange import Prompt, SentImage, conversation
from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action, Kind, declared
from ..keys import combo
from .runner import USER, Past, Read, Runner, recent
from .calls import MAX_REPLY, Call, direction, find_calls, fmt, number, quote, region

NAMES = re.compile(r"click|double_click|right_click|move|drag|scroll|type|key|wait|done|fail")
SPACE = "normalized"
DEFAULT_NOTCHES = 3.0
DIRECTIONS = {"down": (0.0, 1.0), "up": (0.0, -1.0), "right": (1.0, 0.0), "left": (-1.0, 0.0)}
#: at most this many earlier steps are listed (the most recent ones); older ones are counted
MAX_HISTORY = 30

ACTIONS_TEXT = """\
click(x, y)                 left click at a point
double_click(x, y)
right_click(x, y)
move(x, y)                  move the pointer there (hover)
drag(x1, y1, x2, y2)        press at the first point, release at the second
scroll(x, y, "down", 3)     turn the wheel 3 notches at a point ("up", "down", "left", "right")
type("text")                type into the focused element; "\\n" presses Enter
key("ctrl+a")               press a key or a combination joined by +
wait(1)                     wait 1 second for the page to change
done()                      the task is complete
fail("reason")              the task cannot be done"""


def history_block(history: Sequence[str], limit: int = MAX_HISTORY) -> str:
    """Earlier actions as numbered lines (``Step 3: click(0.4, 0.3)``), the most recent ``limit`` of them; ``None yet`` for none."""
    if not history:
        return "None yet."
    start = max(0, len(history) - limit)
    lines = [f"({start} earlier steps not shown)"] if start else []
    lines += [f"Step {i + 1}: {text}" for i, text in enumerate(history) if i >= start]
    return "\n".join(lines)


def actions_text() -> str:
    """The step prompt's list of actions: the built-in ones, then the kinds environments declared, each with its line."""
    lines = [ACTIONS_TEXT]
    for kind in declared():
        signature = f"{kind.name}({', '.join(_SIGNATURE[a] for a in kind.arguments)})"
        lines.append(f"{signature:<27} {kind.doc}".rstrip())
    return "\n".join(lines)


_SIGNATURE = {"point": "x, y", "end": "x2, y2", "text": '"text"', "keys": '"keys"', "seconds": "seconds"}


def _names() -> re.Pattern[str]:
    """The call names this runner reads: the built-in kinds' and the declared ones'."""
    extra = tuple(k.name for k in declared())
    if not extra:
        return NAMES
    return re.compile(NAMES.pattern + "|" + "|".join(map(re.escape, extra)))


def step_text(instruction: str, history: Sequence[str], screen_size: tuple[int, int]) -> str:
    """guitest's step prompt: the task, the earlier actions, the action list, normalized coordinates."""
    w, h = screen_size
    return (
        "You operate a graphical user interface, one action per step, to complete a task.\n"
        f"Task: {instruction}\n\n"
        f"The screenshot shows the screen now ({w}x{h} pixels). Give every point as fractions of the "
        "screenshot's width and height: x and y between 0 and 1, (0, 0) the top-left corner.\n\n"
        f"Your earlier actions:\n{history_block(history)}\n\n"
        f"Actions:\n{actions_text()}\n\n"
        "Think briefly, then end your reply with exactly one line of the form:\nAction: <one action from the list>"
    )


def screenshots_then(text: str, earlier: list[SentImage], sent: SentImage, system: str | None = None) -> Prompt:
    """One user message: the earlier screenshots (the oldest first, each labelled), the current one, then ``text``;
    without earlier screenshots the plain one-image prompt."""
    if not earlier:
        return Prompt(user=text, system=system)
    parts: list[str | int] = []
    for n, _ in enumerate(earlier):
        parts += [f"Screenshot {len(earlier) - n} step(s) ago:", n]
    parts += ["The current screenshot:", len(earlier), text]
    return conversation(system, [(USER, tuple(parts))], (*earlier, sent))


@dataclass(frozen=True)
class GuitestRunner(Runner):
    """guitest's own runner (see the module docstring)."""

    def prompt(self, instruction: str, past: Sequence[Past], sent: SentImage, images: int) -> Prompt:
        return screenshots_then(step_text(instruction, [p.line for p in past], sent.size), recent(past, images), sent)

    def read(self, text: str) -> Read:
        return read(text)

    def render(self, actions: Sequence[Action], decimals: int | None = None) -> str:
        return "Action: " + "; ".join(call(a, 4 if decimals is None else decimals) for a in actions)


RUNNER = GuitestRunner(
    name="guitest",
    source="guitest's own step prompt and action format (guitest/live/runners/guitest.py); no reference runner",
    convention="guitest",
    space=SPACE,
)


def read(text: str) -> Read:
    """The actions of a reply in guitest's format, in order (see the module docstring); never raises."""
    part, _ = region(text, MAX_REPLY)
    own = {k.name: k for k in declared()}
    actions = tuple(a for c in find_calls(part, _names()) if (a := (_declared(c, own[c.name]) if c.name in own else _action(c))) is not None)
    return Read(actions, () if actions else ("no_action",))


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


def _declared(call: Call, kind: Kind) -> Action | None:
    """A call of a declared kind, its positional arguments in the kind's order (a point is two numbers); None when one
    is missing or of the wrong type."""
    values = list(call.args)
    fields: dict[str, object] = {}
    for argument in kind.arguments:
        if argument in ("point", "end"):
            pair = [number(v) for v in values[:2]]
            if len(pair) < 2 or None in pair:
                return None
            fields[argument] = (pair[0], pair[1])
            values = values[2:]
            continue
        value = values.pop(0) if values else call.kwargs.get(argument)
        if argument == "seconds":
            seconds = number(value)
            if seconds is None or seconds < 0:
                return None
            fields["seconds"] = seconds
        elif not isinstance(value, str):
            return None
        else:
            fields[argument] = combo(value) if argument == "keys" else value
    pointed = "point" in fields or "end" in fields
    return Action(kind.name, space=SPACE if pointed else None, **fields)  # type: ignore[arg-type]


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


def call(action: Action, decimals: int = 4) -> str:
    """``action`` as a call of guitest's format (points already normalized): ``click(0.42, 0.31)``."""

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
    elif (own := {k.name: k for k in declared()}.get(kind)) is None:
        body = f"{kind}({quote(action.text)})" if action.text else f"{kind}()"
    else:  # an environment's own kind: its arguments in their declared order
        parts = []
        for argument in own.arguments:
            if argument in ("point", "end"):
                parts.append(p(getattr(action, argument)))
            elif argument == "seconds":
                parts.append(fmt(action.seconds, 2))
            else:
                parts.append(quote("+".join(action.keys) if argument == "keys" else action.text))
        body = f"{kind}({', '.join(parts)})"
    return body
