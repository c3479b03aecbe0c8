"""JSON values and tool calls embedded in model replies, found in time linear in the reply: what reading a reply for a
point (:mod:`guitest.answers.toolcall`) and for actions (the live runners, :mod:`guitest.live.runners`) share.

:func:`scan` finds the values; :func:`call_arguments` unwraps a tool call's arguments, however a model or an API wrote
them (``{"name": ..., "arguments": {...}}``, ``parameters``/``args``/``input``, arguments as a JSON string as the OpenAI
wire form carries them, OpenAI's ``{"function": {...}}`` wrapper).

Every opener (``{``, ``[``) is a candidate, decoded with :meth:`json.JSONDecoder.raw_decode`, left to right. Decoding
from each opener of a truncated or broken structure (``[1, [1, [1, ...``) read to the point of failure every time: a
reply of 60,000 characters took 26 s. When a decode fails at position ``p``, the text from its opener up to ``p`` is a
valid JSON prefix, so every opener inside it either closes before ``p`` (a complete value: its decode succeeds) or is
still open at ``p``, where its decode would fail at the same place (the decoder is in the same innermost container
there). One pass over that prefix tells which openers close; the others are skipped. Openers inside the prefix's
strings are not values and are skipped too. A value nested deeper than the decoder recurses (1,000 levels, never a
real answer) is skipped whole, with what it holds.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_decoder = json.JSONDecoder()
CHUNK = 1024
#: a JSON string (complete) or one structural character
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_PAIRS = {"}": "{", "]": "["}
#: an opener that can start a JSON value: an object's first key (or its end), an array's first value (or its end);
#: a failed decode costs a count of the lines before it (the error's line number), so impossible starts are skipped
_STARTS = {"{": r'\{(?=\s*["}])', "[": r'\[(?=\s*[-0-9"\[{tfn\]])'}


def closers(text: str, start: int, stop: int) -> dict[int, int]:
    """Opener position -> its closer's, for the openers in ``text[start:stop]`` (a valid JSON prefix, or the inside
    of one) that close before ``stop``; one pass."""
    closed: dict[int, int] = {}
    stack: list[int] = []
    for token in _TOKEN.finditer(text, start, stop):
        char = token.group()
        if char in "{[":
            stack.append(token.start())
        elif char in _PAIRS:
            if stack and text[stack[-1]] == _PAIRS[char]:
                closed[stack.pop()] = token.start()
            else:  # not a valid prefix after all (the caller's guess was wrong): nothing before this closes
                stack.clear()
    return closed


class _Failed(Exception):
    """A decode that failed at ``pos`` (of the whole text): json's own error counts the lines before it."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


def _decode(text: str, start: int) -> tuple[Any, int]:
    """``raw_decode`` at ``start``, first over the next ``CHUNK`` characters: a failed decode's error counts the lines
    before it in the string it was given, which over the whole reply made many short failures quadratic. A value
    that may go on past the chunk is decoded again over the whole text. Positions are the whole text's; a failure
    raises :class:`_Failed`."""
    chunk = text[start : start + CHUNK]
    try:
        value, end = _decoder.raw_decode(chunk)
    except json.JSONDecodeError as exc:
        cut = start + CHUNK < len(text)
        if cut and (exc.pos >= len(chunk) - 6 or exc.msg.startswith("Unterminated string")):  # the chunk's end, maybe not the value's
            try:
                return _decoder.raw_decode(text, start)
            except json.JSONDecodeError as whole:
                raise _Failed(whole.pos) from None
        raise _Failed(start + exc.pos) from None
    return value, start + end


def scan(text: str, openers: str, take: Callable[[Any], tuple[T | None, bool]]) -> list[tuple[int, T]]:
    """``(position, taken)`` for every JSON value decoded at one of ``openers`` in ``text``, left to right.

    ``take(value)`` returns what to keep of a value (None: nothing) and whether the scan goes on after the value
    (True) or just after its opener, into the values inside it (False). Linear in ``text`` for broken structures
    (see the module docstring); a value nested too deep for the decoder is skipped.
    """
    out: list[tuple[int, T]] = []
    position = 0
    window_end = -1  # inside a failed decode's prefix, only the openers in `closing` can start a value
    closing: dict[int, int] = {}
    pattern = re.compile("|".join(_STARTS[c] for c in openers))
    while True:
        found = pattern.search(text, position)  # one search for any opener (a find per opener rescanned to the end)
        if found is None:
            return out
        start = found.start()
        if start < window_end and start not in closing:
            position = start + 1
            continue
        try:
            value, end = _decode(text, start)
        except _Failed as exc:
            if exc.pos > start + 1 and exc.pos > window_end:
                closing, window_end = closers(text, start + 1, exc.pos), exc.pos
            position = start + 1
            continue
        except RecursionError:  # nested too deep: skip the value whole, or (unclosed) every opener that does not close
            spans = closers(text, start, len(text))
            if start in spans:
                position = spans[start] + 1
            else:
                closing, window_end, position = spans, len(text), start + 1
            continue
        except ValueError:
            position = start + 1
            continue
        taken, past = take(value)
        if taken is not None:
            out.append((start, taken))
        position = end if past else start + 1


#: where a tool call keeps its arguments, by the names models and APIs give them
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


def wrapped(call: dict[str, Any]) -> list[Any]:
    """What a tool-call object wraps, in the order it is looked for: the content of OpenAI's ``function`` wrapper, then
    the value under each of :data:`ARGUMENT_KEYS` that is present (a JSON string decoded)."""
    out: list[Any] = []
    if isinstance(call.get("function"), dict):
        out.append(call["function"])
        call = call["function"]
    for name in ARGUMENT_KEYS:
        inner = call.get(name)
        if isinstance(inner, str):
            try:
                inner = json.loads(inner)
            except (ValueError, RecursionError):
                continue
        if inner is not None:
            out.append(inner)
    return out


def call_arguments(call: Any, key: str = "action") -> dict[str, Any] | None:
    """The arguments of a tool call (see the module docstring) that hold ``key`` as a string (``action`` for a
    computer-use call): the first of what the call wraps that does, else the call itself when it does; else None."""
    if not isinstance(call, dict):
        return None
    found = next((w for w in wrapped(call) if isinstance(w, dict) and isinstance(w.get(key), str)), None)
    return found if found is not None else call if isinstance(call.get(key), str) else None
