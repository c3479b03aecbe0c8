"""Reading the backends' ``env_options`` values that need a check of their own."""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..live.protocol import EnvFailure


def seconds_option(options: Mapping[str, Any], name: str, default: float, *, zero: bool = False) -> float:
    """``options[name]`` as a finite number of seconds above 0, or 0 and more with ``zero`` (``default`` when
    absent); EnvFailure naming the option."""
    value = options.get(name, default)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not zero):
        raise EnvFailure(f"env_options.{name} must be a number of seconds {'(0 or more)' if zero else 'above 0'}, got {value!r}")
    return seconds
