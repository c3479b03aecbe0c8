"""JSON files every strict parser reads: finite numbers only, valid UTF-8, written atomically.

The reports, the comparison file and each episode's trajectory.json go through here. Python's ``json`` writes
``Infinity`` and ``NaN`` (which strict parsers, Node's ``JSON.parse`` among them, reject) and fails to encode a
lone surrogate (``\\ud800``, which a JSON-escaped model reply can carry) as UTF-8, which lost the whole report.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (inf, nan) replaced by None, for strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(data: Any, indent: int | None = None) -> str:
    """Strict JSON: no Infinity or NaN (strict parsers, Node's ``JSON.parse`` among them, reject them); a non-finite
    number becomes null. Written with :func:`write_text`, a lone surrogate in a string becomes its ``\\ud800`` escape."""
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:
        return json.dumps(finite(data), ensure_ascii=False, allow_nan=False, indent=indent)


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically (a crash mid-write never leaves half a file) as UTF-8; characters UTF-8 cannot
    hold (lone surrogates) are written as backslash escapes rather than losing the file (inside a JSON string the
    escape is JSON's own)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(text.encode("utf-8", "backslashreplace"))
    os.replace(tmp, path)
