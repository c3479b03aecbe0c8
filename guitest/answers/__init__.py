"""Reading replies: what a model's text says, read tolerantly and in time linear in the reply.

- :mod:`~guitest.answers.region`: the answer region after the last ``Answer:`` marker (``<think>`` stripped), a
  profile's styles asked in order, refusals.
- the answer styles, one module per way models write a point: :mod:`~guitest.answers.pair`,
  :mod:`~guitest.answers.toolcall`, :mod:`~guitest.answers.qwen_box`, :mod:`~guitest.answers.uitars`,
  :mod:`~guitest.answers.pyautogui`, :mod:`~guitest.answers.tags`.
- :mod:`~guitest.answers.choices`: a multiple-choice letter.
- :mod:`~guitest.answers.elements`: a JSON list of UI elements.
- :mod:`~guitest.answers.jsonscan`: JSON values and tool calls embedded in a reply.
- :mod:`~guitest.answers.pyliteral`: Python literals in a reply, read safely.

Each style module has ``find(region) -> list[Found]``: every answer of its style in
``region``, in order of appearance. :func:`guitest.answers.region.parse_answer` picks the
region (after the last ``Answer:`` marker) and asks a profile's styles in order.
The style names are :data:`STYLES` (:data:`guitest.registry.STYLES`, each ``find``
imported when first used); :func:`register` adds one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..registry import STYLES

register = STYLES.register

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


@dataclass(frozen=True)
class Found:
    """A point found in a reply, in the reply's own numbers.

    ``box`` is set when the answer was a box (the point is its centre). ``space``
    overrides the profile's space when the syntax itself says which it is (a percent
    is normalized whatever the profile).
    """

    x: float
    y: float
    box: tuple[float, float, float, float] | None = None
    space: str | None = None


def from_numbers(values: list[float], space: str | None = None) -> Found | None:
    """A point from 2 numbers, or the centre of a box from 4; None otherwise."""
    if len(values) == 2:
        return Found(values[0], values[1], None, space)
    if len(values) == 4:
        x1, y1, x2, y2 = values
        return Found((x1 + x2) / 2, (y1 + y2) / 2, (x1, y1, x2, y2), space)
    return None


def numbers(text: str) -> list[float]:
    """Every number in ``text``, in order."""
    return [float(n) for n in re.findall(NUM, text)]


def numbers_in(regex: "re.Pattern[str]", region: str, group: int) -> list[Found]:
    """A point (or box centre) from the numbers in ``group`` of every match of ``regex``, in order."""
    out = []
    for match in regex.finditer(region):
        found = from_numbers(numbers(match.group(group)))
        if found is not None:
            out.append(found)
    return out
