"""Every suite's report is built here, whole: a run's (:mod:`guitest.run.suite_reports`), a run folded by ``--lf`` into
the previous report, ``guitest merge``'s from the parts (:mod:`guitest.scale.merge`) and a published run read into a report
(:mod:`guitest.published.runs`). The caller hands over what the report says ran (the suite's record, with the shape
its tables are built by), the task's scoring, the results and the run's record, its manifest, and the comparison with
``--baseline`` as a function of the report; the report comes out gated, checked against its schema, and final: nothing
assigns into it afterwards, and the writer writes it as it is. The report side reads no suite file and imports no task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..models.base import ASKED
from ..report_parts import Manifest, Unreachable
from ..verdict import CaseResult
from . import gate as gate_mod
from . import report as report_mod
from .document import BaselineRecord, CacheRecord, GateRecord, GateThresholds, Report, RunRecord, SelectionRecord, ShapeRecord, SuiteRecord


@dataclass(frozen=True)
class BaselineCheck:
    """What comparing a report with ``--baseline`` adds to it: the comparison's record (None when the baseline could
    not be read), the gate's failures it adds, and whether those fail the gate (a significant regression, or runs that
    cannot be compared; a baseline that could not be read is a failure the gate's ``passed`` does not record)."""

    record: BaselineRecord | None
    failures: tuple[str, ...] = ()
    fails_gate: bool = False


#: the comparison with ``--baseline``: the report as built so far (gated, with its manifest) -> what it adds
Baseline = Callable[[Report], BaselineCheck]


def suite_report(
    record: SuiteRecord,
    task: report_mod.Scoring | None,
    *,
    model: dict[str, Any],
    results: list[CaseResult],
    selected: Sequence[str],
    run: RunRecord,
    limits: GateThresholds | None,
    allow_unknown_state: bool = False,
    previous: Report | None = None,
    unaccounted: Sequence[str] = (),
    selection: SelectionRecord | None = None,
    manifest: Manifest | None = None,
    baseline: Baseline | None = None,
) -> Report:
    """The suite's report, whole. ``record``: what ran, its ``shape`` the tables (without one, a suite written in
    Python: its results' tags); ``limits``: the gate's thresholds (:func:`guitest.reporting.gate.thresholds`; None: no
    gate at all, a published run's); with ``previous`` (``--lf``: the last report of the same suite, model and success
    rule), the results fold into it and the report covers the whole suite. ``unaccounted``: what is missing beyond the
    selected cases without a result, named in ``missing`` but not counted as cases (a shard's report that was not
    given: its cases are not known). ``selection``: which part of the suite the run selected (its ``subset`` is decided
    here, against the cases the report covers); a gate on a subset says so in its notes. ``manifest``: the run's
    (:mod:`guitest.reporting.manifest`); ``baseline``: the comparison with ``--baseline``, whose failures join the gate's. A
    report that does not match its schema (a bug in guitest) says so in ``schema_problems``."""
    shape = record.get("shape") or results_shape(results)
    selected = list(selected)
    if previous is not None:
        results, selected = report_mod.merge_previous(previous, results, selected)
        run = {**run, "merged_into_report_of": previous["run"].get("started")}
        if selection is not None:
            selection = folded_selection(previous.get("selection"), selection)
    if selection is not None:
        selection = {**selection, "subset": covers_part(len(selected), selection, run.get("shard"))}
    got = {r["id"] for r in results}
    tallied = report_mod.build(
        suite=record,
        model=model,
        results=results,
        n_selected=len(selected),
        missing=sorted(i for i in selected if i not in got) + list(unaccounted),
        tags=shape["tables"],
        cross=shape["cross"],
        average=shape["average"],
        macro_over=shape["macro_over"],
        gate={},
        task=task,
        run=run,
        selection=selection,
    )
    report: Report = {**tallied, "gate": gate_record(limits, tallied, allow_unknown_state, selection)}
    if manifest is not None:
        report = {**report, "manifest": manifest}
    if baseline is not None:
        report = with_baseline(report, baseline(report))
    problems = report_mod.validate(report)  # a bug in guitest, not in the user's input: said loudly, the data still written
    return {**report, "schema_problems": problems} if problems else report


def results_shape(results: list[CaseResult]) -> ShapeRecord:
    """The shape of a report whose suite declares none (a suite written in Python): a table per tag its results carry."""
    return {"tables": sorted({t for r in results for t in r.get("tags", {})}), "cross": [], "average": "micro", "macro_over": None}


def gate_record(limits: GateThresholds | None, report: Report, allow_unknown_state: bool, selection: SelectionRecord | None) -> GateRecord:
    """The gate of ``report`` under ``limits`` (:func:`guitest.reporting.gate.check`; none without limits): what failed,
    its notes (a gate on a subset says so), and whether it passed (None when no threshold is set)."""
    if limits is None:
        return {}
    failures, notes = gate_mod.check(limits, report, allow_unknown_state)
    gated = limits["accuracy"] is not None or bool(limits["by"])
    if gated and selection is not None and selection["subset"]:
        notes.append(gate_mod.subset_note(report["n_selected"], selection["n_suite"]))
    return {"thresholds": limits, "failures": failures, "notes": notes, "passed": (not failures) if gated else None}


def with_baseline(report: Report, check: BaselineCheck) -> Report:
    """``report`` with the comparison with ``--baseline``: its record, and its failures joining the gate's."""
    gate: GateRecord = {**report["gate"], "failures": [*report["gate"].get("failures", []), *check.failures]}
    if check.fails_gate:
        gate["passed"] = False
    out: Report = {**report, "gate": gate}
    if check.record is not None:
        out["baseline"] = check.record
    return out


def covers_part(n_selected: int, selection: SelectionRecord, shard: str | None) -> bool:
    """Whether a report of ``n_selected`` cases covers only part of its suite: fewer than the suite's total; when the total
    is not known, whether anything narrowed the run (``selection``'s ``by`` or ``limit``, or a ``shard``)."""
    total = selection["n_suite"]
    if total is not None:
        return n_selected < total
    return bool(selection["by"] or selection.get("limit") or shard)


def folded_selection(previous: SelectionRecord | None, current: SelectionRecord) -> SelectionRecord:
    """The selection of a report ``--lf`` folded a re-run into: the cases the previous report covered, so what narrowed
    that run (its ``by``, its ``--limit`` when the re-run names none), not what narrowed the re-run; the suite's total as
    this run counted it."""
    before: SelectionRecord | dict[str, Any] = previous or {}
    return {"n_suite": current["n_suite"], "subset": False, "by": list(before.get("by") or []), "limit": current.get("limit") or before.get("limit")}


#: what a report's model record says of where the model was served (beside its settings, :data:`ASKED`)
WHERE = ("base_url", "base_urls", "api_key", "auth", "http_client")


def model_itself(model: dict[str, Any]) -> dict[str, Any]:
    """The model as a report describes it, less where and how fast it was asked (:data:`WHERE` and the settings
    :data:`guitest.models.base.ASKED`): the shards of one run merge (guitest.scale.merge), and an --lf run folds into the
    report it finishes, whatever their endpoints, --concurrency, --timeout, --retries or HTTP client."""
    value = {k: v for k, v in model.items() if k not in WHERE}
    if isinstance(value.get("settings"), dict):
        value["settings"] = {k: v for k, v in value["settings"].items() if k not in ASKED}
    return value


def same_run_kind(previous: Report | None, model: dict[str, Any], key: str, rule: dict[str, Any]) -> Report | None:
    """``previous`` when ``--lf`` may fold this run into it: the same model (where and how fast it was asked aside:
    :func:`model_itself`), suite file and success rule (a report is never of two rules); else None."""
    if previous is None:
        return None
    same_rule = previous["run"].get("success_rule") == rule.get("success_rule")
    same_model = model_itself(previous["model"]) == model_itself(model)
    return previous if same_model and previous["suite"]["path"] == key and same_rule else None


def read_previous(path: Path) -> Report | None:
    """The report at ``path`` for ``--lf`` to fold into, or None when there is none usable there (none, or a file
    :func:`guitest.reporting.compare.load_report` refuses: unreadable, too large or deep, not a report)."""
    from .compare import ReportError, load_report

    try:
        return load_report(path)
    except ReportError:
        return None


def cache_record(
    results: list[CaseResult],
    *,
    cacheable: bool,
    mode: str,
    path: str | None,
    run_id: str | None,
    resumes: dict[str, Any] | None,
    passed_over: list[str] | None = None,
    failure: str | None = None,
    not_stored: int = 0,
) -> CacheRecord:
    """What the report says of the cache: the mode, the file, this run (and the one it resumes), and how many
    attempts and cases were answered from it, recorded when and by which runs; ``failure``: why the cache could not
    store ``not_stored`` replies (the run's, every process's, not this suite's)."""
    if not cacheable:
        return {"mode": "not used (this model costs nothing)", "attempts_answered_from_cache": 0, "cases_answered_from_cache": 0}
    cached = [r for r in results if r.get("cached")]
    record: CacheRecord = {
        "mode": mode,
        "path": path,
        "run": run_id,
        "resumes": resumes,
        "attempts_answered_from_cache": sum(r.get("cached_attempts", 1) for r in cached),
        "cases_answered_from_cache": len(cached),
    }
    if passed_over:
        record["running_runs_passed_over"] = passed_over
    if failure is not None:
        record["not_stored"] = {"replies": not_stored, "error": failure}
    if cached:
        times = sorted(r["cached_recorded"] for r in cached if r.get("cached_recorded"))
        record["recorded"] = {"first": times[0], "last": times[-1]} if times else None
        record["recorded_by_runs"] = sorted({run for r in cached for run in r.get("cached_runs", ()) if run})
    return record


def unreachable_record(results: list[CaseResult]) -> Unreachable | None:
    """The endpoint that could not be reached, as the first case not asked says it, with how many cases were not asked."""
    not_asked = [r["unreachable"] for r in results if r.get("unreachable")]
    if not not_asked:
        return None
    first = not_asked[0]  # guitest.errors.EndpointDown.describe
    return {"url": first["url"], "state": first["state"], "reason": first["reason"], "cases_not_asked": len(not_asked)}
