"""UI-TARS actions: ``click(start_box='(x,y)')``, ``start_box='<|box_start|>(x,y)<|box_end|>'``,
``click(point='<point>x y</point>')``, ``start_box='[x1, y1, x2, y2]'``, for every click-like action
(``left_double``, ``right_single``, ``hover``, ...).
"""

from __future__ import annotations

import re

from . import Found, numbers_in

ARG = re.compile(r"\b(?:start_box|point|start_point|box)\s*=\s*(['\"])(.*?)\1", re.DOTALL)


def find(region: str) -> list[Found]:
    return numbers_in(ARG, region, 2)
