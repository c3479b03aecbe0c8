"""OSWorld and Windows Agent Arena task files: one task per ``examples/<app>/<id>.json``, or a task list naming them.

``data.annotations`` globs task files (``examples/*/*.json``) or task lists (``test_all.json``: app ->
task ids, the tasks at ``examples/<app>/<id>.json`` beside the list, as both benchmarks lay them out).
Each task becomes one live case (:mod:`guitest.desktopenv.task` describes its ``data``), keyed by its
app folder and file name (``{app}-{task_id}``; WAA's inner ``id`` differs from the file name for a
few files, see :mod:`guitest.formats.waa`). Fields for ids and tags: ``app``, ``task_id``, ``id``, ``snapshot``,
``evaluator`` (the metric names joined by ``+``), ``conj``, ``feasibility`` (``feasible`` /
``infeasible``), ``evaluated_by`` (``environment`` / ``judge``), ``runnable`` (``yes``; ``no`` when a
set-up step is one guitest does not implement), ``related_apps``.

A task whose evaluator ``func`` is empty (``""``, ``[]``) cannot be scored by anyone (desktop-env fails on it
at the task's reset, and its harness goes on with the next task): it alone is an invalid row, collected as
a case that errs with the message (``data["invalid"]``), and the suite's other tasks run. Any other
problem of a task file stops the suite's collection with every problem listed, as for every format.

Relative local paths (an ``upload_file`` step's ``local_path``, a ``download`` URL or ``cloud_file``
path without a scheme) are made absolute against the task file's folder, so a suite can ship the
files its tasks need.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Iterator

from ..errors import where
from .evaluate import JUDGE, decided_by, is_infeasible, missing, parts
from .setup import unsupported_steps
from ..sample import Sample
from ..suite import Suite
from ..formats.waa import read_task_list
from ..formats import Converted, annotation_files, load_json, raise_problems, read_rows

DEFAULT_ID = "{app}-{task_id}"
ENV = "desktop"
_PATH_KEY = "__task_file__"  # the reader's own key in a row: the task file's path, for relative paths
_INVALID_KEY = "__invalid__"  # the reader's own key in a row: why the task cannot be scored
_NO_FUNC = "none"  # what an empty func becomes in a row (and its evaluator tag), so the schema passes it


def is_task_list(data: Any) -> bool:
    """Whether a JSON document is a task list (app -> task ids) rather than a task."""
    return isinstance(data, dict) and "instruction" not in data and "evaluator" not in data and all(isinstance(v, list) for v in data.values())


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """Every task the suite's annotation files give, in file (or list) order; SuiteError naming file and field."""
    problems: list[str] = []
    rows = list(_task_rows(suite, data_dir, problems))
    raise_problems(suite, data_dir, problems, "task file problem(s)")
    return read_rows(suite, data_dir, iter(rows), "osworld", _convert, DEFAULT_ID)


def _task_rows(suite: Suite, data_dir: str, problems: list[str]) -> Iterator[tuple[str, list[Any], dict[str, Any]]]:
    seen: set[str] = set()
    for path in annotation_files(suite, data_dir):
        data = load_json(path, "task file")
        if is_task_list(data):
            listed = read_task_list(path)
            folder = os.path.join(os.path.dirname(path), "examples")
            for app, ids in listed.items():
                for task_id in ids:
                    task_path = os.path.join(folder, app, f"{task_id}.json")
                    if not os.path.isfile(task_path):
                        problems.append(f"{where(os.path.relpath(path, data_dir), field=app)}: task {task_id} has no file {os.path.relpath(task_path, data_dir)}")
                        continue
                    row = _row(task_path, load_json(task_path, "task file"), data_dir, seen, problems, os.path.basename(path))
                    if row is not None:
                        yield row
        else:
            row = _row(path, data, data_dir, seen, problems, "")
            if row is not None:
                yield row


def _row(path: str, data: Any, data_dir: str, seen: set[str], problems: list[str], listed_in: str) -> tuple[str, list[Any], dict[str, Any]] | None:
    """One task file as ``read_rows`` takes it, or None (listed twice; a problem noted)."""
    key = os.path.normpath(path)
    if key in seen:
        return None
    seen.add(key)
    shown = os.path.relpath(path, data_dir)
    if isinstance(data, dict) and isinstance(data.get("evaluator"), dict) and isinstance(data["evaluator"].get("func"), list):
        try:
            parts(data["evaluator"])
        except ValueError as exc:
            problems.append(f"{where(shown, field='evaluator')}: {exc}")
            return None
    row = {**data, _PATH_KEY: path} if isinstance(data, dict) else data
    func = data["evaluator"].get("func", _NO_FUNC) if isinstance(data, dict) and isinstance(data.get("evaluator"), dict) else _NO_FUNC
    if func == "" or func == [] or (isinstance(func, list) and "" in func):
        message = f"{where(shown, 0, str(data['id']) if isinstance(data.get('id'), str) else None, 'evaluator.func')}: is empty ({func!r}): no metric scores this task; name one (exact_match, compare_text_file, infeasible, ...) or drop the task"
        row = {**row, "evaluator": {**data["evaluator"], "func": _NO_FUNC}, _INVALID_KEY: f"invalid task file: {message}"}
    derived = {
        "app": os.path.basename(os.path.dirname(path)),
        "task_id": os.path.splitext(os.path.basename(path))[0],
        "file": shown,
        "list": listed_in,
    }
    return path, [row], derived


def _absolute(value: str, folder: str) -> str:
    if "://" in value or os.path.isabs(value) or value.startswith("~"):
        return value
    return os.path.abspath(os.path.join(folder, value))


def _resolve_steps(steps: list[Any], folder: str) -> list[Any]:
    out = copy.deepcopy(steps)
    for step in out:
        params = step.get("parameters") if isinstance(step, dict) else None
        if not isinstance(params, dict):
            continue
        for entry in params.get("files") or []:
            if not isinstance(entry, dict):
                continue
            if step.get("type") == "upload_file" and isinstance(entry.get("local_path"), str):
                entry["local_path"] = _absolute(entry["local_path"], folder)
            if step.get("type") == "download" and isinstance(entry.get("url"), str):
                entry["url"] = _absolute(entry["url"], folder)
    return out


def _resolve_evaluator(evaluator: dict[str, Any], folder: str) -> dict[str, Any]:
    out = copy.deepcopy(evaluator)
    out["postconfig"] = _resolve_steps(out.get("postconfig") or [], folder)
    for name in ("result", "expected"):
        value = out.get(name)
        for config in value if isinstance(value, list) else [value]:
            if isinstance(config, dict) and config.get("type") == "cloud_file":
                paths = config.get("path")
                if isinstance(paths, str):
                    config["path"] = _absolute(paths, folder)
                elif isinstance(paths, list):
                    config["path"] = [_absolute(p, folder) if isinstance(p, str) else p for p in paths]
    return out


def _convert(row: dict[str, Any], images_dir: str) -> Converted:
    path = row[_PATH_KEY]
    folder = os.path.dirname(path)
    app = os.path.basename(folder)
    task_id = os.path.splitext(os.path.basename(path))[0]
    if row.get(_INVALID_KEY):
        return _invalid(row, app, task_id)
    evaluator = _resolve_evaluator(row["evaluator"], folder)
    funcs = evaluator["func"] if isinstance(evaluator["func"], list) else [evaluator["func"]]
    steps = _resolve_steps(row.get("config") or [], folder)
    unsupported = unsupported_steps(steps) + [s for s in unsupported_steps(evaluator.get("postconfig") or []) if s not in unsupported_steps(steps)]
    judged = decided_by(evaluator)
    infeasible = is_infeasible(evaluator)
    notes = []
    if judged == JUDGE:
        notes.append(f"evaluated by the trajectory judge: guitest does not implement {', '.join(missing(evaluator))}")
    if unsupported:
        notes.append(f"cannot run here: guitest does not implement the set-up step(s) {', '.join(unsupported)}")
    config = {
        "id": row.get("id", task_id),
        "snapshot": row.get("snapshot", ""),
        "related_apps": list(row.get("related_apps", [])),
        "config": steps,
        "evaluator": evaluator,
    }
    data: dict[str, Any] = {
        "task": {"env": ENV, "name": f"{app}/{task_id}", "instruction": row["instruction"], "config": config},
        "evaluated_by": judged,
        "infeasible": infeasible,
        "unsupported": unsupported,
    }
    if row.get("oracle"):
        data["oracle"] = copy.deepcopy(row["oracle"])
    fields = {
        "app": app,
        "task_id": task_id,
        "id": str(row.get("id", task_id)),
        "snapshot": str(row.get("snapshot", "")),
        "evaluator": "+".join(funcs),
        "conj": evaluator.get("conj", "and"),
        "feasibility": "infeasible" if infeasible else "feasible",
        "evaluated_by": judged,
        "runnable": "no" if unsupported else "yes",
        "related_apps": "+".join(row.get("related_apps", [])) or app,
    }
    return Converted(image="", instruction=row["instruction"], box=None, fields=fields, data=data, notes=tuple(notes), image_field="instruction")


def _invalid(row: dict[str, Any], app: str, task_id: str) -> Converted:
    """A task that cannot be scored: a case that errs with the reader's message (it never reaches a machine)."""
    message = row[_INVALID_KEY]
    data: dict[str, Any] = {
        "task": {"env": ENV, "name": f"{app}/{task_id}", "instruction": row["instruction"], "config": {"id": row.get("id", task_id), "evaluator": {}}},
        "evaluated_by": "environment",
        "infeasible": False,
        "unsupported": [],
        "invalid": message,
    }
    fields = {
        "app": app,
        "task_id": task_id,
        "id": str(row.get("id", task_id)),
        "snapshot": str(row.get("snapshot", "")),
        "evaluator": _NO_FUNC,
        "conj": "and",
        "feasibility": "feasible",
        "evaluated_by": "environment",
        "runnable": "no",
        "related_apps": "+".join(row.get("related_apps", [])) or app,
    }
    return Converted(image="", instruction=row["instruction"], box=None, fields=fields, data=data, notes=(message,), image_field="instruction")


def count_runnable(samples: list[Sample]) -> dict[str, int]:
    """How many tasks guitest runs and scores itself, runs with the judge deciding, and cannot run (invalid ones too)."""
    out = {"environment": 0, "judge": 0, "not runnable": 0}
    for sample in samples:
        if sample.data.get("unsupported") or sample.data.get("invalid"):
            out["not runnable"] += 1
        else:
            out[sample.data["evaluated_by"]] += 1
    return out
