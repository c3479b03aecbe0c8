"""Reading a JSON list of UI elements out of a reply, tolerantly.

Models wrap the list in code fences, put prose around it, leave a trailing comma, or are
cut off by the token limit in the middle of the last element. :func:`find_list` takes the
list from the last fenced block that holds one (else from the whole reply), reads every
complete item, drops an incomplete last item (and says so), and never raises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from . import pyliteral
from .region import strip_think

FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
LIST_START = re.compile(r"\[\s*[{\]]")  # a list of objects, or an empty list
MAX_REPLY = 500_000  # characters read; a list of a few hundred elements is far shorter


@dataclass(frozen=True)
class FoundList:
    """The items of the list a reply holds, in order.

    ``truncated``: the list was not closed (the reply ends inside it). ``dropped``: how many
    incomplete trailing items were left out (0 or 1). ``unreadable``: complete items that are
    not JSON even after the repairs (trailing commas, Python literals).
    """

    items: list[Any]
    truncated: bool = False
    dropped: int = 0
    unreadable: int = 0
    notes: list[str] = field(default_factory=list)


def find_list(text: str) -> FoundList | None:
    """The list of objects in ``text`` (see the module docstring), or None when it holds none."""
    text = strip_think(text[:MAX_REPLY])
    candidates = [m.group(1) for m in FENCE.finditer(text) if LIST_START.search(m.group(1))]
    region = candidates[-1] if candidates else text
    start = LIST_START.search(region)
    if start is None:
        return None
    return _read_items(region, start.start())


def _read_items(text: str, start: int) -> FoundList:
    """Split the list opening at ``text[start]`` into its top-level items and decode each one."""
    pieces: list[str] = []
    depth = 0
    in_string = escaped = False
    item_start: int | None = None
    closed = False
    for pos in range(start, len(text)):
        ch = text[pos]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth == 2 and item_start is None:
                item_start = pos
            continue
        elif ch in "]}":
            depth -= 1
            if depth == 1 and item_start is not None:
                pieces.append(text[item_start : pos + 1])
                item_start = None
            elif depth == 0:
                closed = True
                break
            continue
        if depth == 1 and item_start is None and not ch.isspace() and ch != ",":
            item_start = pos  # a scalar item (not an element; decoded and left to the caller to reject)
        elif depth == 1 and ch == "," and item_start is not None and text[item_start] not in "[{":
            pieces.append(text[item_start:pos])
            item_start = None
    dropped = 1 if (not closed and item_start is not None and text[item_start:].strip()) else 0
    items: list[Any] = []
    unreadable = 0
    for piece in pieces:
        value = _decode(piece)
        if value is _UNREADABLE:
            unreadable += 1
        else:
            items.append(value)
    notes = []
    if dropped:
        notes.append("truncated_element_dropped")
    if unreadable:
        notes.append("unreadable_elements")
    return FoundList(items, truncated=not closed, dropped=dropped, unreadable=unreadable, notes=notes)


_UNREADABLE = object()


def _decode(piece: str) -> Any:
    """One item as JSON, else with trailing commas removed, else as a Python literal; ``_UNREADABLE`` otherwise."""
    piece = piece.strip()
    for attempt in (piece, pyliteral.TRAILING_COMMA.sub(r"\1", piece)):
        try:
            return json.loads(attempt)
        except ValueError:
            pass
        except RecursionError:  # nested past Python's recursion limit: no element is
            return _UNREADABLE
    try:
        return pyliteral.literal(piece)
    except ValueError:
        return _UNREADABLE
