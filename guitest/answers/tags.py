"""XML-ish tags: ``<point>x y</point>``, ``<point>(x, y)</point>``, ``<bbox>x1 y1 x2 y2</bbox>``, ``<click>x, y</click>``."""

from __future__ import annotations

import re

from . import Found, numbers_in

# The content stops at the next opening tag of the family, so an unclosed tag costs a scan to the next one, not to
# the end of the reply (``.*?</tag>`` from every unclosed opener was quadratic: 6.5 s on 6,000 unclosed <point>s).
TAG = re.compile(r"<(point|bbox|click|coordinate|points)\b[^>]*>((?:(?!<(?:point|bbox|click|coordinate|points)\b).)*?)</\1>", re.DOTALL | re.IGNORECASE)


def find(region: str) -> list[Found]:
    return numbers_in(TAG, region, 2)
