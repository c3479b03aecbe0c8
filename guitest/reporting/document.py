"""The typed shape of a suite's report (``schemas/report.schema.json``), and the reading of a report file written by
any earlier guitest into that shape.

The report is a tree of typed dicts, not of dataclasses: it is JSON as it stands (written in one place,
:func:`guitest.reporting.report.json_text`), its ``cases`` are the :class:`~guitest.verdict.CaseResult` rows the
workers sent, and a reader's misspelt field is a type error (mypy), not a silent ``None``. What a part of the
report holds that its producer alone defines stays an open mapping: the model's description (each adapter adds
its own), the task's settings and metrics, a live case's episode. The parts that modules below the reporting build
(a live suite's record, the success rule, the endpoints, the manifest...) are declared in :mod:`guitest.report_parts`,
a tally of model calls in :class:`guitest.cost.usage.Tally`.

To change the report's shape: change the typed dict here (or there) and ``schemas/report.schema.json`` in the same
commit. ``tests/test_report_shape.py`` walks the two side by side and fails naming the field that differs: its name,
whether it is required (``Required``/``NotRequired``, ``total=``), its JSON type (null included), an object's fields,
a mapping's values, a list's items, a ``Literal``'s values against the schema's ``enum`` (or, for a ``str`` field,
the constants its ``ENUM_CONSTANTS`` names). What types cannot say (minimum, pattern, descriptions) stays in the
schema alone; an ``Any`` or ``dict[str, Any]`` field stays open in the schema too, unless the test's ``OPEN`` names it
with the reason.
"""

from __future__ import annotations

from typing import Any, Literal, Required, TypedDict

from ..report_parts import EndpointHours, EndpointRecord, LiveSuiteRecord, Manifest, MergedShard, Spent, SuccessRule, Unreachable, UsageRecord
from ..cost.usage import Tally
from ..verdict import CaseResult


class Repeats(TypedDict, total=False):
    """With --repeats: avg@k's companions (``pass@1`` .. ``pass@k`` are keys too)."""

    k: Required[int]
    cases: Required[int]
    pass_estimator: Required[str]
    run_accuracies: Required[list[float | None]]
    std_across_runs: Required[float | None]
    flaky: Required[float | None]
    flip_rate: float | None


class Counts(TypedDict, total=False):
    """One row of the table: the verdicts counted, the accuracy (success rate) and its 95% Wilson interval."""

    n: Required[int]
    hit: Required[int]
    miss: Required[int]
    unparsed: Required[int]
    refused: Required[int]
    truncated: Required[int]
    error: Required[int]
    unsure: int
    accuracy: Required[float | None]
    ci95: Required[list[float]]
    mean_score: float | None
    repeats: Repeats


class Tallies(TypedDict):
    """The verdicts counted overall, per tag (and tag combination) value, their macro averages, and the data notes."""

    overall: Counts
    breakdown: dict[str, dict[str, Counts]]
    macro: dict[str, float | None]
    notes: dict[str, int]


class Headline(TypedDict, total=False):
    """The suite's one figure: its declared average (micro or macro over a tag), or a live suite's own figure."""

    average: Required[Literal["micro", "macro"]]
    over: str | None
    accuracy: Required[float | None]
    micro: Required[float | None]
    macro: Required[float | None]
    what: Required[str]
    figure: Literal["accuracy", "success_rate", "mean_score"]
    success_rate: float | None
    mean_score: float | None
    ci95: list[float]


class ShapeRecord(TypedDict):
    """How a suite's report breaks its results down and heads them, as its suite file says: the tags tabled (its
    ``breakdown``, else its ``tags``), those crossed, the headline's average and the breakdown a macro average is over.
    ``guitest merge`` rebuilds the tables from it, so it needs no suite file."""

    tables: list[str]
    cross: list[list[str]]
    average: Literal["micro", "macro"]
    macro_over: str | None


class SuiteRecord(LiveSuiteRecord, total=False):
    """What ran: the suite file and its task's settings; a live suite's backend, options, budget and runner (the
    fields of :class:`~guitest.report_parts.LiveSuiteRecord`); the report's shape (none for a suite written in
    Python, whose tables are its results' tags, and in reports written before 2026-12-06)."""

    name: Required[str]
    path: Required[str]
    format: Required[str]
    task: Required[str]
    settings: dict[str, Any]
    shape: ShapeRecord


class GateThresholds(TypedDict, total=False):
    """The gate's thresholds in force (:func:`guitest.reporting.gate.thresholds`): the metric they bound, the overall
    minimum, and the minimum per ``tag=value``."""

    metric: str
    accuracy: float | None
    by: dict[str, float]


class GateRecord(TypedDict, total=False):
    """The release gate: its thresholds, what failed, and whether it passed (None when no threshold was set)."""

    thresholds: GateThresholds
    failures: list[str]
    notes: list[str]
    passed: bool | None


class CacheRecord(TypedDict, total=False):
    """What the response cache did for this run."""

    mode: Required[str]
    path: str | None
    run: str | None
    resumes: dict[str, Any] | None
    attempts_answered_from_cache: Required[int]
    cases_answered_from_cache: Required[int]
    running_runs_passed_over: list[str]
    not_stored: dict[str, Any]
    recorded: dict[str, str] | None
    recorded_by_runs: list[str]


class Abandoned(TypedDict):
    """The calls of cases a run started ahead of pytest whose results no report holds: how many cases, their calls
    that answered (a tally of :mod:`guitest.cost.usage`) and those that failed."""

    cases: int
    paid: Tally
    failed: Tally


class RunUsage(TypedDict, total=False):
    """What one run itself spent (tallies of :mod:`guitest.cost.usage`): ``paid``, ``cached`` (what the cache answered, at
    what it cost when made), ``failed`` (calls that gave no usable reply: NOT in ``paid``), ``abandoned``, the first
    usage numbers set aside (``warning``), a self-hosted endpoint's hours (``endpoint``)."""

    paid: Required[Tally]
    cached: Required[Tally]
    failed: Tally
    abandoned: Abandoned
    warning: str
    endpoint: EndpointHours


class BudgetRecord(TypedDict, total=False):
    """The budget a run ran under: its limits, the limit that stopped the run (None: none did), what the whole run
    spent (``{"cost": dollars or None, "tokens": n}``, the one figure of it) and how many cases it left unasked."""

    max_cost: float | None
    max_total_tokens: int | None
    reached: str | None
    spent: Spent
    cases_not_asked: int


class RunRecord(TypedDict, total=False):
    """How and where the run ran: data, time, processes, command line, shard, cache and endpoints."""

    data_root: str
    data_root_source: str
    data: str | None
    started: str
    seconds: float
    workers: int
    pytest_args: list[str]
    merged_into_report_of: str | None
    merged_shards: list[MergedShard]
    shard: str | None
    merged_at: str
    cache: CacheRecord
    endpoints: list[EndpointRecord]
    unreachable: Unreachable
    served_model: dict[str, Any]
    success_rule: SuccessRule
    # what this run itself spent (its own cases, before --lf folds them into an earlier report: paid, cached,
    # failed; and the run's abandoned calls and its first usage warning), where its prices came from, and the budget
    # it ran under
    usage: RunUsage
    price: dict[str, Any]
    budget: BudgetRecord


class LimitRecord(TypedDict):
    """``--limit``: how many cases of the suite were asked for, the seed that chose them, and the tags they were spread over."""

    n: int
    seed: int
    strata: list[str]


class SelectionRecord(TypedDict, total=False):
    """Which part of the suite the report covers: ``n_suite``, the cases its suite file has (None when not known: a
    suite written in Python under -n), against the report's ``n_selected``; ``subset`` when that is fewer (or, the
    total unknown, when anything narrowed the run); ``by``, what narrowed it besides ``limit`` and ``run.shard``
    (``-k 'icon'``, ``-m ...``, ``--deselect (2)``, ``node ids``, ``--lf``, ``3 skipped``)."""

    n_suite: Required[int | None]
    subset: Required[bool]
    by: Required[list[str]]
    limit: LimitRecord | None


class BaselineRecord(TypedDict):
    """With --baseline: the report compared with, and what regressed or improved significantly."""

    path: str
    regressions: list[str]
    improvements: list[str]
    comparable: dict[str, Any]


class Report(TypedDict, total=False):
    """One suite's report."""

    guitest: Required[str]
    suite: Required[SuiteRecord]
    model: Required[dict[str, Any]]
    n_selected: Required[int]
    selection: SelectionRecord  # which part of the suite (reports from 2026-12-05 on)
    n_results: Required[int]
    complete: Required[bool]
    missing: Required[list[str]]
    headline: Required[Headline]
    overall: Required[Counts]
    breakdown: Required[dict[str, dict[str, Counts]]]
    macro: Required[dict[str, float | None]]
    notes: Required[dict[str, int]]
    task_metrics: dict[str, Any] | None
    gate: Required[GateRecord]
    cases: Required[list[CaseResult]]
    run: Required[RunRecord]
    baseline: BaselineRecord
    manifest: Manifest  # guitest.reporting.manifest: versions, data and prompt digests (reports from 2026-12-04 on)
    usage: UsageRecord  # guitest.reporting.costs: tokens, calls, model time and dollars (reports from 2026-12-05 on)
    schema_problems: list[str]


#: what a report written before a field existed is read with (``guitest compare`` opens every report a user has)
_DEFAULTS: dict[str, Any] = {
    "guitest": "",
    "model": {},
    "missing": [],
    "macro": {},
    "notes": {},
    "gate": {},
    "cases": [],
    "run": {},
}


def from_json(data: dict[str, Any]) -> Report:
    """A report read from its JSON (checked usable by the caller: ``overall`` and ``breakdown`` present), with what
    older guitest versions did not write filled in, so every reader sees the one shape."""
    out: dict[str, Any] = {**{k: (type(v)() if isinstance(v, (dict, list)) else v) for k, v in _DEFAULTS.items()}, **data}
    suite: dict[str, Any] = out["suite"] if isinstance(out.get("suite"), dict) else {}
    out["suite"] = {"name": "", "path": "", "format": "", "task": "", **suite}
    cases = out["cases"]
    out.setdefault("n_results", len(cases) if isinstance(cases, list) else 0)
    out.setdefault("n_selected", out["n_results"])
    out.setdefault("complete", not out["missing"])
    out.setdefault("headline", {"average": "micro", "accuracy": out["overall"].get("accuracy"), "micro": out["overall"].get("accuracy"), "macro": None, "what": ""})
    return out  # type: ignore[return-value]  # the fields above are filled; the others are optional in Report
