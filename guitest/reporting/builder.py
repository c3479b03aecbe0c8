"""A suite's report built from a run's results: the suite and its task already loaded by the caller (the report
side reads no suite file and imports no task), the results folded into the previous report with ``--lf``, the
run's record of the cache and the endpoints, the gate applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..models.base import ASKED
from ..report_parts import Unreachable
from ..verdict import CaseResult
from . import gate as gate_mod
from . import report as report_mod
from .document import CacheRecord, GateThresholds, Report, RunRecord, SelectionRecord, SuiteRecord


@dataclass(frozen=True)
class SuiteShape:
    """What a suite file (or a Python test module) says of its report: its record, the tags tabled and crossed,
    the headline's average, and the gate it declares."""

    record: SuiteRecord
    tags: list[str]
    cross: list[list[str]] = field(default_factory=list)
    average: str = "micro"
    macro_over: str | None = None
    gate: dict[str, Any] = field(default_factory=dict)


def suite_report(
    shape: SuiteShape,
    task: report_mod.Scoring,
    *,
    model: dict[str, Any],
    results: list[CaseResult],
    selected: Sequence[str],
    run: RunRecord,
    limits: GateThresholds,
    allow_unknown_state: bool = False,
    previous: Report | None = None,
    unaccounted: Sequence[str] = (),
    selection: SelectionRecord | None = None,
) -> Report:
    """The suite's report, gated by ``limits`` (:func:`guitest.reporting.gate.thresholds`); with ``previous`` (``--lf``: the
    last report of the same suite, model and success rule), the results fold into it and the report covers the whole suite.
    ``unaccounted``: what is missing beyond the selected cases without a result, named in ``missing`` but not counted as
    cases (a shard's report that was not given: its cases are not known). ``selection``: which part of the suite the run
    selected (its ``subset`` is decided here, against the cases the report covers); a gate on a subset says so in its notes."""
    selected = list(selected)
    if previous is not None:
        results, selected = report_mod.merge_previous(previous, results, selected)
        run["merged_into_report_of"] = previous["run"].get("started")
        if selection is not None:
            selection = folded_selection(previous.get("selection"), selection)
    got = {r["id"] for r in results}
    if selection is not None:
        selection["subset"] = covers_part(len(selected), selection, run.get("shard"))
    report = report_mod.build(
        suite=shape.record,
        model=model,
        results=results,
        n_selected=len(selected),
        missing=sorted(i for i in selected if i not in got) + list(unaccounted),
        tags=shape.tags,
        cross=shape.cross,
        average=shape.average,
        macro_over=shape.macro_over,
        gate={},
        task=task,
        run=run,
        selection=selection,
    )
    failures, notes = gate_mod.check(limits, report, allow_unknown_state)
    gated = limits["accuracy"] is not None or bool(limits["by"])
    if gated and selection is not None and selection["subset"]:
        notes.append(gate_mod.subset_note(len(selected), selection["n_suite"]))
    report["gate"] = {"thresholds": limits, "failures": failures, "notes": notes, "passed": (not failures) if gated else None}
    return report


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
