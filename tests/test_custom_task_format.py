"""A task and an annotation format of a project's own: docs/adapters.md's worked example, run as it is written
there, from a conftest.py (through pytester, serial and with ``-n 2``) and from an installed package's entry points."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from PIL import Image

from guitest.run.case import run_case
from guitest.errors import SuiteError
from guitest.formats import read_suite_samples
from guitest.models import load_model
from guitest.models.base import Settings
from guitest.registry import READERS, TASKS
from guitest.suite import load_suite
from guitest.tasks import load_task

DOC = Path(__file__).resolve().parents[1] / "docs" / "adapters.md"
MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]

ROWS = {
    "login": [
        {"id": "remember", "image": "login.png", "question": "Is 'Remember me' checked?", "answer": "yes"},
        {"id": "submit", "image": "login.png", "question": "Is the Submit button disabled?", "answer": "no"},
    ],
    "settings": [
        {"id": "dark", "image": "settings.png", "question": "Is dark mode on?", "answer": "yes"},
        {"id": "sync", "image": "settings.png", "question": "Is sync turned off?", "answer": "no"},
    ],
}
REPLIES = {
    "login-remember": "The box shows a tick.\nAnswer: yes",  # hit
    "login-submit": "Answer: yes",  # miss: the button is enabled
    "settings-dark": "<think>Answer: no?</think>The background is dark. **Answer:** Yes",  # hit: the last answer, after reasoning
    "settings-sync": "I cannot tell from this screenshot.",  # unparsed
}


def doc_block(first_line: str) -> str:
    """The fenced code block of docs/adapters.md whose first line is ``first_line``."""
    blocks = re.findall(r"```\w*\n(.*?)```", DOC.read_text("utf-8"), re.S)
    found = [b for b in blocks if b.startswith(first_line + "\n")]
    assert len(found) == 1, f"docs/adapters.md has {len(found)} code blocks starting {first_line!r}"
    return found[0]


CONFTEST = doc_block("# conftest.py (at the rootdir)")
SUITE_YAML = doc_block("# suites/widgets/suite.yaml")


def write_widgets(root: Path, rows: dict[str, list[dict[str, str]]] = ROWS) -> Path:
    """suites/widgets (the documented suite file) with its annotations and screenshots under ``root``."""
    folder = root / "suites" / "widgets"
    (folder / "data" / "images").mkdir(parents=True)
    (folder / "suite.yaml").write_text(SUITE_YAML, "utf-8")
    for app, app_rows in rows.items():
        (folder / "data" / f"{app}.json").write_text(json.dumps(app_rows), "utf-8")
    for colour, name in (("white", "login.png"), ("gray", "settings.png")):
        Image.new("RGB", (64, 48), colour).save(folder / "data" / "images" / name)
    return folder / "suite.yaml"


@pytest.fixture(scope="module")
def documented() -> dict[str, object]:
    """The documented conftest, run in this process: it registers ``yesno`` and ``qa_json`` here."""
    namespace: dict[str, object] = {"__name__": "documented_conftest"}
    exec(compile(CONFTEST, str(DOC), "exec"), namespace)  # noqa: S102 - the project's own documentation
    return namespace


@pytest.mark.parametrize("mode", MODES)
def test_the_documented_task_and_format_run_end_to_end_from_a_conftest(pytester: pytest.Pytester, mode: list[str]) -> None:
    pytester.makeconftest(CONFTEST)
    write_widgets(pytester.path)
    (pytester.path / "replies.jsonl").write_text("".join(json.dumps({"id": k, "response": v}) + "\n" for k, v in REPLIES.items()))
    result = pytester.runpytest_subprocess("suites/widgets", "--model=replay:replies.jsonl", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    report = json.loads((pytester.path / "reports" / "widgets.json").read_text())
    # the workers read the rows with the format and judged the replies with the task ...
    assert {c["id"]: c["verdict"] for c in report["cases"]} == {"login-remember": "hit", "login-submit": "miss", "settings-dark": "hit", "settings-sync": "unparsed"}
    assert {c["id"]: c["prediction"] for c in report["cases"]}["login-submit"] == {"answer": "yes"}
    assert {c["id"]: c["truth"] for c in report["cases"]} == {"login-remember": "yes", "login-submit": "no", "settings-dark": "yes", "settings-sync": "no"}
    # ... and the process that wrote the report (under -n 2, the controller) summarized with the task
    assert report["suite"]["task"] == "yesno" and report["suite"]["format"] == "qa_json"
    assert report["task_metrics"] == {"yes": {"n": 2, "hits": 2}, "no": {"n": 2, "hits": 0}}
    assert {v: row["n"] for v, row in report["breakdown"]["app"].items()} == {"login": 2, "settings": 2}
    result.stdout.fnmatch_lines(["*answer yes: 2/2 right*", "answer no: 0/2 right*"])
    last = result.stdout.lines[-1]
    assert "2 passed" in last and "1 missed" in last and "1 unparsed" in last and "failed" not in last, last


def test_the_documented_format_reads_ids_tags_and_truth(tmp_path: Path, documented: dict[str, object]) -> None:
    suite = load_suite(write_widgets(tmp_path))
    samples = read_suite_samples(suite, str(tmp_path / "suites" / "widgets" / "data"))
    assert [(s.id, s.tags, s.data) for s in samples] == [
        ("login-remember", {"app": "login"}, {"answer": "yes"}),
        ("login-submit", {"app": "login"}, {"answer": "no"}),
        ("settings-dark", {"app": "settings"}, {"answer": "yes"}),
        ("settings-sync", {"app": "settings"}, {"answer": "no"}),
    ]
    assert samples[0].image == str(tmp_path / "suites" / "widgets" / "data" / "images" / "login.png")
    oracle, task = load_model("oracle", Settings()), load_task("yesno", suite.settings)
    assert [run_case(s, oracle, task=task)["verdict"] for s in samples] == ["hit"] * 4


def test_a_bad_row_of_the_documented_format_names_file_row_and_field(tmp_path: Path, documented: dict[str, object]) -> None:
    rows = {"login": [ROWS["login"][0], {**ROWS["login"][1], "answer": "maybe"}], "settings": [{**ROWS["settings"][0], "image": "../../secret.png"}]}
    suite = load_suite(write_widgets(tmp_path, rows))
    with pytest.raises(SuiteError) as info:
        read_suite_samples(suite, str(tmp_path / "suites" / "widgets" / "data"))
    message = str(info.value)
    assert "2 invalid annotation row(s)" in message
    assert "login.json, row 1 (id submit), field 'answer': 'maybe' is not one of ['yes', 'no']" in message  # as docs/adapters.md says
    assert "settings.json, row 0 (id dark), field 'image': '../../secret.png' resolves outside the image folder" in message


def test_the_documented_task_takes_only_its_own_settings(documented: dict[str, object]) -> None:
    assert load_task("yesno", {"prompt": "{question}? Answer: yes or no."}).settings["prompt"].endswith("yes or no.")
    with pytest.raises(SuiteError, match=r"suite.yaml, field 'settings.tone': task yesno has no such setting; its settings: prompt"):
        load_task("yesno", {"tone": "polite"})


def test_an_unknown_task_or_format_lists_the_known_ones_with_the_schema_problems(tmp_path: Path, documented: dict[str, object]) -> None:
    path = write_widgets(tmp_path)
    path.write_text(SUITE_YAML.replace("task: yesno", "task: yes_no").replace("format: qa_json", "format: qa-json") + "colour: red\n")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert "colour" in message  # the schema's problem, reported with the names' in one message
    assert f"{path}, field 'task': unknown task 'yes_no'; known: grounding, choice, parsing, hallucination, judge, live, " in message
    assert "yesno. Add one with guitest.tasks.register(name, TaskClass) in a conftest.py or an entry point in the group 'guitest.tasks'" in message
    assert f"{path}, field 'format': unknown annotation format 'qa-json'; known: screenspot, " in message and "qa_json." in message


def test_a_task_and_a_format_from_an_installed_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "widgetchecks-1.0.dist-info").mkdir(parents=True)
    (site / "widgetchecks.py").write_text(CONFTEST.replace('@guitest.formats.register("qa_json")', "").replace('@guitest.tasks.register("yesno")', ""))
    (site / "widgetchecks-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: widgetchecks\nVersion: 1.0\n")
    (site / "widgetchecks-1.0.dist-info" / "entry_points.txt").write_text("[guitest.tasks]\nyesno_pkg = widgetchecks:YesNo\n[guitest.formats]\nqa_pkg = widgetchecks:read\n")
    assert "yesno_pkg" not in TASKS and "qa_pkg" not in READERS
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "widgetchecks", raising=False)
    assert "yesno_pkg" in TASKS and "qa_pkg" in READERS and "yesno_pkg" in TASKS.names()
    path = write_widgets(tmp_path)
    path.write_text(SUITE_YAML.replace("task: yesno", "task: yesno_pkg").replace("format: qa_json", "format: qa_pkg"))
    suite = load_suite(path)
    samples = read_suite_samples(suite, str(path.parent / "data"))
    task = load_task(suite.task, suite.settings)
    assert type(task).__module__ == "widgetchecks" and len(samples) == 4
    assert [run_case(s, load_model("oracle", Settings()), task=task)["verdict"] for s in samples] == ["hit"] * 4


def test_a_task_registered_below_the_rootdir_is_no_report_under_xdist_never_a_grounding_one(pytester: pytest.Pytester) -> None:
    """Under -n 2 the controller imports only the rootdir's conftest and those of the paths given: a task registered in
    suites/widgets/conftest.py is seen by the workers alone. The controller used to read the suite as grounding and
    write a report saying so; it writes none, says why and what to do, and the run does not pass."""
    folder = write_widgets(pytester.path).parent
    (folder / "conftest.py").write_text(CONFTEST)
    (pytester.path / "replies.jsonl").write_text("".join(json.dumps({"id": k, "response": v}) + "\n" for k, v in REPLIES.items()))
    result = pytester.runpytest_subprocess("suites", "--model=replay:replies.jsonl", "-p", "no:cacheprovider", "-n", "2")
    assert result.ret == 11, result.stdout.str() + result.stderr.str()  # INCOMPLETE_EXIT_CODE: no report for selected cases
    assert not (pytester.path / "reports" / "widgets.json").exists()
    out = result.stdout.str()
    assert "suites/widgets/suite.yaml: NO REPORT" in out
    assert "unknown task 'yesno'" in out and "register a custom task or format in the rootdir's conftest.py" in out
