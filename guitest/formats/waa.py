"""Windows Agent Arena task files: ``examples/<app>/<id>.json`` and the task lists that name them.

A task list (``test_all.json``, ``test_full.json``, ...) maps an app to task ids; an id is the
task file's name without ``.json``, which is how the WAA harness finds a task and names its
result folder (``<app>/<id>/``). The ``id`` field inside a file differs from its name for a
few files (and two files share one), so guitest keys tasks by (app, file name) and keeps
the inner id as :attr:`WaaTask.file_id`.

The WAA harness's offline rule (:func:`infeasible_rule`: an agent whose last action is ``FAIL`` completed an
infeasible task, and did not complete a feasible one) is a fact about a trajectory: it lives in
:mod:`guitest.trajectory`, which the judge task reads without importing the readers, and is named here too.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from .. import schema
from ..errors import SuiteError, where
from . import load_json
from ..trajectory import infeasible_rule as infeasible_rule  # the WAA harness's rule, named where its task files are read

INFEASIBLE = "infeasible"


@dataclass(frozen=True)
class WaaTask:
    """One task: what the agent is asked, in which app, and how the harness checks it."""

    id: str
    app: str
    instruction: str
    evaluators: tuple[str, ...]
    conj: str
    related_apps: tuple[str, ...]
    file_id: str
    path: str

    @property
    def infeasible(self) -> bool:
        """Whether the task is infeasible by design (its checker is ``infeasible``)."""
        return INFEASIBLE in self.evaluators

    @property
    def evaluator(self) -> str:
        """The checker's name; several joined with ``+`` (combined by :attr:`conj`)."""
        return "+".join(self.evaluators)


def read_task(path: str, app: str) -> WaaTask:
    """The task in ``path`` (under the folder of ``app``); SuiteError naming the file and field when it is invalid."""
    data = load_json(path, "task file")
    problems = [f"{where(path, field=f or '(top level)')}: {m}" for f, m in schema.iter_problems("formats/waa_task", data)]
    if problems:
        raise SuiteError("invalid WAA task file:\n  " + "\n  ".join(problems))
    func = data["evaluator"]["func"]
    return WaaTask(
        id=os.path.basename(path)[: -len(".json")],
        app=app,
        instruction=data["instruction"],
        evaluators=tuple(func) if isinstance(func, list) else (func,),
        conj=data["evaluator"].get("conj", "and"),
        related_apps=tuple(data.get("related_apps", ())),
        file_id=data["id"],
        path=path,
    )


def load_tasks(examples_dir: str) -> dict[tuple[str, str], WaaTask]:
    """Every task under ``examples_dir`` keyed by (app, id); all invalid files reported together in one SuiteError."""
    if not os.path.isdir(examples_dir):
        raise SuiteError(f"{examples_dir}: no such WAA task folder (expected examples/<app>/<id>.json files)")
    tasks: dict[tuple[str, str], WaaTask] = {}
    problems: list[str] = []
    for app in sorted(os.listdir(examples_dir)):
        folder = os.path.join(examples_dir, app)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json"):
                continue
            try:
                task = read_task(os.path.join(folder, name), app)
            except SuiteError as exc:
                problems.append(str(exc).removeprefix("invalid WAA task file:\n  "))
                continue
            tasks[(task.app, task.id)] = task
    if problems:
        raise SuiteError(f"{len(problems)} invalid WAA task file(s) under {examples_dir}:\n  " + "\n  ".join(problems))
    return tasks


def read_task_list(path: str) -> dict[str, list[str]]:
    """A task list: app -> task ids, in file order; SuiteError naming the file and app when it is malformed."""
    data = load_json(path, "task list")
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: a WAA task list maps apps to lists of task ids, got {type(data).__name__}")
    for app, ids in data.items():
        if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
            raise SuiteError(f"{where(path, field=app)}: expected a list of task ids")
    return data


def tasks_in_list(examples_dir: str, list_path: str) -> list[WaaTask]:
    """The tasks a task list names, in list order; SuiteError naming every listed task that has no file."""
    tasks = load_tasks(examples_dir)
    listed = read_task_list(list_path)
    missing = [f"{app}/{task_id}" for app, ids in listed.items() for task_id in ids if (app, task_id) not in tasks]
    if missing:
        raise SuiteError(f"{list_path}: {len(missing)} listed task(s) have no file under {examples_dir}: {', '.join(missing[:10])}")
    return [tasks[(app, task_id)] for app, ids in listed.items() for task_id in ids]


def count_by_app(tasks: Iterable[WaaTask]) -> dict[str, int]:
    """How many tasks each app has, apps sorted by name."""
    counts = Counter(t.app for t in tasks)
    return {app: counts[app] for app in sorted(counts)}


def count_evaluators(tasks: Iterable[WaaTask]) -> dict[str, int]:
    """How many tasks use each checker function (a task with a list of checkers counts for each), most used first."""
    counts = Counter(f for t in tasks for f in t.evaluators)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
