"""JSON request bodies with the screenshot spliced in as bytes: the bytes of ``json.dumps``, without its pass over the image.

``json.dumps(payload, ensure_ascii=False).encode("utf-8")`` walks every character of every
string to see what to escape, holding the interpreter lock. A 4K screenshot sent as a data
URI is 4-5 million characters, and that walk (15-17 ms a screenshot on this project's
bench machine) was the largest part of a full-size case's CPU (docs/bench.md, "Full
size"). A long string that is ASCII with nothing to escape (base64 never needs escaping)
is its own JSON text between quotes, so :func:`dumps` encodes the payload with a
placeholder in its place and joins the bytes.

A screenshot need not become a ``str`` at all: :class:`Verbatim` carries a string's text as the bytes it is made of
(a data URI's prefix and the encoder's base64 output), and :func:`dumps` puts those bytes in the body as they are,
without decoding them to a ``str``, joining the prefix, encoding it back and scanning it (five copies of a 4K
screenshot's 4.4 MB of base64, about 5 ms of CPU a case: docs/bench.md, "The request's CPU").
"""

from __future__ import annotations

import json
import os
from typing import Any


class Verbatim:
    """A JSON string's text as bytes that need no escaping (printable ASCII but ``"`` and ``\\``: a base64 data URI),
    in ``parts`` to be joined. :func:`dumps` splices the parts into the body as they are; ``str()`` gives the text
    (for a client that needs a ``str``)."""

    __slots__ = ("parts",)

    def __init__(self, *parts: bytes) -> None:
        self.parts = parts

    def __str__(self) -> str:
        return b"".join(self.parts).decode("ascii")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verbatim) and b"".join(self.parts) == b"".join(other.parts)

    __hash__ = None  # type: ignore[assignment]


def as_text(value: Any) -> Any:
    """``value`` with every :class:`Verbatim` in it turned into its ``str`` (for a client that serializes by itself)."""
    if isinstance(value, Verbatim):
        return str(value)
    if isinstance(value, dict):
        return {k: as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_text(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_text(v) for v in value)
    return value


SPLICE_MIN = 1 << 16  # shorter strings go through the encoder: splicing them would gain nothing
# Printable ASCII but '"' and '\': the bytes JSON carries in a string as they are.
_VERBATIM = bytes(c for c in range(0x20, 0x80) if c not in (0x22, 0x5C))


def dumps(payload: Any) -> bytes:
    """``json.dumps(payload, ensure_ascii=False).encode("utf-8")``, byte for byte, with long plain strings spliced in.

    Every string of at least :data:`SPLICE_MIN` characters that is ASCII and holds no
    character JSON escapes goes into the body as its bytes, not through the encoder, and so does every
    :class:`Verbatim` (as the string it stands for). Raises what ``json.dumps`` raises for what it cannot encode.
    """
    nonce = os.urandom(8).hex()
    spliced: list[tuple[bytes, ...]] = []

    def swap(value: Any) -> Any:
        if isinstance(value, Verbatim):
            spliced.append(value.parts)
            return f"\x00{nonce}:{len(spliced) - 1}\x00"
        if isinstance(value, str):
            if len(value) >= SPLICE_MIN and value.isascii():
                data = value.encode("ascii")
                if not data.translate(None, _VERBATIM):  # nothing but verbatim bytes
                    spliced.append((data,))
                    return f"\x00{nonce}:{len(spliced) - 1}\x00"  # NUL is always escaped, so this text can only be ours
            return value
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [swap(v) for v in value]
        return value

    text = json.dumps(swap(payload), ensure_ascii=False).encode("utf-8")
    if not spliced:
        return text
    parts: list[bytes] = []
    rest = text
    for i, data in enumerate(spliced):
        marker = f'"\\u0000{nonce}:{i}\\u0000"'.encode("ascii")
        before, found, rest = rest.partition(marker)
        if not found:  # a dict key that collides after conversion, or the like: the plain way
            return json.dumps(as_text(payload), ensure_ascii=False).encode("utf-8")
        parts += [before, b'"', *data, b'"']
    parts.append(rest)
    return b"".join(parts)
