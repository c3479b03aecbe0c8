"""The plugin end to end through pytester: each scenario serial and with ``-n 2``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import ROWS, center_norm, n_rows, write_suite
from pages import viewer_data
from guitest.reporting.report import validate

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> list[str]:
    return request.param


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*args)


def report_of(pytester: pytest.Pytester, name: str = "tiny") -> dict:
    return json.loads((pytester.path / "reports" / f"{name}.json").read_text())


def test_oracle_hits_every_case_and_writes_a_valid_report(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", "--model=oracle", *mode)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=n_rows())
    report = report_of(pytester)
    assert validate(report) == []
    assert report["overall"]["hit"] == n_rows() and report["overall"]["accuracy"] == 1.0
    assert report["n_selected"] == report["n_results"] == n_rows() and report["complete"]
    assert report["breakdown"]["split/data_type"]["desktop/icon"]["n"] == 2
    assert (pytester.path / "reports" / "tiny.md").read_text().startswith("# guitest report: tiny")
    result.stdout.fnmatch_lines(["*guitest: tiny*", "overall * 6 * 6 * 100.0*"])


def test_center_misses_are_results_not_failures(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", "--model=center", "-rA", *mode)
    assert result.ret == 0, result.stdout.str()
    report = report_of(pytester)
    # The screen centre lies in none of the truth boxes of ROWS.
    assert report["overall"]["miss"] == n_rows() and report["overall"]["hit"] == 0
    result.stdout.fnmatch_lines([f"*{n_rows()} missed*"])
    assert "failed" not in result.stdout.lines[-1]


def test_serial_and_xdist_reports_agree_byte_for_byte(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    reports = []
    for extra in ([], ["-n", "2"]):
        result = run(pytester, "suites/tiny", "--model=random", "--seed=3", *extra)
        assert result.ret == 0, result.stdout.str()
        report = report_of(pytester)
        report.pop("run")
        reports.append(json.dumps(report, sort_keys=True))
    assert reports[0] == reports[1]
    verdicts = json.loads(reports[0])["cases"]
    assert {c["verdict"] for c in verdicts} <= {"hit", "miss"}


def test_keyword_and_marker_select_by_tag(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    windows_icons = [b for _, _, _, boxes in ROWS for b in boxes if b[5] == "icon" and b[6] == "windows"]
    result = run(pytester, "suites/tiny", "--model=oracle", "-k", "icon and windows", *mode)
    result.assert_outcomes(passed=len(windows_icons))
    assert report_of(pytester)["n_selected"] == len(windows_icons)
    result = run(pytester, "suites/tiny", "--model=oracle", "-m", "guitest(data_source='macos')", *mode)
    result.assert_outcomes(passed=2)


def test_node_ids_are_stable_and_readable(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", "--collect-only", "-q")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert ids[:2] == ["suites/tiny/suite.yaml::desktop-windows-text-0", "suites/tiny/suite.yaml::desktop-windows-icon-1"]
    assert len(ids) == n_rows()


def test_missing_image_is_an_error_outcome_and_lf_reruns_it(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny", skip_images=("phone1.png",))
    result = run(pytester, "suites/tiny", "--model=oracle", *mode)
    assert result.ret == 1
    result.assert_outcomes(passed=n_rows() - 2, failed=2)
    result.stdout.fnmatch_lines(["*mobile-ios-icon-0*error: image file missing:*phone1.png*"])
    report = report_of(pytester)
    assert report["overall"]["error"] == 2 and report["overall"]["accuracy"] == 1.0
    assert report["complete"]
    # The image arrives; --lf re-runs exactly the two cases that errored.
    from PIL import Image

    Image.new("RGB", (300, 600)).save(pytester.path / "suites" / "tiny" / "data" / "imgs" / "phone1.png")
    result = run(pytester, "suites/tiny", "--model=oracle", "--lf", *mode)
    assert result.ret == 0
    result.assert_outcomes(passed=2)
    # ... and the report is whole again: the re-run's results replace the errors of the first run.
    report = report_of(pytester)
    assert report["n_selected"] == report["n_results"] == n_rows() and report["complete"]
    assert report["overall"]["hit"] == n_rows() and report["overall"]["error"] == 0
    assert report["run"]["merged_into_report_of"] is not None


def test_gate_fails_with_its_own_exit_code(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", "--model=center", "--min-accuracy=0.5", *mode)
    assert result.ret == 10
    result.stdout.fnmatch_lines(["*GATE FAILED: overall accuracy 0.0000 < 0.5000*"])
    result = run(pytester, "suites/tiny", "--model=center", "--min-accuracy=0.5", "--gate-exit-code=42", *mode)
    assert result.ret == 42
    result = run(pytester, "suites/tiny", "--model=oracle", "--min-accuracy=0.99", *mode)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*gate passed: accuracy >= 0.9900*"])


def test_suite_gate_per_tag(pytester: pytest.Pytester) -> None:
    gate = "gate:\n  by:\n    data_type=icon: 0.9\n    data_source=linux: 0.5\n"
    write_suite(pytester.path / "suites" / "tiny", extra=gate)
    result = run(pytester, "suites/tiny", "--model=center")
    assert result.ret == 10
    result.stdout.fnmatch_lines(["*GATE FAILED: data_type=icon accuracy 0.0000 < 0.9000*"])
    result.stdout.fnmatch_lines(["*gate note: data_source=linux: no scored case in this run*"])
    assert report_of(pytester)["gate"]["failures"] == ["data_type=icon accuracy 0.0000 < 0.9000"]


def test_bad_annotation_row_stops_collection_with_file_row_and_field(pytester: pytest.Pytester, mode: list[str]) -> None:
    folder = write_suite(pytester.path / "suites" / "tiny")
    path = folder / "data" / "screenspot_mobile.json"
    rows = json.loads(path.read_text())
    rows[1]["bbox"] = [1, 2, 3]
    del rows[0]["instruction"]
    path.write_text(json.dumps(rows))
    result = run(pytester, "suites/tiny", "--model=oracle", *mode)
    assert result.ret == (2 if not mode else 1)  # xdist reports a worker's collection error as a failure
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "screenspot_mobile.json, row 0, field 'instruction': is required but missing" in out
    assert "screenspot_mobile.json, row 1, field 'bbox'" in out
    assert "2 invalid annotation row(s)" in out
    assert "Traceback" not in out
    assert not (pytester.path / "reports" / "tiny.json").exists()


def test_bad_suite_file_is_one_clear_error(pytester: pytest.Pytester) -> None:
    folder = write_suite(pytester.path / "suites" / "tiny")
    text = (folder / "suite.yaml").read_text().replace("task: grounding", "task: grounding\ntsgs: [x]")
    (folder / "suite.yaml").write_text(text)
    result = run(pytester, "suites/tiny", "--model=oracle")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*suite.yaml, field '(top level)': Additional properties are not allowed ('tsgs' was unexpected)*"])
    assert "Traceback" not in result.stdout.str()


def test_missing_data_folder_says_where_it_looked(pytester: pytest.Pytester, mode: list[str]) -> None:
    (pytester.path / "suites" / "real").mkdir(parents=True)
    (pytester.path / "suites" / "real" / "suite.yaml").write_text(
        "name: real\nformat: screenspot_pro\ndata:\n  dir: ScreenSpot-Pro\n  annotations: annotations/*.json\n  howto: fetch it from the hub\ntask: grounding\n"
    )
    empty = pytester.path / "empty-root"
    empty.mkdir()
    result = run(pytester, "suites/real", "--model=oracle", f"--data-root={empty}", *mode)
    assert result.ret == (2 if not mode else 1)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*data folder {empty}/ScreenSpot-Pro does not exist*", "*from --data-root*", "*To get the data: fetch it from the hub*"])


def test_no_model_is_a_usage_error(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", *mode)
    assert result.ret == 4
    assert "no model given: pass --model=SPEC" in result.stderr.str() + result.stdout.str()
    assert run(pytester, "suites/tiny", "--collect-only", "-q").ret == 0


def test_unknown_model_spec_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", "--model=gpt5")
    assert result.ret == 4
    assert "unknown model 'gpt5'; known: openai:NAME" in result.stderr.str()


def test_replay_scores_recorded_replies_and_errors_on_missing_ones(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    x, y = center_norm("desktop", 0)
    lines = [
        {"id": "desktop-windows-text-0", "response": f"Thinking... Answer: [{x}, {y}]"},
        {"id": "desktop-windows-icon-1", "response": "Answer: [0.01, 0.01]"},
        {"id": "desktop-macos-icon-2", "response": "I see no such button."},
        {"id": "desktop-macos-text-3", "response": "It is probably the blue one"},
        {"id": "mobile-ios-icon-0", "response": "Answer: [0.1", "finish_reason": "length"},
    ]
    (pytester.path / "replies.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = run(pytester, "suites/tiny", "--model=replay:replies.jsonl", *mode)
    assert result.ret == 1  # mobile-android-text-1 has no reply: an error
    verdicts = {c["id"]: c["verdict"] for c in report_of(pytester)["cases"]}
    assert verdicts == {
        "desktop-windows-text-0": "hit",
        "desktop-windows-icon-1": "miss",
        "desktop-macos-icon-2": "refused",
        "desktop-macos-text-3": "unparsed",
        "mobile-ios-icon-0": "truncated",
        "mobile-android-text-1": "error",
    }
    summary = result.stdout.lines[-1]
    for part in ("1 failed", "1 passed", "1 missed", "1 unparsed", "1 refused", "1 truncated"):
        assert part in summary


def test_worker_crash_never_passes(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest("import os\ndef pytest_runtest_call(item):\n    if item.name == 'desktop-macos-icon-2':\n        os._exit(3)\n")
    result = run(pytester, "suites/tiny", "--model=oracle", "-n", "2", "--min-accuracy=0.1")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*INCOMPLETE: 1 selected case(s) produced no result*desktop-macos-icon-2*"])
    report = report_of(pytester)
    assert not report["complete"] and report["missing"] == ["desktop-macos-icon-2"]
    assert report["n_results"] == n_rows() - 1
    serial = run(pytester, "suites/tiny", "--model=oracle")
    assert serial.ret != 0


def test_report_paths_from_options(pytester: pytest.Pytester, tmp_path: Path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    target = tmp_path / "out" / "{suite}-result.json"
    result = run(pytester, "suites/tiny", "--model=oracle", f"--report-json={target}", f"--report-dir={tmp_path / 'dir'}")
    assert result.ret == 0
    assert json.loads((tmp_path / "out" / "tiny-result.json").read_text())["overall"]["hit"] == n_rows()
    assert (tmp_path / "dir" / "tiny.json").is_file() and (tmp_path / "dir" / "tiny.md").is_file()


def test_html_report_junit_properties_and_baseline_gate(pytester: pytest.Pytester, mode: list[str], tmp_path: Path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    base = tmp_path / "base.json"
    assert run(pytester, "suites/tiny", "--model=oracle", f"--report-json={base}", *mode).ret == 0
    html = (pytester.path / "reports" / "tiny.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "desktop-macos-icon-2" in [c["id"] for c in viewer_data(pytester.path / "reports" / "tiny.html")[0]["cases"]]
    # a worse model against that baseline: a significant regression fails the gate
    result = run(pytester, "suites/tiny", "--model=center", f"--baseline={base}", f"--junitxml={tmp_path / 'j.xml'}", *mode)
    assert result.ret == 10, result.stdout.str()
    result.stdout.fnmatch_lines(["*GATE FAILED: regression against*: overall*"])
    report = report_of(pytester)
    assert report["baseline"]["regressions"] == ["overall"]
    junit = (tmp_path / "j.xml").read_text()
    assert junit.count('name="guitest.verdict" value="miss"') == n_rows()
    assert 'name="guitest.tag.data_source" value="macos"' in junit
    # the same model as the baseline: nothing to report
    assert run(pytester, "suites/tiny", "--model=oracle", f"--baseline={base}", *mode).ret == 0
    # a baseline that shares no case with the run (another suite's, or ids that changed): nothing to compare, never a pass
    other = json.loads(base.read_text())
    for case in other["cases"]:
        case["id"] = "renamed-" + case["id"]
    (tmp_path / "other.json").write_text(json.dumps(other))
    result = run(pytester, "suites/tiny", "--model=oracle", f"--baseline={tmp_path / 'other.json'}", *mode)
    assert result.ret == 10, result.stdout.str()
    result.stdout.fnmatch_lines(["GATE FAILED: not comparable with *other.json: the runs share no selected case*", "*NOT COMPARABLE*"])
    assert report_of(pytester)["baseline"]["comparable"]["enough"] is False
    assert run(pytester, "suites/tiny", "--model=oracle", f"--baseline={tmp_path / 'nope.json'}").ret == 4


def test_a_keyword_that_selects_no_case_gets_a_hint_naming_it(pytester: pytest.Pytester, mode: list[str]) -> None:
    """Before: exit 5 and only "6 deselected" (under -n 2, "no tests ran")."""
    write_suite(pytester.path / "suites" / "tiny")
    result = run(pytester, "suites/tiny", "--model=oracle", "-k", "iconn and windows", *mode)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [
            "guitest: -k 'iconn and windows' selected none of the 6 guitest case(s) collected. -k matches substrings of case ids and of keywords, "
            "and each tag value of a case is a keyword (here: android, desktop, icon, ios, macos, mobile, text, windows); -m takes the marker "
            "guitest(tag='value'), e.g. -m \"guitest(data_source='android')\". List the cases with --collect-only -q",
        ]
    )
    assert "selected none" not in run(pytester, "suites/tiny", "--model=oracle", "-k", "icon and windows", *mode).stdout.str()


def test_normalized_answers_under_a_pixel_profile_are_flagged(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    x, y = center_norm("desktop", 0)
    (pytester.path / "replies.jsonl").write_text(json.dumps({"id": "desktop-windows-text-0", "response": f"({x:.3f}, {y:.3f})"}) + "\n")
    result = run(pytester, "suites/tiny", "--model=replay:replies.jsonl", "--model-profile=qwen2.5-vl", "-k", "desktop-windows-text-0")
    report = report_of(pytester)
    assert report["cases"][0]["verdict"] == "miss" and report["notes"]["coordinates_look_normalized"] == 1
    assert any("warning: 1 answer(s) gave coordinates within [0, 1] although profile qwen2.5-vl reads pixel_sent" in line for line in result.stdout.lines)


def test_garbage_collector_is_paused_only_while_suites_are_collected(pytester: pytest.Pytester, mode: list[str]) -> None:
    """Collecting a suite pauses Python's cyclic collector (a third of the time of a 100,000-case
    collection, docs/bench.md); the cases then run with it on, and a collector the user switched
    off stays off."""
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makepyfile(
        test_gc="""
        import gc, os

        def test_collector_state_while_running():
            assert gc.isenabled() == (os.environ.get("EXPECT_GC") == "on")
        """
    )
    pytester.makeconftest(
        """
        import gc, os

        def pytest_configure(config):
            if os.environ.get("EXPECT_GC") == "off":
                gc.disable()  # the user's choice, before any collection
        """
    )
    for expect in ("on", "off"):
        pytester._monkeypatch.setenv("EXPECT_GC", expect)
        result = run(pytester, "suites/tiny", "test_gc.py", "--model=oracle", *mode)
        assert result.ret == 0, result.stdout.str()
        result.assert_outcomes(passed=n_rows() + 1)  # every case hit, and the check of the collector passed
