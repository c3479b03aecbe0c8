"""MMBench-GUI L1 (multiple choice) and L2 (grounding): readers, scores, and whole runs, serial and -n 2."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import fakeserver
from mmbench_gui_data import L1_ROWS, copy_suites, l2_center, l2_rows, write_data

from guitest.datapath import ENV_VAR, LMU_ENV_VAR, locate, resolve_root
from guitest.errors import SuiteError
from guitest.formats import read_suite_samples
from guitest.models.base import Case
from guitest.profiles import get as get_profile
from guitest.sample import Sample
from guitest.suite import load_suite
from guitest.tasks.choice import Choice
from guitest.tasks.grounding import Grounding

MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])


def samples(tmp_path: Path, level: str, l1: list[Any] | None = None, l2: list[Any] | None = None, settings: dict[str, Any] | None = None):
    """The samples the shipped suite of ``level`` reads from test-written data."""
    write_data(tmp_path / "data", l1, l2)
    folder = copy_suites(tmp_path, settings)
    suite = load_suite(folder / level / "suite.yaml")
    data_dir = locate(str(suite.folder), suite.data, str(tmp_path / "data"), "--data-root", str(suite.path))
    return read_suite_samples(suite, data_dir)


# -- readers -------------------------------------------------------------------------------------


def test_l1_nested_groups_and_flat_rows_each_make_one_case_per_question(tmp_path: Path) -> None:
    got = samples(tmp_path, "l1")
    assert [s.id for s in got] == ["os_windows-easy-0-0", "os_windows-hard-0-1", "os_ios-medium-1-0", "os_android-easy-2-0", "os_android-medium-2-1"]
    first = got[1]
    assert first.tags == {"level": "L1", "platform": "os_windows", "app_name": "Paint", "difficulty": "hard"}
    assert first.instruction == "Where is the colour palette?"
    assert first.data["options"] == {"A": "top", "B": "bottom", "C": "left side", "D": "right side"} and first.data["answer"] == "C"
    assert first.size == (200, 100)
    # image_path is relative to offline_images/<platform>/, unless it already starts with the platform folder
    assert first.image.endswith("MMBench-GUI/offline_images/os_windows/paint.png")
    assert got[2].image.endswith("MMBench-GUI/offline_images/os_ios/phone.png")


def test_l2_normalized_boxes_become_pixels_of_the_original_image(tmp_path: Path) -> None:
    got = {s.id: s for s in samples(tmp_path, "l2")}
    row0 = got["os_windows-basic-text-0"]  # [0.1, 0.2, 0.3, 0.4] of 200 x 100
    assert row0.box == pytest.approx((20.0, 20.0, 60.0, 40.0))
    assert got["os_mac-advanced-text-3"].box == pytest.approx((240.0, 120.0, 300.0, 150.0))  # [0.8, 0.8, 1, 1] of 300 x 150
    assert row0.tags == {"level": "L2", "platform": "os_windows", "app_name": "Paint", "data_type": "text", "grounding_type": "basic"}


def test_l2_minus_one_is_clipped_to_the_edge_and_counted(tmp_path: Path) -> None:
    rows = l2_rows()
    rows[0]["bbox"] = [-1, 0.2, 0.3, 0.4]  # MMBench-GUI reads -1 as 0
    sample = next(s for s in samples(tmp_path, "l2", l2=rows) if s.id == "os_windows-basic-text-0")
    assert sample.notes == ("bbox_minus_one",)
    truth, notes, problem = Grounding().truth(sample, (200, 100))
    assert (truth, notes, problem) == ((0, 20.0, 60.0, 40.0), ["bbox_clipped"], None)


def test_circular_keeps_one_case_per_question_with_its_options_as_published(tmp_path: Path) -> None:
    plain = samples(tmp_path / "plain", "l1")
    circular = samples(tmp_path / "circular", "l1", settings={"circular": True})
    assert [s.id for s in circular] == [s.id for s in plain] and len(circular) == 5
    palette = circular[1]
    assert palette.data == {
        "question": "Where is the colour palette?",
        "options": {"A": "top", "B": "bottom", "C": "left side", "D": "right side"},
        "answer": "C",
        "question_id": "0-1",
    }


def _choice_case(sample: Sample, task: Choice, variant: int = 0) -> Case:
    truth, _, problem = task.truth(sample, (200, 100))
    assert problem is None
    return Case(sample=sample, original_size=(200, 100), truth=truth, sent_size=(200, 100), task=task, variant=variant)


def test_circular_asks_every_rotation_and_judges_each_by_its_own_letters(tmp_path: Path) -> None:
    palette = samples(tmp_path, "l1")[1]  # C = "left side" of top, bottom, left side, right side
    task, profile = Choice({"circular": True}), get_profile("generic")
    assert task.variants(_choice_case(palette, task)) == 4 and Choice().variants(_choice_case(palette, Choice())) == 1
    shown = [task.build_prompt(profile, _choice_case(palette, task, v), None).user for v in range(4)]
    assert "A. top\nB. bottom\nC. left side\nD. right side" in shown[0]  # rotation 0: as published
    assert "A. bottom\nB. left side\nC. right side\nD. top" in shown[1]
    assert "A. left side\nB. right side\nC. top\nD. bottom" in shown[2]
    assert "A. right side\nB. top\nC. bottom\nD. left side" in shown[3]
    right = ["C", "B", "A", "D"]  # where "left side" stands in each rotation
    for v in range(4):
        case = _choice_case(palette, task, v)
        assert [task.judge(f"Answer: {letter}", "stop", case, profile, (200, 100))[0] for letter in "ABCD"] == ["hit" if letter == right[v] else "miss" for letter in "ABCD"]
        assert task.judge(task.oracle_text(case, profile) or "", "stop", case, profile, (200, 100))[0] == "hit"
        assert task.judge("Answer: left side", "stop", case, profile, (200, 100))[0] == "hit"  # the text quoted back, in any rotation


def _broken(level: str, mutate) -> tuple[list[Any] | None, list[Any] | None]:
    rows = copy.deepcopy(L1_ROWS if level == "l1" else l2_rows())
    mutate(rows)
    return (rows, None) if level == "l1" else (None, rows)


@pytest.mark.parametrize(
    ("level", "mutate", "where", "says"),
    [
        ("l1", lambda r: r[0]["groups"][1].update(difficulty="trivial"), "L1_annotations.json, row 0, field 'groups[1].difficulty'", "trivial"),
        ("l1", lambda r: r[0]["groups"][0].update(answer="D"), "L1_annotations.json, row 0, field 'groups[0].answer'", "not one of the options ['A', 'B', 'C']"),
        ("l1", lambda r: r[1].pop("question"), "L1_annotations.json, row 1, field 'question'", "required"),
        ("l1", lambda r: r[2]["groups"][0]["options"].update(G="extra"), "L1_annotations.json, row 2, field 'groups[0].options'", "G"),
        ("l1", lambda r: r[0].update(platform="windows"), "L1_annotations.json, row 0, field 'platform'", "windows"),
        ("l2", lambda r: r[3].update(bbox=[0.1, 0.2, 30, 0.4]), "L2_annotations.json, row 3, field 'bbox[2]'", "30"),
        ("l2", lambda r: r[1].pop("grounding_type"), "L2_annotations.json, row 1, field 'grounding_type'", "required"),
        ("l2", lambda r: r[0].update(bbox=[0.3, 0.2, 0.1, 0.4]), "L2_annotations.json, row 0, field 'bbox'", "no area"),
    ],
)
def test_a_broken_row_is_named_by_file_row_and_field(tmp_path: Path, level: str, mutate, where: str, says: str) -> None:
    l1, l2 = _broken(level, mutate)
    with pytest.raises(SuiteError) as info:
        samples(tmp_path, level, l1, l2)
    message = str(info.value)
    assert where in message and says in message, message
    assert "nothing was run" in message


def test_lmudata_is_the_data_root_after_the_option_and_guitest_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv(LMU_ENV_VAR, str(tmp_path / "lmu"))
    assert resolve_root(None) == ((tmp_path / "lmu").resolve(), "$LMUData")
    assert resolve_root(str(tmp_path / "opt"))[1] == "--data-root"
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "gt"))
    assert resolve_root(None) == ((tmp_path / "gt").resolve(), f"${ENV_VAR}")


# -- scores --------------------------------------------------------------------------------------


def case(cid: str, verdict: str, n: int, platform: str = "os_ios", difficulty: str = "easy", **more: Any) -> dict[str, Any]:
    """A result as the report stores it; ``more`` adds e.g. its ``prediction`` or ``attempts``."""
    return {"id": cid, "verdict": verdict, "tags": {"platform": platform, "difficulty": difficulty}, "truth": {"answer": "A", "n_options": n}, **more}


def rotations(*verdicts: str) -> dict[str, Any]:
    """The prediction of a circular attempt: each rotation's verdict, in rotation order."""
    return {"variants": [{"verdict": v} for v in verdicts], "hits": verdicts.count("hit")}


def test_option_weighted_score_renormalises_per_cell_and_weights_cells_by_samples() -> None:
    cases = [
        case("a", "hit", 2),
        case("b", "miss", 4),  # os_ios/easy: (1/2) / (1/2 + 3/4) = 0.4
        case("c", "hit", 4, difficulty="hard"),
        case("d", "unparsed", 4, difficulty="hard"),
        case("e", "hit", 4, difficulty="hard"),  # 2/3
        case("f", "error", 2, difficulty="hard"),  # errors are left out
    ]
    metrics = Choice({"option_weighted": True}).summarize([c for c in cases if c["verdict"] != "error"] + [cases[-1]])
    weighted = metrics["option_weighted"]  # type: ignore[index]
    assert weighted["by"]["platform/difficulty"] == {"os_ios/easy": 0.4, "os_ios/hard": round(2 / 3, 6)}
    assert weighted["by"]["difficulty"] == {"easy": 0.4, "hard": round(2 / 3, 6)}
    assert weighted["overall"] == round((0.4 * 2 + 2 / 3 * 3) / 5, 6)  # sample-weighted mean of the cells
    assert "circular" not in metrics  # type: ignore[operator]


def test_circular_metrics_count_single_rotations_of_the_scored_cases() -> None:
    cases = [
        case("q1", "hit", 3, prediction=rotations("hit", "hit", "hit")),
        case("q2", "miss", 2, platform="os_web", prediction=rotations("hit", "miss")),
        case("q3", "error", 2, prediction=rotations("hit", "error")),  # errored: left out, as from the table
        case(
            "q4",
            "partial",
            2,
            attempts=[  # --repeats 2: every attempt's rotations count
                {"verdict": "hit", "prediction": rotations("hit", "hit")},
                {"verdict": "miss", "prediction": rotations("miss", "hit")},
            ],
        ),
    ]
    task = Choice({"circular": True})
    circ = task.summarize(cases)["circular"]  # type: ignore[index]
    assert (circ["questions"], circ["rotations"], circ["right"], circ["rotation_accuracy"]) == (3, 9, 7, round(7 / 9, 6))
    assert circ["by"]["platform/difficulty"] == {
        "os_ios/easy": {"rotations": 7, "right": 6, "rotation_accuracy": round(6 / 7, 6)},
        "os_web/easy": {"rotations": 2, "right": 1, "rotation_accuracy": 0.5},
    }
    assert circ["by"]["rotation"] == {
        "0": {"rotations": 4, "right": 3, "rotation_accuracy": 0.75},
        "1": {"rotations": 4, "right": 3, "rotation_accuracy": 0.75},
        "2": {"rotations": 1, "right": 1, "rotation_accuracy": 1.0},
    }
    lines = task.summary_lines({"circular": circ})
    assert "3 question(s); single rotations answered right: 77.8% of 9" in lines[0]
    assert lines[2] == "  by rotation (0 = as published): 0 75.0%, 1 75.0%, 2 100.0%"


def test_no_task_metrics_without_the_settings() -> None:
    assert Choice().summarize([case("a", "hit", 2)]) is None


# -- whole runs ----------------------------------------------------------------------------------


def _report(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / f"{name}.json").read_text())


def _stable(report: dict[str, Any]) -> str:
    """The report without what is the run's own time: the run record, and the model calls' wall seconds."""

    def timeless(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k != "seconds"}
        return [timeless(v) for v in value] if isinstance(value, list) else value

    return json.dumps(timeless({k: v for k, v in report.items() if k != "run"}), sort_keys=True)


@MODES
def test_oracle_scores_everything_on_l1_and_l2_and_level_selects(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path, {"option_weighted": True, "circular": True})
    result = pytester.runpytest_subprocess("suites/mmbench_gui", "-m", "guitest(level='L1')", "--model=oracle", "--data-root=data", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    # the oracle answers every rotation right: one passing case per question
    result.stdout.fnmatch_lines(["*circular evaluation*5 question(s); single rotations answered right: 100.0% of 18*", "*5 passed*"])
    l1 = _report(pytester, "mmbench_gui_l1")
    assert l1["overall"]["accuracy"] == 1.0 and l1["n_results"] == 5
    assert l1["task_metrics"]["option_weighted"]["overall"] == 1.0 and l1["task_metrics"]["circular"]["rotation_accuracy"] == 1.0
    assert not (pytester.path / "reports" / "mmbench_gui_l2.json").exists()
    result = pytester.runpytest_subprocess("suites/mmbench_gui", "-m", "guitest(level='L2')", "--model=oracle", "--data-root=data", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    l2 = _report(pytester, "mmbench_gui_l2")
    assert (l2["n_results"], l2["overall"]["accuracy"], l2["headline"]["accuracy"]) == (5, 1.0, 1.0)


@MODES
def test_l1_and_l2_against_an_endpoint(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path, {"option_weighted": True, "circular": False})

    def point(index: int, dx: float = 0.0) -> list[dict[str, str]]:
        x, y = l2_center(index)
        return [{"content": f"Answer: [{x + dx:.4f}, {y:.4f}]"}]

    script = {
        # MMBench-GUI's first-match parser reads these two as B and D
        "Where is the colour palette?": [{"content": "Based on the layout, the choice is C"}],
        "How many alarms are set?": [{"content": "Deduced from the list of alarms, correct is C"}],
        "Which application is open?": [{"content": "Answer: B"}],
        "Which screen is shown?": [{"content": "I am not sure what this is."}],
        "What does the red button do?": [{"content": "Let me look at each button in turn. Answer", "finish_reason": "length"}],
        "open the file menu": point(0),
        "open the apple menu": point(2),
        "undo the last stroke": point(4, dx=0.3),  # beside the box: a miss
        "pick the brush tool": point(1),
        "show the notification centre": point(3),
    }
    with fakeserver.serve(tmp_path, script=script) as server:
        result = pytester.runpytest_subprocess("suites/mmbench_gui", "--model=openai:fake-vl", f"--base-url={server.base_url}", "--data-root=data", "-p", "no:cacheprovider", "--cache=off", *mode)
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()
    l1 = _report(pytester, "mmbench_gui_l1")
    verdicts = {c["id"]: c["verdict"] for c in l1["cases"]}
    assert verdicts == {
        "os_windows-hard-0-1": "hit",
        "os_android-medium-2-1": "hit",
        "os_windows-easy-0-0": "miss",
        "os_ios-medium-1-0": "unparsed",
        "os_android-easy-2-0": "truncated",
    }
    assert l1["breakdown"]["platform/difficulty"]["os_windows/hard"]["hit"] == 1
    weighted = l1["task_metrics"]["option_weighted"]
    assert weighted["by"]["difficulty"] == {"easy": 0.0, "hard": 1.0, "medium": 0.5} and weighted["overall"] == 0.4
    result.stdout.fnmatch_lines(["*option-weighted score*40.0%*", "*by difficulty: easy 0.0%, hard 100.0%, medium 50.0%*"])
    # the prompt showed the question and every option, with the screenshot
    palette = [r for r in requests if "Where is the colour palette?" in r["user_text"]]
    assert len(palette) == 1  # without circular evaluation each question is asked once
    assert "A. top\nB. bottom\nC. left side\nD. right side" in palette[0]["user_text"] and palette[0]["image_count"] == 1
    l2 = _report(pytester, "mmbench_gui_l2")
    # basic 2 of 3, advanced 2 of 2: the "Average" is their mean, beside the micro accuracy
    assert l2["breakdown"]["grounding_type"]["basic"]["accuracy"] == round(2 / 3, 6)
    assert l2["headline"]["average"] == "macro" and l2["headline"]["accuracy"] == round((2 / 3 + 1) / 2, 6) and l2["headline"]["micro"] == 0.8
    # os_mac has no icon samples: its cells are simply absent, nothing divides by zero
    cells = l2["breakdown"]["grounding_type/platform/data_type"]
    assert "basic/os_mac/icon" not in cells and cells["basic/os_mac/text"]["accuracy"] == 1.0
    result.stdout.fnmatch_lines(["*headline: 83.3% macro over grounding_type*micro 80.0%*"])


# Replies keyed by the options in the order a rotation shows them (the fake server takes the first key found in the
# prompt): "Which application is open?" (A. Paint) is answered right by letter in all three rotations; "Where is the
# colour palette?" (C. left side) is right in three rotations and wrong when "left side" stands under A (rotation 2).
CIRCULAR_SCRIPT = {
    "A. Paint\nB. Word\nC. Excel": [{"content": "Answer: A"}],
    "A. Word\nB. Excel\nC. Paint": [{"content": "Answer: C"}],
    "A. Excel\nB. Paint\nC. Word": [{"content": "Answer: B"}],
    "A. left side\nB. right side\nC. top\nD. bottom": [{"content": "Answer: C"}],
    "Where is the colour palette?": [{"content": "Answer: left side"}] * 3,
    "Which screen is shown?": [{"content": "Answer: Settings page"}] * 2,  # right in both rotations
    "What does the red button do?": [{"content": "Answer: A"}] * 5,  # right only where "start the timer" is under A (rotation 4)
    "How many alarms are set?": [{"content": "It is three."}] * 4,  # right in all four
}


@MODES
def test_circular_asks_each_question_in_every_rotation_and_hits_only_when_all_are_right(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path, {"option_weighted": False, "circular": True})
    with fakeserver.serve(tmp_path, script=CIRCULAR_SCRIPT) as server:
        result = pytester.runpytest_subprocess(
            "suites/mmbench_gui/l1", "--model=openai:fake-vl", f"--base-url={server.base_url}", "--data-root=data", "-p", "no:cacheprovider", "--cache=off", "--min-accuracy=0.7", *mode
        )
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    asked = {
        q: [r["user_text"] for r in requests if q in r["user_text"]]
        for q in ("Which application is open?", "Where is the colour palette?", "Which screen is shown?", "What does the red button do?", "How many alarms are set?")
    }
    assert {q: len(texts) for q, texts in asked.items()} == {
        "Which application is open?": 3,
        "Where is the colour palette?": 4,
        "Which screen is shown?": 2,
        "What does the red button do?": 5,
        "How many alarms are set?": 4,
    }
    assert len(requests) == 18  # one request per rotation, nothing else
    # one case asks its rotations in order, each showing the options moved one place further
    shown = {
        "Which application is open?": ["A. Paint\nB. Word\nC. Excel", "A. Word\nB. Excel\nC. Paint", "A. Excel\nB. Paint\nC. Word"],
        "Which screen is shown?": ["A. Home screen\nB. Settings page", "A. Settings page\nB. Home screen"],
    }
    for question, orders in shown.items():
        assert all(order in text for order, text in zip(orders, asked[question], strict=True)), asked[question]
    l1 = _report(pytester, "mmbench_gui_l1")
    assert {c["id"]: c["verdict"] for c in l1["cases"]} == {
        "os_windows-easy-0-0": "hit",
        "os_windows-hard-0-1": "miss",
        "os_ios-medium-1-0": "hit",
        "os_android-easy-2-0": "miss",
        "os_android-medium-2-1": "hit",
    }
    palette = next(c for c in l1["cases"] if c["id"] == "os_windows-hard-0-1")
    assert [v["verdict"] for v in palette["prediction"]["variants"]] == ["hit", "hit", "miss", "hit"] and palette["response"] == "Answer: C"
    # the table and the gate count questions (3 of 5), not rotations (13 of 18 = 72.2%, above the gate's 0.7)
    assert (l1["n_results"], l1["overall"]["accuracy"], l1["gate"]["passed"]) == (5, 0.6, False)
    assert result.ret == 10, result.stdout.str()
    circ = l1["task_metrics"]["circular"]
    assert (circ["questions"], circ["rotations"], circ["right"]) == (5, 18, 13)
    assert {k: v["right"] for k, v in circ["by"]["rotation"].items()} == {"0": 4, "1": 4, "2": 2, "3": 2, "4": 1}
    lines = [
        "*circular evaluation (a question is right only if every rotation of its options is): 5 question(s); single rotations answered right: 72.2% of 18*",
        "*by rotation (0 = as published): 0 80.0%, 1 80.0%, 2 50.0%, 3 66.7%, 4 100.0%*",
    ]
    result.stdout.fnmatch_lines(lines)
    assert all(line.strip("*") in (pytester.path / "reports" / "mmbench_gui_l1.md").read_text() for line in lines)


def test_serial_and_xdist_reports_are_identical(pytester: pytest.Pytester, tmp_path: Path) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path, {"option_weighted": True, "circular": True})
    script = {"Which application is open?": [{"content": "Answer: A"}] * 6, "Where is the colour palette?": [{"content": "Answer: left side"}] * 8}  # two runs' worth
    outputs = []
    with fakeserver.serve(tmp_path, script=script) as server:  # one server: the same base URL in both reports
        for mode in ([], ["-n", "2"]):
            result = pytester.runpytest_subprocess(
                "suites/mmbench_gui/l1", "--model=openai:fake-vl", f"--base-url={server.base_url}", "--data-root=data", "-p", "no:cacheprovider", "--cache=off", *mode
            )
            assert result.ret == 0, result.stdout.str()
            outputs.append(_stable(_report(pytester, "mmbench_gui_l1")))
    assert outputs[0] == outputs[1]
    report = json.loads(outputs[0])
    # "Answer: A" is right in one rotation of three; the quoted text is right in every rotation; the rest is unparsed
    assert [c["id"] for c in report["cases"] if c["verdict"] == "hit"] == ["os_windows-hard-0-1"]
    assert (report["task_metrics"]["circular"]["right"], report["task_metrics"]["circular"]["rotations"]) == (1 + 4, 18)


def test_a_broken_row_is_a_collection_error_without_traceback(pytester: pytest.Pytester) -> None:
    rows = copy.deepcopy(L1_ROWS)
    rows[2]["groups"][1]["answer"] = "F"
    write_data(pytester.path / "data", l1=rows)
    copy_suites(pytester.path)
    result = pytester.runpytest_subprocess("suites/mmbench_gui/l1", "--model=oracle", "--data-root=data", "-p", "no:cacheprovider")
    assert result.ret == 2
    out = result.stdout.str()
    assert "L1_annotations.json, row 2, field 'groups[1].answer': 'F' is not one of the options ['A', 'B', 'C', 'D']" in out
    assert "Traceback" not in out


def test_lmudata_finds_the_data_in_its_published_layout(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    write_data(pytester.path / "lmu")
    copy_suites(pytester.path)
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv(LMU_ENV_VAR, str(pytester.path / "lmu"))
    result = pytester.runpytest_subprocess("suites/mmbench_gui", "--model=oracle", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*data root*lmu (from $LMUData)*", "*10 passed*"])
