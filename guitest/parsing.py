"""Answer parsing for click grounding: find the point a reply commits to.

Rules (DESIGN.md): strip ``<think>...</think>``; the LAST answer marker wins, not the
first number in the prose; a box answer stands for its centre. Without an
``Answer:`` marker, the last bracketed pair or box in the reply is taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
PAIR = re.compile(rf"[\[(]\s*({NUM})\s*,\s*({NUM})\s*(?:,\s*({NUM})\s*,\s*({NUM})\s*)?[\])]")
ANSWER = re.compile(r"answer\s*[:：]", re.IGNORECASE)
THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)
REFUSAL = re.compile(
    r"\b(?:not (?:found|present|visible|shown|displayed|(?:on|in) (?:the |this )?(?:screen|screenshot|image|page))"
    r"|does(?: not|n't) (?:exist|appear)|no such (?:element|button|icon|item|link|field|option)"
    r"|(?:cannot|can't|can not|could not|couldn't|unable to) (?:find|locate|see|identify)"
    r"|there is no (?:such|matching)|no matching (?:element|button|icon|item))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedPoint:
    """A point read from a reply, in the reply's own coordinate space; ``box`` when it came as a box."""

    x: float
    y: float
    box: tuple[float, float, float, float] | None = None
    via: str = "answer"


def strip_think(text: str) -> str:
    """The reply without reasoning blocks (an unclosed ``<think>`` runs to the end)."""
    return THINK.sub("", text)


def _point(match: re.Match[str], via: str) -> ParsedPoint:
    a, b, c, d = match.groups()
    if c is not None and d is not None:
        box = (float(a), float(b), float(c), float(d))
        return ParsedPoint((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, box, via)
    return ParsedPoint(float(a), float(b), None, via)


def parse_point(text: str) -> ParsedPoint | None:
    """The point a reply answers with, or None when it has none.

    With ``Answer:`` markers, only the last one counts: a reply that ends in
    ``Answer: none`` has retracted any earlier answer.
    """
    text = strip_think(text)
    markers = list(ANSWER.finditer(text))
    if markers:
        match = PAIR.search(text, markers[-1].end())
        return _point(match, "answer") if match else None
    pairs = list(PAIR.finditer(text))
    if pairs:
        return _point(pairs[-1], "last_pair")
    return None


def is_refusal(text: str) -> bool:
    """True when a reply says the target is not there."""
    return bool(REFUSAL.search(strip_think(text)))
