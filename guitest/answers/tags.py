"""XML-ish tags: ``<point>x y</point>``, ``<point>(x, y)</point>``, ``<bbox>x1 y1 x2 y2</bbox>``, ``<click>x, y</click>``."""

from __future__ import annotations

import re

from . import Found, from_numbers, numbers

TAG = re.compile(r"<(point|bbox|click|coordinate|points)\b[^>]*>(.*?)</\1>", re.DOTALL | re.IGNORECASE)


def find(region: str) -> list[Found]:
    out = []
    for match in TAG.finditer(region):
        found = from_numbers(numbers(match.group(2)))
        if found is not None:
            out.append(found)
    return out
