"""XML-ish tags: ``<point>x y</point>``, ``<point>(x, y)</point>``, ``<bbox>x1 y1 x2 y2</bbox>``, ``<click>x, y</click>``."""

from __future__ import annotations

import re

from . import Found, numbers_in

TAG = re.compile(r"<(point|bbox|click|coordinate|points)\b[^>]*>(.*?)</\1>", re.DOTALL | re.IGNORECASE)


def find(region: str) -> list[Found]:
    return numbers_in(TAG, region, 2)
