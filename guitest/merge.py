"""``guitest merge``: one report from the reports of a run's shards (``--shard=K/N``, :mod:`guitest.sharding`).

The shards' cases are put together and the report is built again from them as the run builds it
(:func:`guitest.reporting.report.build`, the suite's tables, task and headline from its suite file), so every case and
figure equals the report of the same run made in one piece; only ``run`` differs (when, how long, ``merged_shards``).
The gate of the suite (its thresholds, as the shards recorded them) applies to the whole.

Refused, with a message naming the difference: reports of different suites, models, settings, data or success rules
(shards may differ in where their model was served and how fast it was asked: their endpoints, ``--concurrency``,
``--timeout``, ``--retries``; the merged report records the first shard's);
a report that is not a shard; two reports of one part, or of different splits (K/N with another N); a case in two
reports. A part that did not arrive is named; its cases cannot be counted, so the merged report is incomplete
(``missing`` says which parts) and the gate fails.

Episode screenshots are named relative to each shard's report folder; the merged report names them relative to its
own folder (the shards' folders must still be where they were read, e.g. a CI job's downloaded artifacts).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from . import sharding, strictjson
from .errors import GuitestError
from .printable import printable
from .models.endpoints import merged_stats
from .suite import load_suite
from .tasks import load_task, task_named
from .reporting import builder, html, summary
from .reporting import gate as gate_mod
from .reporting import report as report_mod
from .reporting.document import CacheRecord, Report, RunRecord, SelectionRecord, from_json
from .verdict import CaseResult

#: what every shard must have in common: its field (as the message names it), how it is read, and what a difference is called
SAME: tuple[tuple[str, Callable[[Report], Any], str], ...] = (
    ("suite.path", lambda r: r["suite"]["path"], "suite"),
    ("model", lambda r: builder.model_itself(r["model"]), "model (its spec, adapter, profile and the settings that change its replies)"),
    ("suite.settings", lambda r: r["suite"].get("settings"), "suite settings"),
    ("run.data", lambda r: r["run"].get("data"), "data"),
    ("manifest.data", lambda r: (r.get("manifest") or {}).get("data"), "data files (their digests)"),
    ("manifest.digests", lambda r: (r.get("manifest") or {}).get("digests"), "prompt, system or runner texts"),
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
    problems = report_mod.validate(report) + _merge_problems(report)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise MergeError(printable(f"{path}: not a guitest JSON report as guitest writes one: " + "; ".join(p[:200] for p in problems[:3]) + more))
    return report


def _merge_problems(report: Report) -> list[str]:
    """What is wrong with the parts of a shard's report that merge reads and the report schema leaves open: the run's
    times, workers and part, each case's notes, and ``gate.thresholds`` (:func:`guitest.reporting.gate.thresholds`
    makes them), which the merged report is gated by."""
    problems = []
    run: Any = report["run"] if isinstance(report["run"], dict) else {}
    for key, kinds in (("seconds", (int, float)), ("workers", int), ("started", str)):
        if run.get(key) is not None and (isinstance(run[key], bool) or not isinstance(run[key], kinds)):
            problems.append(f"run.{key}: {run[key]!r} is not {'a string' if kinds is str else 'a number'}")
    if run.get("shard"):
        try:
            sharding.parse(run["shard"])
        except ValueError:
            problems.append(f"run.shard: {run['shard']!r} is not K/N")
    cases = report["cases"] if isinstance(report["cases"], list) else []
    if not all(isinstance(c, dict) and isinstance(c.get("notes") or [], list) and all(isinstance(n, str) for n in c.get("notes") or []) for c in cases):
        problems.append("cases: a case's notes are not a list of strings")
    gate = report["gate"] if isinstance(report["gate"], dict) else {}
    limits = gate.get("thresholds")
    if limits is None:
        return problems
    if not isinstance(limits, dict):
        return problems + ["gate.thresholds: not an object"]
    if not isinstance(limits.get("metric", "accuracy"), str):
        problems.append("gate.thresholds.metric: not a string")
    if not (limits.get("accuracy") is None or _rate(limits["accuracy"])):
        problems.append("gate.thresholds.accuracy: not a number in 0..1 or null")
    by = limits.get("by", {})
    if not isinstance(by, dict) or not all(isinstance(k, str) and _rate(v) for k, v in by.items()):
        problems.append("gate.thresholds.by: not an object of numbers in 0..1")
    return problems


def _rate(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


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
    return n, [k for k in range(1, n + 1) if k not in parts]


def _relocated(case: CaseResult, source: Path, target: Path) -> CaseResult:
    """``case`` with its episode's screenshots named relative to ``target`` instead of ``source`` (report folders)."""
    episode = case.get("episode")
    if not isinstance(episode, dict):
        return case

    def moved(name: Any) -> Any:
        if not isinstance(name, str) or not name or os.path.isabs(name):
            return name
        return os.path.relpath(source / name, target)

    steps = [{**step, "screenshot": moved(step.get("screenshot"))} if isinstance(step, dict) else step for step in episode.get("trajectory") or []]
    return {**case, "episode": {**episode, "trajectory": steps, "final_screenshot": moved(episode.get("final_screenshot"))}}


def merge(paths: list[Path], rootdir: Path, out_dir: Path, allow_unknown_state: bool = False) -> Report:
    """The merged report of the shards' reports at ``paths`` (the suite file read under ``rootdir``), its episodes named
    relative to ``out_dir``, gated."""
    if not paths:
        raise MergeError("give the JSON reports of the shards to merge: guitest merge reports-1/SUITE.json reports-2/SUITE.json ...")
    reports = [(path, load(path)) for path in paths]
    n, absent = check(reports)
    first = reports[0][1]
    key = first["suite"]["path"]
    python_suite = key.endswith(".py")
    suite = None
    if not python_suite:
        try:
            suite = load_suite(rootdir / key)
        except GuitestError as exc:
            raise MergeError(f"the shards' suite file {key} must be readable under --rootdir {rootdir}: {exc}") from None
    task = load_task(suite.task, suite.settings) if suite else load_task("grounding")
    results = [_relocated(case, path.parent.resolve(), out_dir.resolve()) for path, report in reports for case in report["cases"]]
    missing = sorted({m for _, report in reports for m in report["missing"]})
    runs = [report["run"] for _, report in reports]
    started = min(str(r.get("started") or "") for r in runs)
    caches = [c for r in runs if (c := r.get("cache"))]
    cache: CacheRecord = {**caches[0]} if caches else {"mode": "off", "attempts_answered_from_cache": 0, "cases_answered_from_cache": 0}
    cache["attempts_answered_from_cache"] = sum(c.get("attempts_answered_from_cache", 0) for c in caches)
    cache["cases_answered_from_cache"] = sum(c.get("cases_answered_from_cache", 0) for c in caches)
    endpoints = [[{**e, "seconds": (e.get("latency_s") or 0) * e.get("replies", 0)} for e in r.get("endpoints") or []] for r in runs]
    run: RunRecord = {
        **runs[0],
        "started": started,
        "seconds": max(float(r.get("seconds") or 0) for r in runs),
        "workers": sum(int(r.get("workers") or 0) for r in runs),
        "pytest_args": [],
        "shard": None,
        "merged_shards": [{"path": str(path), "shard": report["run"]["shard"], "started": report["run"].get("started")} for path, report in reports],
        "merged_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cache": cache,
    }
    if any(endpoints):
        run["endpoints"] = merged_stats(endpoints)
    shape = (
        builder.SuiteShape(first["suite"], list(suite.tables), [list(c) for c in suite.cross], suite.average, suite.macro_over)
        if suite
        else builder.SuiteShape(first["suite"], sorted({t for r in results for t in r.get("tags", {})}))
    )
    selected = [r["id"] for r in results] + missing  # every case the parts selected
    report = builder.suite_report(
        shape,
        task,
        model=first["model"],
        results=results,
        selected=selected,
        run=run,
        limits=first["gate"].get("thresholds") or gate_mod.thresholds({}, None),
        allow_unknown_state=allow_unknown_state,
        unaccounted=[f"(part {k}/{n} of the run: its report was not given)" for k in absent],
        selection={**first["selection"], "by": list(first["selection"]["by"])} if "selection" in first else None,
    )
    if "manifest" in first:  # the shards read the same files with the same texts (checked above): the first's stands for all
        report["manifest"] = first["manifest"]
    return report


def write(report: Report, out_dir: Path, task_lines: list[str] | None = None) -> list[Path]:
    """The merged report as ``<suite>.json``, ``.md`` and ``.html`` in ``out_dir`` (screenshots linked where the shards'
    reports name them); the paths written."""
    name = report["suite"]["name"]
    out_dir.mkdir(parents=True, exist_ok=True)
    problems = report_mod.validate(report)
    if problems:
        report["schema_problems"] = problems
    files = {
        out_dir / f"{name}.json": strictjson.encode(report_mod.json_text(report)),
        out_dir / f"{name}.md": strictjson.encode(report_mod.markdown(report, task_lines or ())),
        out_dir / f"{name}.html": strictjson.encode(html.render(report, {}, out_dir.resolve(), out_dir.resolve())),
    }
    strictjson.write_together(files)
    return list(files)


def add_arguments(parser: Any) -> None:
    """The ``guitest merge`` command's arguments."""
    parser.add_argument("reports", nargs="+", type=Path, metavar="SHARD.json", help="the JSON reports of the shards of one run (each run with --shard=K/N)")
    parser.add_argument("--rootdir", type=Path, default=Path("."), help="where the suite file the shards ran lies (its path as the reports name it), default .")
    parser.add_argument("--report-dir", type=Path, default=Path("reports"), help="folder for the merged SUITE.json, .md and .html (default reports)")
    parser.add_argument("--allow-unknown-state", action="store_true", help="as pytest's option: let the gate pass on live episodes run on a machine nothing reset")
    parser.add_argument("--gate-exit-code", type=int, default=gate_mod.DEFAULT_EXIT_CODE, metavar="N", help=f"exit status of a failed gate (default {gate_mod.DEFAULT_EXIT_CODE})")


def run(args: Any) -> int:
    """``guitest merge``: write the merged report; 0, the gate's exit code when it failed, or 11 when a part is missing
    (as pytest's run would end)."""
    from .session import INCOMPLETE_EXIT_CODE

    report = merge(list(args.reports), args.rootdir, args.report_dir, args.allow_unknown_state)
    lines = report_mod.task_lines(report, task_named(report["suite"]["task"], report["suite"].get("settings")))
    paths = write(report, args.report_dir, lines)
    table = report_mod.text_table(report, lines)
    print(f"guitest merge: {report['suite']['name']}: {len(args.reports)} shard(s), {report['n_results']} results of {report['n_selected']} selected cases")
    part = summary.subset_sentence(report)
    if part:
        print(part)
    print("\n".join(table))
    if not report["complete"]:
        print(f"INCOMPLETE: {len(report['missing'])} case(s) or part(s) missing: {', '.join(report['missing'][:5])}")
    gate = report["gate"]
    if gate["failures"]:
        print("GATE FAILED: " + "; ".join(gate["failures"]))
    elif gate["passed"]:
        print("gate passed" + summary.subset_suffix(report))
    print("reports: " + ", ".join(str(p) for p in paths))
    if gate["failures"]:
        return int(args.gate_exit_code)
    return 0 if report["complete"] else INCOMPLETE_EXIT_CODE
