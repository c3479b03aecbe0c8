"""A suite's plan: its suite file read once, at collection, into what every later step of the run needs.

:func:`plan_suite` is the one function that reads a suite file for a run (and :func:`guitest.data.suite_data`, for a suite
written in Python that reads a built-in suite's data, goes through it). Every process calls it where the run learns its
cases: a serial run and each xdist worker as they collect the suite file, the xdist controller (which collects
nothing) once, when the first worker says what it collected. After that nothing reads the suite file again: the
report at the run's end (:mod:`guitest.run.suite_reports`), the check that a live suite has its machines
(:mod:`guitest.run.session`) and the report's manifest read the plan, so a suite file changed or removed while the
run goes on changes nothing in its report.

What the report needs of the suite travels in the report too (its ``suite`` record, with the shape its tables are
built by), so ``guitest merge`` rebuilds a report from the parts' reports alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .. import backends
from . import limiting
from ..reporting import manifest
from ..datapath import data_folder, describe_data, locate
from ..errors import SuiteError, where
from ..formats import annotation_files
from ..report_parts import LiveSuiteRecord
from ..reporting.document import ShapeRecord, SuiteRecord
from ..suite import Suite, load_suite, prompt_text
from ..tasks import Task, load_task


@dataclass(frozen=True)
class RunInputs:
    """What of the run a suite's plan depends on, as plain values: the data root and where it came from, the
    ``--success-rule`` given; whether this process reads the suite's data (a serial run, an xdist worker: the data
    folder is located, its generator run, a missing folder an error) and whether it writes the suite's report (a
    serial run, the xdist controller: the data's fingerprint, the suite file's digest and the live record are made)."""

    data_root: str
    data_root_source: str
    success_rule: str | None = None
    reads_data: bool = True
    writes_report: bool = True


@dataclass(frozen=True)
class LivePart:
    """What a live suite's report records of how this run drives it: its backend, options, waits, budget and runner
    (:func:`guitest.run.live_case.live_record`), and the runner's source (its digest goes in the manifest)."""

    record: LiveSuiteRecord
    runner_source: str | None = None


#: how the run sets up a live suite's part of the report, given the suite and its task (the session's: the plan
#: imports no live module and no run option)
LivePlanner = Callable[[Suite, Task], LivePart]


@dataclass(frozen=True)
class SuitePlan:
    """One suite in this run, as its suite file was read at collection.

    ``key``: the suite file as node ids name it (or a Python test module); ``suite``: the suite file (None for a
    suite written in Python); ``task``: its task, with its settings (the report's scoring); ``record``: what the
    report says ran (with the shape its tables are built by, and a live suite's backend, waits and runner); ``gate``:
    the suite's ``gate:``; ``strata``: the tags ``--limit`` spreads cases over; ``data_dir``: its data folder;
    ``data``: where that is, in words; ``fingerprint``: each data file's digest (None when not made here or not
    readable); ``prompt``: the suite's own prompt template; ``runner_source``: a live suite's runner's source;
    ``run_fields``: what the suite's backend adds to the run record (a success rule); ``suite_file``: the suite
    file's digest and size."""

    key: str
    suite: Suite | None
    task: Task
    record: SuiteRecord
    gate: Mapping[str, Any] = field(default_factory=dict)
    strata: tuple[str, ...] = ()
    data_dir: str | None = None
    data: str | None = None
    fingerprint: dict[str, Any] | None = None
    prompt: str | None = None
    runner_source: str | None = None
    run_fields: Mapping[str, Any] = field(default_factory=dict)
    suite_file: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        """The suite's name (its report's file name)."""
        return self.record["name"]


def plan_suite(path: Path, key: str, inputs: RunInputs, live: LivePlanner | None = None) -> SuitePlan:
    """The plan of the suite file at ``path`` (``key``: its path as node ids name it) in a run of ``inputs``;
    ``live``: how the run sets up a live suite's part of the report (asked only for a live suite that this process
    reports). SuiteError for a bad suite file, a bad prompt file, or (``inputs.reads_data``) missing data."""
    suite = load_suite(path)
    folder, root, source = str(suite.folder), inputs.data_root, inputs.data_root_source
    data_dir = locate(folder, suite.data, root, source, str(path)) if inputs.reads_data else data_folder(folder, suite.data, root)
    task = load_task(suite.task, suite.settings, str(suite.path))
    reported = inputs.writes_report
    part = live(suite, task) if live is not None and reported and suite.task == "live" else None
    return SuitePlan(
        key=key,
        suite=suite,
        task=task,
        record=suite_record(key, suite, task, part.record if part is not None else {}),
        gate=suite.gate,
        strata=limiting.strata(suite.tables, suite.cross),
        data_dir=data_dir,
        data=describe_data(folder, suite.data, root, source),
        fingerprint=_fingerprint(suite, data_dir) if reported else None,
        prompt=_prompt(suite),
        runner_source=part.runner_source if part is not None else None,
        run_fields=backends.run_record(suite.env if suite.task == "live" else None, task.settings, inputs.success_rule),
        suite_file=manifest.file_record(str(path)) if reported and os.path.isfile(path) else None,
    )


def python_plan(key: str) -> SuitePlan:
    """The plan of a suite written in Python (test module ``key``): grounding, its tables its results' tags."""
    task = load_task("grounding")
    return SuitePlan(key=key, suite=None, task=task, record={"name": Path(key).stem, "path": key, "format": "python", "task": "grounding", "settings": task.settings})


def suite_record(key: str, suite: Suite, task: Task, live: LiveSuiteRecord) -> SuiteRecord:
    """What a report says ran: the suite, its task's settings, a live suite's record, and the report's shape."""
    record: SuiteRecord = {"name": suite.name, "path": key, "format": suite.format, "task": suite.task, "settings": task.settings}
    record.update(live)
    record["shape"] = shape_record(suite)
    return record


def shape_record(suite: Suite) -> ShapeRecord:
    """How a suite's report breaks its results down and heads them (:class:`~guitest.reporting.document.ShapeRecord`)."""
    return {"tables": list(suite.tables), "cross": [list(c) for c in suite.cross], "average": "macro" if suite.average == "macro" else "micro", "macro_over": suite.macro_over}


def recorded_shape(path: Path) -> ShapeRecord:
    """The shape of the report of the suite file at ``path``, read from the file by :func:`plan_suite` (its data not
    looked for): for ``guitest merge`` of parts written before reports recorded their shape. SuiteError for a bad
    suite file."""
    return plan_suite(path, str(path), RunInputs(data_root="", data_root_source="", reads_data=False, writes_report=False)).record["shape"]


def _fingerprint(suite: Suite, data_dir: str) -> dict[str, Any] | None:
    """Each data file's digest (:func:`guitest.reporting.manifest.data_fingerprint`); None when the files cannot be read here
    (the xdist controller may not see the workers' data): no fingerprint rather than a wrong one."""
    try:
        return manifest.data_fingerprint(annotation_files(suite, data_dir), data_dir)
    except (SuiteError, OSError):
        return None


def _prompt(suite: Suite) -> str | None:
    """The suite's own prompt template (its ``prompt:`` file), or None; SuiteError when it cannot be read."""
    try:
        return prompt_text(suite)
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{where(str(suite.path), field='prompt')}: cannot read prompt file {suite.folder / suite.prompt}: {exc}") from None
