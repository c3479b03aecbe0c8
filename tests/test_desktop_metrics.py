"""OSWorld / WAA evaluator metrics, getters and the harness's rules (conj, the FAIL rule, the judge marker), offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.live.protocol import EnvFailure
from guitest.desktopenv import metrics as m
from guitest.desktopenv.client import MachineFailure
from guitest.desktopenv.evaluate import decided_by, evaluate, missing, parts
from guitest.desktopenv.getters import GETTERS, GetterContext


class StubMachine:
    """The getters' view of a machine: files, command outputs, a desktop folder."""

    def __init__(self, files: dict[str, bytes] | None = None, outputs: dict[str, str] | None = None, dead: bool = False) -> None:
        self.files = files or {}
        self.outputs = outputs or {}
        self.dead = dead
        self.commands: list[Any] = []
        self.url = "http://stub:5000"

    def _alive(self) -> None:
        if self.dead:
            raise MachineFailure("dropped", self.url, "POST /file", "gone")

    def get_file(self, path: str) -> bytes | None:
        self._alive()
        return self.files.get(path)

    def execute(self, command: Any, shell: bool = False, **kw: Any) -> dict[str, Any]:
        self._alive()
        self.commands.append(command)
        key = command if isinstance(command, str) else " ".join(command)
        if key not in self.outputs:
            raise MachineFailure("server_error", self.url, "POST /execute", "HTTP 500: no such program")
        return {"status": "success", "output": self.outputs[key], "error": "", "returncode": 0}

    def desktop_path(self) -> str:
        return "/home/u/Desktop"

    def terminal(self) -> str | None:
        return None

    def accessibility(self) -> str | None:
        return "<desktop-frame/>"


def ctx(tmp_path: Path, **kw: Any) -> GetterContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return GetterContext(StubMachine(**kw), str(work), str(tmp_path / "cache"))  # type: ignore[arg-type]


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


# -- metrics -----------------------------------------------------------------------------------------


def test_exact_match_compares_type_and_value() -> None:
    assert m.exact_match("true", {"expected": "true"}) == 1.0
    assert m.exact_match(True, {"expected": "true"}) == 0.0
    assert m.exact_match([1, 2], {"expected": [1, 2]}) == 1.0


def test_include_exclude_and_in_list() -> None:
    rules = {"include": ["a", "b"], "exclude": ["z"]}
    assert m.check_include_exclude("xaby", rules) == 1.0
    assert m.check_include_exclude("xabz", rules) == 0.0
    assert m.check_include_exclude("xa", rules) == 0.0
    assert m.check_include_exclude(None, rules) == 0.0
    assert m.is_in_list(["x", "y"], {"expected": "y"}) == 1.0
    assert m.is_in_list("hay", {"expected": "needle"}) == 0.0


def test_literal_match() -> None:
    assert m.literal_match(3, "3") == 1.0
    assert m.literal_match("ABC", "abc") == 0.0
    assert m.literal_match("ABC", "abc", ignore_case=True) == 1.0
    assert m.literal_match([1, "A"], ["1", "a"], type="list", ignore_case=True) == 1.0
    assert m.literal_match([1], ["1", "2"], type="list") == 0.0
    with pytest.raises(ValueError, match="unknown type"):
        m.literal_match(1, 1, type="dict")


def lcs(a: str, b: str) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, ca in enumerate(a):
        for j, cb in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if ca == cb else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="abcé ", max_size=14), st.text(alphabet="abcd ", max_size=14))
def test_indel_ratio_is_rapidfuzz_ratio(a: str, b: str) -> None:
    expected = 1.0 if not a and not b else 2 * lcs(a, b) / (len(a) + len(b))
    assert m.indel_ratio(a, b) == pytest.approx(expected, abs=1e-12)


def test_fuzzy_match_gives_partial_credit() -> None:
    # rapidfuzz.fuzz.ratio("this is a test", "this is a test!") == 96.55...
    assert m.fuzzy_match("this is a test", {"expected": "this is a test!"}) == pytest.approx(0.9655172, abs=1e-6)
    assert m.fuzzy_match(None, {"expected": "x"}) == 0.0


def test_text_file_comparisons(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", "Hello\n  World\n")
    b = write(tmp_path / "b.txt", "hello world")
    assert m.compare_text_file(a, a) == 1.0
    assert m.compare_text_file(a, b) == 0.0
    assert m.compare_text_file(a, b, ignore_blanks=True) == 0.0
    assert m.compare_text_file(a, b, ignore_blanks=True, ignore_case=True) == 1.0
    assert m.compare_text_file(None, b) == 0.0
    assert m.compare_text_file(str(tmp_path / "missing"), b) == 0.0
    c = write(tmp_path / "c.txt", "one\ntwo\nthree\nfour")
    d = write(tmp_path / "d.txt", "one\ntwo\nTHREE\nfour\n")
    assert m.diff_text_file(c, c) == 1.0
    assert m.diff_text_file(c, d) == pytest.approx(0.75)


def test_json_settings_and_keybindings(tmp_path: Path) -> None:
    settings_file = write(tmp_path / "settings.json", json.dumps({"editor.wordWrapColumn": 100, "other": [1]}))
    assert m.check_json_settings(settings_file, {"expected": {"editor.wordWrapColumn": 100}}) == 1.0
    assert m.check_json_settings(settings_file, {"expected": {"editor.wordWrapColumn": 80}}) == 0.0
    assert m.check_json_settings(settings_file, {"expected": {"missing": None}}) == 0.0
    assert m.check_json_settings(write(tmp_path / "bad.json", "{"), {"expected": {}}) == 0.0
    entry = {"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}
    keys = write(tmp_path / "keybindings.json", "// Place your key bindings in this file\n" + json.dumps([entry]))
    assert m.check_json_keybindings(keys, {"expected": entry}) == 1.0
    assert m.check_json_keybindings(keys, {"expected": {**entry, "key": "ctrl+k"}}) == 0.0


def test_is_extension_installed() -> None:
    out = "HKEY...\n    Hidden    REG_DWORD    0x1\n"
    assert m.is_extension_installed(out, {"type": "contain", "expected": "0x1"}) == 1.0
    assert m.is_extension_installed(out, {"type": "not_contain", "expected": "0x1"}) == 0.0
    with pytest.raises(ValueError):
        m.is_extension_installed(out, {"type": "regex", "expected": "x"})


# -- getters -----------------------------------------------------------------------------------------


def test_getters_through_the_machine(tmp_path: Path) -> None:
    c = ctx(tmp_path, files={"/home/u/a.txt": b"A", "/home/u/Desktop/r.txt": b"the report"}, outputs={"ls /home/u": "a.txt\n"})
    local = GETTERS["vm_file"](c, {"path": "/home/u/a.txt", "dest": "../../escape.txt"})
    assert Path(local).read_bytes() == b"A" and Path(local).parent == Path(c.work_dir)  # dest cannot leave the work folder
    assert GETTERS["vm_file"](c, {"path": "/home/u/none.txt", "dest": "none.txt"}) is None
    both = GETTERS["vm_file"](c, {"path": ["/home/u/a.txt", "/home/u/none.txt"], "dest": ["a", "n"], "multi": True, "gives": [0, 1]})
    assert both[0].endswith("/a") and both[1] is None
    assert GETTERS["vm_command_line"](c, {"command": ["ls", "/home/u"]}) == "a.txt\n"
    assert GETTERS["vm_command_line"](c, {"command": ["nope"]}) is None  # an error answer gives None, as desktop-env's getter
    assert GETTERS["vm_file_exists_in_vm_folder"](c, {"folder_name": "/home/u", "file_name": "a.txt"}) == 1.0
    assert GETTERS["vm_file_exists_in_vm_folder"](c, {"folder_name": "C:\\Users", "file_name": "a.txt"}) == 0.0
    assert GETTERS["vm_file_exists_in_desktop"](c, {"file_name": "r.txt"}) is True
    assert GETTERS["is_file_desktop"](c, {"filename": "x.txt"}) == "false"
    assert GETTERS["is_file_saved_desktop"](c, {"filename": "r.txt", "textcontent": "report"}) == "true"
    assert GETTERS["rule"](c, {"rules": {"expected": 1}}) == {"expected": 1}
    gold = tmp_path / "gold.txt"
    gold.write_text("gold")
    assert Path(GETTERS["cloud_file"](c, {"path": gold.as_uri(), "dest": "g.txt"})).read_text() == "gold"
    with pytest.raises(EnvFailure, match="cannot download"):
        GETTERS["cloud_file"](c, {"path": "http://127.0.0.1:9/gold.txt", "dest": "g.txt"})


# -- the evaluator -----------------------------------------------------------------------------------

NOTEPAD = {  # WAA's notepad draft task: two metrics, the default conj (and)
    "func": ["exact_match", "compare_text_file"],
    "result": [
        {"type": "vm_file_exists_in_vm_folder", "folder_name": "C:\\Docs", "file_name": "draft.txt"},
        {"type": "vm_file", "path": "C:\\Docs\\draft.txt", "dest": "draft.txt"},
    ],
    "expected": [{"type": "rule", "rules": {"expected": 1.0}}, {"type": "vm_file", "path": "C:\\gold.txt", "dest": "gold.txt"}],
}


def test_and_is_zero_as_soon_as_one_metric_is(tmp_path: Path) -> None:
    good = ctx(tmp_path, files={"C:\\Docs\\draft.txt": b"This is a draft.", "C:\\gold.txt": b"This is a draft."})
    verdict = evaluate(NOTEPAD, good, last_action="done")
    assert (verdict.success, verdict.score, verdict.decided_by) == (True, 1.0, "environment")
    assert "exact_match(vm_file_exists_in_vm_folder draft.txt, rule) = 1" in verdict.reason
    wrong = ctx(tmp_path, files={"C:\\Docs\\draft.txt": b"Draft", "C:\\gold.txt": b"This is a draft."})
    assert evaluate(NOTEPAD, wrong, last_action="done").score == 0.0
    absent = ctx(tmp_path, files={"C:\\gold.txt": b"This is a draft."})
    verdict = evaluate(NOTEPAD, absent, last_action=None)
    assert verdict.score == 0.0 and "compare_text_file" not in verdict.reason  # stopped at the first 0


def test_or_is_one_as_soon_as_one_metric_is_and_else_the_best(tmp_path: Path) -> None:
    evaluator = {
        "func": ["fuzzy_match", "exact_match"],
        "conj": "or",
        "result": [{"type": "vm_command_line", "command": "cat a"}, {"type": "vm_command_line", "command": "cat b"}],
        "expected": [{"type": "rule", "rules": {"expected": "abcd"}}, {"type": "rule", "rules": {"expected": "yes"}}],
    }
    assert evaluate(evaluator, ctx(tmp_path, outputs={"cat a": "abcd", "cat b": "no"}), last_action=None).score == 1.0
    partial = evaluate(evaluator, ctx(tmp_path, outputs={"cat a": "abxx", "cat b": "no"}), last_action=None)
    assert (partial.success, partial.score) == (False, 0.5)
    assert evaluate(evaluator, ctx(tmp_path, outputs={"cat a": "zz", "cat b": "yes"}), last_action=None).success


def test_the_fail_rule_decides_before_any_getter(tmp_path: Path) -> None:
    c = ctx(tmp_path, dead=True)  # a getter would raise: none runs
    assert evaluate({"func": "infeasible"}, c, last_action="fail").success
    verdict = evaluate({"func": "infeasible"}, c, last_action="done")
    assert not verdict.success and "did not answer FAIL" in verdict.reason
    assert evaluate(NOTEPAD, c, last_action="fail").reason == "FAIL rule: fail_on_feasible"
    assert evaluate({"func": "compare_table"}, c, last_action="fail").decided_by == "environment"  # FAIL on a feasible task is 0 whatever the metric


def test_what_guitest_does_not_implement_goes_to_the_judge(tmp_path: Path) -> None:
    evaluator = {
        "func": ["exact_match", "compare_table"],
        "result": [{"type": "profile_name"}, {"type": "vm_file", "path": "x", "dest": "x"}],
        "expected": [{"type": "rule", "rules": {"expected": "Thomas"}}, {"type": "cloud_file", "path": "https://x", "dest": "y"}],
    }
    assert missing(evaluator) == ["getter profile_name", "metric compare_table"]
    assert decided_by(evaluator) == "judge"
    post = []
    verdict = evaluate({**evaluator, "postconfig": [{"type": "sleep"}]}, ctx(tmp_path, dead=True), last_action="done", postconfig=post.append)
    assert (verdict.success, verdict.decided_by) == (False, "judge") and not post
    assert "getter profile_name, metric compare_table: the trajectory judge decides" in verdict.reason


def test_postconfig_runs_before_the_getters(tmp_path: Path) -> None:
    order: list[str] = []
    c = ctx(tmp_path, outputs={"echo": "ok"})
    c.machine.execute = lambda *a, **k: order.append("getter") or {"output": "ok", "error": "", "status": "success", "returncode": 0}  # type: ignore[method-assign]
    evaluator = {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": "echo"},
        "expected": {"type": "rule", "rules": {"expected": "ok"}},
        "postconfig": [{"type": "sleep", "parameters": {"seconds": 0}}],
    }
    assert evaluate(evaluator, c, last_action=None, postconfig=lambda steps: order.append("postconfig")).success
    assert order == ["postconfig", "getter"]


def test_failing_getters_and_metrics_score_zero_with_a_reason(tmp_path: Path) -> None:
    c = ctx(tmp_path)
    bad_getter = {"func": "exact_match", "result": {"type": "cache_file", "path": "never-written.txt"}, "expected": {"type": "rule", "rules": {"expected": 1}}}
    verdict = evaluate(bad_getter, c, last_action=None)
    assert verdict.score == 0.0 and "the result getter failed (FileNotFoundError" in verdict.reason
    bad_metric = {"func": "exact_match", "result": {"type": "rule", "rules": 1}, "expected": {"type": "rule", "rules": {"no_expected_key": 1}}}
    assert "the metric failed (KeyError" in evaluate(bad_metric, c, last_action=None).reason
    odd = {"func": "exact_match", "result": {"type": "rule", "rules": "x"}}  # no expected: called as exact_match(result)
    assert "the metric failed (TypeError" in evaluate(odd, c, last_action=None).reason


def test_a_machine_failure_in_a_getter_is_an_error_not_a_zero(tmp_path: Path) -> None:
    with pytest.raises(MachineFailure):
        evaluate(NOTEPAD, ctx(tmp_path, dead=True), last_action="done")


def test_list_columns_must_match_the_metrics() -> None:
    with pytest.raises(ValueError, match="evaluator.expected has 1 entries for 2 metrics"):
        parts({"func": ["a", "b"], "result": [{}, {}], "expected": [{}]})
    assert [p.options for p in parts({"func": ["a", "b"], "options": {"x": 1}})] == [{"x": 1}, {"x": 1}]
    assert missing({"func": ["exact_match"], "result": [{}, {}]}) == ["a well-formed evaluator (evaluator.result has 2 entries for 1 metrics in evaluator.func)"]
