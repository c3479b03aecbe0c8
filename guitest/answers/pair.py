"""Bracketed pairs and boxes: ``[x, y]``, ``(x, y)``, ``[x1, y1, x2, y2]``, ``(45%, 30%)``, ``x=0.3, y=0.5``.

A pair that stands for a range the prompt mentioned (``in [0, 1]``, ``between (0, 0)
and (1, 1)``) is not an answer.
"""

from __future__ import annotations

import re

from . import NUM, Found, from_numbers

_V = rf"({NUM})\s*(%?)"
PAIR = re.compile(rf"[\[(]\s*{_V}\s*,\s*{_V}\s*(?:,\s*{_V}\s*,\s*{_V}\s*)?[\])]")
XY = re.compile(rf"\bx\s*[=:]\s*({NUM})\s*(%?)\s*[,;]?\s*(?:and\s+)?\by\s*[=:]\s*({NUM})\s*(%?)", re.IGNORECASE)
RANGE_WORDS = re.compile(r"\b(?:range|between|within|interval|scale|normali[sz]ed(?: to)?|from|in)\s*(?:of\s*|the\s*)?$", re.IGNORECASE)
RANGE_AFTER = re.compile(r"^\s*(?:range|scale|interval|grid)\b", re.IGNORECASE)
CORNER_WORDS = re.compile(r"^\s*(?:is|=|as|for|at)?\s*(?:the\s+)?(?:top|bottom|upper|lower)[- ](?:left|right)|^\s*(?:is\s+)?(?:the\s+)?(?:origin|corner)", re.IGNORECASE)
BOUNDS = {(0.0, 1.0), (0.0, 1000.0), (0.0, 100.0), (0.0, 0.0), (1.0, 1.0), (1000.0, 1000.0)}


def _is_echo(region: str, match: re.Match[str], found: Found) -> bool:
    """A pair that restates the prompt's coordinate range or corners rather than answering."""
    if found.box is not None or (found.x, found.y) not in BOUNDS:
        return False
    before = region[max(0, match.start() - 24) : match.start()]
    after = region[match.end() : match.end() + 40]
    return bool(RANGE_WORDS.search(before) or RANGE_AFTER.search(after) or CORNER_WORDS.search(after))


def _found(groups: tuple[str | None, ...]) -> Found | None:
    values, percents = [], []
    for i in range(0, len(groups), 2):
        number = groups[i]
        if number is None:
            break
        values.append(float(number))
        percents.append(bool(groups[i + 1]))
    if any(percents):
        if not all(percents):
            return None
        return from_numbers([v / 100 for v in values], "normalized")
    return from_numbers(values)


def find(region: str) -> list[Found]:
    out: list[tuple[int, Found]] = []
    for match in PAIR.finditer(region):
        found = _found(match.groups())
        if found is not None and not _is_echo(region, match, found):
            out.append((match.start(), found))
    for match in XY.finditer(region):
        found = _found(match.groups())
        if found is not None:
            out.append((match.start(), found))
    return [f for _, f in sorted(out, key=lambda item: item[0])]
