"""What a run spends on its model, as it goes: each call priced (:mod:`guitest.cost.pricing`) and charged to the run's
budget (``--max-cost``, ``--max-total-tokens``), and tallied (:mod:`guitest.cost.usage`) for its case.

The budget is the whole run's, over every process of the run on this machine: each process keeps what it paid in
its own slot of a small file in a folder the controller made (:class:`Budget`), and a process about to call the
model reads every slot (shards on other machines each keep their own budget). Once the sum reaches a limit no
process asks the model again: a call already sent finishes and is paid, no new case starts, a case in flight still
reads the replies the response cache holds (they cost nothing now), and every case that would have asked is *not
asked* (:class:`BudgetReached`): the run stops there (:mod:`guitest.plugin` hands the stop to the session), the
case is missing from the report, which names the budget, and ``--lf`` runs it. A run overshoots a limit by the
calls in flight when it is reached: at most ``--concurrency`` per process (per endpoint).

What the budget counts is what each call's API reported, priced: the calls that answered, and the calls that failed
(:class:`~guitest.cost.usage.FailedCall`) for what their API reported of them, if anything. A number the API sent that
cannot be a count is set aside (:mod:`guitest.cost.usage`) and counts nothing; the process says so once
(:meth:`Spending.take_warning`). The one figure of what the run spent is :meth:`Budget.spent` read at the run's end.
"""

from __future__ import annotations

import math
import os
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from . import usage as usage_mod
from ..errors import GuitestError
from .pricing import Pricer, PricesError, make_pricer
from .usage import FailedCall, Usage


class BudgetReached(GuitestError):
    """The run's budget is spent: the case (or the episode's next step) was not asked. ``--lf`` asks it. ``why``:
    the limit reached (:meth:`Budget.reached`)."""

    def __init__(self, why: str) -> None:
        super().__init__(not_asked(why))
        self.why = why


def not_asked(why: str) -> str:
    """The error of a case the budget kept from asking (``why``: :meth:`Budget.reached`)."""
    return f"not asked: the run's budget is spent: {why}; raise the limit and re-run with --lf to finish (answered cases come from the cache)"


def stop_message(why: str) -> str:
    """What ends a run whose budget is spent (``why``: :meth:`Budget.reached`), as pytest prints it once; what was
    spent is said by the summary, once every process has ended."""
    return f"guitest: the run's budget is spent ({why}): no case was asked after this; raise the limit and re-run with --lf"


def usage_warning_message(set_aside: str) -> str:
    """What a run says once when a call's usage held numbers that cannot be counts (:attr:`guitest.cost.usage.Usage.set_aside`)."""
    return (
        f"warning: the model's API reported token counts that cannot be counts ({set_aside}): each such number is set aside, "
        "counted as unknown and never as tokens or dollars (the report counts these calls in usage.set_aside, and a budget "
        "cannot count what they used); said once for the run"
    )


class Budget:
    """The run's limits (``max_cost`` dollars, ``max_tokens`` input plus output tokens; None: no limit) over every
    process sharing ``folder``; ``per_hour`` (dollars) charges the run's wall time since ``started`` as well.

    Every process of the run has its own slot (``slot``: 0 for the controller or a serial run, N + 1 for xdist's
    worker gwN) of one small file, :data:`SPENT`: what it has spent so far (dollars, tokens and a check word), written
    in place with one ``pwrite`` after each call and read whole with one ``pread`` before each call
    (bench/bench_pricing.py: a few microseconds each). A slot read half-written fails its check and counts as it was
    last read."""

    def __init__(self, folder: Path, max_cost: float | None, max_tokens: int | None, per_hour: float | None = None, started: float | None = None, slot: int = 0) -> None:
        self.max_cost = max_cost
        self.max_tokens = max_tokens
        self.per_hour = per_hour
        self.started = time.time() if started is None else started
        self.slot = slot
        self.cost = 0.0  # this process's
        self.tokens = 0
        self._seen: dict[int, tuple[float, int]] = {}  # the other slots, as last read whole
        self._lock = threading.Lock()
        self._fd: int | None = None
        try:
            self._fd = os.open(Path(folder) / SPENT, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            self._fd = None  # this process then counts only its own spending

    def charge(self, tally: Mapping[str, Any]) -> None:
        """Add one call's tally (:func:`guitest.cost.usage.call_tally`) to this process's spending, and write its slot."""
        with self._lock:
            self.cost += float(tally.get("cost", 0.0))
            self.tokens += usage_mod.tokens(tally)
            if self._fd is not None:
                try:
                    os.pwrite(self._fd, _pack(self.cost, self.tokens), self.slot * SLOT.size)
                except OSError:
                    pass  # the others then see less of this process's spending; this process still counts all of it

    def spent(self, now: float | None = None) -> tuple[float, int]:
        """Dollars (the hours' too, with ``per_hour``, up to ``now``: epoch seconds, default the present) and tokens
        spent by every process, as far as this one knows (read once every process has ended: what the run spent)."""
        with self._lock:
            others = self._read_others()
            cost, tokens = self.cost + others[0], self.tokens + others[1]
        if self.per_hour:
            cost += ((time.time() if now is None else now) - self.started) / 3600 * self.per_hour
        return cost, tokens

    def _read_others(self) -> tuple[float, int]:
        if self._fd is not None:
            try:
                data = os.pread(self._fd, 1 << 16, 0)
            except OSError:
                data = b""
            for index in range(len(data) // SLOT.size):
                if index != self.slot:
                    read = _unpack(data[index * SLOT.size : (index + 1) * SLOT.size])
                    if read is not None:
                        self._seen[index] = read
        return sum(c for c, _ in self._seen.values()), sum(t for _, t in self._seen.values())

    def reached(self) -> str | None:
        """Why the model must not be asked again (the limit reached: ``--max-cost=5 reached``), or None while within
        the budget. What was spent is said once, at the run's end (:func:`spent_text`), not here: calls in flight
        still add to it."""
        if self.max_cost is None and self.max_tokens is None:
            return None
        cost, tokens = self.spent()
        if self.max_cost is not None and cost >= self.max_cost:
            return f"--max-cost={self.max_cost:g} reached"
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return f"--max-total-tokens={self.max_tokens} reached"
        return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


#: the file of the run's spending, one slot per process, in the budget's folder
SPENT = "spent"
#: a slot: dollars, tokens, and a check word that a half-written slot fails
SLOT = struct.Struct("<dqQ")
_CHECK = 0x9E3779B97F4A7C15
_MAX_SLOT = 2**63 - 1


def _pack(cost: float, tokens: int) -> bytes:
    tokens = min(max(tokens, 0), _MAX_SLOT)  # a slot never raises: usage.py bounds each call, this bounds the sum
    bits = struct.unpack("<Q", struct.pack("<d", cost))[0]
    return SLOT.pack(cost, tokens, bits ^ tokens ^ _CHECK)


def _unpack(data: bytes) -> tuple[float, int] | None:
    cost, tokens, check = SLOT.unpack(data)
    if data == bytes(SLOT.size):
        return None  # a slot nobody wrote
    bits = struct.unpack("<Q", struct.pack("<d", cost))[0]
    return (cost, tokens) if check == bits ^ (tokens & 0xFFFFFFFFFFFFFFFF) ^ _CHECK else None


def worker_slot(worker_id: str | None) -> int:
    """The slot of a process: 0 for the controller or a serial run, N + 1 for xdist's worker ``gwN``."""
    digits = (worker_id or "").removeprefix("gw")
    return int(digits) + 1 if digits.isdigit() else 0


class Spending:
    """One process's spending: ``pricer`` prices each call (None: no price known), ``budget`` is the run's (None: no limit)."""

    def __init__(self, pricer: Pricer | None = None, budget: Budget | None = None) -> None:
        self.pricer = pricer
        self.budget = budget
        self._warning: str | None = None  # the first number set aside in this process, until a case carries it
        self._warned = False
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise :class:`BudgetReached` when the run's budget is spent (before asking the model)."""
        why = self.budget.reached() if self.budget is not None else None
        if why is not None:
            raise BudgetReached(why)

    def call(self, usage: Usage | None, seconds: float, when: float) -> dict[str, Any]:
        """The tally of one call made now (priced), charged to the budget."""
        tally = usage_mod.call_tally(usage, seconds, self._price(usage, when))
        if self.budget is not None:
            self.budget.charge(tally)
        return tally

    def failed(self, call: FailedCall, when: float) -> dict[str, Any]:
        """The tally of one call that gave no usable reply (:func:`guitest.cost.usage.failed_tally`), priced by what its
        API reported it used, if anything, and charged to the budget for that much."""
        tally = usage_mod.failed_tally(call, self._price(call.usage, when))
        if self.budget is not None and call.usage is not None:
            self.budget.charge(tally)
        return tally

    def _price(self, usage: Usage | None, when: float) -> float | None:
        if usage is not None and usage.set_aside:
            self._note(usage.set_aside)
        if self.pricer is None:
            return None
        try:
            cost = self.pricer.price(usage, when)
        except (LookupError, ValueError, ArithmeticError):
            return None  # a price the library cannot compute for this call: its tokens are still counted
        return cost if cost is not None and math.isfinite(cost) and cost >= 0 else None

    def _note(self, set_aside: tuple[str, ...]) -> None:
        with self._lock:
            if self._warning is None and not self._warned:
                self._warning = "; ".join(set_aside)

    def take_warning(self) -> str | None:
        """The numbers the first call with impossible usage sent (:attr:`guitest.cost.usage.Usage.set_aside`), once per
        process (then None): a case's result carries it to the process that prints the run's progress."""
        with self._lock:
            if self._warning is None or self._warned:
                return None
            self._warned = True
            return self._warning


class Meter:
    """A case's (or an episode's) tallies: ``paid``, the calls made now; ``reused``, the replies the response cache
    answered, at what they cost when they were made."""

    __slots__ = ("paid", "reused", "failed", "_lock")

    def __init__(self) -> None:
        self.paid: dict[str, Any] = {}
        self.reused: dict[str, Any] = {}
        self.failed: dict[str, Any] = {}
        self._lock = threading.Lock()

    def add_paid(self, tally: Mapping[str, Any]) -> None:
        with self._lock:
            usage_mod.add(self.paid, tally)

    def add_reused(self, tally: Mapping[str, Any] | None) -> None:
        with self._lock:
            usage_mod.add(self.reused, tally or {"calls": 1, "unreported": 1})

    def add_failed(self, tally: Mapping[str, Any]) -> None:
        with self._lock:
            usage_mod.add(self.failed, tally)

    def fields(self) -> dict[str, Any]:
        """The case result's ``usage``, ``cached_usage`` and ``failed_usage`` (each only when there was a call of its kind)."""
        out: dict[str, Any] = {}
        if self.paid:
            out["usage"] = dict(self.paid)
        if self.reused:
            out["cached_usage"] = dict(self.reused)
        if self.failed:
            out["failed_usage"] = dict(self.failed)
        return out


def abandoned_of(results: list[Any]) -> dict[str, Any]:
    """What the calls of ``results`` spent (cases run ahead of pytest whose results no report holds: the run stopped
    before their tests, or they were dropped from the lookahead): ``cases``, their answered calls (``paid``) and their
    failed ones (``failed``); empty when none made a call."""
    spent = [r for r in results if isinstance(r, Mapping) and (r.get("usage") or r.get("failed_usage"))]
    if not spent:
        return {}
    return {"cases": len(spent), "paid": usage_mod.total(r.get("usage") for r in spent), "failed": usage_mod.total(r.get("failed_usage") for r in spent)}


def add_abandoned(into: Mapping[str, Any], more: Mapping[str, Any] | None) -> dict[str, Any]:
    """Two :func:`abandoned_of` records as one (a worker's, added on the controller)."""
    if not more:
        return dict(into)
    if not into:
        return {"cases": int(more.get("cases") or 0), "paid": dict(more.get("paid") or {}), "failed": dict(more.get("failed") or {})}
    return {
        "cases": int(into.get("cases") or 0) + int(more.get("cases") or 0),
        "paid": usage_mod.total([into.get("paid"), more.get("paid")]),
        "failed": usage_mod.total([into.get("failed"), more.get("failed")]),
    }


@dataclass(frozen=True)
class Priced:
    """What prices a model: ``spec`` (``--model``, for messages), the ``name`` it is priced by, its endpoint's
    ``base_url`` (None: run on this machine) and the ``--prices`` file (or ``off``)."""

    spec: str
    name: str
    base_url: str | None
    prices: str | None


def make_spending(priced: Priced, max_cost: float | None, max_tokens: int | None, folder: Callable[[], tuple[str, float]], slot: int) -> Spending:
    """A process's spending: the model's pricer, and the run's budget when a limit (or a rate per hour) is given;
    ``folder()`` gives the budget's folder and the run's start (called only then). Raises
    :class:`~guitest.cost.pricing.PricesError` for a prices file that cannot be read, or ``--max-cost`` without a price."""
    pricer = make_pricer(priced.name, priced.base_url, priced.prices)
    if max_cost is not None and pricer.source["source"] == "none" and not pricer.per_hour:
        why = str(pricer.source["why"])
        how = "" if "--prices FILE" in why else "; give one with --prices FILE"  # most reasons say it already
        raise PricesError(f"--max-cost={max_cost:g}: no price is known for {priced.spec}: {why}{how}, or cap tokens with --max-total-tokens")
    if max_cost is None and max_tokens is None and not pricer.per_hour:
        return Spending(pricer)
    where, started = folder()
    return Spending(pricer, Budget(Path(where), max_cost, max_tokens, pricer.per_hour, started, slot=slot))
