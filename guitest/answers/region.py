"""Reading the answer out of a reply: the region after the last answer marker, then a profile's styles in order.

Rules (docs/design.md, "Coordinates: declared, never guessed"): strip ``<think>...</think>``; the LAST answer marker (``Answer:``,
``Final answer:``, full-width colon, markdown bold around it) decides, and an
``Answer:`` with no point after it is no answer (a retraction). The profile's styles
are tried in order (tool-call JSON, the profile's action syntax, a bracketed pair);
of the first style that matches, the first match after the marker wins (a note may
follow the answer), or without a marker the last match in the reply, never the first
number in the prose. Nothing here raises, whatever the string.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Sequence

from . import STYLES, Found
from ..profiles import PROFILES

ANSWER = re.compile(r"\b(?:final\s+)?answer\b\s*(?:\*\*|__)?\s*[:：]", re.IGNORECASE)
THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)
CLOSE_THINK = re.compile(r"</think>", re.IGNORECASE)
MAX_REPLY = 50_000  # characters read from the end of a reply; an answer is never further back
REFUSAL = re.compile(
    r"\b(?:not (?:found|present|visible|shown|displayed|(?:on|in) (?:the |this )?(?:screen|screenshot|image|page))"
    r"|does(?: not|n't) (?:exist|appear)|not existent|non-?existent|no such (?:element|button|icon|item|link|field|option)"
    r"|(?:cannot|can't|can not|could not|couldn't|unable to) (?:find|locate|see|identify)"
    r"|there is no (?:such|matching)|no matching (?:element|button|icon|item))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedPoint:
    """A point read from a reply in the reply's own numbers; ``space`` is the coordinate space it is in.

    ``via`` names the answer style that read it, prefixed ``answer+`` when it followed an answer marker.
    """

    x: float
    y: float
    space: str
    box: tuple[float, float, float, float] | None = None
    via: str = "pair"


def strip_think(text: str) -> str:
    """The reply without reasoning: everything up to the last ``</think>`` (chat templates that open
    ``<think>`` in the prompt leave only the closing tag in the reply), and an unclosed ``<think>`` to the end."""
    # The last closing tag, found in one pass: a greedy ``.*</think>`` searched from every position was quadratic
    # (2.3 s on 50,000 characters without one).
    last = deque(CLOSE_THINK.finditer(text), maxlen=1)
    if last:
        text = text[last[0].end() :]
    return THINK.sub("", text)


def parse_answer(text: str, styles: Sequence[tuple[str, str]]) -> ParsedPoint | None:
    """The point a reply answers with, read by ``styles`` (``(style, space)`` pairs, in priority order)."""
    text = strip_think(text[-MAX_REPLY:])
    markers = list(ANSWER.finditer(text))
    region = text[markers[-1].end() :] if markers else text
    for style, space in styles:
        found: list[Found] = STYLES.get(style)(region)
        if found:
            # After a marker the answer is what it introduces (a note may follow); without one, the last word counts.
            pick = found[0] if markers else found[-1]
            return ParsedPoint(pick.x, pick.y, pick.space or space, pick.box, f"answer+{style}" if markers else style)
    return None


def parse_point(text: str) -> ParsedPoint | None:
    """The point of a reply read as the ``generic`` profile reads it (normalized ``Answer: [x, y]``)."""
    return parse_answer(text, PROFILES["generic"].styles)


# Chinese refusals, and English "there is no X" forms (GUI-HalluBench asks in both languages).
REFUSAL_MORE = re.compile(
    r"不存在|并不存在|没有找到|未找到|找不到|无法找到|无法定位|未能找到|没有(?:这个|该|此|任何)|(?:屏幕|页面|界面|截图|图中|图片)(?:上|中)?(?:并)?没有|没有(?:看到|发现)|未(?:发现|显示)"
    r"|\bthere (?:is|are) no (?!need\b|way\b|doubt\b|reason\b|point\b|problem\b)|\b(?:is|are) (?:absent|missing|not available)\b|\bi (?:do not|don't) see\b|\bno (?:\w+ )?(?:element|button|icon|link|field|option|item)s? (?:is|are|was|were) (?:found|present|visible|shown)\b",
    re.IGNORECASE,
)


def is_refusal(text: str) -> bool:
    """True when a reply says the target is not there (in English or Chinese)."""
    text = strip_think(text[-MAX_REPLY:])
    return bool(REFUSAL.search(text) or REFUSAL_MORE.search(text))
