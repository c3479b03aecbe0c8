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
``unreported`` and its tokens are unknown. A tally is plain builtins (it travels between processes and is a report
field as it is): ``calls``, ``seconds`` (wall time of the calls), ``unreported``, the token kinds reported by any
of its calls, and ``cost`` (dollars) when the model has a price (:mod:`guitest.pricing`; a call without usage adds
nothing to it, and ``unreported`` says how many such calls there were).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

#: the kinds of token a :class:`Usage` holds, in the order reports show them
TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


@dataclass(frozen=True)
class Usage:
    """The tokens of one model call, each None when the API did not report it (see the module docstring)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None

    @property
    def total(self) -> int | None:
        """Input plus output tokens (what ``--max-total-tokens`` and ``--max-episode-tokens`` count), or None when neither is known."""
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def as_dict(self) -> dict[str, int]:
        """The kinds reported, as plain builtins."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, data: Any) -> "Usage | None":
        """A usage from :meth:`as_dict`'s form (a cache record, a report), or None for anything else."""
        if not isinstance(data, Mapping):
            return None
        return cls(**{k: _count(data.get(k)) for k in TOKEN_KINDS})


def _count(value: Any) -> int | None:
    """A token count as an API sent it: a non-negative whole number, else unknown (None)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        return None
    return int(value)


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def from_chat(usage: Any) -> Usage | None:
    """The usage of an OpenAI chat completion (``prompt_tokens``, ``completion_tokens``, their ``*_details``), as
    OpenAI, vLLM, SGLang and TGI send it (SGLang puts ``reasoning_tokens`` beside the counts, not in
    ``completion_tokens_details``); None when the reply had none."""
    if not isinstance(usage, Mapping):
        return None
    reasoning = _dig(usage, "completion_tokens_details", "reasoning_tokens")
    found = Usage(
        input_tokens=_count(usage.get("prompt_tokens")),
        output_tokens=_count(usage.get("completion_tokens")),
        cache_read_tokens=_count(_dig(usage, "prompt_tokens_details", "cached_tokens")),
        reasoning_tokens=_count(reasoning if reasoning is not None else usage.get("reasoning_tokens")),
    )
    return found if found.as_dict() else None


def from_responses(usage: Any) -> Usage | None:
    """The usage of an OpenAI Responses API reply (``input_tokens``, ``output_tokens``, their ``*_details``)."""
    if not isinstance(usage, Mapping):
        return None
    found = Usage(
        input_tokens=_count(usage.get("input_tokens")),
        output_tokens=_count(usage.get("output_tokens")),
        cache_read_tokens=_count(_dig(usage, "input_tokens_details", "cached_tokens")),
        reasoning_tokens=_count(_dig(usage, "output_tokens_details", "reasoning_tokens")),
    )
    return found if found.as_dict() else None


def from_anthropic(usage: Any) -> Usage | None:
    """The usage of an Anthropic Messages reply: its ``input_tokens`` exclude the cache's reads and writes, which
    are added here so that ``input_tokens`` is every token of the request (the module docstring)."""
    if not isinstance(usage, Mapping):
        return None
    plain = _count(usage.get("input_tokens"))
    read = _count(usage.get("cache_read_input_tokens"))
    write = _count(usage.get("cache_creation_input_tokens"))
    found = Usage(
        input_tokens=None if plain is None else plain + (read or 0) + (write or 0),
        output_tokens=_count(usage.get("output_tokens")),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )
    return found if found.as_dict() else None


# -- tallies ------------------------------------------------------------------------------------------------


def call_tally(usage: Usage | None, seconds: float, cost: float | None) -> dict[str, Any]:
    """The tally of one call: its usage (None: the reply carried none), its wall time and its price (None: unknown)."""
    out: dict[str, Any] = {"calls": 1, "seconds": round(seconds, 6)}
    if usage is None or not usage.as_dict():
        out["unreported"] = 1
    else:
        out.update(usage.as_dict())
    if cost is not None:
        out["cost"] = cost
    return out


def add(into: dict[str, Any], more: Mapping[str, Any] | None) -> dict[str, Any]:
    """``into`` with the tally ``more`` added (in place; returned): counts and seconds add, a token kind or the
    cost is known in the sum when any part knew it."""
    if not more:
        return into
    for key in ("calls", "unreported", *TOKEN_KINDS):
        if key in more:
            into[key] = into.get(key, 0) + int(more[key])
    for key in ("seconds", "cost"):
        if key in more:
            into[key] = round(into.get(key, 0.0) + float(more[key]), 9 if key == "cost" else 6)
    return into


def total(tallies: Any) -> dict[str, Any]:
    """The sum of ``tallies`` (None ones skipped): an empty dict when there is none."""
    out: dict[str, Any] = {}
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
