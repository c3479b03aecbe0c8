"""Benchmark data made or fetched: a built-in suite's data as a run finds it (:func:`suite_data`), ``guitest data
fetch``, the embedded demo benchmark, placeholder screenshots."""

from __future__ import annotations

from pathlib import Path


def suite_data(name: str, data_root: str | None = None) -> Path:
    """The data folder of built-in suite ``name`` as a run with ``--data-root=data_root`` reads it (None: ``$GUITEST_DATA``,
    ``$LMUData``, then the default), generated first when the suite declares a generator: for a suite written in
    Python that reads another suite's data (suites/python_example reads the demo's, ``guitest.data.suite_data("demo")``).
    Raises :class:`~guitest.errors.SuiteError` for a bad suite file or missing data,
    :class:`~guitest.bundled.BundledError` when there is no such suite. Its suite file is read as a run reads it, into
    its plan (:func:`guitest.plan.suite_plan.plan_suite`)."""
    from .. import bundled
    from ..datapath import resolve_root
    from ..plan.suite_plan import RunInputs, plan_suite

    path = bundled.suite_file(str(bundled.find(name).folder))
    root, source = resolve_root(data_root)
    plan = plan_suite(path, name, RunInputs(str(root), source, writes_report=False))
    return Path(plan.data_dir or "")
