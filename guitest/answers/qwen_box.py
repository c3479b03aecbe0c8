"""Qwen-style box tokens: ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` or a point inside them, and Qwen-VL's
``<box>(x1,y1),(x2,y2)</box>``. The numbers are on the 0-1000 grid in these models' conventions.
"""

from __future__ import annotations

import re

from . import Found, from_numbers, numbers

BOX = re.compile(r"<\|box_start\|>(.*?)(?:<\|box_end\|>|$)|<box>(.*?)(?:</box>|$)", re.DOTALL)


def find(region: str) -> list[Found]:
    out = []
    for match in BOX.finditer(region):
        found = from_numbers(numbers(match.group(1) if match.group(1) is not None else match.group(2)))
        if found is not None:
            out.append(found)
    return out
