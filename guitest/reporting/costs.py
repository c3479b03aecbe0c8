"""What a suite's run cost, from its cases' tallies (:mod:`guitest.cost.usage`): the report's ``usage`` record, its
terminal line, and the difference ``guitest compare`` prints beside the difference in score.

A case carries ``usage`` (the calls a run made for it, paid then) and ``cached_usage`` (the replies the response
cache answered, at what their calls cost when they were made). The record sums both apart and together:

- ``paid``: what the runs behind this report paid (with ``--lf``, the earlier run's cases keep what they paid);
- ``cached``: what the replies read back from the cache had cost when they were made (nothing now);
- ``all``: the two together, what the evaluation as reported costs from scratch; ``per_case`` its mean per case
  (with ``--repeats`` K, a case's K attempts: the cost of pass@K), ``per_attempt`` per attempt;
- ``by``: ``all`` per value of each tag the report tables (per category);
- ``failed``: the calls that gave no usable reply (a case's ``failed_usage``: timeouts, dropped connections, cut or
  unreadable replies, empty ones, HTTP errors), by kind, with what their API reported of their tokens: NOT in the
  figures above, which count the calls that answered;
- live suites: ``tokens_per_episode``, ``tokens_per_success`` and ``cost_per_success`` (over ``all``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..cost import usage as usage_mod
from ..report_parts import UsageRecord
from ..cost.usage import TOKEN_KINDS, Tally
from ..verdict import HIT, CaseResult

#: how the terminal and compare name each kind of token
TOKEN_NAMES = {"input_tokens": "input", "output_tokens": "output", "cache_read_tokens": "cache read", "cache_write_tokens": "cache write", "reasoning_tokens": "reasoning"}


def both(result: Mapping[str, Any]) -> Tally:
    """A case's paid and cached tallies together."""
    return usage_mod.total([result.get("usage"), result.get("cached_usage")])


def record(cases: list[CaseResult], tags: Iterable[str], live: bool) -> UsageRecord | None:
    """The report's ``usage`` record of ``cases`` (see the module docstring), None when no case made a metered call."""
    metered = [c for c in cases if c.get("usage") or c.get("cached_usage") or c.get("failed_usage")]
    if not metered:
        return None
    failed = usage_mod.total(c.get("failed_usage") for c in metered)
    metered = [c for c in metered if c.get("usage") or c.get("cached_usage")]
    if not metered:
        return {"paid": {}, "cached": {}, "all": {}, "cases": 0, "per_case": {}, "failed": failed}
    paid = usage_mod.total(c.get("usage") for c in metered)
    cached = usage_mod.total(c.get("cached_usage") for c in metered)
    everything = usage_mod.total([paid, cached])
    attempts = sum(len(c.get("attempts") or ()) or 1 for c in metered)
    out: UsageRecord = {"paid": paid, "cached": cached, "all": everything, "cases": len(metered), "per_case": _mean(everything, len(metered))}
    if failed:
        out["failed"] = failed
    if attempts != len(metered):
        out["per_attempt"] = _mean(everything, attempts)
    by: dict[str, dict[str, Tally]] = {}
    for tag in tags:
        groups: dict[str, Tally] = {}
        for case in metered:
            value = case.get("tags", {}).get(tag)
            if value is not None:
                usage_mod.add(groups.setdefault(str(value), {}), both(case))
        if groups:
            by[tag] = dict(sorted(groups.items()))
    if by:
        out["by"] = by
    if live:
        successes = sum(1 for c in metered if c.get("success") or c["verdict"] == HIT)
        tokens = usage_mod.tokens(everything)
        out["tokens_per_episode"] = round(tokens / attempts, 1)
        out["tokens_per_success"] = round(tokens / successes, 1) if successes else None
        if "cost" in everything:
            out["cost_per_success"] = round(everything["cost"] / successes, 6) if successes else None
    return out


def _mean(tally: Mapping[str, Any], n: int) -> dict[str, float]:
    """Tokens, calls, seconds and cost of ``tally`` per one of ``n``."""
    out = {k: round(tally[k] / n, 3) for k in ("calls", "seconds", *TOKEN_KINDS) if k in tally}
    if "cost" in tally:
        out["cost"] = round(tally["cost"] / n, 9)
    return out


def describe(tally: Mapping[str, Any]) -> str:
    """A tally in words: ``12,345 tokens (input 10,000, 2,000 of them cache read; output 2,345, 100 of them reasoning),
    41 calls, 12.3 s of model time, $0.0123``; tokens unknown when no call reported them."""
    calls = int(tally.get("calls", 0))
    parts = []
    if any(k in tally for k in TOKEN_KINDS):
        said = f"input {tally.get('input_tokens', 0):,}"
        of_input = [f"{tally[k]:,} {TOKEN_NAMES[k]}" for k in ("cache_read_tokens", "cache_write_tokens") if tally.get(k)]
        said += f" ({', '.join(of_input)})" if of_input else ""
        said += f"; output {tally.get('output_tokens', 0):,}"
        said += f" ({tally['reasoning_tokens']:,} reasoning)" if tally.get("reasoning_tokens") else ""
        parts.append(f"{usage_mod.tokens(tally):,} tokens ({said})")
    else:
        parts.append("tokens unknown")
    parts.append(f"{calls} call{'s' if calls != 1 else ''}, {tally.get('seconds', 0.0):.1f} s of model time")
    if tally.get("unreported"):
        parts.append(f"{tally['unreported']} call(s) reported no usage")
    if tally.get("set_aside"):
        parts.append(f"{tally['set_aside']} call(s) reported numbers that cannot be counts (set aside)")
    if "cost" in tally:
        parts.append(dollars(tally["cost"]))
    return ", ".join(parts)


def failed_words(tally: Mapping[str, Any]) -> str:
    """Failed calls in words: ``3 failed call(s) (2 timeout, 1 empty; 1,050 tokens reported, $0.0001)``."""
    calls = int(tally.get("calls", 0))
    said = [f"{n} {why}" for why, n in sorted((tally.get("why") or {}).items())]
    known = f"{usage_mod.tokens(tally):,} tokens reported" if any(k in tally for k in TOKEN_KINDS) else "no tokens reported"
    said.append(known + (f", {dollars(tally['cost'])}" if "cost" in tally else ""))
    return f"{calls} failed call(s) ({', '.join(said[:-1])}; {said[-1]})" if len(said) > 1 else f"{calls} failed call(s) ({said[-1]})"


def not_in_totals(own: Mapping[str, Any]) -> str | None:
    """What a run's own ``usage`` record (``run.usage``) holds beside its totals: the calls that failed and the calls
    of cases no report holds (``abandoned``), said as NOT in the totals; None when there were none."""
    parts = []
    failed = own.get("failed")
    if failed:
        parts.append(failed_words(failed))
    abandoned = own.get("abandoned") or {}
    if abandoned.get("cases"):
        paid, lost = abandoned.get("paid") or {}, abandoned.get("failed") or {}
        said = [f"{paid['calls']} answered: {usage_mod.tokens(paid):,} tokens" + (f", {dollars(paid['cost'])}" if "cost" in paid else "")] if paid.get("calls") else []
        said += [failed_words(lost)] if lost.get("calls") else []
        calls = int(paid.get("calls", 0)) + int(lost.get("calls", 0))
        parts.append(f"{calls} call(s) of {abandoned['cases']} case(s) run ahead whose results no report holds ({'; '.join(said)})")
    return "NOT in these totals: " + "; ".join(parts) if parts else None


def spent_text(budget: Mapping[str, Any]) -> str:
    """What a budgeted run spent, the one figure of it (``run.budget.spent``, read when every process had ended):
    ``$0.2134 spent (3,480 tokens)``, or ``3,480 tokens spent`` without a price."""
    spent = budget.get("spent") or {}
    tokens = f"{int(spent.get('tokens') or 0):,} tokens"
    if spent.get("cost") is None:
        return f"{tokens} spent"
    if budget.get("max_cost") is None:
        return f"{tokens} spent ({dollars(spent['cost'])})"
    return f"{dollars(spent['cost'])} spent ({tokens})"


def budget_text(budget: Mapping[str, Any]) -> str | None:
    """The budget's stop in words (``--max-cost=0.2 reached: $0.2134 spent (3,480 tokens)``), or None when it did not stop the run."""
    if not budget.get("reached"):
        return None
    return f"{budget['reached']}: {spent_text(budget)}" if "spent" in budget else str(budget["reached"])


def dollars(value: float) -> str:
    """Dollars with the digits a small run needs (``$0.000123``, ``$12.35``)."""
    if abs(value) >= 1:
        return f"${value:,.2f}"
    return f"${value:.8f}".rstrip("0").rstrip(".") if value else "$0"


def summary_line(usage: Mapping[str, Any] | None, run: Mapping[str, Any]) -> str | None:
    """The terminal's one line of totals: what this run paid (``run``'s own ``usage``), what the cache answered and had
    cost when made, the report's cases in all when ``--lf`` folded earlier ones in, and the prices' source."""
    own = run.get("usage")
    if not usage or not own:
        return None
    paid, cached = own["paid"], own["cached"]
    line = "cost: " + describe(paid) if paid else "cost: nothing paid (every reply came from the response cache)" if cached else "cost: nothing paid (no call answered)"
    if cached:
        answered = dollars(cached["cost"]) if "cost" in cached else f"{usage_mod.tokens(cached):,} tokens"
        line += f"; the cache answered {cached.get('calls', 0)} call(s) that cost {answered} when made"
    everything = usage["all"]
    if everything.get("calls", 0) != paid.get("calls", 0) + cached.get("calls", 0):
        line += f"; the report's {usage['cases']} cases in all: {usage_mod.tokens(everything):,} tokens" + (f", {dollars(everything['cost'])}" if "cost" in everything else "")
    endpoint = own.get("endpoint")
    if endpoint:
        line += f"; the endpoint's time {dollars(endpoint['cost'])} ({endpoint['seconds']:.0f} s at {dollars(endpoint['per_hour'])}/hour)"
    if usage.get("tokens_per_episode") is not None:  # a live suite: what an episode, and a success, cost
        per_success = usage.get("tokens_per_success")
        line += f"; {usage['tokens_per_episode']:,.0f} tokens per episode, " + (f"{per_success:,.0f} per success" if per_success is not None else "no success")
        if usage.get("cost_per_success") is not None:
            line += f" ({dollars(usage['cost_per_success'])})"
    apart = not_in_totals(own)
    if apart:
        line += f"; {apart}"
    if run.get("price"):
        line += f" [prices: {price_source(run['price'])}]"
    return line


def price_source(price: Mapping[str, Any]) -> str:
    """Where the prices came from, in words."""
    if price.get("source") == "none":
        return f"none ({price.get('why')})"
    said = str(price.get("source"))
    if price.get("model"):
        provider = price.get("provider")
        said += f", {provider} {price['model']}" if provider else f", {price['model']}"
    if price.get("as_of"):
        said += f", as of {price['as_of']}"
    return said


def difference(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str | None:
    """What ``guitest compare`` says of the two reports' costs (their ``usage`` records' ``all``), or None when neither
    has one."""
    if not old and not new:
        return None
    if not old or not new:
        which = "the old" if not old else "the new"
        return f"cost: {which} report records no usage (written before guitest recorded it, or a model that costs nothing)"
    a, b = old["all"], new["all"]
    na, nb = old.get("cases") or 1, new.get("cases") or 1
    ta, tb = usage_mod.tokens(a) / na, usage_mod.tokens(b) / nb
    line = f"cost per case: {ta:,.0f} -> {tb:,.0f} tokens ({_change(ta, tb)})"
    if "cost" in a and "cost" in b:
        ca, cb = a["cost"] / na, b["cost"] / nb
        line += f", {dollars(ca)} -> {dollars(cb)} ({_change(ca, cb)})"
    line += f"; in all {usage_mod.tokens(a):,} -> {usage_mod.tokens(b):,} tokens"
    if "cost" in a and "cost" in b:
        line += f", {dollars(a['cost'])} -> {dollars(b['cost'])}"
    return line


def _change(a: float, b: float) -> str:
    if a == 0:
        return "new" if b else "same"
    return f"{(b - a) / a * 100:+.1f}%"
