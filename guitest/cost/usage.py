"""What model calls used: the tokens one call's API reported (:class:`Usage`, read from each wire shape) and the
sums of many calls (a *tally*: a case's, an episode's, a step's, a category's, a run's).

Every API counts a little differently; guitest keeps one meaning for each kind of token, the meaning genai-prices
prices by:

- ``input_tokens``: every token of the request, the cached ones included (OpenAI's ``prompt_tokens`` and the
  Responses API's ``input_tokens`` mean this; Anthropic's ``input_tokens`` leaves out the cache's reads and writes,
  so guitest adds ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` to it);
- ``output_tokens``: every token generated, reasoning included (as all three APIs count it);
- ``cache_read_tokens``: of the input, those read from the provider's prompt cache (OpenAI's
  ``prompt_tokens_details.cached_tokens``, the Responses API's ``input_tokens_details.cached_tokens``, Anthropic's
  ``cache_read_input_tokens``);
- ``cache_write_tokens``: of the input, those written to it (Anthropic's ``cache_creation_input_tokens``);
- ``reasoning_tokens``: of the output, those spent reasoning (``completion_tokens_details.reasoning_tokens``,
  ``output_tokens_details.reasoning_tokens``).

A kind the API did not send is unknown (absent), never zero; a call whose reply carried no usage at all counts in
``unreported`` and its tokens are unknown. A number that cannot be a count of one call's tokens is *set aside* and
unknown as well, never an error and never summed: one that is not a whole number (a string, ``NaN``, ``Infinity``,
1.5), one below zero, one above :data:`MAX_CALL_TOKENS`, and a part larger than its whole (cached tokens above the
input, reasoning tokens above the output, cache reads and writes together above the input); the reply's
:attr:`Usage.set_aside` names each such field as the API named it, and a tally counts the calls in ``set_aside``.

A tally is plain builtins (it travels between processes and is a report field as it is): ``calls``, ``seconds``
(wall time of the calls), ``unreported``, ``set_aside``, the token kinds reported by any of its calls, and ``cost``
(dollars) when the model has a price (:mod:`guitest.cost.pricing`; a call without usage adds nothing to it, and
``unreported`` says how many such calls there were).

A call that gave no usable reply (a timeout, a refused or dropped connection, a reply cut off or unreadable, an
empty one, an HTTP error) is a :class:`FailedCall`: its tally (:func:`failed_tally`) counts it by ``why``
(:data:`FAILURES`) with what its API reported it used, if anything, and is kept apart from the calls that answered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, TypedDict, TypeVar, cast

#: the kinds of token a :class:`Usage` holds, in the order reports show them
TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
#: the most tokens of one kind one call is taken to carry: 10^9, a hundred times the longest context a model serves
#: today (10 million); a larger number is a server's bug or a hostile reply, not a count (and would overflow the
#: budget's 64-bit slot after a few calls)
MAX_CALL_TOKENS = 1_000_000_000
#: why a call gave no usable reply: no reply within --timeout; no HTTP reply (refused, reset, dropped); a reply whose
#: connection closed in its middle; a whole reply that cannot be read (not JSON, no choices, no message); a reply
#: with no text and no tool calls; an HTTP 5xx; any other HTTP error (408, 409, 429 and the 4xx a retry does not cure)
FAILURES = ("timeout", "connection", "cut", "malformed", "empty", "server_error", "http_error")


class Tally(TypedDict, total=False):
    """A tally as the report holds it (see the module docstring): each key present only when known."""

    calls: int
    seconds: float
    unreported: int
    set_aside: int
    why: dict[str, int]  # failed calls only: how many failed each way (FAILURES)
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost: float


@dataclass(frozen=True)
class Usage:
    """The tokens of one model call, each None when the API did not report it (see the module docstring)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    #: the numbers the API sent that cannot be counts, each as ``field value`` with the API's own field name (the
    #: module docstring): unknown here, never summed
    set_aside: tuple[str, ...] = ()

    @property
    def total(self) -> int | None:
        """Input plus output tokens (what ``--max-total-tokens`` and ``--max-episode-tokens`` count), or None when neither is known."""
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def as_dict(self) -> dict[str, int]:
        """The kinds reported, as plain builtins."""
        return {k: v for k in TOKEN_KINDS if (v := getattr(self, k)) is not None}

    @classmethod
    def from_dict(cls, data: Any) -> "Usage | None":
        """A usage from :meth:`as_dict`'s form (a cache record, a report), or None for anything else; a number that
        cannot be a count is unknown."""
        if not isinstance(data, Mapping):
            return None
        get = data.get
        return cls(_count(get("input_tokens")), _count(get("output_tokens")), _count(get("cache_read_tokens")), _count(get("cache_write_tokens")), _count(get("reasoning_tokens")))


def _count(value: Any) -> int | None:
    """A token count as an API sent it: a whole number from 0 to :data:`MAX_CALL_TOKENS`, else unknown (None). Never
    raises, whatever the value (``NaN``, ``Infinity``, a 400-digit integer, a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_CALL_TOKENS else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and 0 <= value <= MAX_CALL_TOKENS:
        return int(value)
    return None


class _Reading:
    """The numbers of one usage block as they are read: each field's count, and the fields set aside (by the API's
    own names, for the warning)."""

    def __init__(self, usage: Mapping[str, Any]) -> None:
        self.usage = usage
        self.set_aside: list[str] = []

    def count(self, *path: str) -> int | None:
        """The count at ``path`` (None when absent, or set aside when it cannot be a count)."""
        value = _dig(self.usage, *path)
        if value is None:
            return None
        found = _count(value)
        if found is None:
            self.aside(".".join(path), value)
        return found

    def aside(self, field: str, value: Any, why: str = "") -> None:
        self.set_aside.append(f"{field} {shown(value)}" + (f" {why}" if why else ""))

    def part(self, part: int | None, part_name: str, whole: int | None, whole_name: str) -> int | None:
        """``part`` when it fits in its ``whole``; set aside when larger; unknown (and not checked) without a whole."""
        if part is None or whole is None:
            return None
        if part > whole:
            self.aside(part_name, part, f"(more than {whole_name} {whole})")
            return None
        return part

    def usage_of(self, **counts: int | None) -> Usage | None:
        found = Usage(**counts, set_aside=tuple(self.set_aside))
        return found if found.as_dict() or found.set_aside else None


def shown(value: Any) -> str:
    """A value as a warning or an error message quotes it: short, one line, and never raising (a 5,000-digit integer has no ``repr``)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"{'-' if value < 0 else ''}~1e{int(math.log10(abs(value)) + 1e-9)} (an integer)"
    if isinstance(value, (Mapping, list)):
        return f"(a JSON {'object' if isinstance(value, Mapping) else 'array'})"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def from_chat(usage: Any) -> Usage | None:
    """The usage of an OpenAI chat completion (``prompt_tokens``, ``completion_tokens``, their ``*_details``), as
    OpenAI, vLLM, SGLang and TGI send it (SGLang puts ``reasoning_tokens`` beside the counts, not in
    ``completion_tokens_details``); None when the reply had none. Numbers that cannot be counts are set aside."""
    if not isinstance(usage, Mapping):
        return None
    read = _Reading(usage)
    inputs, outputs = read.count("prompt_tokens"), read.count("completion_tokens")
    nested = _dig(usage, "completion_tokens_details", "reasoning_tokens") is not None
    reasoning_name = "completion_tokens_details.reasoning_tokens" if nested else "reasoning_tokens"
    reasoning = read.count(*reasoning_name.split("."))
    return read.usage_of(
        input_tokens=inputs,
        output_tokens=outputs,
        cache_read_tokens=read.part(read.count("prompt_tokens_details", "cached_tokens"), "prompt_tokens_details.cached_tokens", inputs, "prompt_tokens"),
        reasoning_tokens=read.part(reasoning, reasoning_name, outputs, "completion_tokens"),
    )


def from_responses(usage: Any) -> Usage | None:
    """The usage of an OpenAI Responses API reply (``input_tokens``, ``output_tokens``, their ``*_details``)."""
    if not isinstance(usage, Mapping):
        return None
    read = _Reading(usage)
    inputs, outputs = read.count("input_tokens"), read.count("output_tokens")
    return read.usage_of(
        input_tokens=inputs,
        output_tokens=outputs,
        cache_read_tokens=read.part(read.count("input_tokens_details", "cached_tokens"), "input_tokens_details.cached_tokens", inputs, "input_tokens"),
        reasoning_tokens=read.part(read.count("output_tokens_details", "reasoning_tokens"), "output_tokens_details.reasoning_tokens", outputs, "output_tokens"),
    )


def from_anthropic(usage: Any) -> Usage | None:
    """The usage of an Anthropic Messages reply: its ``input_tokens`` exclude the cache's reads and writes, which
    are added here so that ``input_tokens`` is every token of the request (the module docstring)."""
    if not isinstance(usage, Mapping):
        return None
    read = _Reading(usage)
    plain = read.count("input_tokens")
    cached = read.count("cache_read_input_tokens")
    written = read.count("cache_creation_input_tokens")
    inputs = None if plain is None else plain + (cached or 0) + (written or 0)
    if inputs is not None and inputs > MAX_CALL_TOKENS:
        read.aside("input_tokens + cache_read_input_tokens + cache_creation_input_tokens", inputs)
        inputs = cached = written = None
    return read.usage_of(
        input_tokens=inputs,
        output_tokens=read.count("output_tokens"),
        cache_read_tokens=cached if inputs is not None else None,
        cache_write_tokens=written if inputs is not None else None,
    )


# -- tallies ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailedCall:
    """A model call that gave no usable reply: ``why`` (one of :data:`FAILURES`), its wall time, and what its API
    reported it used (None: nothing, as for most failures)."""

    why: str
    seconds: float
    usage: Usage | None = None


def call_tally(usage: Usage | None, seconds: float, cost: float | None) -> dict[str, Any]:
    """The tally of one call: its usage (None: the reply carried none), its wall time and its price (None: unknown)."""
    out: dict[str, Any] = {"calls": 1, "seconds": round(seconds, 6)}
    known = usage.as_dict() if usage is not None else {}
    if known:
        out.update(known)
    else:
        out["unreported"] = 1
    if usage is not None and usage.set_aside:
        out["set_aside"] = 1
    if cost is not None:
        out["cost"] = cost
    return out


def failed_tally(call: FailedCall, cost: float | None) -> dict[str, Any]:
    """The tally of one failed call (:func:`call_tally`'s, with ``why`` counting it by its kind of failure)."""
    out = call_tally(call.usage, call.seconds, cost)
    out["why"] = {call.why: 1}
    return out


#: the largest count a sum keeps: far beyond any run (4.6 billion calls of MAX_CALL_TOKENS), within a 64-bit slot
_MAX_SUM = 2**62


#: what :func:`add` sums into: a typed tally or a plain dict of one
_Into = TypeVar("_Into", Tally, dict[str, Any])


def add(into: _Into, more: Mapping[str, Any] | None) -> _Into:
    """``into`` with the tally ``more`` added (in place; returned): counts and seconds add, a token kind or the
    cost is known in the sum when any part knew it; ``why`` (a failed call's kind) adds per kind. A value no tally
    can hold (a negative or fractional count, a count beyond any run, a cost that is not a finite number: a stored
    tally of an older version) is left out of the sum rather than poisoning it."""
    if not more:
        return into
    sums: dict[str, Any] = cast(Any, into)  # the same dict: its keys are written by name below, each a tally's
    for key in ("calls", "unreported", "set_aside", *TOKEN_KINDS):
        value = more.get(key)
        if _sum_count(value):
            sums[key] = sums.get(key, 0) + value
    for key in ("seconds", "cost"):
        value = more.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
            sums[key] = round(sums.get(key, 0.0) + float(value), 9 if key == "cost" else 6)
    why = more.get("why")
    if isinstance(why, Mapping):
        kinds = sums.setdefault("why", {})
        for kind, n in why.items():
            if _sum_count(n):
                kinds[str(kind)] = kinds.get(str(kind), 0) + n
        sums["why"] = dict(sorted(kinds.items()))
    return into


def _sum_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SUM


def total(tallies: Any) -> Tally:
    """The sum of ``tallies`` (None ones skipped): an empty dict when there is none."""
    out: Tally = {}
    for tally in tallies:
        add(out, tally)
    return out


def tokens(tally: Mapping[str, Any] | None) -> int:
    """The input plus output tokens of a tally (0 when none is known)."""
    if not tally:
        return 0
    return int(tally.get("input_tokens", 0)) + int(tally.get("output_tokens", 0))


def tokens_of(usage: Usage | None) -> dict[str, int] | None:
    """A call's tokens as a step of a trajectory records them (None: unknown)."""
    found = usage.as_dict() if usage is not None else {}
    return found or None
