"""The controller's side of a run (a serial run's too): the cases selected per suite, their results as they arrive,
and at the end each suite's report built whole (:mod:`guitest.reporting.builder`: gated, with its manifest and the
comparison with ``--baseline``), written with its history (:mod:`guitest.reporting.writer`) and summed up for the
terminal. Each suite file was read once, at collection, into its plan (:mod:`guitest.plan.suite_plan`); the report
is built from the plan and the results, and nothing here reads the suite file, its task or its data again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..plan import limiting
from ..reporting import manifest
from ..errors import SuiteError
from ..plan.suite_plan import SuitePlan, python_plan
from ..reporting import summary
from ..reporting import gate as gate_mod
from ..report_parts import Manifest
from ..reporting.document import BaselineRecord, CacheRecord, LimitRecord, Report, RunRecord, SelectionRecord
from ..secrets import scrub_args
from ..suite import SUITE_FILENAMES
from ..tasks import Task
from ..verdict import CaseResult

if TYPE_CHECKING:
    from ..models.base import Model
    from ..reporting.builder import BaselineCheck
    from ..plan.runconfig import RunConfig

# The report's modules (builder, writer, compare, report) are imported where a report is built or
# written, not with the plugin: a run that selects nothing, an xdist worker and --collect-only never load them.

#: tag values kept for the hint of a selection that left no case (more are not shown anyway)
MAX_KEYWORDS = 200


class SuiteReports:
    """Every suite's cases and results in this run, and their reports once it ends. ``model``: the run's model;
    ``started``: when the run started (epoch seconds), ``run_stamp`` its folder's name under ``runs/``."""

    def __init__(self, config: RunConfig, model: Model | None, *, started: float, run_stamp: str, data_root: Path, data_root_source: str) -> None:
        self.config = config
        self.model = model
        self.started = started
        self.run_stamp = run_stamp
        self.data_root, self.data_root_source = data_root, data_root_source
        self.report_dir = config.report_folder
        self.selected: dict[str, list[str]] = {}  # per suite (its file, or a Python test module): node ids selected
        self.totals: dict[str, int] = {}  # per suite file: the cases it has, before any selection (an xdist worker's, on the controller)
        self.results: dict[str, list[CaseResult]] = {}
        self.skipped: set[str] = set()  # guitest cases a baseline cannot run (skipped, not missing)
        self.reports: dict[str, Report] = {}
        self.plans: dict[str, SuitePlan] = {}  # per suite file: its plan, made when it was collected (on the xdist controller, when a worker was); a Python suite's at the end
        self.unplanned: dict[str, str] = {}  # per suite file: why it has no plan here (its suite file could not be read here)
        self.unreported: dict[str, str] = {}  # per suite: why it has no report (its suite file could not be read here)
        self.unsaved: dict[str, str] = {}  # per suite: why its report could not be written
        self.uncopied: dict[str, str] = {}  # per suite: why the copies of its report (runs/, .passed; OSWorld's results) were not made
        self.copies_failed: set[str] = set()  # the suites whose report was written without this run's copies (runs/, .passed)
        self.paths: dict[str, list[Path]] = {}
        self.kept: dict[str, list[str]] = {}  # per suite: this run's copies (history)
        self.baseline_text: dict[str, str] = {}
        self.deselected = 0  # guitest cases -k, -m (or --lf) left out
        self.deselected_tags: set[tuple[str, str]] = set()  # their (tag, value)s (each value a keyword), for the hint when none is left
        self.resumable = False  # a report not saved can be resumed from the response cache (the message says so)
        self.cache_failed = False  # ... but the cache failed to store some replies

    # -- during the run --------------------------------------------------------------------------

    def add_plan(self, plan: SuitePlan) -> None:
        """Suite file ``plan.key`` was read into ``plan`` (at collection): its report is built from it."""
        self.plans[plan.key] = plan
        self.unplanned.pop(plan.key, None)

    def plan_failed(self, key: str, exc: Exception) -> None:
        """Suite file ``key``, which the workers ran, cannot be read into a plan here: it gets no report, and says why."""
        self.unplanned[key] = unreadable_suite_message(key, exc)

    def note_selected(self, nodeids: Iterable[str]) -> None:
        for nodeid in nodeids:
            key = suite_key(nodeid)
            if key is not None:
                self.selected.setdefault(key, []).append(nodeid)

    def note_total(self, key: str, n: int) -> None:
        """Suite file ``key`` has ``n`` cases, before -k, -m, --limit or any other selection (every xdist worker says the same)."""
        self.totals[key] = int(n)

    def note_python(self, path: str, nodeid: str) -> None:
        """A Python test over a guitest sample was selected (its module is its suite)."""
        self.selected.setdefault(path, []).append(nodeid)

    def record(self, nodeid: str, result: CaseResult) -> None:
        """A case's result as the controller received it (a suite file's case, or a Python test's)."""
        self.results.setdefault(suite_key(nodeid) or nodeid.partition("::")[0], []).append(result)

    def note_deselected(self, n: int, tags: Iterable[tuple[str, str]], same_cases: bool = False) -> None:
        """``n`` guitest cases left out of the run, with their ``(tag, value)`` pairs; ``same_cases``: another xdist worker's
        count of the cases every worker collects (the largest count is kept, not their sum)."""
        self.deselected = max(self.deselected, n) if same_cases else self.deselected + n
        if len(self.deselected_tags) < MAX_KEYWORDS:
            self.deselected_tags.update(tags)

    def record_skip(self, nodeid: str) -> None:
        """A suite file's case was skipped (a baseline cannot run it): reported as skipped, never as missing."""
        if suite_key(nodeid):
            self.skipped.add(nodeid)

    def unfinished(self) -> list[str]:
        """The node ids of the suite files' selected cases that have no result, in the order selected (a case skipped is
        not among them): what a run stopped early left (Ctrl-C, SIGTERM), or what its budget kept it from asking. They
        are missing from the reports, and ``--lf`` must run them."""
        out: list[str] = []
        for key, nodeids in self.selected.items():
            if key.endswith(".py"):  # a Python test's cases are named by sample, not by node id
                continue
            got = {r["id"] for r in self.results.get(key, [])}
            out += [n for n in nodeids if n not in self.skipped and n.partition("::")[2] not in got]
        return out

    # -- the end ---------------------------------------------------------------------------------

    def recorded(self) -> set[str]:
        """The node ids of the suite files' cases that have a result."""
        return {f"{key}::{r['id']}" for key, results in self.results.items() if not key.endswith(".py") for r in results}

    def finish(self, cache: Callable[[list[CaseResult]], CacheRecord], run_extra: Callable[[list[CaseResult]], RunRecord]) -> tuple[bool, bool]:
        """Build and write every suite's report (:meth:`build`'s ``cache`` and ``run_extra``); whether the run is
        incomplete (a suite without a report, or with fewer results than cases selected) and whether a gate failed."""
        incomplete = gate_failed = False
        for key in sorted(set(self.selected) | set(self.results)):
            from ..reporting import writer

            if key.endswith(".py"):  # a suite written in Python: its plan is its module's, made here
                self.plans[key] = python_plan(key)
            plan = self.plans.get(key)
            if plan is None:  # this process cannot read a suite file the workers ran: no report, never a wrong one
                self.unreported[key] = self.unplanned.get(key) or unreadable_suite_message(key, SuiteError("it was not read at collection"))
                incomplete = True
                continue
            report = self.reports[key] = self.build(plan, cache, run_extra)
            # before the report is written: keeping this run's copies may prune its episodes' screenshots
            exported = self.write_osworld(report) if self.config.osworld_results and report["suite"]["task"] == "live" else None
            pictures = {r["id"]: r["thumbnail"] for r in self.results.get(key, []) if r.get("thumbnail")}
            try:
                self.paths[key] = self.write(report, pictures)
            except writer.ReportNotSaved as exc:
                self.unsaved[key] = str(exc)
            if exported is not None:
                self.paths.setdefault(key, []).append(exported)
            incomplete |= not report["complete"]
            gate_failed |= bool(report["gate"]["failures"])
        return incomplete, gate_failed

    def write_osworld(self, report: Report) -> Path | None:
        """``--osworld-results``: the live report's episodes as a published OSWorld run (:func:`guitest.published.runs.write_osworld`);
        the model's folder, or None when it could not be written. What it says could not be written as OSWorld would
        have it, or why nothing was, is kept for the summary."""
        from ..published.runs import write_osworld

        key, option = report["suite"]["path"], f"--osworld-results={self.config.osworld_results}"
        try:
            exported = write_osworld(report, self.config.osworld_results or "", self.report_dir)
        except OSError as exc:
            self.uncopied[key] = f"{option}: the OSWorld results were not written: {exc}"
            return None
        if exported.problems:
            self.uncopied[key] = f"{option}: " + "; ".join(exported.problems)
        return exported.folder

    def build(self, plan: SuitePlan, cache: Callable[[list[CaseResult]], CacheRecord], run_extra: Callable[[list[CaseResult]], RunRecord]) -> Report:
        """The report of suite ``plan`` (a suite file's, or a Python test module's) from this run's results, whole
        (:func:`guitest.reporting.builder.suite_report`): gated, compared with ``--baseline``, with its manifest; with
        --lf, merged into the previous report of the same suite, model and success rule. ``cache`` and ``run_extra``:
        what the run's record says of the response cache and of the endpoints, from the suite's results."""
        from ..reporting import builder

        assert self.model is not None
        config, key = self.config, plan.key
        results = self.results.get(key, [])
        model = self.model.describe()
        # every input first, from the plan and the run; then the builder makes the report whole, in one call
        selected, run = self._selected_ids(key, results), self._run_record(plan, results, cache, run_extra)
        limits = gate_mod.thresholds(dict(plan.gate), config.min_accuracy, config.gate_metric, plan.task.gate_metric)
        previous, selection, manifest = self._previous(plan, model), self._selection(plan), self._manifest(plan)
        return builder.suite_report(
            plan.record,
            plan.task,
            model=model,
            results=results,
            selected=selected,
            run=run,
            limits=limits,
            allow_unknown_state=config.allow_unknown_state,
            previous=previous,
            selection=selection,
            manifest=manifest,
            baseline=self._against_baseline if config.baseline else None,
        )

    def _selected_ids(self, key: str, results: list[CaseResult]) -> list[str]:
        """The ids of suite ``key``'s cases this run selected (a skipped one is not); a Python suite's are its results'
        too, since under -n the controller sees no collected samples (docs/suites.md)."""
        selected = [nodeid.split("::", 1)[1] for nodeid in self.selected.get(key, []) if nodeid not in self.skipped]
        return sorted(set(selected) | {r["id"] for r in results}) if key.endswith(".py") else selected

    def _previous(self, plan: SuitePlan, model: dict[str, Any]) -> Report | None:
        """With --lf, the previous report this run folds into: the same suite, model and success rule; else None."""
        if not self.config.last_failed:
            return None
        from ..reporting import builder

        # the report's own name: a Python suite's is its module's (test_app.json), as the report is written
        return builder.same_run_kind(builder.read_previous(self.report_paths(plan.name)[0][0]), model, plan.key, dict(plan.run_fields))

    def _run_record(self, plan: SuitePlan, results: list[CaseResult], cache: Callable[[list[CaseResult]], CacheRecord], run_extra: Callable[[list[CaseResult]], RunRecord]) -> RunRecord:
        """The report's record of how and where this run ran: data, time, processes, command line, shard, the response
        cache (``cache``), the endpoints and spending (``run_extra``), and the suite's success rule."""
        config = self.config
        run: RunRecord = {
            "data_root": str(self.data_root),
            "data_root_source": self.data_root_source,
            "data": plan.data,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "seconds": round(time.time() - self.started, 3),
            "workers": config.workers,
            "pytest_args": scrub_args(config.pytest_args),
            "merged_into_report_of": None,
            "shard": config.shard,
            "cache": cache(results),
        }
        run.update(run_extra(results))
        if "success_rule" in plan.run_fields:
            run["success_rule"] = plan.run_fields["success_rule"]
        return run

    def _selection(self, plan: SuitePlan) -> SelectionRecord:
        """Which part of suite ``plan`` this run selected: the suite file's total, what narrowed the run, its --limit
        (the builder says whether that is a subset, once --lf has folded the run into the previous report)."""
        config, key, suite = self.config, plan.key, plan.suite
        skipped = sum(nodeid in self.skipped for nodeid in self.selected.get(key, []))
        by = [*config.selected_by, *(["--lf"] if config.last_failed else []), *([f"{skipped} skipped"] if skipped else [])]
        limit: LimitRecord | None = {"n": config.limit, "seed": limiting.seed_of(config.seed), "strata": list(plan.strata)} if config.limit and suite else None
        return {"n_suite": self.totals.get(key) if suite else None, "subset": False, "by": by, "limit": limit}

    def _manifest(self, plan: SuitePlan) -> Manifest:
        """What a re-run needs and two runs may differ by (:mod:`guitest.reporting.manifest`): versions, the suite file's and the
        data's digests and the prompt, system and (live) runner texts as the plan read them, and what this run's live
        episodes ran on."""
        assert self.model is not None
        profile = self.model.profile
        texts = {"prompt": plan.prompt or profile.prompt, "system": profile.system, "runner": plan.runner_source}  # the suite's prompt file replaces the profile's template
        software = manifest.gather_software(r.get("software") for r in self.results.get(plan.key, []))  # what this run's episodes ran on
        return manifest.build(suite_file=plan.suite_file, data=plan.fingerprint, texts=texts, software=software)

    def _against_baseline(self, report: Report) -> BaselineCheck:
        """--baseline: the comparison of ``report`` with it (:func:`guitest.reporting.compare.compare`), its table kept
        for the summary; its significant regressions, or runs that cannot be compared, fail the gate."""
        from ..reporting import compare as compare_mod
        from ..reporting.builder import BaselineCheck

        path = self.config.baseline
        assert path is not None
        try:
            old = compare_mod.load_report(path)
        except compare_mod.ReportError as exc:
            return BaselineCheck(None, (f"--baseline: {exc}",))
        result = compare_mod.compare(old, report, min_drop=self.config.baseline_min_drop, min_paired=self.config.baseline_min_paired)
        self.baseline_text[report["suite"]["path"]] = compare_mod.format_text(result)
        failures = [f"regression against {path}: {row}" for row in result["regressions"]]
        unfit = compare_mod.not_comparable(result)
        if unfit is not None:
            failures.append(f"not comparable with {path}: {unfit}")
        record: BaselineRecord = {"path": str(path), "regressions": result["regressions"], "improvements": result["improvements"], "comparable": result["comparable"]}
        return BaselineCheck(record, tuple(failures), fails_gate=bool(result["regressions"]) or unfit is not None)

    def report_paths(self, name: str) -> tuple[list[Path], list[Path], list[Path]]:
        """Where the JSON, Markdown and HTML reports of suite ``name`` go: the report folder, then the exact paths asked for."""
        config = self.config
        json_paths = [self.report_dir / f"{name}.json"]
        md_paths = [self.report_dir / f"{name}.md"]
        html_paths = [self.report_dir / f"{name}.html"]
        several = len(set(self.selected) | set(self.results)) > 1
        for option, paths in ((config.report_json, json_paths), (config.report_md, md_paths), (config.report_html, html_paths)):
            if option:
                paths.append(Path(_per_suite(option, name, several)))
        return json_paths, md_paths, html_paths

    def write(self, report: Report, pictures: dict[str, str]) -> list[Path]:
        """Write the report where :meth:`report_paths` says and keep this run's copies (:func:`guitest.reporting.writer.write`);
        the paths written. Raises :class:`~guitest.reporting.writer.ReportNotSaved` when it could not be written."""
        from ..reporting import report as report_mod
        from ..reporting import writer

        config = self.config
        key = report["suite"]["path"]
        written = writer.write(
            report,
            pictures,
            self.report_paths(report["suite"]["name"]),
            report_dir=self.report_dir,
            task_lines=report_mod.task_lines(report, self._task(key)),
            images=config.report_images,
            keep_runs=config.keep_runs,
            keep_episodes=config.keep_episodes,
            stamp=self.run_stamp,
            resumable=self.resumable,
            cache_failed=self.cache_failed,
        )
        self.kept[key] = written.kept
        if written.uncopied:
            self.uncopied[key] = "; ".join(w for w in (self.uncopied.get(key), written.uncopied) if w)
            self.copies_failed.add(key)
        return written.paths

    def _task(self, key: str) -> Task | None:
        """Suite ``key``'s task as its plan holds it (the report's own metrics as text), None without a plan."""
        plan = self.plans.get(key)
        return plan.task if plan is not None else None

    def summary_lines(self, key: str) -> list[summary.Line]:
        """Suite ``key``'s part of the terminal summary (:func:`guitest.reporting.summary.suite_summary`), or the reason it has no report."""
        if key in self.unreported:
            return summary.unreported(key, self.unreported[key])
        from ..reporting import report as report_mod

        report = self.reports[key]
        return summary.suite_summary(
            report,
            key,
            report_mod.text_table(report, report_mod.task_lines(report, self._task(key))),
            baseline=self.baseline_text.get(key),
            baseline_path=self.config.baseline,
            paths=self.paths.get(key, []),
            kept=self.kept.get(key),
            unsaved=self.unsaved.get(key),
            uncopied=self.uncopied.get(report["suite"]["path"]),
        )


def suite_key(nodeid: str) -> str | None:
    """The suite file part of a guitest node id, or None for other tests."""
    path, sep, _ = nodeid.partition("::")
    return path if sep and os.path.basename(path) in SUITE_FILENAMES else None


def unreadable_suite_message(key: str, exc: Exception) -> str:
    """Why suite ``key`` has no report: the process that writes reports could not read its suite file."""
    return (
        f"{key}: no report was written: the process writing the reports cannot read this suite file ({exc}). Under "
        "pytest-xdist that process imports only the conftest.py files of the rootdir and of the paths given to pytest: "
        "register a custom task or format in the rootdir's conftest.py or in an installed package (docs/adapters.md), "
        "then run again"
    )


def _per_suite(template: str, name: str, several: bool) -> str:
    if "{suite}" in template:
        return template.replace("{suite}", name)
    if several:
        root, ext = os.path.splitext(template)
        return f"{root}-{name}{ext}"
    return template
