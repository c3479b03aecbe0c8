"""Suites written in Python: @guitest.samples + the guitest_model fixture give verdicts and a report."""

from __future__ import annotations

import json

import pytest

from builders import write_dataset

TEST_FILE = """
import guitest

@guitest.samples("data/screenspot_desktop.json", images="data/imgs", tags=["data_type", "data_source"])
def test_click(guitest_model, sample):
    assert guitest_model.click(sample) in guitest_model.box(sample)

@guitest.samples([{"id": "save", "image": "mac1.png", "instruction": "save the document", "box": [100, 300, 220, 330], "app": "editor"}],
                 images="data/imgs", tags=["app"])
def test_inline(guitest_model, sample):
    assert guitest_model.click(sample) in guitest_model.box(sample)
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_python_suite_reports_like_a_suite_file(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_dataset(pytester.path / "checks" / "data")
    (pytester.path / "checks" / "test_app.py").write_text(TEST_FILE)
    result = pytester.runpytest_subprocess("checks", "--model=oracle", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "test_app.json").read_text())
    assert report["overall"]["hit"] == report["n_selected"] == 4 + 1
    assert report["breakdown"]["data_source"]["macos"]["n"] == 2 and report["breakdown"]["app"]["editor"]["hit"] == 1
    # a model that misses: the asserts fail, the verdicts say miss, the report still counts them
    result = pytester.runpytest_subprocess("checks", "--model=center", "-p", "no:cacheprovider", *mode)
    assert result.ret == 1
    result.assert_outcomes(failed=5)
    report = json.loads((pytester.path / "reports" / "test_app.json").read_text())
    assert report["overall"]["miss"] == 5 and report["complete"]
    # exact selection by tag, as for suite files
    result = pytester.runpytest_subprocess("checks", "--model=oracle", "-m", "guitest(data_type='icon')", "-p", "no:cacheprovider", *mode)
    result.assert_outcomes(passed=2)


def test_bad_inline_sample_is_a_clear_collection_error(pytester: pytest.Pytester) -> None:
    write_dataset(pytester.path / "checks" / "data")
    (pytester.path / "checks" / "test_bad.py").write_text("import guitest\n@guitest.samples([{'image': 'x.png', 'instruction': 'a'}])\ndef test_x(guitest_model, sample):\n    pass\n")
    result = pytester.runpytest_subprocess("checks", "--model=oracle")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*each sample needs image, instruction, box*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_lf_folds_a_python_suite_into_its_previous_report(pytester: pytest.Pytester, mode: list[str]) -> None:
    # a screenshot missing: its case ends in error; put back, --lf runs it alone and folds it into the report of the
    # module (reports/test_app.json), as a suite file's re-run folds into its suite's report
    write_dataset(pytester.path / "checks" / "data", skip_images=("mac1.png",))
    (pytester.path / "checks" / "test_app.py").write_text(TEST_FILE)
    first = pytester.runpytest_subprocess("checks", "--model=oracle", *mode)
    assert first.ret == 1, first.stdout.str()
    before = json.loads((pytester.path / "reports" / "test_app.json").read_text())
    assert before["overall"]["error"] > 0 and before["overall"]["hit"] > 0
    write_dataset(pytester.path / "checks" / "data")
    again = pytester.runpytest_subprocess("checks", "--model=oracle", "--lf", *mode)
    assert again.ret == 0, again.stdout.str()
    report = json.loads((pytester.path / "reports" / "test_app.json").read_text())
    assert report["run"]["merged_into_report_of"] == before["run"]["started"]
    assert report["overall"]["hit"] == report["n_selected"] == 4 + 1 and report["complete"]
