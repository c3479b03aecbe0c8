"""Hostile but fair input: every report a run writes parses with a strict JSON parser, bad text is an invalid row,
a decompression bomb is its case's error, suite files cannot reach outside their folder or blow up, and folder names
of live cases are their own.

Each test fails on the code before these fixes (noted per test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from builders import write_suite
from pages import data_folder, viewer_data
from guitest import strictjson
from guitest.reporting import history
from guitest.errors import SuiteError
from guitest.images import ImageTooLarge, open_image
from guitest.reporting import episodes as metrics
from guitest.run.live_case import _safe
from guitest.reporting.report import md_cell
from guitest.suite import load_suite


def strict(text: str) -> object:
    """json.loads as strict parsers (Node's JSON.parse) read it: Infinity and NaN are errors."""

    def refuse(name: str) -> object:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_points_and_lone_surrogates_in_replies_leave_every_report_valid(pytester: pytest.Pytester) -> None:
    # before: a point of 1e308 was written as Infinity, and a reply with a lone surrogate crashed the session after
    # the run (no JSON, Markdown or HTML; a 0-byte .json.tmp left)
    write_suite(pytester.path / "suites" / "tiny")
    lines = [
        {"id": "desktop-windows-text-0", "response": "Answer: [1e308, 0.5]"},
        {"id": "desktop-windows-icon-1", "response": "Answer: [0.5, 0.5] \ud800 said the model"},
    ]
    (pytester.path / "replies.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = pytester.runpytest_subprocess("suites/tiny", "--model=replay:replies.jsonl", "-k", "windows")
    assert result.ret == 0, result.stdout.str()
    reports = pytester.path / "reports"
    report = strict((reports / "tiny.json").read_text("utf-8"))
    cases = {c["id"]: c for c in report["cases"]}  # type: ignore[index]
    far = cases["desktop-windows-text-0"]  # 1e308 is a finite point far off the screen: a miss, written as a number
    assert far["verdict"] == "miss" and "outside_image" in far["notes"] and far["prediction"]["raw"] == [1e308, 0.5]
    assert all(isinstance(v, float) for v in far["prediction"]["pixel"])
    assert cases["desktop-windows-icon-1"]["response"].endswith("\ud800 said the model")  # kept, as JSON's own escape
    (reports / "tiny.md").read_text("utf-8", "strict")
    (reports / "tiny.html").read_text("utf-8", "strict")
    folder = data_folder(reports / "tiny.html")  # the HTML's cases are in its data folder
    assert folder is not None and "\\ud800" in "".join(p.read_text("utf-8", "strict") for p in (folder / "c").iterdir())
    assert [d["reply"] for d in viewer_data(reports / "tiny.html")[1] if d["id"] == "desktop-windows-icon-1"] == ["Answer: [0.5, 0.5] \ud800 said the model"]
    assert not list(reports.glob("*.tmp"))


def test_strict_dumps_writes_null_for_non_finite_numbers(tmp_path: Path) -> None:
    text = strictjson.dumps({"a": float("inf"), "b": [float("nan"), 1.5], "c": "\ud800"})
    strictjson.write_text(tmp_path / "x.json", text)
    assert strict((tmp_path / "x.json").read_text("utf-8")) == {"a": None, "b": [None, 1.5], "c": "\ud800"}


def test_a_lone_surrogate_in_an_annotation_row_is_an_invalid_row(pytester: pytest.Pytester) -> None:
    folder = write_suite(pytester.path / "suites" / "tiny")
    path = folder / "data" / "screenspot_desktop.json"
    rows = json.loads(path.read_text())
    rows[1]["instruction"] = "close the \ud800 dialog"
    path.write_text(json.dumps(rows))  # json escapes it as \ud800, as a broken exporter would
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0 and "screenspot_desktop.json, row 1" in out and "field 'instruction'" in out and "lone surrogate" in out
    assert "Traceback" not in out


def test_a_decompression_bomb_is_an_unreadable_image_naming_the_file(tmp_path: Path) -> None:
    # before: PIL's DecompressionBombError is no OSError: about 1000 lines of traceback and the case lost
    path = tmp_path / "bomb.png"
    Image.new("1", (30000, 30000)).save(path)
    assert path.stat().st_size < 200_000
    with pytest.raises(ImageTooLarge, match="bomb.png.*exceeds limit") as info:
        open_image(str(path))
    assert isinstance(info.value, OSError)  # a case reports it as its unreadable image, an error outcome


SUITE = """\
name: s
format: screenspot
data: {dir: data, base: suite, annotations: "*.json"}
task: grounding
tags: [split]
"""


def suite_error(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> str:
    (tmp_path / "suite.yaml").write_text(text)
    for name, body in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path / "suite.yaml")
    return str(info.value)


def test_a_nan_gate_threshold_is_refused(tmp_path: Path) -> None:
    # before: gate: {accuracy: .nan} passed every run ("gate passed: accuracy >= nan")
    assert "field 'gate.accuracy': nan is not a threshold" in suite_error(tmp_path, SUITE + "gate: {accuracy: .nan}\n")
    assert "gate.by.split=mobile" in suite_error(tmp_path, SUITE + "gate: {by: {split=mobile: .inf}}\n")


def test_a_prompt_outside_the_suite_folder_or_without_the_instruction_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (tmp_path / "secret.txt").write_text("{instruction} root:x:0:0")
    assert "outside the suite folder" in suite_error(suite, SUITE + "prompt: ../secret.txt\n")
    assert "has no {instruction}" in suite_error(suite, SUITE + "prompt: p.txt\n", {"p.txt": "Click something.\n"})


def test_a_yaml_alias_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    # before: a 1 KB file standing for 10^7 values took 14 s and 400 MB to check
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"] + [f"{c}: &{c} [{', '.join(['*' + p] * 10)}]" for p, c in zip("abcdef", "bcdefg", strict=True)]
    text = SUITE + "env_options:\n" + "".join(f"  {line}\n" for line in levels)
    assert len(text) < 1500
    assert "more than 1,000,000 values once its aliases" in suite_error(tmp_path, text)


def test_markdown_cells_cannot_break_the_table_or_start_a_heading() -> None:
    assert md_cell("a|b\n# injected heading") == "a\\|b # injected heading"


def test_the_budget_table_grows_with_the_episodes_not_the_budget() -> None:
    # before: --max-steps=1000000 wrote a million-entry table (a 15 MB report)
    table = metrics.success_by_budget([{"id": "a", "success": True, "steps": 3}, {"id": "b", "success": False, "steps": 5}], 1_000_000)
    assert table == {1: 0.0, 2: 0.0, 3: 0.5, 4: 0.5, 5: 0.5, 1_000_000: 0.5}


def test_live_case_folders_are_unique_and_stay_inside() -> None:
    # before: "x y" and "x/y" shared episodes/x_y; "." and ".." named the episodes folder and its parent
    names = {_safe(i) for i in ("x y", "x/y", "x_y", ".", "..", "...")}
    assert len(names) == 6 and not names & {".", "..", "..."} and all("/" not in n for n in names)
    assert _safe("click-button-seed0") == "click-button-seed0"


def test_the_last_passed_run_folder_is_never_pruned(tmp_path: Path) -> None:
    # before: --keep-runs pruned the passed run's folder, so .passed reports linked to deleted episodes
    report = tmp_path / "reports"
    latest = report / "s.json"
    report.mkdir()
    latest.write_text("{}")
    history.keep([latest], report, "s", "20260101-000000-aaaa", good=True, keep_runs=2)
    for n in range(1, 5):
        history.keep([latest], report, "s", f"20260101-00000{n}-bbbb", good=False, keep_runs=2)
    kept = sorted(p.name for p in (report / "runs" / "s").iterdir() if p.is_dir())
    assert kept == ["20260101-000000-aaaa", "20260101-000003-bbbb", "20260101-000004-bbbb"]


def test_escape_sequences_from_an_endpoint_or_the_data_never_reach_the_terminal(pytester: pytest.Pytester, tmp_path: Path) -> None:
    # before: an error body with ESC ] 0; ... BEL (retitle) and ESC [ 2J (clear the screen) was printed raw
    import fakeserver

    write_suite(pytester.path / "suites" / "tiny")
    hostile = "\x1b]0;owned\x07\x1b[2J bad request"
    with fakeserver.serve(tmp_path, script={"*": [{"status": 400, "message": hostile}] * 6}) as server:
        result = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", "--retries=0", "-k", "windows")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 1 and "bad request" in out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b]0;owned\\x07\\x1b[2J" in out


def test_a_case_id_with_control_characters_is_an_invalid_row(pytester: pytest.Pytester) -> None:
    folder = write_suite(pytester.path / "suites" / "tiny")
    path = folder / "data" / "screenspot_desktop.json"
    rows = json.loads(path.read_text())
    rows[0]["data_source"] = "win\x1b[2Jdows"  # a tag in the id template
    path.write_text(json.dumps(rows))
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0 and "holds control characters" in out and "\x1b" not in out


def test_only_the_newest_runs_keep_their_episode_screenshots(tmp_path: Path) -> None:
    # before: every kept run kept its screenshots (a MiniWoB++ run about 300 MB, 6 GB at --keep-runs=20)
    report = tmp_path / "reports"
    report.mkdir()
    latest = report / "s.json"
    latest.write_text("{}")
    stamps = [f"20260101-00000{n}-cccc" for n in range(6)]
    for n, run_stamp in enumerate(stamps):
        episodes = history.run_folder(report, "s", run_stamp) / "episodes" / "case"
        episodes.mkdir(parents=True)
        (episodes / "step-01.png").write_bytes(b"png")
        history.keep([latest], report, "s", run_stamp, good=n == 0, keep_runs=4, keep_episodes=2)
    runs = history.run_folder(report, "s", "x").parent
    with_episodes = sorted(p.name for p in runs.iterdir() if (p / "episodes").is_dir())
    kept = sorted(p.name for p in runs.iterdir() if p.is_dir())
    assert kept == [stamps[0], *stamps[2:]]  # the passed run, and the newest 4
    assert with_episodes == [stamps[0], stamps[4], stamps[5]]  # the passed run's, and the newest 2
    assert all((runs / s / "s.json").is_file() for s in kept)  # the older ones keep their reports


def test_web_tasks_open_only_http_pages(tmp_path: Path) -> None:
    # before: start: file:///etc/passwd was loaded and screenshotted (the schema said http(s), the backend took any ://)
    from types import SimpleNamespace

    from guitest.envs.webapp import WebAppEnv
    from guitest.formats import read_suite_samples
    from guitest.live.protocol import EnvFailure, TaskSpec

    (tmp_path / "suite.yaml").write_text("name: w\nformat: webtask\ndata: {dir: ., base: suite, annotations: tasks.yaml}\ntask: live\nenv: webapp\nenv_options: {root: .}\n")
    (tmp_path / "tasks.yaml").write_text(
        "- {id: peek, instruction: look, success: 'true', start: 'file:///etc/passwd'}\n- {id: js, instruction: look, success: 'true', start: 'javascript:alert(1)'}\n"
    )
    with pytest.raises(SuiteError) as info:
        read_suite_samples(load_suite(tmp_path / "suite.yaml"), str(tmp_path))
    assert "row 0 (id peek), field 'start'" in str(info.value) and "row 1 (id js), field 'start'" in str(info.value)
    env = SimpleNamespace(base_url="http://127.0.0.1:9/")
    for start in ("file:///etc/passwd", "javascript:alert(1)", "chrome://settings"):
        with pytest.raises(EnvFailure, match="not"):
            WebAppEnv.start_url(env, TaskSpec("webapp", "t", config={"start": start}), 0)  # type: ignore[arg-type]
    assert WebAppEnv.start_url(env, TaskSpec("webapp", "t", config={"start": "/page?s={seed}"}), 3) == "http://127.0.0.1:9/page?s=3"  # type: ignore[arg-type]
