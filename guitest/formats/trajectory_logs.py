"""Trajectory readers: ``trajectory`` (JSON files, a list of trajectories each), ``ufo_log`` (UFO's
per-task log folders) and ``waa_result`` (Windows Agent Arena / OSWorld result folders).

All three make rows of the ``trajectory`` format (``schemas/formats/trajectory.schema.json``,
:mod:`guitest.trajectory`) and share :func:`~guitest.formats.read_rows` for validation, ids
and tags. A trajectory case has no screenshot of its own (``Sample.image == ""``): the judge
task opens its screenshots. Screenshot paths are relative to the suite's image folder (the
data folder unless ``data.images`` says otherwise) and must stay inside it.

UFO log folder (``data.annotations`` matches its ``response.log``)::

    <task>/response.log          one JSON object per line; lines with a Step are steps
    <task>/action_step<N>.png    the screen before step N
    <task>/action_step_final.png the screen after the last step

Keys are read in UFO's old (``Step``, ``Observation``, ``Thought``, ``ControlText``...) and new
(``step``, ``observation``, ``current_subtask``...) spellings.

WAA / OSWorld result folder (``data.annotations`` matches its ``traj.jsonl``)::

    .../<app>/<task id>/traj.jsonl   one JSON object per action: step_num, action, screenshot_file
                                     (or screenshot), response / plan_result; step_num 0 with no
                                     action is the initial screen (WAA)
    .../<app>/<task id>/result.txt   the harness's score (0..1), a label

There a screenshot shows the screen AFTER its action; the reader shifts them so every step
carries the screen before it, and the last one becomes the final screenshot.

Both folder kinds may hold ``labels.json`` (``{"human": "yes"|"no"}``, a human verdict, which
wins over ``result.txt``). The request, app, checker and feasibility come from the WAA task
file (``settings.waa_tasks``), matched by the folder's name and its parent's; without one, from
an ``instruction``/``request`` field of the log.
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any, Iterator

from ..datapath import inside
from ..errors import SuiteError
from ..sample import Sample
from ..suite import Suite
from ..trajectory import FAIL, Labels, is_inline
from .waa import WaaTask, load_tasks
from . import Converted, load_json_rows, raise_problems, read_rows

DEFAULT_ID = "{app}-{task_id}"
UFO_FINAL = "action_step_final.png"

Row = dict[str, Any]


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """The trajectories of ``suite`` under ``data_dir``, in file order; SuiteError naming file, line/row and field."""
    images_dir = os.path.normpath(os.path.join(data_dir, suite.data["images"]))
    paths = _matches(suite, data_dir)
    if suite.format == "trajectory":
        files: Iterator[tuple[str, list[Any], dict[str, Any]]] = ((p, load_json_rows(p), {"file": os.path.basename(p)}) for p in paths)
    else:
        files = iter(_folder_rows(suite, data_dir, images_dir, paths))
    return read_rows(suite, data_dir, files, "trajectory", _convert, DEFAULT_ID)


def _matches(suite: Suite, data_dir: str) -> list[str]:
    """The files the suite's ``annotations`` glob matches (``**`` spans folders), sorted; SuiteError when none."""
    pattern = os.path.join(data_dir, suite.data["annotations"])
    paths = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
    if not paths:
        raise SuiteError(f"{suite.path}: no annotation files match {pattern}")
    return paths


def _convert(row: Row, images_dir: str) -> Converted:
    """A trajectory row as a sample: screenshot paths resolved under ``images_dir``, tag fields derived."""
    image, image_field = "", "steps"
    steps = []
    for index, step in enumerate(row["steps"]):
        ref, bad = _resolve(step.get("screenshot", ""), images_dir)
        if bad:
            image, image_field = bad, f"steps[{index}].screenshot"
        steps.append({**step, "screenshot": ref} if ref else {k: v for k, v in step.items() if k != "screenshot"})
    final, bad = _resolve(row.get("final_screenshot", ""), images_dir)
    if bad:
        image, image_field = bad, "final_screenshot"
    trajectory = {**row, "steps": steps, "final_screenshot": final}
    if not final:
        del trajectory["final_screenshot"]
    infeasible = row.get("infeasible")
    labels = Labels(**(row.get("labels") or {}))
    fields = {
        "id": row["id"],
        "task_id": row["id"],
        "app": row.get("app") or "unknown",
        "evaluator": row.get("evaluator") or "unknown",
        "feasibility": "unknown" if infeasible is None else ("infeasible" if infeasible else "feasible"),
        "labelled": "labelled" if labels.score is not None or labels.human is not None else "unlabelled",
    }
    return Converted(image=image, instruction=row["request"], box=None, fields=fields, data={"trajectory": trajectory}, image_field=image_field)


def _resolve(ref: str, images_dir: str) -> tuple[str, str | None]:
    """``(resolved, None)`` for an inline URI, an empty reference or a path inside ``images_dir``; ``(\"\", ref)`` for a path escaping it."""
    if not ref or is_inline(ref):
        return ref, None
    path = inside(images_dir, ref)
    return (path, None) if path is not None else ("", ref)


# -- folder formats ------------------------------------------------------------------------------


def _folder_rows(suite: Suite, data_dir: str, images_dir: str, paths: list[str]) -> list[tuple[str, list[Any], dict[str, Any]]]:
    """One trajectory row per log file, as read_rows takes them; SuiteError listing every problem of every folder."""
    tasks_dir = suite.settings.get("waa_tasks")
    tasks = load_tasks(os.path.join(data_dir, tasks_dir)) if tasks_dir else {}
    parse = _ufo_steps if suite.format == "ufo_log" else _waa_steps
    out = []
    problems: list[str] = []
    for path in paths:
        shown = os.path.relpath(path, data_dir)
        folder = os.path.dirname(path)
        lines = _json_lines(path, shown, problems)
        if lines is None:
            continue
        steps, final, found = parse(lines, folder, shown, problems)
        labels = _labels(folder, os.path.relpath(folder, data_dir), problems)
        task = _find_task(tasks, folder)
        request = task.instruction if task else _first_text(lines, ("instruction", "request"))
        if not request:
            hint = f"no WAA task {os.path.basename(os.path.dirname(folder))}/{os.path.basename(folder)} under {tasks_dir}" if tasks_dir else "no settings.waa_tasks"
            problems.append(f"{shown}: no request text: {hint}, and no 'instruction' or 'request' field in the log")
            continue
        row: Row = {"id": task.id if task else os.path.basename(folder), "request": request, "steps": [_relative(s, images_dir) for s in steps]}
        if final:
            row["final_screenshot"] = os.path.relpath(final, images_dir)
        if task:
            row.update(app=task.app, evaluator=task.evaluator, infeasible=task.infeasible)
        elif found.get("application"):
            row["app"] = found["application"]
        if labels:
            row["labels"] = labels
        out.append((path, [row], {"file": shown, "run": os.path.relpath(folder, data_dir)}))
    raise_problems(suite, data_dir, problems, "problem(s) in the trajectory logs")
    return out


def _json_lines(path: str, shown: str, problems: list[str]) -> list[tuple[int, Row]] | None:
    """The JSON objects of a JSON-lines file with their line numbers; None (and problems noted) when any line is bad."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{shown}: cannot read: {exc}")
        return None
    out = []
    bad = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{shown}, line {number} (column {exc.colno}): not valid JSON: {exc.msg}")
            bad = True
            continue
        if not isinstance(value, dict):
            problems.append(f"{shown}, line {number}: expected a JSON object, got {type(value).__name__}")
            bad = True
            continue
        out.append((number, value))
    return None if bad else out


def _text(value: Any) -> str:
    """A log value as text: strings as they are, lists of strings one per line, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _key(name: str) -> str:
    return name.replace("_", "").replace(" ", "").replace("-", "").lower()


def _field(line: Row, *names: str) -> Any:
    """The value of the first of ``names`` the line has, matching keys without case, ``_``, ``-`` or spaces."""
    keys = {_key(k): k for k in line}
    for name in names:
        if _key(name) in keys:
            return line[keys[_key(name)]]
    return None


def _step_number(line: Row, names: tuple[str, ...], shown: str, number: int, problems: list[str]) -> int | None:
    value = _field(line, *names)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
        problems.append(f"{shown}, line {number}, field '{names[0]}': {value!r} is not a step number (a whole number >= 0)")
        return None
    return int(value)


def _ufo_steps(lines: list[tuple[int, Row]], folder: str, shown: str, problems: list[str]) -> tuple[list[Row], str, dict[str, str]]:
    """UFO's steps (lines with a Step), each with its ``action_step<N>.png``; the final screenshot; the first application seen."""
    steps: list[Row] = []
    application = ""
    for number, line in lines:
        step = _step_number(line, ("Step", "step"), shown, number, problems)
        if step is None:
            continue
        action = _field(line, "Action", "action")
        if action in (None, "", [], {}):
            function, args = _field(line, "Function", "function"), _field(line, "Args", "arguments")
            action = f"{function}({_text(args) if args else ''})" if function else ""
        shown_app = _text(_field(line, "Application"))
        record = {
            "number": step,
            "subtask": _text(_field(line, "Subtask", "current_subtask", "CurrentSubtask")),
            "observation": _text(_field(line, "Observation")),
            "thought": _text(_field(line, "Thought")),
            "plan": _text(_field(line, "Plan")),
            "action": _text(action),
            "status": _text(_field(line, "Status")),
            "application": shown_app,
            "comment": _text(_field(line, "Comment")),
            "screenshot": os.path.join(folder, f"action_step{step}.png"),
        }
        application = application or shown_app
        steps.append({k: v for k, v in record.items() if v != ""})
    return steps, os.path.join(folder, UFO_FINAL), {"application": application}


def _waa_action(value: Any) -> str:
    """A WAA/OSWorld action as text; ``FAIL`` however it is spelled (``"FAIL"``, ``{"action_type": "FAIL"}``)."""
    if isinstance(value, dict) and _text(value.get("action_type")).strip() == FAIL:
        return FAIL
    if isinstance(value, list) and len(value) == 1:
        return _waa_action(value[0])
    return _text(value).strip() if isinstance(value, str) else _text(value)


def _waa_steps(lines: list[tuple[int, Row]], folder: str, shown: str, problems: list[str]) -> tuple[list[Row], str, dict[str, str]]:
    """WAA/OSWorld steps: each line's screenshot is the screen after its action, so step k gets line k-1's
    (the initial screen for the first step) and the last line's becomes the final screenshot."""
    steps: list[Row] = []
    before = ""  # the screen the next action will be taken on
    for number, line in lines:
        step = _step_number(line, ("step_num",), shown, number, problems)
        if step is None:
            if _field(line, "step_num") is None:
                problems.append(f"{shown}, line {number}, field 'step_num': is required but missing")
            continue
        shot = _field(line, "screenshot_file", "screenshot")
        after = os.path.join(folder, shot) if isinstance(shot, str) and shot else ""
        action = _field(line, "action")
        if step == 0 and action is None:  # WAA's record of the initial screen
            before = after
            continue
        record = {"number": step, "action": _waa_action(action), "thought": _text(_field(line, "response", "plan_result")), "screenshot": before}
        steps.append({k: v for k, v in record.items() if v != ""})
        before = after
    return steps, before, {}


def _relative(step: Row, images_dir: str) -> Row:
    if "screenshot" in step:
        return {**step, "screenshot": os.path.relpath(step["screenshot"], images_dir)}
    return step


def _labels(folder: str, shown: str, problems: list[str]) -> dict[str, Any] | None:
    """The folder's labels: the harness's score from ``result.txt``, a human verdict from ``labels.json``."""
    labels: dict[str, Any] = {}
    result = os.path.join(folder, "result.txt")
    if os.path.isfile(result):
        try:
            with open(result, encoding="utf-8", errors="replace") as f:
                text = f.read().strip()
            score: float | None = float(text)
        except OSError as exc:
            text, score = str(exc), None
        except ValueError:
            score = None
        if score is None or not 0 <= score <= 1:
            problems.append(f"{os.path.join(shown, 'result.txt')}: {text[:40]!r} is not a score between 0 and 1")
        else:
            labels.update(score=score, source="result.txt")
    human_path = os.path.join(folder, "labels.json")
    if os.path.isfile(human_path):
        try:
            with open(human_path, encoding="utf-8") as f:
                human = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append(f"{os.path.join(shown, 'labels.json')}: not valid JSON: {exc}")
            return labels or None
        value = human.get("human") if isinstance(human, dict) else None
        if value not in ("yes", "no"):
            problems.append(f'{os.path.join(shown, "labels.json")}, field \'human\': expected "yes" or "no", got {value!r}')
        else:
            labels.update(human=value, source="+".join(filter(None, (labels.get("source"), "labels.json"))))
    return labels or None


def _find_task(tasks: dict[tuple[str, str], WaaTask], folder: str) -> WaaTask | None:
    """The WAA task of a run folder: ``<app>/<id>`` by the folder and its parent, else the only task with that id."""
    task_id, app = os.path.basename(folder), os.path.basename(os.path.dirname(folder))
    if (app, task_id) in tasks:
        return tasks[(app, task_id)]
    same = [t for (_, i), t in tasks.items() if i == task_id]
    return same[0] if len(same) == 1 else None


def _first_text(lines: list[tuple[int, Row]], names: tuple[str, ...]) -> str:
    for _, line in lines:
        value = _field(line, *names)
        if isinstance(value, str) and value.strip():
            return value
    return ""
