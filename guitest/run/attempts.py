"""A case's attempts and its result: the typed record of one attempt, the ``--repeats`` loop, and the one place
where the attempts become the case's result (:func:`guitest.verdict.case_result`, plain builtins).

One screenshot and one reply (:mod:`guitest.run.case`) and a live episode (:mod:`guitest.run.live_case`) both run
through :func:`repeat` and :func:`case_outcome`; what only the run needs of an attempt (the cache records
that answered it, the endpoint it could not reach) travels as fields of :class:`Attempt` and never reaches
the report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..cache import Stored
from ..reporting.manifest import gather_software
from ..verdict import ERROR, HIT, PARTIAL, CaseResult, case_result


@dataclass(frozen=True)
class Attempt:
    """One attempt at a case: its ``verdict``, ``prediction``, ``response`` (the reply judged, or a live episode's
    last one) and ``error``; ``shown``: what else the report shows of it, in the report's order (``finish_reason``,
    ``first_response``; a live episode's ``success``, ``score``, ``steps``, ``seconds``, ``trajectory``, ``episode``).
    For the run only: ``stored``, the cache's records of the replies it read back; ``cached``, whether the cache
    answered it; ``unreachable``, the endpoint it could not ask (:meth:`guitest.errors.EndpointDown.describe`);
    ``not_asked``, the limit that kept it from asking (:attr:`guitest.cost.spending.BudgetReached.why`); ``software``, what a
    live episode's environment ran on (:func:`guitest.run.live_case.software_record`), for the run's manifest."""

    verdict: str
    prediction: dict[str, Any] | None = None
    response: str | None = None
    error: str | None = None
    shown: Mapping[str, Any] = field(default_factory=dict)
    stored: tuple[Stored, ...] = ()
    cached: bool = False
    unreachable: dict[str, str] | None = None
    not_asked: str | None = None
    software: Mapping[str, list[str]] | None = None

    @classmethod
    def failed(cls, error: str, response: str | None = None, unreachable: dict[str, str] | None = None, not_asked: str | None = None) -> "Attempt":
        """An attempt that ended in the ``error`` outcome."""
        return cls(ERROR, None, response, error, unreachable=unreachable, not_asked=not_asked)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], **private: Any) -> "Attempt":
        """An attempt from its report row (``verdict``, ``prediction``, ``response``, ``error`` and the rest, as
        :meth:`guitest.tasks.Task.combine` returns it) and its ``private`` fields."""
        shown = {k: v for k, v in row.items() if k not in ("verdict", "prediction", "response", "error")}
        return cls(row["verdict"], row.get("prediction"), row.get("response"), row.get("error"), shown, **private)

    def row(self) -> dict[str, Any]:
        """The attempt as the report shows it: ``{verdict, prediction, response, <shown>..., [error]}``."""
        out: dict[str, Any] = {"verdict": self.verdict, "prediction": self.prediction, "response": self.response, **self.shown}
        if self.error is not None:
            out["error"] = self.error
        return out


def repeat(attempt: Callable[[int], Attempt], repeats: int, strategy: str) -> list[Attempt]:
    """``attempt(i)`` for i = 0 .. ``repeats`` - 1, in order; with the ``pass`` strategy, no more after the first hit."""
    attempts = []
    for index in range(max(repeats, 1)):
        done = attempt(index)
        attempts.append(done)
        if strategy == "pass" and done.verdict == HIT:
            break
    return attempts


def case_outcome(case_id: str, tags: dict[str, str], attempts: list[Attempt], repeats: int, common: dict[str, Any]) -> CaseResult:
    """The case's result from its attempts: with one attempt asked for, that attempt's fields; with ``repeats`` > 1,
    the case's verdict (:func:`case_verdict`), its representative attempt's fields and every attempt under
    ``attempts``. Either way ``common`` (the case's own fields), then what the cache answered (:func:`cache_fields`)
    and the endpoint that could not be asked (``unreachable``: the summary says it once for every such case),
    ``not_asked`` when the run's budget kept an attempt from asking (the case is then left out of the report), and
    ``software``, what the attempts' environments ran on (for the run's manifest, never in the case's row)."""
    fields = {**common, **cache_fields(attempts, repeats)}
    down = next((a.unreachable for a in attempts if a.unreachable is not None), None)
    if down is not None:
        fields["unreachable"] = down
    stopped = next((a.not_asked for a in attempts if a.not_asked is not None), None)
    if stopped is not None:  # the budget stopped it: a missing case of the report, and a failed test --lf runs again
        fields["not_asked"] = stopped
    software = gather_software(a.software for a in attempts)
    if software:  # gathered into the run's manifest by the process that writes the report
        fields["software"] = software
    if repeats <= 1:
        (only,) = attempts
        return case_result(case_id, only.verdict, tags, prediction=only.prediction, response=only.response, error=only.error, **only.shown, **fields)
    chosen = representative(attempts)
    return case_result(
        case_id, case_verdict(attempts), tags, prediction=chosen.prediction, response=chosen.response, error=chosen.error, **chosen.shown, attempts=[a.row() for a in attempts], **fields
    )


def cache_fields(attempts: list[Attempt], repeats: int) -> dict[str, Any]:
    """What a case's result says of the cache: ``cached`` (True when the cache answered an attempt),
    ``cached_attempts`` (with --repeats), ``cached_recorded`` (the oldest reply's time) and ``cached_runs``
    (the runs that recorded them); nothing when the cache answered no call."""
    stored = [s for a in attempts for s in a.stored]
    if not stored:
        return {}
    out: dict[str, Any] = {"cached": True, "cached_recorded": _iso(min(s.created for s in stored)), "cached_runs": sorted({s.run or "" for s in stored})}
    if repeats > 1:
        out["cached_attempts"] = sum(a.cached for a in attempts)
    return out


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


def case_verdict(attempts: list[Attempt]) -> str:
    """The verdict of a repeated case: error if any attempt errored (so --lf re-runs it), the attempts'
    common verdict when they agree, ``partial`` when some hit and some did not, else the commonest miss-like one."""
    verdicts = [a.verdict for a in attempts]
    if ERROR in verdicts:
        return ERROR
    if len(set(verdicts)) == 1:
        return verdicts[0]
    if HIT in verdicts:
        return PARTIAL
    return max(sorted(set(verdicts)), key=verdicts.count)


def representative(attempts: list[Attempt]) -> Attempt:
    """The attempt whose prediction, response and error a repeated case shows: its first error, else its first hit, else its last."""
    return next((a for a in attempts if a.verdict == ERROR), None) or next((a for a in attempts if a.verdict == HIT), attempts[-1])
