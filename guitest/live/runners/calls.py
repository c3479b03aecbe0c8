"""Python-like calls in a reply (``click(0.4, 0.3)``, ``pyautogui.write('hi')``, ``type(content='it's')``), read tolerantly.

:func:`find_calls` finds every call of a name matched by a pattern, with its arguments as Python
literals when the argument list is valid Python, else read leniently: ``key=value`` pairs split at
the next ``, key=``, quotes stripped and the usual escapes (``\\n``, ``\\'``) undone. Models write
unescaped quotes inside ``content='...'``; an argument list cut off by the token limit is no call.
Nothing here raises.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ...answers import pyliteral
from ...answers import from_numbers, numbers
from ...geometry import Point

#: characters read from the end of a reply; an action is never further back
MAX_REPLY = 50_000
OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {")", "]", "}"}
_BRACKET = re.compile(r"[()\[\]{}]")
_KW = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=(?!=)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True)
class Call:
    """One call as written: ``name`` (``pyautogui.click``), its arguments, and where it stands in the text."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    start: int = 0
    end: int = 0
    lenient: bool = False


def find_calls(text: str, names: "re.Pattern[str]") -> list[Call]:
    """Every complete call whose name ``names`` matches (``fullmatch`` on the dotted name), in order of appearance.

    A call's closing bracket is found skipping its strings; where that finds none (an unbalanced quote, as in
    ``type(content='it's')``), by brackets alone. Linear in the text: the string-aware scans share a budget of a few
    times the text's length, after which only the bracket matching (one pass over the text) is used."""
    out: list[Call] = []
    plain: dict[int, int] | None = None
    budget = 8 * len(text) + 20_000
    for match in re.finditer(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\s*\(", text):
        name = match.group(1)
        if not names.fullmatch(name):
            continue
        opening = match.end() - 1
        close = None
        if budget > 0:
            close, spent = _closing(text, opening, budget)
            budget -= spent
        if close is None:
            plain = _bracket_pairs(text) if plain is None else plain
            close = plain.get(opening)
        if close is None:
            continue  # cut off: no call
        inner = text[match.end() : close]
        args, kwargs, lenient = _arguments(inner)
        out.append(Call(name, args, kwargs, match.start(), close + 1, lenient))
    return out


def _closing(text: str, start: int, limit: int) -> tuple[int | None, int]:
    """The index of the bracket closing the one at ``text[start]``, strings skipped (None when there is none within
    ``limit`` characters), and the characters read."""
    depth = 0
    quote: str | None = None
    escaped = False
    stop = min(len(text), start + min(limit, 20_000))
    for pos in range(start, stop):
        ch = text[pos]
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in OPEN:
            depth += 1
        elif ch in CLOSE:
            depth -= 1
            if depth == 0:
                return pos, pos - start + 1
    return None, stop - start


def _bracket_pairs(text: str) -> dict[int, int]:
    """Each opening bracket's position -> its closing bracket's, by brackets alone (quotes not read), in one pass."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for token in _BRACKET.finditer(text):
        if token.group() in OPEN:
            stack.append(token.start())
        elif stack:
            pairs[stack.pop()] = token.start()
    return pairs


def _arguments(inner: str) -> tuple[tuple[Any, ...], dict[str, Any], bool]:
    """``(args, kwargs, lenient)`` of an argument list: literals when it parses as Python, else read leniently."""
    try:
        node = ast.parse(pyliteral.source(f"f({inner})"), mode="eval").body
        if isinstance(node, ast.Call):
            args = tuple(_literal(a) for a in node.args)
            kwargs = {k.arg: _literal(k.value) for k in node.keywords if k.arg}
            return args, kwargs, False
    except pyliteral.PARSE_ERRORS:
        pass
    return _lenient(inner)


def _literal(node: ast.AST) -> Any:
    """A literal's value; the source text of anything else (a name, an expression)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        try:
            return ast.unparse(node)
        except (ValueError, TypeError, AttributeError, RecursionError):
            return None


def _lenient(inner: str) -> tuple[tuple[Any, ...], dict[str, Any], bool]:
    keys = list(_KW.finditer(inner))
    if not keys:
        stripped = inner.strip()
        return ((_unquote(stripped),) if stripped else ()), {}, True
    kwargs: dict[str, Any] = {}
    head = inner[: keys[0].start()].strip()
    args = tuple(_unquote(p.strip()) for p in head.split(",") if p.strip()) if head else ()
    for i, key in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(inner)
        kwargs[key.group(1)] = _unquote(inner[key.end() : end].strip())
    return args, kwargs, True


def _unquote(value: str) -> Any:
    """A quoted value without its quotes and escapes; a number as a number; anything else as written."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), value[1:-1])
    try:
        number = float(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else value


def number(value: Any) -> float | None:
    """A finite number from a literal (``3``, ``0.4``, ``"0.4"``); None otherwise (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            result = float(value)
        except OverflowError:
            return None
        return result if math.isfinite(result) else None
    if isinstance(value, str):
        try:
            result = float(value.strip())
        except ValueError:
            return None
        return result if math.isfinite(result) else None
    return None


def point_of(value: Any) -> Point | None:
    """A point from a box string (``'(x,y)'``, ``'<|box_start|>(x,y)<|box_end|>'``, ``'<point>x y</point>'``,
    ``'[x1, y1, x2, y2]'``: its centre) or a list of 2 or 4 numbers; None otherwise."""
    values: list[float]
    if isinstance(value, (list, tuple)):
        read = [number(v) for v in value]
        if any(v is None for v in read):
            return None
        values = [v for v in read if v is not None]
    elif isinstance(value, str):
        values = numbers(value[:2000])
    else:
        return None
    found = from_numbers(values)
    if found is None or not (math.isfinite(found.x) and math.isfinite(found.y)):
        return None
    return (found.x, found.y)


def fmt(value: float, decimals: int) -> str:
    """A coordinate as a reply writes it: ``decimals`` places, trailing zeros dropped (``0.42``, ``120``)."""
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


ACTION_MARKER = re.compile(r"\baction\s*(?:\*\*|__)?\s*[:：]", re.IGNORECASE)


def region(text: str, max_chars: int) -> tuple[str, bool]:
    """The part of a reply that holds its action: after the last ``Action:`` marker when there is one
    (reasoning in ``<think>`` removed first), else the whole reply; and whether a marker was found."""
    from ...answers.region import strip_think

    text = strip_think(text[-max_chars:])
    marks = list(ACTION_MARKER.finditer(text))
    if marks:
        return text[marks[-1].end() :], True
    return text, False


def pick(candidates: list[tuple[int, Any]]) -> tuple[Any, tuple[str, ...]]:
    """Of the readable actions found (``(position, action)``), the one that counts: the last; ``several_actions``
    noted when there were more."""
    if not candidates:
        return None, ("no_action",)
    chosen = max(candidates, key=lambda c: c[0])[1]
    return chosen, (("several_actions",) if len(candidates) > 1 else ())


def quote(text: str) -> str:
    """``text`` as a double-quoted string literal that both Python and JSON read back unchanged."""
    import json

    return json.dumps(text, ensure_ascii=False)


def direction(scroll: tuple[float, float]) -> str:
    """The word for a scroll's direction (``down`` for positive dy, ``right`` for positive dx with no dy)."""
    dx, dy = scroll
    if dy:
        return "down" if dy > 0 else "up"
    return "right" if dx > 0 else "left"
