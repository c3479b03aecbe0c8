"""JSON answers: tool calls (``{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}``,
inside ``<tool_call>`` tags or code fences), Qwen's grounding JSON (``[{"point_2d": [x, y]}]``,
``bbox_2d``), and plain objects (``{"x": 0.3, "y": 0.5}``, ``{"point": [x, y]}``).
"""

from __future__ import annotations

from typing import Any

from . import jsonscan
from . import Found, from_numbers

POINT_KEYS = ("coordinate", "coordinates", "point", "point_2d", "click", "position", "location", "center", "start_box")
BOX_KEYS = ("bbox_2d", "bbox", "box", "bounding_box")


def _number_list(value: Any) -> list[float] | None:
    if isinstance(value, str):  # "[120, 300]" or "(120, 300)" as a string
        from . import numbers

        value = numbers(value)
    if isinstance(value, (list, tuple)) and len(value) in (2, 4) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    return None


def _from_object(obj: Any) -> Found | None:
    """The point an object carries, looking into what a tool call wraps (:func:`guitest.answers.jsonscan.wrapped`) and into an
    ``action`` object."""
    if isinstance(obj, list):
        for element in reversed(obj):
            found = _from_object(element)
            if found is not None:
                return found
        return None
    if not isinstance(obj, dict):
        return None
    for inner in [*jsonscan.wrapped(obj), obj.get("action")]:
        if isinstance(inner, (dict, list)):
            found = _from_object(inner)
            if found is not None:
                return found
    for key in POINT_KEYS + BOX_KEYS:
        values = _number_list(obj.get(key))
        if values is not None:
            return from_numbers(values)
    x, y = _scalar(obj.get("x")), _scalar(obj.get("y"))
    if x is not None and y is not None and x[1] == y[1]:
        return from_numbers([x[0], y[0]], "normalized" if x[1] else None)
    return None


def _scalar(value: Any) -> tuple[float, bool] | None:
    """A coordinate value and whether it was a percentage: ``0.3``, ``"0.3"``, ``"30%"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value), False
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            return None
        return (number / 100, True) if percent else (number, False)
    return None


def find(region: str) -> list[Found]:
    def take(obj: Any) -> tuple[Found | None, bool]:
        found = _from_object(obj) if isinstance(obj, (dict, list)) and (isinstance(obj, dict) or any(isinstance(e, dict) for e in obj)) else None
        return found, found is not None or isinstance(obj, dict)

    return [found for _, found in jsonscan.scan(region, "{[", take)]
