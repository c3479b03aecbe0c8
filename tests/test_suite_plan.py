"""A suite is read once, at collection, into its plan (guitest/plan/suite_plan.py), and every report is built whole by
one builder (guitest/reporting/builder.py): the run's end reads the plan, never the suite file, and nothing assigns
into a report once it is built (docs/design.md, "The flow of a report").
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path

import pytest

from builders import SUITE, n_rows, write_suite
from guitest.reporting import manifest
from guitest.plan.suite_plan import RunInputs, plan_suite

PACKAGE = Path(__file__).resolve().parents[1] / "guitest"
KEY = "suites/tiny/suite.yaml"
#: where load_suite may be called: where a suite's plan is made, and the command line (`guitest suites`,
#: `guitest placeholders`, `guitest data fetch`: data/fetch.py is the `data fetch` command's, imported by cli.py alone)
LOAD_SUITE_CALLERS = {"plan/suite_plan.py": {"plan_suite"}, "cli.py": {"cmd_placeholders", "_describe"}, "data/fetch.py": {"_load"}}


@lru_cache(maxsize=1)
def modules() -> list[tuple[str, ast.Module]]:
    """Every module of guitest/, by its path under guitest/, parsed once for the scans below."""
    return [(str(path.relative_to(PACKAGE)), ast.parse(path.read_text("utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def calls(name: str) -> dict[str, set[str]]:
    """Per module of guitest/ (its path under guitest/), the functions that call ``name`` (``name(...)`` or ``x.name(...)``)."""
    out: dict[str, set[str]] = {}
    for where, tree in modules():
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                called = node.func if isinstance(node, ast.Call) else None
                if (isinstance(called, ast.Name) and called.id == name) or (isinstance(called, ast.Attribute) and called.attr == name):
                    out.setdefault(where, set()).add(function.name)
    return out


def test_load_suite_is_called_where_the_plan_is_made_and_by_the_command_line_only() -> None:
    assert calls("load_suite") == LOAD_SUITE_CALLERS
    importers = {where for where, tree in modules() if any(_imports(node, "data", "fetch") for node in ast.walk(tree))}
    assert importers == {"cli.py"}  # data/fetch.py is the command line's


def _imports(node: ast.AST, package: str, module: str) -> bool:
    """Whether ``node`` imports guitest's ``package.module`` (relatively, as guitest's modules do, or by its whole name)."""
    if isinstance(node, ast.ImportFrom):
        return node.module == f"{package}.{module}" or (node.module == package and any(alias.name == module for alias in node.names))
    return isinstance(node, ast.Import) and any(alias.name == f"guitest.{package}.{module}" for alias in node.names)


#: what changes a list or a dict in place
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove"}


def _report_root(node: ast.AST) -> bool:
    """Whether ``node`` is ``report[...]...`` (a subscript chain on a name ``report``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
        if isinstance(node, ast.Name):
            return node.id == "report"
    return False


def test_nothing_assigns_into_a_report_outside_the_builder() -> None:
    """No ``report[...] = ...``, ``del report[...]``, ``report[...].append(...)`` (or another mutator) in guitest/ but in
    the builder: a report is final once built, the writer's included."""
    found = []
    for where, tree in modules():
        if where == "reporting/builder.py":
            continue
        for node in ast.walk(tree):
            targets: list[ast.AST] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                targets = [node.func.value] if isinstance(node.func.value, ast.Subscript) else []
            found += [f"{where}:{node.lineno}" for target in targets if _report_root(target)]
    assert found == []


def test_a_plan_is_the_same_where_the_data_is_read_and_where_it_is_not(tmp_path: Path) -> None:
    """The xdist controller reads the suite file into its plan without reading the data (the workers do): the report's
    part of the plan is the same as a serial run's; a worker's plan leaves out what only the report needs."""
    write_suite(tmp_path / "suites" / "tiny")
    path = tmp_path / KEY
    serial = plan_suite(path, KEY, RunInputs(str(tmp_path), "--data-root"))
    controller = plan_suite(path, KEY, RunInputs(str(tmp_path), "--data-root", reads_data=False))
    worker = plan_suite(path, KEY, RunInputs(str(tmp_path), "--data-root", writes_report=False))
    for field in ("record", "gate", "strata", "data_dir", "data", "fingerprint", "prompt", "run_fields", "suite_file"):
        assert getattr(serial, field) == getattr(controller, field), field
    assert serial.record["shape"] == {"tables": ["split", "data_type", "data_source"], "cross": [["split", "data_type"]], "average": "micro", "macro_over": None}
    assert serial.suite_file == {"sha256": manifest.digest(SUITE), "bytes": len(SUITE)} and serial.fingerprint is not None
    assert serial.fingerprint["files"] == 2 and serial.strata == ("split", "data_type", "data_source")
    assert worker.fingerprint is None and worker.suite_file is None and worker.record == serial.record


REMOVING = """
from pathlib import Path

from guitest.models.baselines import Oracle


class Removing(Oracle):
    \"\"\"The oracle, which removes the suite file before it answers (the first case of each process that runs cases).\"\"\"

    def generate(self, prompt, image, case):
        Path({path!r}).unlink(missing_ok=True)
        return super().generate(prompt, image, case)


def pytest_guitest_make_model(spec, settings, profile, profile_reason):
    return Removing(spec, settings, profile, profile_reason) if spec == "removing" else None
"""


@pytest.mark.parametrize("mode", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")])
def test_a_suite_file_removed_after_collection_changes_nothing_in_its_report(pytester: pytest.Pytester, mode: list[str]) -> None:
    """The report is built from what collection read (under xdist, the controller's plan made when the workers had
    collected), so a suite file that is gone by the run's end still gets its whole report, digest included. Before:
    no report, exit 11 (the controller read the suite file again at the end)."""
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest(REMOVING.format(path=str(pytester.path / KEY)))
    result = pytester.runpytest_subprocess("suites/tiny", "--model=removing", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert not (pytester.path / KEY).exists()
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert report["n_results"] == n_rows() and report["complete"] and report["overall"]["hit"] == n_rows()
    assert report["manifest"]["suite_file"] == {"sha256": manifest.digest(SUITE), "bytes": len(SUITE)}
    assert report["manifest"]["data"]["files"] == 2 and report["suite"]["shape"]["tables"] == ["split", "data_type", "data_source"]
