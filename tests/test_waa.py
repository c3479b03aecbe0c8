"""The Windows Agent Arena task reader against the real task files and the totals the shared README gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builders import SHARED_DATA
from guitest.errors import SuiteError
from guitest.formats.waa import count_by_app, count_evaluators, infeasible_rule, load_tasks, read_task, tasks_in_list

WAA = SHARED_DATA / "windows_agent_arena"
README = SHARED_DATA / "README.md"
LIBREOFFICE_AND_VLC = ("libreoffice_calc", "libreoffice_writer", "vlc")

needs_data = pytest.mark.skipif(not (WAA / "examples").is_dir() or not README.is_file(), reason=f"the shared WAA task files are not at {WAA}")


def readme_counts(label: str) -> tuple[int, dict[str, int]]:
    """The total and per-name counts the README gives after ``label``, e.g. ``test_all.json` (154 tasks: vs_code 24, ...)``."""
    text = README.read_text()
    match = re.search(re.escape(label) + r"[^(]*\((\d+) tasks: ([^)]*)\)", text)
    assert match, f"the README no longer states the counts of {label}"
    counts = {name: int(n) for name, n in re.findall(r"(\w+) (\d+)", match.group(2))}
    return int(match.group(1)), counts


@needs_data
def test_test_all_has_the_readme_counts_per_app() -> None:
    total, expected = readme_counts("`test_all.json`")
    tasks = tasks_in_list(str(WAA / "examples"), str(WAA / "test_all.json"))
    assert len(tasks) == total == 154
    assert count_by_app(tasks) == dict(sorted(expected.items()))


@needs_data
def test_test_full_is_test_all_without_libreoffice_and_vlc() -> None:
    _, all_counts = readme_counts("`test_all.json`")
    match = re.search(r"`test_full.json` \((\d+) tasks", README.read_text())
    assert match
    tasks = tasks_in_list(str(WAA / "examples"), str(WAA / "test_full.json"))
    assert len(tasks) == int(match.group(1)) == 90
    assert count_by_app(tasks) == {app: n for app, n in sorted(all_counts.items()) if app not in LIBREOFFICE_AND_VLC}


@needs_data
def test_evaluator_counts_match_the_readme() -> None:
    match = re.search(r"Evaluator functions by use: ([^.]*)", README.read_text())
    assert match
    expected = {name: int(n) for name, n in re.findall(r"(\w+) (\d+)", match.group(1))}
    tasks = tasks_in_list(str(WAA / "examples"), str(WAA / "test_all.json"))
    counts = count_evaluators(tasks)
    assert {name: counts[name] for name in expected} == expected
    assert sum(t.infeasible for t in tasks) == expected["infeasible"]


@needs_data
def test_tasks_are_keyed_by_file_name_not_by_their_inner_id() -> None:
    tasks = load_tasks(str(WAA / "examples"))
    assert len(tasks) == len(list((WAA / "examples").glob("*/*.json")))  # two files share an inner id; none is lost
    differing = [t for t in tasks.values() if t.file_id != t.id]
    assert differing and all((t.app, t.id) in tasks for t in differing)
    chrome_or = next(t for t in tasks.values() if t.conj == "or")
    assert len(chrome_or.evaluators) == 2 and chrome_or.evaluator == "+".join(chrome_or.evaluators)


def test_invalid_task_files_are_named_by_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "chrome").mkdir()
    (tmp_path / "chrome" / "a.json").write_text(json.dumps({"id": "a", "instruction": "", "evaluator": {"func": "exact_match", "conj": "xor"}}))
    (tmp_path / "chrome" / "b.json").write_text('{"id": "b", ')
    (tmp_path / "chrome" / "c.json").write_text(json.dumps({"id": "c", "instruction": "ok", "evaluator": {"func": ["infeasible"]}}))
    with pytest.raises(SuiteError) as info:
        load_tasks(str(tmp_path))
    message = str(info.value)
    assert "2 invalid WAA task file(s)" in message
    assert f"{tmp_path}/chrome/a.json, field 'instruction'" in message and f"{tmp_path}/chrome/a.json, field 'evaluator.conj'" in message
    assert f"{tmp_path}/chrome/b.json (line 1, column" in message
    assert read_task(str(tmp_path / "chrome" / "c.json"), "chrome").infeasible


def test_a_listed_task_without_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "examples" / "notepad").mkdir(parents=True)
    (tmp_path / "examples" / "notepad" / "x.json").write_text(json.dumps({"id": "x", "instruction": "type", "evaluator": {"func": "exact_match"}}))
    (tmp_path / "list.json").write_text(json.dumps({"notepad": ["x", "y"]}))
    with pytest.raises(SuiteError, match="1 listed task.*notepad/y"):
        tasks_in_list(str(tmp_path / "examples"), str(tmp_path / "list.json"))


@pytest.mark.parametrize(
    "infeasible, fail, expected",
    [
        (True, True, ("yes", "fail_on_infeasible")),
        (False, True, ("no", "fail_on_feasible")),
        (True, False, None),
        (False, False, None),
        (None, True, None),
    ],
)
def test_the_waa_fail_rule(infeasible: bool | None, fail: bool, expected: tuple[str, str] | None) -> None:
    assert infeasible_rule(infeasible, fail) == expected
