"""The outcome vocabulary and a case's result: a typed dict of builtins (:class:`CaseResult`), which travels between
processes as it is (pytest-xdist sends builtins) and is a row of the report's ``cases`` as it is."""

from __future__ import annotations

from typing import Any, Literal, Required, TypedDict

from .cost.usage import Tally

HIT, MISS, UNPARSED, REFUSED, TRUNCATED, ERROR = "hit", "miss", "unparsed", "refused", "truncated", "error"
# A judge that could not decide (trajectory judging): counted as not a hit, reported apart.
UNSURE = "unsure"
VERDICTS = (HIT, MISS, UNPARSED, REFUSED, TRUNCATED, UNSURE, ERROR)
# With --repeats, a case whose attempts hit only some of the time; its attempts carry the verdicts above.
PARTIAL = "partial"
CASE_VERDICTS = VERDICTS + (PARTIAL,)

# What pytest shows for each verdict: (category, letter, word). hit is a plain pass and
# error a plain failure; the others are passed reports with their own category.
STATUS = {
    MISS: ("missed", "m", "MISSED"),
    UNPARSED: ("unparsed", "u", "UNPARSED"),
    REFUSED: ("refused", "r", "REFUSED"),
    TRUNCATED: ("truncated", "t", "TRUNCATED"),
    UNSURE: ("unsure", "?", "UNSURE"),
    PARTIAL: ("partial", "p", "PARTIAL"),
}


class StepEntry(TypedDict, total=False):
    """One step of a live episode as the report records it (:meth:`guitest.live.loop.StepRecord.to_dict`): its number
    (from 1), the model's reply, the actions read from it (each :meth:`guitest.live.actions.Action.describe`: a kind and
    its own fields, open to a backend's kinds), the text they were read as, its notes and times; ``executed`` only
    when fewer actions ran than were read, the rest only when there is something to say. Every field optional in the
    schema: a report of an earlier version lacks some."""

    number: int
    reply: str | None
    actions: list[dict[str, Any]]
    text: str
    notes: list[str]
    policy_seconds: float
    env_seconds: float
    executed: int
    finish_reason: str
    cached: bool
    usage: dict[str, int]
    screenshot: str | None  # null in a merged report's step that had none
    info: dict[str, Any]


class EpisodeRecord(TypedDict, total=False):
    """A live episode as the report records it (:meth:`guitest.live.loop.Episode.to_dict`): the task, environment and
    seed, how it ended and the environment's evaluation (success, raw score, reason, ``decided_by``), the error and its
    source, its steps (``steps`` the count, ``trajectory`` each one) and times, the first screen's size and scale, and
    the last screenshot. Every field optional in the schema: a report of an earlier version lacks some."""

    task: str
    env: str
    seed: int | None
    instruction: str
    end: str
    success: bool
    score: float | None
    reason: str | None
    decided_by: str | None
    error: str | None
    error_source: str | None
    steps: int
    wall_seconds: float
    env_seconds: float
    policy_seconds: float
    screen_size: list[int] | None
    scale: float
    final_screenshot: str | None
    trajectory: list[StepEntry]


class EpisodeOutcome(TypedDict, total=False):
    """A live episode's outcome, as a case's row and each of a repeated case's attempts show it: its success and
    score, its steps and time, and where its trajectory and screenshots are."""

    success: bool
    score: float | None
    steps: int
    seconds: float
    trajectory: str | None
    episode: EpisodeRecord


class AttemptRow(EpisodeOutcome, total=False):
    """One attempt of a repeated case as its row's ``attempts`` shows it (:meth:`guitest.run.attempts.Attempt.row`): its
    verdict, prediction, response and error, and what else the task shows of it (a live episode's outcome)."""

    verdict: Required[str]
    prediction: dict[str, Any] | None
    response: str | None
    error: str
    finish_reason: str | None
    first_response: str | None


class CaseResult(EpisodeOutcome, total=False):
    """One case's result, declared once: the fields of a report's ``cases`` row (schemas/report.schema.json) and the
    few that travel from the process that ran the case to the one that writes the report, never into the report
    (:data:`TRANSIENT`). A typed dict rather than a dataclass: it crosses pytest-xdist's channel, and is written
    to JSON, as it is (a 100,000-case report builds no object per case)."""

    id: Required[str]
    verdict: Required[str]
    tags: Required[dict[str, str]]
    prediction: Required[dict[str, Any] | None]
    response: Required[str | None]
    error: str
    instruction: str
    first_response: str | None
    finish_reason: str | None
    truth: Any
    size: list[int]
    sent_size: list[int]
    prompt_digest: str  # the prompt as sent (manifest.prompt_digest): guitest compare names a change, whatever built it
    image: str
    notes: list[str]
    attempts: list[AttemptRow]
    cached: Literal[True]
    cached_attempts: int
    cached_recorded: str
    # what the case's model calls used (guitest.cost.usage's tallies): the calls made by this run, the replies the
    # response cache answered, at what they cost when they were made, and the calls that gave no usable reply
    usage: Tally
    cached_usage: Tally
    failed_usage: Tally
    # transient (never in the report): the HTML's picture, the cache's first failure, the endpoint that could not
    # be reached, the runs whose cached replies answered the case, why the run's budget left it unasked, the first
    # usage numbers its process set aside, and what a live case's environment ran on (gathered into the manifest)
    thumbnail: str
    cache_failure: str
    unreachable: dict[str, str]
    cached_runs: list[str]
    not_asked: str
    usage_warning: str
    software: dict[str, list[str]]


#: the fields of a :class:`CaseResult` that never reach the report
TRANSIENT = frozenset({"thumbnail", "cache_failure", "unreachable", "cached_runs", "not_asked", "usage_warning", "software"})
#: the fields of a :class:`CaseResult` a report's ``cases`` row keeps, in the order they are declared
REPORT_FIELDS = tuple(k for k in CaseResult.__annotations__ if k not in TRANSIENT)


def test_status(result: CaseResult) -> tuple[str, str, str] | None:
    """What pytest shows for a passed case with this result: ``(category, letter, word)`` from :data:`STATUS`, the
    word with the attempts' hits when the case was repeated (``PARTIAL 2/3``); None for a plain hit."""
    verdict = result["verdict"]
    category, letter, word = STATUS.get(verdict, ("passed", ".", "PASSED"))
    attempts = result.get("attempts")
    if attempts:
        return category, letter, f"{word} {sum(a['verdict'] == HIT for a in attempts)}/{len(attempts)}"
    return (category, letter, word) if verdict in STATUS else None


def case_result(
    case_id: str,
    verdict: str,
    tags: dict[str, str],
    *,
    prediction: dict[str, Any] | None = None,
    response: str | None = None,
    error: str | None = None,
    **extra: Any,
) -> CaseResult:
    """One case's result (the wire format and a report row); ``extra``: its other fields of :class:`CaseResult`."""
    if verdict not in CASE_VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}")
    unknown = extra.keys() - CaseResult.__annotations__.keys()
    if unknown:  # a field the report and its readers do not know: declare it in CaseResult first
        raise ValueError(f"not a field of a case's result: {', '.join(sorted(unknown))}")
    out: CaseResult = {"id": case_id, "verdict": verdict, "tags": dict(tags), "prediction": prediction, "response": response}
    if error is not None:
        out["error"] = error
    out.update(extra)  # type: ignore[typeddict-item]  # checked against CaseResult's fields above
    return out
