"""Text from outside (error bodies, replies, instructions, case ids) made safe to print: control characters escaped.

An endpoint's error body with ``ESC ] 0; ... BEL`` retitled the user's terminal, and ``ESC [ 2J`` cleared it, when
guitest printed it. :func:`printable` writes every control character (C0 but newline and tab, DEL, C1) and the
Unicode line and paragraph separators as a visible escape (``\\x1b``, ``\\x9b``, ``\\u2028``), so the text stays
readable and inert.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with its control characters escaped (newlines and tabs kept)."""
    return _CONTROL.sub(_escape, text)


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a character :func:`printable` would escape."""
    return _CONTROL.search(text) is not None
