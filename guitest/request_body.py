"""JSON request bodies with the screenshot spliced in as bytes: the bytes of ``json.dumps``, without its pass over the image.

``json.dumps(payload, ensure_ascii=False).encode("utf-8")`` walks every character of every
string to see what to escape, holding the interpreter lock. A 4K screenshot sent as a data
URI is 4-5 million characters, and that walk (15-17 ms a screenshot on this project's
bench machine) was the largest part of a full-size case's CPU (docs/bench.md, "Full
size"). A long string that is ASCII with nothing to escape (base64 never needs escaping)
is its own JSON text between quotes, so :func:`dumps` encodes the payload with a
placeholder in its place and joins the bytes.
"""

from __future__ import annotations

import json
import os
from typing import Any

SPLICE_MIN = 1 << 16  # shorter strings go through the encoder: splicing them would gain nothing
# Printable ASCII but '"' and '\': the bytes JSON carries in a string as they are.
_VERBATIM = bytes(c for c in range(0x20, 0x80) if c not in (0x22, 0x5C))


def dumps(payload: Any) -> bytes:
    """``json.dumps(payload, ensure_ascii=False).encode("utf-8")``, byte for byte, with long plain strings spliced in.

    Every string of at least :data:`SPLICE_MIN` characters that is ASCII and holds no
    character JSON escapes goes into the body as its bytes, not through the encoder. Raises
    what ``json.dumps`` raises for what it cannot encode.
    """
    nonce = os.urandom(8).hex()
    spliced: list[bytes] = []

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            if len(value) >= SPLICE_MIN and value.isascii():
                data = value.encode("ascii")
                if not data.translate(None, _VERBATIM):  # nothing but verbatim bytes
                    spliced.append(data)
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
            return json.dumps(payload, ensure_ascii=False).encode("utf-8")
        parts += [before, b'"', data, b'"']
    parts.append(rest)
    return b"".join(parts)
