"""Python literals in model replies (``{'action': 'type'}``, ``type(content='C:\\home')``), read safely and quietly.

Models write Python where JSON was asked for: single quotes, trailing commas, backslashes such as
``'C:\\home'`` that are no escape. :func:`source` writes such backslashes out (``\\h`` as ``\\\\h``):
the same values, since Python keeps an unknown escape's backslash, but parsing no longer prints
"invalid escape sequence" into the user's run. :func:`literal` evaluates one literal (nothing else:
``ast.literal_eval``). Neither executes code.
"""

from __future__ import annotations

import ast
import re
from typing import Any

TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)
# what may follow a backslash in a Python str literal; Python keeps anything else as is, with a warning
_ESCAPES = frozenset("\n\r\\'\"abfnrtvxNuU")
_QUOTE = re.compile("'''|\"\"\"|['\"]")
# a literal's body after its opening quote: up to the closing quote, over escaped characters
_BODY = {q: re.compile(rf"(?:[^\\{q[0]}]|\\.|{q[0]}(?!{q[1:]}))*" if len(q) == 3 else rf"(?:[^\\{q}]|\\.)*", re.DOTALL) for q in ("'", '"', "'''", '"""')}
PARSE_ERRORS = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


def source(text: str) -> str:
    """``text`` to parse as Python, the invalid escapes of its str literals written out (see the module docstring).

    In each literal, ``\\h`` becomes ``\\\\h`` and an octal escape past ``\\377`` its ``\\u`` form: the
    values Python gives them. Raw and bytes literals, and all text outside literals, stay as they are.
    """
    if "\\" not in text:
        return text
    out: list[str] = []
    pos = 0
    while (opening := _QUOTE.search(text, pos)) is not None:
        quote = opening.group()
        close = _BODY[quote].match(text, opening.end()).end()  # type: ignore[union-attr]
        out.append(text[pos : opening.end()])
        body = text[opening.end() : close]
        out.append(body if _raw_or_bytes(text, opening.start()) else _ESCAPE.sub(_written_out, body))
        pos = close
        if close < len(text):
            out.append(quote)
            pos += len(quote)
    out.append(text[pos:])
    return "".join(out)


def _raw_or_bytes(text: str, quote_at: int) -> bool:
    """Whether the literal opening at ``quote_at`` has an ``r`` or ``b`` prefix (``rb'..'``, ``Br'..'``)."""
    k = quote_at
    while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
        k -= 1
    prefix = text[k:quote_at].lower()
    return len(prefix) <= 2 and set(prefix) <= set("rbfu") and bool(set(prefix) & set("rb"))


def _written_out(m: "re.Match[str]") -> str:
    escaped = m.group(1)
    if escaped[0] in "01234567":
        code = int(escaped, 8)
        return m.group(0) if code <= 0o377 else f"\\u{code:04x}"
    return m.group(0) if escaped in _ESCAPES else "\\\\" + escaped


def literal(text: str) -> Any:
    """The Python literal ``text`` (trailing commas allowed); ValueError when it is none."""
    try:
        return ast.literal_eval(source(TRAILING_COMMA.sub(r"\1", text.strip())))
    except PARSE_ERRORS as exc:
        raise ValueError(f"not a Python literal: {exc}") from None
