"""A run's session without pytest: cases run through guitest.run.session.Session directly, in this process.

The same run as tests/test_plugin.py's scenarios (a tiny ScreenSpot suite, baselines, a gate, --baseline, --lf,
the cache's ledger, xdist's worker input and lookahead), each in well under a second: the plugin's hooks only
hand pytest's items and reports to these calls.
"""

from __future__ import annotations

import copy
import functools
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from builders import n_rows, write_suite
from guitest.reporting import report as report_mod
from guitest.models.baselines import Oracle
from guitest.models.base import Case, Model, Prompt, Reply, SentImage
from guitest.plan.runconfig import ConfigError, from_values
from guitest.run.session import BUDGET_EXIT_CODE, INCOMPLETE_EXIT_CODE, Session
from guitest.verdict import case_result
from guitest.reporting.summary import Line

KEY = "suites/tiny/suite.yaml"


def make(tmp_path: Path, model: str | None = "oracle", **options: Any) -> Session:
    if not (tmp_path / KEY).exists():
        write_suite(tmp_path / "suites" / "tiny")
    context = {k: options.pop(k) for k in ("last_failed", "collect_only", "workers") if k in options}
    given = options.pop("session", {})
    return Session(from_values({"model": model, **options}, rootdir=str(tmp_path), **context), **given)


def collect(session: Session, root: Path, only: slice = slice(None)) -> list[tuple[int, Any, str]]:
    """Collect the tiny suite as the plugin does (``only`` the cases selected); ``(position, job, node id)`` per case."""
    plan, samples, live = session.read_suite(root / KEY, KEY)
    cases = [(n, functools.partial(session.run_case, s, plan.task, plan.prompt, live), f"{KEY}::{s.id}") for n, s in enumerate(samples)][only]
    jobs: list[Any] = [None] * len(samples)
    for n, job, _ in cases:
        jobs[n] = (n, job)
    session.collected(jobs, [nodeid for _, _, nodeid in cases])
    return cases


def run(session: Session, root: Path, drop: int = 0, only: slice = slice(None)) -> list[dict[str, Any]]:
    """Collect the tiny suite and run its cases in order as the plugin does, the last ``drop`` never reported."""
    cases = collect(session, root, only)
    results = []
    for n, job, nodeid in cases[: len(cases) - drop]:
        result = session.result(n, job)
        session.record(nodeid, result)
        results.append(result)
    return results


def written(root: Path, name: str = "tiny") -> dict[str, Any]:
    return json.loads((root / "reports" / f"{name}.json").read_text())


def test_a_run_writes_every_report_and_ends_with_pytests_own_status(tmp_path: Path) -> None:
    session = make(tmp_path)
    results = run(session, tmp_path)
    assert [r["verdict"] for r in results] == ["hit"] * n_rows()
    assert session.finish() == 0
    report = written(tmp_path)
    assert report["n_selected"] == report["n_results"] == n_rows() and report["complete"]
    assert report["overall"]["accuracy"] == 1.0 and report_mod.validate(report) == []
    assert report["run"]["cache"] == {"mode": "not used (this model costs nothing)", "attempts_answered_from_cache": 0, "cases_answered_from_cache": 0}
    assert [p.name for p in session.suites.paths[KEY]] == ["tiny.json", "tiny.md", "tiny.html"]
    assert (tmp_path / "reports" / "tiny.passed.json").is_file()
    lines = session.suites.summary_lines(KEY)
    assert lines[0] == Line("guitest: tiny (suites/tiny/suite.yaml)", sep="=")
    assert any(line.text.startswith("overall ") for line in lines)
    assert lines[-3].text.startswith("reports: ") and lines[-2].text.startswith("kept: ")
    assert lines[-1].text.startswith("note: this run has no gate, so it passed by finishing without errors")  # tiny has no gate


def test_the_gate_and_a_missing_result_set_the_exit_status(tmp_path: Path) -> None:
    session = make(tmp_path, "center", min_accuracy=0.5, gate_exit_code=42)
    run(session, tmp_path)
    assert session.finish() == 42
    failed = session.suites.reports[KEY]["gate"]
    assert failed["passed"] is False and failed["failures"] == ["overall accuracy 0.0000 < 0.5000"]
    assert Line("GATE FAILED: overall accuracy 0.0000 < 0.5000", ("red", "bold")) in session.suites.summary_lines(KEY)
    assert "FAILED: overall accuracy 0.0000 < 0.5000" in (tmp_path / "reports" / "tiny.md").read_text()
    # a case selected but never reported (a crashed worker): incomplete, whatever the gate says
    session = make(tmp_path, "center", min_accuracy=0.5)
    run(session, tmp_path, drop=1)
    assert session.finish() == INCOMPLETE_EXIT_CODE
    report = written(tmp_path)
    assert not report["complete"] and len(report["missing"]) == 1
    assert any(line.text.startswith("INCOMPLETE: 1 selected case(s) produced no result") for line in session.suites.summary_lines(KEY))


def test_a_regression_against_the_baseline_fails_the_gate(tmp_path: Path) -> None:
    run(first := make(tmp_path), tmp_path)
    first.finish()
    (tmp_path / "old.json").write_bytes((tmp_path / "reports" / "tiny.json").read_bytes())
    session = make(tmp_path, "center", baseline=str(tmp_path / "old.json"))
    run(session, tmp_path)
    assert session.finish() == 10
    report = session.suites.reports[KEY]
    assert report["baseline"]["regressions"] and report["gate"]["passed"] is False
    assert report["gate"]["failures"][0].startswith(f"regression against {tmp_path / 'old.json'}: ")
    lines = session.suites.summary_lines(KEY)
    assert Line(f"compared with --baseline {tmp_path / 'old.json'}", sep="-") in lines


def test_the_report_is_written_and_summed_up_as_the_builder_made_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder makes the report whole (its manifest, the baseline's regressions in its gate): nothing assigns into
    it afterwards, the writer included. Before: the manifest, the baseline and its gate failures were put in after."""
    from guitest.reporting import builder

    run(first := make(tmp_path), tmp_path)
    first.finish()
    (tmp_path / "old.json").write_bytes((tmp_path / "reports" / "tiny.json").read_bytes())
    built: list[tuple[Any, Any]] = []
    real = builder.suite_report

    def keep(*args: Any, **kwargs: Any) -> Any:
        report = real(*args, **kwargs)
        built.append((report, copy.deepcopy(report)))
        return report

    monkeypatch.setattr(builder, "suite_report", keep)
    session = make(tmp_path, "center", baseline=str(tmp_path / "old.json"))
    run(session, tmp_path)
    assert session.finish() == 10
    [(report, as_built)] = built
    assert session.suites.reports[KEY] is report and report == as_built
    assert as_built["baseline"]["regressions"] and as_built["gate"]["passed"] is False and as_built["manifest"]["suite_file"] is not None
    assert written(tmp_path) == json.loads(json.dumps(as_built))


def test_lf_merges_the_rerun_into_the_previous_report(tmp_path: Path) -> None:
    first = make(tmp_path)
    run(first, tmp_path, drop=2)
    assert first.finish() == INCOMPLETE_EXIT_CODE
    again = make(tmp_path, last_failed=True)
    assert len(run(again, tmp_path, only=slice(-2, None))) == 2  # --lf selects the two cases with no result
    assert again.finish() == 0
    merged = written(tmp_path)
    assert merged["complete"] and merged["n_results"] == n_rows() and merged["run"]["merged_into_report_of"] is not None


class PaidOracle(Oracle):
    """The oracle, but as a model that costs something: its replies go through the response cache."""

    cacheable = True
    calls = 0
    lock = threading.Lock()

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        with self.lock:
            PaidOracle.calls += 1
        return super().generate(prompt, image, case)


def test_the_cache_ledger_resumes_nothing_by_default_and_reuses_with_cache_on(tmp_path: Path) -> None:
    paid = {"session": {"make_model": lambda spec, settings, profile, reason: PaidOracle(spec, settings, profile, reason)}}
    PaidOracle.calls = 0
    first = make(tmp_path, cache="on", **paid)
    assert first.run is not None and first.run.resumes is None
    run(first, tmp_path)
    assert first.finish() == 0 and PaidOracle.calls == n_rows()
    first.close()
    second = make(tmp_path, cache="on", **paid)
    assert "are REUSED, not asked again" in second.header_lines()[3]
    results = run(second, tmp_path)
    assert second.finish() == 0 and PaidOracle.calls == n_rows()  # every reply from the cache
    assert all(r["cached"] is True and r["cached_runs"] == [first.run.id] for r in results)
    record = second.suites.reports[KEY]["run"]["cache"]
    assert record["cases_answered_from_cache"] == n_rows() and record["recorded_by_runs"] == [first.run.id]
    second.close()
    fresh = make(tmp_path, **paid)  # --cache=resume: a complete earlier run is never read back
    assert "a fresh run" in fresh.header_lines()[3]
    run(fresh, tmp_path)
    assert fresh.finish() == 0 and PaidOracle.calls == 2 * n_rows()
    fresh.close()


def test_a_worker_runs_in_the_controllers_run_and_writes_no_report(tmp_path: Path) -> None:
    controller = make(tmp_path)
    given = controller.worker_input()
    worker = make(tmp_path, session={"worker": given, "pending": lambda limit: [5, 3, 99]})
    assert worker.is_worker and worker.run_stamp == controller.run_stamp
    collect(worker, tmp_path)
    assert worker.suites.selected == {}  # the controller keeps the selection
    # the lookahead follows xdist's queue on a worker (positions it does not hold are left out)
    assert [p for p, _ in worker._upcoming(0, 8)] == [5, 3]
    assert worker.finish() == 0 and not (tmp_path / "reports").exists()


def test_the_lookahead_starts_the_next_cases_while_the_first_is_asked(tmp_path: Path) -> None:
    session = make(tmp_path, concurrency=2)
    started = [threading.Event() for _ in range(4)]
    release = threading.Event()

    def job(n: int) -> dict[str, Any]:
        started[n].set()
        if n == 0:
            assert release.wait(10)
        return {"id": str(n), "verdict": "hit"}

    session.collected([(n, functools.partial(job, n)) for n in range(4)], [])
    waiter = threading.Thread(target=lambda: session.result(0, session.jobs[0][1]))  # type: ignore[index]
    waiter.start()
    assert all(e.wait(10) for e in started[1:])  # started while case 0 still waits for its reply
    release.set()
    waiter.join(10)
    assert session.result(3, session.jobs[3][1]) == {"id": "3", "verdict": "hit"}  # type: ignore[index]
    session.close()


def test_bad_starts_are_config_errors_that_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--model=nosuch:x: "):
        make(tmp_path, "nosuch:x")
    session = make(tmp_path, None)
    with pytest.raises(ConfigError, match=r"^6 guitest case\(s\) selected but no model given: pass --model=SPEC"):
        run(session, tmp_path)
    collect(make(tmp_path, None, collect_only=True), tmp_path)  # listing cases needs no model
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    paid = {"make_model": lambda spec, settings, profile, reason: PaidOracle(spec, settings, profile, reason)}
    with pytest.raises(ConfigError, match=r"^--cache-dir=.*not-a-folder: cannot open the response cache .*; give a writable folder or pass --cache=off$"):
        make(tmp_path, cache_dir=str(blocker), session=paid)


def test_endpoint_stats_of_every_worker_are_summed_and_an_unreachable_one_counted(tmp_path: Path) -> None:
    session = make(tmp_path)
    session.endpoint_stats += [
        [
            {"url": "http://a/v1", "replies": 3, "failures": 1, "down": None, "seconds": 0.6, "rested": 1},
            {"url": "http://b/v1", "replies": 1, "failures": 0, "down": None, "seconds": 2.5, "rested": 0},
        ],
        [
            {"url": "http://a/v1", "replies": 2, "failures": 4, "down": "refused", "seconds": 0.4, "rested": 0},
            {"url": "http://c/v1", "replies": 0, "failures": 2, "down": None},
        ],  # a worker of an older guitest: no seconds, no rests
    ]
    down = {"url": "http://a/v1", "state": "unreachable", "reason": "refused"}
    record = session.endpoint_record([{"id": "x"}, {"id": "y", "unreachable": down}, {"id": "z", "unreachable": down}])
    assert record == {
        "endpoints": [
            {"url": "http://a/v1", "replies": 5, "failures": 5, "down": "refused", "latency_s": 0.2, "rested": 1},
            {"url": "http://b/v1", "replies": 1, "failures": 0, "down": None, "latency_s": 2.5, "rested": 0},
            {"url": "http://c/v1", "replies": 0, "failures": 2, "down": None, "latency_s": None, "rested": 0},
        ],
        "unreachable": {**down, "cases_not_asked": 2},
    }


class _Paid(Model):
    """A model that costs something (metered) and caches nothing; its answers come from the jobs the test gives."""

    cacheable = False


def test_a_budget_stop_ends_at_the_first_case_not_asked_and_keeps_every_answer(tmp_path: Path) -> None:
    """The plugin's flow at a budget's stop, without pytest: the case that did not ask ends the run (no result, no
    failure); an answer that finished ahead of it is kept for the report; an error that finished ahead is not (it has
    no test report, so --lf must run it) and what its calls spent is counted as abandoned; every case left is unasked."""
    session = make(tmp_path, "paid:x", max_total_tokens=100, concurrency=4, session={"make_model": lambda spec, settings, profile, reason: _Paid(spec, settings, profile, reason)})
    _, samples, _ = session.read_suite(tmp_path / KEY, KEY)
    why = "--max-total-tokens=100 reached"
    paid = {"calls": 1, "seconds": 0.1, "input_tokens": 90, "output_tokens": 10}
    timeout = {"calls": 1, "seconds": 2.0, "unreported": 1, "why": {"timeout": 1}}
    preset = [
        case_result(samples[0].id, "hit", samples[0].tags, usage=paid),
        case_result(samples[1].id, "error", samples[1].tags, error="not asked", not_asked=why),
        case_result(samples[2].id, "hit", samples[2].tags, usage=paid),  # its call was in flight when the budget was reached
        case_result(samples[3].id, "error", samples[3].tags, error="timed out", failed_usage=timeout),
        *(case_result(s.id, "error", s.tags, error="not asked", not_asked=why) for s in samples[4:]),
    ]
    names = [f"{KEY}::{s.id}" for s in samples]
    jobs: list[Any] = [(n, functools.partial(dict, result)) for n, result in enumerate(preset)]
    session.collected(jobs, names, names=names)
    ran = []
    for n, (_, job) in enumerate(jobs):
        stop = session.budget_stop(n, job, names[n])
        if stop is not None:
            break
        ran.append(n)
        session.record(names[n], session.result(n, job))
    assert ran == [0] and stop == f"guitest: the run's budget is spent ({why}): no case was asked after this; raise the limit and re-run with --lf"
    assert session.finish() == BUDGET_EXIT_CODE
    report = written(tmp_path)
    assert sorted(c["id"] for c in report["cases"]) == sorted([samples[0].id, samples[2].id])  # the answer that finished ahead is kept
    assert session.unasked == [names[1], names[3], *names[4:]] and sorted(report["missing"]) == sorted(s.id for s in [samples[1], samples[3], *samples[4:]])
    assert report["run"]["usage"]["abandoned"] == {"cases": 1, "paid": {}, "failed": timeout}
    assert report["run"]["budget"] == {"max_cost": None, "max_total_tokens": 100, "reached": why, "spent": {"cost": None, "tokens": 0}, "cases_not_asked": 4}
    lines = [line.text for line in session.suites.summary_lines(KEY)]
    assert any("NOT in these totals: 1 call(s) of 1 case(s) run ahead whose results no report holds (1 failed call(s) (1 timeout; no tokens reported))" in t for t in lines)
    assert f"BUDGET REACHED: {why}: 0 tokens spent: 4 case(s) not asked, missing from the report (exit status 13); " in "\n".join(lines)
    session.close()
