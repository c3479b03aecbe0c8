"""The trajectory readers (trajectory files, UFO log folders, WAA/OSWorld result folders) on data written here.

The builders at the top write both folder formats with generated screenshots, placeholders
among them; tests/test_judge_e2e.py uses them too.
"""

from __future__ import annotations

import base64
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from builders import SHARED_DATA
from guitest.errors import SuiteError
from guitest.formats import read_suite_samples
from guitest.suite import load_suite
from guitest.trajectory import Trajectory, open_screenshot
from guitest.formats.waa import load_tasks, read_task_list

# -- builders ------------------------------------------------------------------------------------

# a screenshot kind -> how it is written: "screen" a real-looking screen, the others placeholders
KINDS = ("screen", "black", "1x1", "missing", "broken")


def screen_image(seed: int, size: tuple[int, int] = (96, 64)) -> Image.Image:
    """A non-black image unique to ``seed`` (noise, so its PNG is well over the placeholder payload size)."""
    rng = random.Random(seed)
    return Image.frombytes("RGB", size, bytes(rng.randrange(40, 256) for _ in range(size[0] * size[1] * 3)))


def write_shot(path: Path, kind: str, seed: int = 0) -> None:
    """Write a screenshot of ``kind`` at ``path`` (``missing``: write nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "screen":
        screen_image(seed).save(path)
    elif kind == "black":
        Image.new("RGB", (96, 64), (0, 0, 0)).save(path)
    elif kind == "1x1":
        Image.new("RGB", (1, 1), (200, 30, 30)).save(path)
    elif kind == "broken":
        path.write_bytes(b"this is not a png file at all" * 20)
    elif kind != "missing":
        raise ValueError(kind)


def inline_shot(kind: str, seed: int = 0) -> str:
    """A ``data:`` URI screenshot: ``screen`` (a real image) or ``tiny`` (a placeholder payload)."""
    if kind == "tiny":
        return "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    buffer = io.BytesIO()
    screen_image(seed).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def write_ufo_task(folder: Path, request: str, steps: list[dict[str, Any]], shots: list[str], final: str = "screen", result: float | None = None, human: str | None = None, seed: int = 0) -> Path:
    """A UFO log folder: ``response.log`` (old-style keys), ``action_step<N>.png`` of ``shots[N-1]`` kind, the final screenshot."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for number, step in enumerate(steps, 1):
        line = {
            "Step": number,
            "Request": request if number == 1 else "",
            "Observation": step.get("observation", f"screen {number}"),
            "Thought": step.get("thought", f"thinking {number}"),
            "Action": step.get("action", f"click_input(button {number})"),
            "Status": step.get("status", "CONTINUE"),
            "Application": step.get("application", "mspaint.exe"),
            "Plan": ["next", "then"],
        }
        lines.append(json.dumps(line))
        write_shot(folder / f"action_step{number}.png", shots[number - 1], seed * 1000 + number)
    (folder / "response.log").write_text("\n".join(lines) + "\n")
    write_shot(folder / "action_step_final.png", final, seed * 1000 + 999)
    _write_labels(folder, result, human)
    return folder


def write_waa_run(folder: Path, actions: list[Any], shots: list[str], result: float | None = None, human: str | None = None, seed: int = 0, initial: bool = True) -> Path:
    """A WAA result folder: ``traj.jsonl`` (step 0 the initial screen, then one line per action), screenshots of
    ``shots`` kinds (``shots[0]`` the initial screen, ``shots[k]`` the screen after action k), ``result.txt``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    if initial:
        lines.append({"step_num": 0, "action_timestamp": "20240101@000000", "action": None, "screenshot": "screenshot/screenshot-step_reset.png"})
        write_shot(folder / "screenshot" / "screenshot-step_reset.png", shots[0], seed * 1000)
    for k, action in enumerate(actions, 1):
        name = f"step_{k}_20240101@0000{k:02d}.png"
        lines.append({"step_num": k, "action_timestamp": "t", "action": action, "reward": 0, "done": False, "info": {}, "response": f"I do step {k}", "screenshot_file": name})
        write_shot(folder / name, shots[k] if initial else shots[k - 1], seed * 1000 + k)
    (folder / "traj.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    _write_labels(folder, result, human)
    return folder


def _write_labels(folder: Path, result: float | None, human: str | None) -> None:
    if result is not None:
        (folder / "result.txt").write_text(f"{result}\n")
    if human is not None:
        (folder / "labels.json").write_text(json.dumps({"human": human}))


def write_waa_task(examples: Path, app: str, task_id: str, instruction: str, func: str | list[str] = "exact_match") -> None:
    """A WAA task file ``examples/<app>/<task_id>.json``."""
    (examples / app).mkdir(parents=True, exist_ok=True)
    task = {
        "id": task_id,
        "snapshot": app,
        "instruction": instruction,
        "source": "",
        "config": [],
        "trajectory": "trajectories\\",
        "related_apps": [app],
        "evaluator": {"func": func, "result": {}, "expected": {}},
    }
    (examples / app / f"{task_id}.json").write_text(json.dumps(task))


def suite_file(
    folder: Path, fmt: str, annotations: str, *, base: str = "suite", data_dir: str = "data", settings: dict[str, Any] | None = None, id_template: str = "{app}-{task_id}", name: str | None = None
) -> Path:
    """A judge suite file in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        f"name: {name or folder.name}",
        f"format: {fmt}",
        "data:",
        f"  dir: {data_dir}",
        f"  base: {base}",
        f'  annotations: "{annotations}"',
        "task: judge",
        f'id: "{id_template}"',
        "tags: [app, evaluator, feasibility, labelled]",
    ]
    if settings:
        lines.append("settings: " + json.dumps(settings))
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def samples_of(suite_path: Path, data_dir: Path):
    return read_suite_samples(load_suite(suite_path), str(data_dir))


# -- the readers ---------------------------------------------------------------------------------


def test_ufo_log_folder_becomes_a_trajectory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_ufo_task(data / "logs" / "paint_circle", "draw a red circle", [{"action": "click_input(Ellipse)"}, {"action": "", "status": "FINISH"}], ["screen", "black"])
    suite = suite_file(tmp_path, "ufo_log", "logs/*/response.log", id_template="{task_id}")
    [sample] = samples_of(suite, data)
    assert sample.image == "" and sample.instruction == "draw a red circle" and sample.id == "paint_circle"
    t = Trajectory.from_dict(sample.data["trajectory"])
    assert [s.number for s in t.steps] == [1, 2]
    assert t.steps[0].action == "click_input(Ellipse)" and t.steps[1].status == "FINISH" and t.steps[0].plan == "next\nthen"
    assert t.steps[0].screenshot == str(data / "logs" / "paint_circle" / "action_step1.png")
    assert t.final_screenshot == str(data / "logs" / "paint_circle" / "action_step_final.png")
    assert sample.tags == {"app": "mspaint.exe", "evaluator": "unknown", "feasibility": "unknown", "labelled": "unlabelled"}
    assert t.labels.complete() is None


def test_waa_result_folder_shifts_screenshots_to_before_each_action(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_waa_task(data / "examples", "vlc", "INF-abc-WOS", "set vlc to fly", func="infeasible")
    run = write_waa_run(data / "results" / "pyautogui" / "a11y" / "gpt" / "vlc" / "INF-abc-WOS", ["pyautogui.click(1, 2)", {"action_type": "FAIL"}], ["screen", "screen", "1x1"], result=1.0)
    suite = suite_file(tmp_path, "waa_result", "results/**/traj.jsonl", settings={"waa_tasks": "examples"})
    [sample] = samples_of(suite, data)
    t = Trajectory.from_dict(sample.data["trajectory"])
    assert sample.id == "vlc-INF-abc-WOS" and sample.instruction == "set vlc to fly"
    assert sample.tags == {"app": "vlc", "evaluator": "infeasible", "feasibility": "infeasible", "labelled": "labelled"}
    # step 1 acts on the initial screen, step 2 on the screen after step 1; the screen after step 2 is the final one
    assert t.steps[0].screenshot == str(run / "screenshot" / "screenshot-step_reset.png")
    assert t.steps[1].screenshot == str(run / "step_1_20240101@000001.png")
    assert t.final_screenshot == str(run / "step_2_20240101@000002.png")
    assert t.steps[1].action == "FAIL" and t.last_action_is_fail and t.infeasible is True
    assert t.steps[0].thought == "I do step 1"
    assert t.labels.score == 1.0 and t.labels.complete() == "yes"


def test_human_label_wins_over_the_rule_score(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_waa_task(data / "examples", "chrome", "t1", "open a tab")
    write_waa_run(data / "results" / "chrome" / "t1", ["a"], ["screen", "screen"], result=1.0, human="no")
    [sample] = samples_of(suite_file(tmp_path, "waa_result", "results/*/*/traj.jsonl", settings={"waa_tasks": "examples"}), data)
    labels = Trajectory.from_dict(sample.data["trajectory"]).labels
    assert (labels.score, labels.human, labels.complete()) == (1.0, "no", "no")


def test_trajectory_file_with_inline_and_relative_screenshots(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_shot(data / "shots" / "a.png", "screen")
    rows = [
        {
            "id": "t1",
            "request": "rename the file",
            "app": "file_explorer",
            "infeasible": False,
            "steps": [{"action": "click", "screenshot": "shots/a.png"}, {"action": "type", "screenshot": inline_shot("screen")}],
            "final_screenshot": inline_shot("tiny"),
            "labels": {"score": 0.5},
        }
    ]
    (data / "runs.json").write_text(json.dumps(rows))
    [sample] = samples_of(suite_file(tmp_path, "trajectory", "*.json"), data)
    t = Trajectory.from_dict(sample.data["trajectory"])
    assert t.steps[0].screenshot == str(data / "shots" / "a.png") and t.steps[1].screenshot.startswith("data:image/png")
    assert sample.tags["feasibility"] == "feasible" and t.labels.complete(1.0) == "no" and t.labels.complete(0.5) == "yes"


@pytest.mark.parametrize("kind, reason", [("screen", None), ("black", "black"), ("1x1", "1x1"), ("missing", "missing"), ("broken", "unreadable")])
def test_placeholder_screenshots_are_refused_with_their_reason(tmp_path: Path, kind: str, reason: str | None) -> None:
    path = tmp_path / "shot.png"
    write_shot(path, kind)
    image, why = open_screenshot(str(path))
    assert why == reason and (image is None) == (reason is not None)


def test_inline_payload_under_200_characters_is_a_placeholder() -> None:
    assert open_screenshot(inline_shot("tiny")) == (None, "tiny_payload")
    image, why = open_screenshot(inline_shot("screen"))
    assert why is None and image is not None and image.size == (96, 64)
    assert open_screenshot("data:image/png;base64," + "A" * 300)[1] == "unreadable"


# -- bad input: one message naming file, line/row and field; nothing runs ------------------------


def _problems(suite: Path, data: Path) -> str:
    with pytest.raises(SuiteError) as info:
        samples_of(suite, data)
    return str(info.value)


def test_broken_log_lines_are_named_by_file_line_and_field(tmp_path: Path) -> None:
    data = tmp_path / "data"
    folder = write_ufo_task(data / "logs" / "t1", "do it", [{}, {}], ["screen", "screen"])
    with open(folder / "response.log", "a") as f:
        f.write('{"Step": 3, "Action": "x"\n')  # cut off
        f.write('{"Step": "three", "Action": "x"}\n')
    message = _problems(suite_file(tmp_path, "ufo_log", "logs/*/response.log"), data)
    assert "logs/t1/response.log, line 3 (column" in message and "not valid JSON" in message
    waa = tmp_path / "waa"
    write_waa_run(waa / "results" / "chrome" / "t2", ["a"], ["screen", "screen"], result="high")  # type: ignore[arg-type]
    with open(waa / "results" / "chrome" / "t2" / "traj.jsonl", "a") as f:
        f.write('{"action": "click"}\n{"step_num": -1, "action": "x"}\n')
    (waa / "results" / "chrome" / "t2" / "labels.json").write_text('{"human": "maybe"}')
    message = _problems(suite_file(tmp_path / "w", "waa_result", "results/*/*/traj.jsonl", data_dir=str(waa), base="data_root"), waa)
    assert "results/chrome/t2/traj.jsonl, line 3, field 'step_num': is required but missing" in message
    assert "results/chrome/t2/traj.jsonl, line 4, field 'step_num': -1 is not a step number" in message
    assert "results/chrome/t2/result.txt: 'high' is not a score between 0 and 1" in message
    assert "results/chrome/t2/labels.json, field 'human': expected \"yes\" or \"no\", got 'maybe'" in message


def test_a_run_without_request_text_says_where_it_looked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "examples").mkdir(parents=True)
    write_waa_run(data / "results" / "chrome" / "unknown-task", ["a"], ["screen", "screen"])
    message = _problems(suite_file(tmp_path, "waa_result", "results/*/*/traj.jsonl", settings={"waa_tasks": "examples"}), data)
    assert "results/chrome/unknown-task/traj.jsonl: no request text: no WAA task chrome/unknown-task under examples" in message


def test_bad_trajectory_rows_and_escaping_screenshots_are_named(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = [
        {"id": "ok", "request": "r", "steps": [{"action": "a", "screenshot": "../../etc/passwd"}]},
        {"id": "bad", "request": "", "steps": [{"action": 3}]},
        {"id": "bad2", "request": "r", "steps": [], "labels": {"score": 2}},
    ]
    (data / "t.json").write_text(json.dumps(rows))
    message = _problems(suite_file(tmp_path, "trajectory", "*.json", id_template="{task_id}"), data)
    assert "t.json, row 0 (id ok), field 'steps[0].screenshot': '../../etc/passwd' resolves outside the image folder" in message
    assert "t.json, row 1 (id bad), field 'request'" in message and "t.json, row 1 (id bad), field 'steps[0].action'" in message
    assert "t.json, row 2 (id bad2), field 'labels.score'" in message


def test_bad_input_is_a_collection_error_without_traceback(pytester: pytest.Pytester) -> None:
    data = pytester.path / "suites" / "j" / "data"
    folder = write_ufo_task(data / "logs" / "t1", "do it", [{}], ["screen"])
    (folder / "response.log").write_text('{"Step": 1, "Action": \n')
    suite_file(pytester.path / "suites" / "j", "ufo_log", "logs/*/response.log")
    result = pytester.runpytest_subprocess("suites/j", "--model=oracle")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 2, output
    assert "logs/t1/response.log, line 1 (column" in output and "Traceback" not in output


WAA_SHARED = SHARED_DATA / "windows_agent_arena"


@pytest.mark.skipif(not (WAA_SHARED / "examples").is_dir(), reason=f"the shared WAA task files are not at {WAA_SHARED}")
def test_runs_of_the_real_waa_tasks_get_their_request_and_tags(tmp_path: Path) -> None:
    listed = read_task_list(str(WAA_SHARED / "test_all.json"))
    tasks = load_tasks(str(WAA_SHARED / "examples"))
    chosen = [(app, ids[0]) for app, ids in sorted(listed.items())] + [(app, i) for app, ids in sorted(listed.items()) for i in ids if i.startswith("INF-")][:2]
    data = tmp_path / "data"
    for app, task_id in chosen:
        write_waa_run(data / "results" / "navi" / app / task_id, ["click", "FAIL"], ["screen"] * 3, result=0.0)
    suite = suite_file(tmp_path, "waa_result", "results/**/traj.jsonl", settings={"waa_tasks": str(WAA_SHARED / "examples")})
    samples = {s.id: s for s in samples_of(suite, data)}
    assert len(samples) == len(set(chosen)) == 14
    for app, task_id in chosen:
        task, sample = tasks[(app, task_id)], samples[f"{app}-{task_id}"]
        assert sample.instruction == task.instruction
        assert sample.tags["evaluator"] == task.evaluator and sample.tags["feasibility"] == ("infeasible" if task.infeasible else "feasible")
    assert sum(s.tags["feasibility"] == "infeasible" for s in samples.values()) == 2


def test_osworld_folder_without_initial_screen(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_waa_task(data / "examples", "chrome", "t9", "open the downloads page")
    run = write_waa_run(data / "results" / "chrome" / "t9", ["pyautogui.hotkey('ctrl', 'j')", "DONE"], ["screen", "screen"], initial=False)
    [sample] = samples_of(suite_file(tmp_path, "waa_result", "results/*/*/traj.jsonl", settings={"waa_tasks": "examples"}), data)
    t = Trajectory.from_dict(sample.data["trajectory"])
    assert t.steps[0].screenshot == "" and t.steps[1].screenshot == str(run / "step_1_20240101@000001.png")
    assert t.final_screenshot == str(run / "step_2_20240101@000002.png") and not t.last_action_is_fail
