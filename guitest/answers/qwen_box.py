"""Qwen-style box tokens: ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` or a point inside them, Qwen-VL's
``<box>(x1,y1),(x2,y2)</box>``, and the same box with the special tokens stripped by the server
(``skip_special_tokens``, vLLM's default): ``(x1,y1),(x2,y2)``. The numbers are on the 0-1000 grid in
these models' conventions.
"""

from __future__ import annotations

import re

from . import NUM, Found, from_numbers, numbers

BOX = re.compile(
    rf"<\|box_start\|>(.*?)(?:<\|box_end\|>|$)|<box>(.*?)(?:</box>|$)"
    rf"|(\(\s*{NUM}\s*,\s*{NUM}\s*\)\s*,\s*\(\s*{NUM}\s*,\s*{NUM}\s*\))",
    re.DOTALL,
)


def find(region: str) -> list[Found]:
    out = []
    for match in BOX.finditer(region):
        inner = next(g for g in match.groups() if g is not None)
        found = from_numbers(numbers(inner))
        if found is not None:
            out.append(found)
    return out
