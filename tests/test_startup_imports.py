"""Each process of a grounding run imports only what its part needs (docs/scale.md, "Start-up"; bench/bench_startup.py measures
what that saves):

- no process loads a live, desktop or browser module, jsonschema (a valid suite file and valid rows are checked by
  the schemas' generated predicates; jsonschema only describes an invalid one) or the ``openai`` package;
- a run that selects nothing reads its suite without PIL (images are read by the cases), the report's modules (no
  report is written) or the modules that run a case;
- under xdist the controller reads no screenshot (no PIL) and the workers write no report.
"""

from __future__ import annotations

import json

import pytest

from builders import write_suite

LIVE = ("guitest.live", "guitest.envs", "guitest.desktopenv.", "guitest.localdesktop", "guitest.miniwob.env", "guitest.miniwob.oracle", "playwright")
#: what each backend tells the general modules (guitest/backends.py reads every backend's entry for the run's header):
#: loaded by every run, and light (the desktop's package __init__ is its docstring)
BACKEND_ENTRIES = ("guitest.desktopenv.backend",)
NEVER = LIVE + ("jsonschema", "openai")
PIL = ("PIL", "guitest.images")
REPORT = ("guitest.reporting.builder", "guitest.reporting.report", "guitest.reporting.writer", "guitest.reporting.html", "guitest.reporting.compare")
CASES = ("guitest.run.case", "guitest.run.attempts", "guitest.plan.pysuite")  # running a case, Python suites
WATCHED = NEVER + PIL + REPORT + CASES + ("guitest.suite", "yaml")
CONFTEST = f"""
import json, os, sys

import pytest


@pytest.hookimpl(trylast=True)  # after guitest's own: the controller has written its report
def pytest_sessionfinish(session):
    loaded = sorted(m for m in sys.modules if m.startswith({WATCHED!r}))
    role = "worker" if hasattr(session.config, "workerinput") else "controller"
    with open(os.path.join({{root!r}}, "loaded-%d.json" % os.getpid()), "w") as f:
        json.dump({{"role": role, "loaded": loaded}}, f)
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[int, list[dict[str, object]]]:
    """Run the 6-case suite with ``args``; its exit code and, per process, its role and the watched modules it loaded."""
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest(CONFTEST.replace("{root!r}", repr(str(pytester.path))))
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "-p", "no:cacheprovider", *args)
    return result.ret, [json.loads(path.read_text()) for path in sorted(pytester.path.glob("loaded-*.json"))]


def of(loaded: object, prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if m.startswith(prefixes) and m not in BACKEND_ENTRIES]  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_grounding_run_imports_what_each_process_needs(pytester: pytest.Pytester, mode: list[str]) -> None:
    code, seen = run(pytester, *mode)
    assert code == 0
    assert len(seen) == (3 if mode else 1)  # the controller and each worker
    for process in seen:
        assert of(process["loaded"], NEVER) == [], process
        if process["role"] == "worker" or not mode:  # who runs the cases reads the screenshots
            assert "PIL" in process["loaded"], process
        else:
            assert of(process["loaded"], PIL) == [], process
        if process["role"] == "controller":  # who writes the report
            assert "guitest.reporting.writer" in process["loaded"], process
        else:
            assert of(process["loaded"], REPORT) == [], process


def test_a_run_that_selects_nothing_reads_the_suite_and_nothing_more(pytester: pytest.Pytester) -> None:
    code, seen = run(pytester, "-k", "none")
    assert code == pytest.ExitCode.NO_TESTS_COLLECTED
    [process] = seen
    assert {"guitest.suite", "yaml"} <= set(process["loaded"])  # type: ignore[arg-type]  # the suite was read
    assert of(process["loaded"], NEVER + PIL + REPORT + CASES) == [], process
