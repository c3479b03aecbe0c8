"""``guitest merge``: one report from the reports of a run's shards (``--shard=K/N``, :mod:`guitest.plan.sharding`).

The shards' cases are put together and the report is built again from them by the builder the run builds its report
with (:func:`guitest.reporting.builder.suite_report`; the suite's tables, headline and task as the parts record them,
``suite.shape`` and ``suite.settings``: no suite file is read), so every case and figure equals the report of the
same run made in one piece; only ``run`` differs (when, how long, ``merged_shards``). The gate of the suite (its
thresholds, as the shards recorded them) applies to the whole. Parts written before reports recorded their shape
(2026-12-06) have it read from the suite file under ``--rootdir`` (:func:`suite_of`).

Refused, with a message naming the difference: reports of different suites, models, settings, data or success rules
(shards may differ in where their model was served and how fast it was asked: their endpoints, ``--concurrency``,
``--timeout``, ``--retries``; the merged report records the first shard's);
a report that is not a shard; two reports of one part, or of different splits (K/N with another N); a case in two
reports. A part that did not arrive is named; its cases cannot be counted, so the merged report is incomplete
(``missing`` says which parts) and the gate fails.

Each part is checked against itself, as its run wrote it (:func:`own_problems`): its counts against its cases, every
case in the part :mod:`guitest.plan.sharding` puts it in, its ``selection`` against what it selected; the parts together
against the cases the run selected, where the parts record it (:func:`check`); and every verdict against the evidence
its case keeps, where the suite's task can re-derive it (:meth:`guitest.tasks.Task.recheck`: grounding and
hallucination; :func:`recheck`). A part changed after its run is refused, naming the file and the case.

The exit status is the one the run in one piece would end with (:func:`exit_status`): pytest's 1 when a case ended in
error, before the run's own (a budget reached, a part missing, a failed gate; :func:`guitest.run.session.exit_status`).

Episode screenshots are named relative to each shard's report folder; the merged report names them relative to its
own folder (the shards' folders must still be where they were read, e.g. a CI job's downloaded artifacts).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, cast

from ..plan import sharding
from .. import strictjson
from ..run.attempts import Attempt, case_verdict
from ..errors import GuitestError
from ..printable import printable
from ..models.endpoints import merged_stats
from ..plan import suite_plan
from ..tasks import Task, load_task, task_named
from ..reporting import builder, html, summary, writer
from ..reporting import gate as gate_mod
from ..reporting import report as report_mod
from ..reporting.document import BudgetRecord, CacheRecord, Report, RunRecord, SelectionRecord, SuiteRecord, from_json
from ..report_parts import Unreachable
from ..verdict import ERROR, PARTIAL, VERDICTS, CaseResult, StepEntry

#: what every shard must have in common: its field (as the message names it), how it is read, and what a difference is called
SAME: tuple[tuple[str, Callable[[Report], Any], str], ...] = (
    ("suite.path", lambda r: r["suite"]["path"], "suite"),
    ("model", lambda r: builder.model_itself(r["model"]), "model (its spec, adapter, profile and the settings that change its replies)"),
    ("suite.settings", lambda r: r["suite"].get("settings"), "suite settings"),
    ("run.data", lambda r: r["run"].get("data"), "data"),
    ("manifest.data", lambda r: r.get("manifest", {}).get("data"), "data files (their digests)"),
    ("manifest.digests", lambda r: r.get("manifest", {}).get("digests"), "prompt, system or runner texts"),
    ("run.success_rule", lambda r: r["run"].get("success_rule"), "success rule"),
    ("gate.thresholds", lambda r: r["gate"].get("thresholds"), "gate thresholds"),
    ("selection", lambda r: _selected_as(r.get("selection")), "selection of cases (-k, -m, --limit, the suite's total)"),
)


class MergeError(GuitestError):
    """The reports cannot be merged into one; the message says which differ and how."""


def load(path: Path) -> Report:
    """A shard's JSON report, read by :func:`guitest.strictjson.load` (bounded in size and depth) and checked against
    the report schema and the gate's thresholds, which merge reads; MergeError naming the file, in one line, when it
    cannot be read or is not a guitest report of that shape."""
    try:
        data = strictjson.load(path, expect=dict)
    except strictjson.UnreadableJSON as exc:
        raise MergeError(str(exc)) from None
    if not isinstance(data.get("cases"), list) or not isinstance(data.get("suite"), dict) or not isinstance(data.get("overall"), dict):
        raise MergeError(f"{path}: not a guitest JSON report (no suite, cases and overall)")
    report = from_json(data)
    problems = [_naming_case(p, report["cases"]) for p in report_mod.validate(report)] + _merge_problems(report)
    if problems:
        raise MergeError(printable(f"{path}: not a guitest JSON report as guitest writes one: " + _some(problems)))
    problems = own_problems(report)
    if problems:
        raise MergeError(printable(f"{path}: not the report its run wrote (changed since?): " + _some(problems) + "; merge the parts as their runs wrote them"))
    return report


def _attempts_problem(case: CaseResult) -> str | None:
    """Why a case's verdict is not the one its attempts give (:func:`guitest.run.attempts.case_verdict`), or None."""
    attempts = case.get("attempts") or []
    if not attempts:
        return f"verdict {PARTIAL}, which only a case of several attempts has, and it has none" if case["verdict"] == PARTIAL else None
    verdicts = [a["verdict"] for a in attempts]
    if PARTIAL in verdicts:
        return f"an attempt's verdict is {PARTIAL}, which is a case's, never an attempt's"
    expected = case_verdict([Attempt(v) for v in verdicts])
    return None if case["verdict"] == expected else f"verdict {case['verdict']}, but its attempts ({', '.join(verdicts)}) make it {expected}"


def _some(problems: list[str]) -> str:
    """The first three problems in one line, and how many more there are."""
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(p[:300] for p in problems[:3]) + more


def _naming_case(problem: str, cases: Any) -> str:
    """A schema problem of ``cases[i]`` with that case's id beside its place (``case ID (cases[3]).verdict: ...``)."""
    if not problem.startswith("cases[") or not isinstance(cases, list):
        return problem
    index, _, rest = problem[len("cases[") :].partition("]")
    case = cases[int(index)] if index.isdigit() and int(index) < len(cases) else None
    if not isinstance(case, dict) or not isinstance(case.get("id"), str):
        return problem
    return f"case {case['id']} (cases[{index}]){rest}"


def own_problems(report: Report) -> list[str]:
    """What a shard's report (valid by the schema) says against itself: ``n_results`` and ``complete`` against its
    cases, ``n_selected`` against its cases and ``missing`` (a case deleted), a case twice, the overall counts of
    each verdict against its cases' (a verdict changed and not counted), every case and missing case in the part
    :func:`guitest.plan.sharding.part_of` puts it in (a suite file's: a Python suite's test ids are not recorded), and
    ``selection`` against what the part selected (``subset``, and no more cases than its ``--limit``). Empty for a
    report as its run wrote it."""
    problems = []
    cases, missing = report["cases"], report["missing"]
    if report["n_results"] != len(cases):
        problems.append(f"n_results is {report['n_results']}, but it holds {len(cases)} case(s)")
    if report["n_selected"] != len(cases) + len(missing):
        problems.append(f"n_selected is {report['n_selected']}, but it holds {len(cases)} case(s) and {len(missing)} missing")
    if report["complete"] != (not missing):
        problems.append(f"complete is {str(report['complete']).lower()}, but {len(missing)} case(s) are missing")
    ids = [c["id"] for c in cases] + list(missing)
    seen: set[str] = set()
    for case_id in ids:
        if case_id in seen:
            problems.append(f"case {case_id} is in it twice")
            break
        seen.add(case_id)
    problems += [f"case {c['id']}: {p}" for c in cases if (p := _attempts_problem(c))]
    counted = Counter(row["verdict"] for c in cases for row in _rows(c))  # as the tables count them
    for verdict in VERDICTS:
        recorded = report["overall"].get(verdict, 0)
        if counted[verdict] != recorded:
            problems.append(f"overall.{verdict} is {recorded}, but its cases count {counted[verdict]}")
    shard, key = report["run"].get("shard"), report["suite"]["path"]
    if shard and not key.endswith(".py"):
        part, n = sharding.parse(shard)
        stray = next((i for i in ids if sharding.part_of(f"{key}::{i}", n) != part), None)
        if stray is not None:
            problems.append(f"case {stray} is in part {sharding.part_of(f'{key}::{stray}', n)}/{n} of the run, not in this part {shard}")
    selection = report.get("selection")
    if selection is not None and selection["subset"] != builder.covers_part(report["n_selected"], selection, shard):
        problems.append(f"selection.subset is {str(selection['subset']).lower()} for {report['n_selected']} selected case(s) of the suite's {selection['n_suite']}")
    limit = selection.get("limit") if selection is not None else None
    if limit and report["n_selected"] > limit["n"]:
        problems.append(f"n_selected is {report['n_selected']}, more than the {limit['n']} cases of its --limit")
    return problems


def _merge_problems(report: Report) -> list[str]:
    """What is wrong with the part of a shard's report that merge reads and the report schema leaves open: the run's
    part (K/N). (The run's times, workers and unreachable endpoint, the cases' notes and the gate's thresholds, by
    which the merged report is gated, the schema checks.)"""
    run: Any = report["run"] if isinstance(report["run"], dict) else {}
    if run.get("shard"):
        try:
            sharding.parse(run["shard"])
        except ValueError:
            return [f"run.shard: {run['shard']!r} is not K/N"]
    return []


def _selected_as(selection: SelectionRecord | None) -> dict[str, Any] | None:
    """What the shards of one run selected alike: the suite's total, what narrowed the run and its --limit (each shard's
    ``subset`` is its own: a part is one)."""
    return {k: v for k, v in selection.items() if k != "subset"} if selection is not None else None


def check(reports: list[tuple[Path, Report]]) -> tuple[int, list[int]]:
    """The split the reports come from (N) and the parts missing; MergeError for reports that do not belong together."""
    first_path, first = reports[0]
    for path, report in reports[1:]:
        for shown, read, what in SAME:
            if read(report) != read(first):
                raise MergeError(
                    printable(f"{path} and {first_path} differ in their {what} ({shown}): {json.dumps(read(report))[:200]} against {json.dumps(read(first))[:200]}; merge only the shards of one run")
                )
    parts: dict[int, Path] = {}
    splits = set()
    for path, report in reports:
        shard = report["run"].get("shard")
        if not shard:
            raise MergeError(f"{path} is not a shard (its run had no --shard=K/N): merge the reports of runs with --shard")
        part, n = sharding.parse(shard)
        splits.add(n)
        if part in parts:
            raise MergeError(f"{path} and {parts[part]} are both part {part}/{n}: give each part once")
        parts[part] = path
    if len(splits) > 1:
        raise MergeError(f"the reports come from different splits ({', '.join(f'N={n}' for n in sorted(splits))}): merge the parts of one --shard=K/N split")
    n = splits.pop()
    seen: dict[str, Path] = {}
    for path, report in reports:
        for case in report["cases"]:
            if case["id"] in seen:
                raise MergeError(f"case {case['id']} is in {seen[case['id']]} and in {path}: a case belongs to one part")
            seen[case["id"]] = path
    absent = [k for k in range(1, n + 1) if k not in parts]
    wanted = _selected_by_run(first)
    held = sum(report["n_selected"] for _, report in reports)
    if not absent and wanted is not None and held != wanted:
        counts = ", ".join(f"{path} {report['n_selected']}" for path, report in reports)
        raise MergeError(
            f"the parts hold {held} selected case(s) ({counts}), but their run selected {wanted} (selection: {_selection_said(first)}): a part lost or gained "
            "cases after its run; merge the parts as their runs wrote them"
        )
    return n, absent


def _selected_by_run(report: Report) -> int | None:
    """How many cases the whole run selected, as its parts record it (``selection``): the suite's total, or ``--limit``'s
    N of them; None when the parts do not say (a report without ``selection``, the total not known, or ``-k``, ``-m``,
    ``--lf`` or skipped cases narrowing the run by what only the run knew)."""
    selection = report.get("selection")
    if selection is None or selection["n_suite"] is None or selection["by"]:
        return None
    limit = selection.get("limit")
    return min(limit["n"], selection["n_suite"]) if limit else selection["n_suite"]


def _selection_said(report: Report) -> str:
    selection: dict[str, Any] = dict(report.get("selection") or {})
    limit = selection.get("limit")
    return f"the suite's {selection.get('n_suite')} cases" + (f", --limit={limit['n']}" if limit else "")


def _rows(case: CaseResult, whole: bool = False) -> Sequence[Mapping[str, Any]]:
    """What was judged in a case: each attempt of a repeated case (``whole``: with the case's own fields, its truth),
    else the case itself."""
    attempts: Sequence[Mapping[str, Any]] = case.get("attempts") or []
    if attempts:
        return [{**case, **attempt} for attempt in attempts] if whole else attempts
    return [case]


def _relocated(case: CaseResult, source: Path, target: Path) -> CaseResult:
    """``case`` with its episode's screenshots named relative to ``target`` instead of ``source`` (report folders)."""
    episode = case.get("episode")
    if not isinstance(episode, dict):
        return case

    def moved(name: Any) -> Any:
        if not isinstance(name, str) or not name or os.path.isabs(name):
            return name
        return os.path.relpath(source / name, target)

    steps = [cast(StepEntry, {**step, "screenshot": moved(step.get("screenshot"))}) if isinstance(step, dict) else step for step in episode.get("trajectory") or []]
    return {**case, "episode": {**episode, "trajectory": steps, "final_screenshot": moved(episode.get("final_screenshot"))}}


def merge(paths: list[Path], rootdir: Path, out_dir: Path, allow_unknown_state: bool = False) -> Report:
    """The merged report of the shards' reports at ``paths``, its episodes named relative to ``out_dir``, gated; built
    from the parts alone (:func:`suite_of`: the suite's shape and task as they record them; parts written before
    reports recorded a shape read it from the suite file under ``rootdir``)."""
    if not paths:
        raise MergeError("give the JSON reports of the shards to merge: guitest merge reports-1/SUITE.json reports-2/SUITE.json ...")
    reports = [(path, load(path)) for path in paths]
    n, absent = check(reports)
    first = reports[0][1]
    record, task = suite_of(reports, rootdir)
    rechecked = task.rechecks and not record["path"].endswith(".py")
    if rechecked:
        for path, report in reports:
            recheck(path, report, task)
    results = [_relocated(case, path.parent.resolve(), out_dir.resolve()) for path, report in reports for case in report["cases"]]
    missing = sorted({m for _, report in reports for m in report["missing"]})
    return builder.suite_report(
        record,
        task,
        model=first["model"],
        results=results,
        selected=[r["id"] for r in results] + missing,  # every case the parts selected
        run=merged_run([(path, report["run"]) for path, report in reports], rechecked),
        limits=first["gate"].get("thresholds") or gate_mod.thresholds({}, None),
        allow_unknown_state=allow_unknown_state,
        unaccounted=[f"(part {k}/{n} of the run: its report was not given)" for k in absent],
        selection={**first["selection"], "by": list(first["selection"]["by"])} if "selection" in first else None,
        manifest=first.get("manifest"),  # the shards read the same files with the same texts (checked): the first's stands for all
    )


def suite_of(reports: list[tuple[Path, Report]], rootdir: Path) -> tuple[SuiteRecord, Task]:
    """The suite the parts ran, as they record it: its record (with the shape its tables are built by: the parts'
    own, which must agree; for parts written before reports recorded one, read from the suite file under
    ``rootdir``) and its task with its settings. MergeError when the parts' shapes differ, or the task (or the suite
    file a shape is read from) cannot be loaded here."""
    first_path, first = reports[0]
    record = first["suite"]
    key = record["path"]
    shapes = [(path, report["suite"]["shape"]) for path, report in reports if "shape" in report["suite"]]
    for path, shape in shapes[1:]:
        if shape != shapes[0][1]:
            raise MergeError(
                printable(
                    f"{path} and {shapes[0][0]} differ in their suite's tables (suite.shape): {json.dumps(shape)[:200]} against {json.dumps(shapes[0][1])[:200]}; merge only the shards of one run"
                )
            )
    if shapes and "shape" not in record:
        record = {**record, "shape": shapes[0][1]}
    elif not shapes and not key.endswith(".py"):  # parts written before reports recorded their shape
        try:
            record = {**record, "shape": suite_plan.recorded_shape(rootdir / key)}
        except GuitestError as exc:
            raise MergeError(f"the shards' suite file {key} must be readable under --rootdir {rootdir}: {exc}") from None
    try:
        return record, load_task(record["task"], record.get("settings"))
    except GuitestError as exc:
        raise MergeError(f"{first_path}: the task the shards ran cannot be loaded here: {exc}") from None


def merged_run(runs: list[tuple[Path, RunRecord]], rechecked: bool) -> RunRecord:
    """The run record of the merged report: the first part's, started when the first part started, as long as the
    longest part, with the workers of all, the parts named (``merged_shards``), the response cache's and the
    endpoints' figures summed, and what kept a part's cases from asking (an endpoint down, the budget) said of the
    whole run as one run says it."""
    records = [r for _, r in runs]
    run: RunRecord = {
        **records[0],
        "started": min(str(r.get("started") or "") for r in records),
        "seconds": max(float(r.get("seconds") or 0) for r in records),
        "workers": sum(int(r.get("workers") or 0) for r in records),
        "pytest_args": [],
        "shard": None,
        "merged_shards": [{"path": str(path), "shard": r["shard"] or "", "started": r.get("started"), "verdicts_rechecked": rechecked} for path, r in runs],
        "merged_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cache": _merged_cache(records),
    }
    unreachable = _summed([r["unreachable"] for r in records if r.get("unreachable")])
    budget = _summed([r["budget"] for r in records if r.get("budget")])
    run.pop("unreachable", None)
    run.pop("budget", None)
    if unreachable is not None:
        run["unreachable"] = cast(Unreachable, unreachable)  # the first part's record, its count of cases summed
    if budget is not None:
        run["budget"] = cast(BudgetRecord, budget)  # the first part's record, its count of cases summed
    endpoints = [[{"down": None, **e, "seconds": (e.get("latency_s") or 0) * e.get("replies", 0)} for e in r.get("endpoints") or []] for r in records]
    if any(endpoints):
        run["endpoints"] = merged_stats(endpoints)
    return run


def _merged_cache(runs: list[RunRecord]) -> CacheRecord:
    """The parts' records of the response cache as one: the first's, its counts of what the cache answered summed."""
    caches = [c for r in runs if (c := r.get("cache"))]
    cache: CacheRecord = {**caches[0]} if caches else {"mode": "off", "attempts_answered_from_cache": 0, "cases_answered_from_cache": 0}
    cache["attempts_answered_from_cache"] = sum(c.get("attempts_answered_from_cache", 0) for c in caches)
    cache["cases_answered_from_cache"] = sum(c.get("cases_answered_from_cache", 0) for c in caches)
    return cache


def recheck(path: Path, report: Report, task: Task) -> None:
    """Every verdict of a part against the evidence its case keeps (:meth:`guitest.tasks.Task.recheck`; each attempt of
    a repeated case with the case's truth); MergeError naming the part's file and the first case whose verdict is not
    the one its task gives that evidence."""
    forged = []
    for case in report["cases"]:
        for row in _rows(case, whole=True):
            problem = task.recheck(row)
            if problem is not None:
                forged.append((case["id"], problem))
                break
    if forged:
        case_id, problem = forged[0]
        more = f" (and {len(forged) - 1} more case(s) so)" if len(forged) > 1 else ""
        raise MergeError(
            printable(f"{path}: case {case_id}: {problem}{more}: not the verdict the {task.name} task gives it, so the part was changed after its run; merge the parts as their runs wrote them")
        )


def _summed(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Of the parts' records of the endpoint that could not be asked, or of the budget they ran under: the first (the
    first budget reached, if one was), its ``cases_not_asked`` summed over them all; None when no part has one."""
    if not records:
        return None
    first = next((r for r in records if r.get("reached", True)), records[0])
    return {**first, "cases_not_asked": sum(int(r.get("cases_not_asked") or 0) for r in records)}


def write(report: Report, out_dir: Path, task_lines: list[str] | None = None) -> list[Path]:
    """The merged report as ``<suite>.json``, ``.md`` and ``.html`` in ``out_dir`` (screenshots linked where the shards'
    reports name them), all or none; the paths written. :class:`~guitest.reporting.writer.ReportNotSaved` saying where
    and why when they could not be written (a full disk, a folder that cannot be made or written)."""
    name = report["suite"]["name"]
    files = {
        out_dir / f"{name}.json": strictjson.encode(report_mod.json_text(report)),
        out_dir / f"{name}.md": strictjson.encode(report_mod.markdown(report, task_lines or ())),
        out_dir / f"{name}.html": strictjson.encode(html.render(report, {}, out_dir.resolve(), out_dir.resolve())),
    }
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        strictjson.write_together(files)
    except OSError as exc:
        raise writer.ReportNotSaved(writer.not_saved_message(name, exc, files, out_dir, False, False, False)) from None
    return list(files)


def add_arguments(parser: Any) -> None:
    """The ``guitest merge`` command's arguments."""
    parser.add_argument("reports", nargs="+", type=Path, metavar="SHARD.json", help="the JSON reports of the shards of one run (each run with --shard=K/N)")
    parser.add_argument(
        "--rootdir",
        type=Path,
        default=Path("."),
        help="where the suite file the shards ran lies (its path as the reports name it), default .; read only for parts written before reports recorded the suite's tables (2026-12-06)",
    )
    parser.add_argument("--report-dir", type=Path, default=Path("reports"), help="folder for the merged SUITE.json, .md and .html (default reports)")
    parser.add_argument("--allow-unknown-state", action="store_true", help="as pytest's option: let the gate pass on live episodes run on a machine nothing reset")
    parser.add_argument("--gate-exit-code", type=int, default=gate_mod.DEFAULT_EXIT_CODE, metavar="N", help=f"exit status of a failed gate (default {gate_mod.DEFAULT_EXIT_CODE})")


def exit_status(report: Report, gate_exit_code: int = gate_mod.DEFAULT_EXIT_CODE) -> int:
    """The exit status the run in one piece would end with, from the merged report (:func:`guitest.run.session.exit_status`
    of pytest's and guitest's own): 13 when a part stopped asking at its budget (its cases not asked are failed tests and
    missing); else pytest's 1 when a case ended in error; else 11 when a part or case is missing; else the gate's exit
    code when it failed; else 0."""
    from ..run.session import BUDGET_EXIT_CODE, INCOMPLETE_EXIT_CODE, exit_status as run_exit_status

    budget = report["run"].get("budget") or {}
    failed_tests = any(case["verdict"] == ERROR for case in report["cases"]) or bool(budget.get("reached"))
    own = BUDGET_EXIT_CODE if budget.get("reached") else INCOMPLETE_EXIT_CODE if not report["complete"] else gate_exit_code if report["gate"]["failures"] else 0
    return run_exit_status(1 if failed_tests else 0, own)


def run(args: Any) -> int:
    """``guitest merge``: write the merged report; the exit status of the run in one piece (:func:`exit_status`), or
    12 when the merged report could not be written (as a run whose report was not saved)."""
    from ..run.session import UNSAVED_EXIT_CODE

    report = merge(list(args.reports), args.rootdir, args.report_dir, args.allow_unknown_state)
    lines = report_mod.task_lines(report, task_named(report["suite"]["task"], report["suite"].get("settings")))
    try:
        paths = write(report, args.report_dir, lines)
    except writer.ReportNotSaved as exc:
        print(f"guitest merge: {printable(str(exc))}", file=sys.stderr)
        return UNSAVED_EXIT_CODE
    table = report_mod.text_table(report, lines)
    print(f"guitest merge: {report['suite']['name']}: {len(args.reports)} shard(s), {report['n_results']} results of {report['n_selected']} selected cases")
    part = summary.subset_sentence(report)
    if part:
        print(part)
    if not report["run"]["merged_shards"][0].get("verdicts_rechecked"):
        why = (
            "a suite written in Python judges its cases in its own tests"
            if report["suite"]["path"].endswith(".py")
            else f"the {report['suite']['task']} task cannot re-derive them from what a report keeps (grounding and hallucination can)"
        )
        print(f"verdicts as the parts recorded them: {why}")
    print("\n".join(table))
    budget = report["run"].get("budget") or {}
    if budget.get("reached"):
        print(printable(f"BUDGET REACHED: {budget['reached']}: {budget.get('cases_not_asked', 0)} case(s) were not asked; raise the limit, run those parts again with --lf, then merge again"))
    elif not report["complete"]:
        print(f"INCOMPLETE: {len(report['missing'])} case(s) or part(s) missing: {', '.join(report['missing'][:5])}")
    errors = _errors_line(report)
    if errors:
        print(errors)
    gate = report["gate"]
    if gate["failures"]:
        print("GATE FAILED: " + "; ".join(gate["failures"]))
    elif gate["passed"]:
        print("gate passed" + summary.subset_suffix(report) + (" (on the scored cases; the errors above fail the run)" if errors else ""))
    print("reports: " + ", ".join(str(p) for p in paths))
    return exit_status(report, int(args.gate_exit_code))


def _errors_line(report: Report) -> str | None:
    """The line saying how many cases ended in error and in which parts (pytest's failed tests of the run in one
    piece), and why the first did; None when none did."""
    errored = [case for case in report["cases"] if case["verdict"] == ERROR]
    if not errored:
        return None
    key = report["suite"]["path"]
    _, n = sharding.parse(report["run"]["merged_shards"][0]["shard"])
    parts = sorted({sharding.part_of(f"{key}::{c['id']}", n) for c in errored}) if not key.endswith(".py") else []
    where = f" in part(s) {', '.join(f'{k}/{n}' for k in parts)}" if parts else ""
    down = report["run"].get("unreachable")
    why = f"{down.get('url')} was {down.get('state', 'unreachable')}" if down else f"the first: {str(errored[0].get('error', ''))[:200]}"
    return printable(
        f"ERRORS: {len(errored)} case(s) ended in error{where} ({why}): exit 1, as pytest ends the run in one piece; run those parts again (the same --shard and --report-dir; --lf asks only their errored cases), then merge again"
    )
