"""Runs published by other harnesses, read into guitest reports, so ``guitest compare`` sets a guitest run beside a
published one task by task.

OSWorld's results layout, as its ``lib_run_single.py`` writes it and its ``show_result.py`` reads it (both read in the
fork mrwwk/DeskCraft at 3e11457; the layout of the OSWorld-Verified trajectories the OSWorld team publishes):
``<root>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/`` holding ``result.txt`` (the evaluator's
float), ``traj.jsonl`` (one JSON line per step) and the step screenshots. A task folder without ``result.txt`` did not
finish: ``show_result.py`` counts it nowhere, and guitest reads it as an error, shown apart and out of every rate.

Each task becomes a case ``<domain>-<task_id>`` (the id guitest's own OSWorld suite gives it), tagged ``app: <domain>``,
scored as ``show_result.py`` reads ``result.txt`` (``float(text)``, else the value of the text: ``True`` is 1.0), a
success when its score is 1 or more (as guitest's desktop evaluator decides). The report's headline is the mean score,
which is what ``show_result.py`` prints as each domain's and the overall "Success Rate" (x 100).

Where guitest departs from ``show_result.py`` (docs/live.md, "A published run beside yours"): a score that is not a
finite number in 0..1 (``inf``, ``nan``, ``1e308``, ``-1``: no OSWorld evaluator gives one) refuses the whole folder
with a :class:`PublishedRunError` naming the task and its file, where ``show_result.py`` adds it to its sums; so does a
task id under two domains (``show_result.py`` counts it twice) and a file that cannot be read. ``result.txt`` is read
up to :data:`MAX_RESULT_BYTES` (a longer one is not a score: the task is an error, as a text that is none is) and
``traj.jsonl`` line by line, each line through :func:`guitest.strictjson.loads` and up to :data:`MAX_STEP_BYTES` (a
longer line is skipped, as a line that is not JSON is), so memory stays bounded whatever the files' sizes.
"""

from __future__ import annotations

import ast
import json
import math
import os
from pathlib import Path
from typing import BinaryIO, Iterator

from . import strictjson
from .errors import GuitestError
from .printable import printable
from .reporting import report as report_mod
from .reporting.document import Report
from .tasks import load_task
from .verdict import ERROR, HIT, MISS, PARTIAL, UNSURE, CaseResult

#: the step budget OSWorld's run.py gives an episode by default (--max_steps 15)
DEFAULT_MAX_STEPS = 15
#: the most of ``result.txt`` read (``lib_run_single.py`` writes one number and a newline)
MAX_RESULT_BYTES = 4096
#: the longest ``traj.jsonl`` line read (one step: its action, the model's response and the environment's info)
MAX_STEP_BYTES = 4 << 20


class PublishedRunError(GuitestError):
    """A folder that is not a run in a layout guitest reads; the message says what it lacks."""


def is_osworld_results(path: Path) -> bool:
    """Whether ``path`` is a folder of OSWorld results: ``<model>/<domain>/<task_id>/`` (the folder holds domains whose
    task folders hold ``result.txt`` or ``traj.jsonl``)."""
    if not path.is_dir():
        return False
    for domain in _dirs(path):
        for task in _dirs(domain):
            if (task / "result.txt").exists() or (task / "traj.jsonl").exists():
                return True
    return False


def _dirs(path: Path) -> list[Path]:
    """The folders in ``path``, sorted; PublishedRunError when it cannot be listed."""
    try:
        return sorted(p for p in path.iterdir() if p.is_dir())
    except OSError as exc:
        raise PublishedRunError(f"{printable(str(path))}: cannot list: {exc.strerror or exc}") from None


def osworld_score(text: str) -> float:
    """``result.txt``'s score as ``show_result.py`` reads it: ``float(text)``, else the value the text writes (``True``);
    a text that is neither raises ValueError. A number past the largest float is ``inf`` (as ``float`` reads ``1e400``)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        value = ast.literal_eval(text.strip())
    except (SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"not a score: {text.strip()[:80]!r}") from None
    try:
        return float(value)
    except OverflowError:  # an integer of 400 digits in parentheses
        return math.inf
    except TypeError:
        raise ValueError(f"not a score: {text.strip()[:80]!r}") from None


def _steps(task: Path) -> tuple[int, str | None]:
    """How many steps ``traj.jsonl`` records, and the last step's response (None when there is none): read line by
    line, a line that is not a JSON object (or is longer than :data:`MAX_STEP_BYTES`) skipped; PublishedRunError when
    the file cannot be read."""
    path = task / "traj.jsonl"
    if not path.exists():
        return 0, None
    steps, response = 0, None
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(_lines(handle, MAX_STEP_BYTES), 1):
                if line is None:
                    continue
                try:
                    step = strictjson.loads(line.decode("utf-8", errors="replace"), f"{path}, line {number}", max_bytes=MAX_STEP_BYTES)
                except strictjson.UnreadableJSON:
                    continue
                if isinstance(step, dict):
                    steps += 1
                    response = step.get("response") if isinstance(step.get("response"), str) else response
    except OSError as exc:
        raise PublishedRunError(f"{printable(str(path))}: cannot read: {exc.strerror or exc}") from None
    return steps, response


def _lines(handle: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """The lines of ``handle`` (without their newline), each read whole only up to ``limit`` bytes: a longer line is
    read past, never held, and given as None."""
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) > limit:
            while line and not line.endswith(b"\n"):
                line = handle.readline(limit)
            yield None
            continue
        yield line.rstrip(b"\r\n")


def _result_text(path: Path) -> str | None:
    """``result.txt``'s text, None when it is longer than :data:`MAX_RESULT_BYTES` (no score is); PublishedRunError when
    it cannot be read (a folder, no permission)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_RESULT_BYTES + 1)
    except OSError as exc:
        raise PublishedRunError(f"{printable(str(path))}: cannot read: {exc.strerror or exc}") from None
    return None if len(data) > MAX_RESULT_BYTES else data.decode("utf-8", errors="replace")


def read_osworld(folder: Path, max_steps: int = DEFAULT_MAX_STEPS) -> list[CaseResult]:
    """Every task of an OSWorld results folder (``<model>/``: its domains' task folders) as a case's result;
    PublishedRunError naming the task and its file for a score that is not a finite number in 0..1, for a task under
    two domains, and for a file that cannot be read."""
    cases: list[CaseResult] = []
    seen: dict[str, str] = {}  # a task id, and a case id, -> the task folder that had it
    for domain in _dirs(folder):
        for task in _dirs(domain):
            case_id, tags = f"{domain.name}-{task.name}", {"app": domain.name}
            where = f"{domain.name}/{task.name}"
            for key in (f"task {task.name}", f"case {case_id}"):
                if key in seen:
                    raise PublishedRunError(
                        printable(f"{folder}: {key} is in {seen[key]} and in {where}: a task is counted once (OSWorld's show_result.py would count it twice); remove one of the two folders")
                    )
                seen[key] = where
            steps, response = _steps(task)
            result = task / "result.txt"
            if not result.exists():
                cases.append(
                    {
                        "id": case_id,
                        "verdict": ERROR,
                        "tags": tags,
                        "prediction": None,
                        "response": response,
                        "error": "no result.txt: the task did not finish (OSWorld's show_result.py counts it nowhere)",
                        "steps": steps,
                    }
                )
                continue
            text = _result_text(result)
            try:
                if text is None:
                    raise ValueError(f"longer than {MAX_RESULT_BYTES} bytes")
                score = osworld_score(text)
            except ValueError:
                shown = f"{text.strip()[:80]!r}" if text is not None else f"more than {MAX_RESULT_BYTES} bytes"
                cases.append({"id": case_id, "verdict": ERROR, "tags": tags, "prediction": None, "response": response, "error": printable(f"{result}: not a score: {shown}"), "steps": steps})
                continue
            if not (math.isfinite(score) and 0.0 <= score <= 1.0):
                assert text is not None
                why = "not a finite number" if not math.isfinite(score) else "outside 0..1"
                raise PublishedRunError(
                    printable(
                        f"{result}: the score of task {where} is {text.strip()[:40]!r}, {why}: OSWorld's evaluators give 0..1 "
                        "(show_result.py would add it to its sums as it is); correct or remove that result.txt"
                    )
                )
            success = score >= 1.0
            prediction = {"success": success, "score": score, "steps": steps, "budget": max(max_steps, steps, 1)}
            cases.append({"id": case_id, "verdict": HIT if success else MISS, "tags": tags, "prediction": prediction, "response": response, "success": success, "score": score, "steps": steps})
    return cases


def osworld_report(folder: str | Path, max_steps: int = DEFAULT_MAX_STEPS) -> Report:
    """An OSWorld results folder (``<root>/<action_space>/<observation_type>/<model>/``, or its root when it holds one
    model's results) as a guitest report: per domain and overall, the mean score (OSWorld's "Success Rate") and the
    success rate, errored tasks counted apart. PublishedRunError for a folder that holds no OSWorld results."""
    path = _model_folder(Path(folder))
    cases = read_osworld(path, max_steps)
    task = load_task("live", {"headline": "mean_score"})
    parts = path.resolve().parts
    action_space, observation, model = (parts[-3], parts[-2], parts[-1]) if len(parts) >= 3 else ("", "", path.name)
    return report_mod.build(
        suite={"name": "osworld", "path": str(path), "format": "osworld_results", "task": "live", "settings": task.settings, "max_steps": max_steps},
        model={"spec": f"published:{model}", "adapter": "OSWorld results", "space": "screen", "settings": {}, "action_space": action_space, "observation_type": observation},
        results=cases,
        n_selected=len(cases),
        missing=[],
        tags=["app"],
        cross=[],
        gate={},
        run={"data": str(path)},
        task=task,
    )


def write_osworld(report: Report, root: str | Path, action_space: str = "pyautogui", observation_type: str = "screenshot") -> Path:
    """A live report's episodes in OSWorld's results layout under ``root``
    (``<action_space>/<observation_type>/<model>/<domain>/<task_id>/``): ``result.txt`` as ``lib_run_single.py`` writes
    it (``f"{result}\n"``) for each episode that ended in an evaluation, none for one that did not (an error: OSWorld's
    ``show_result.py`` counts it nowhere, as guitest's report leaves it out of its rates), and ``traj.jsonl``, one line
    per step. The domain is the case's ``app`` tag (else ``env``), the task id the rest of its id. The model's folder."""
    model = str(report["model"].get("spec") or "model").replace("/", "_").replace(":", "_")
    folder = Path(root) / action_space / observation_type / model
    for case in report["cases"]:
        if case["verdict"] in (UNSURE, PARTIAL) or case.get("attempts"):
            continue  # a judge's to decide, or repeated attempts: no one result.txt says it
        domain = case["tags"].get("app") or "env"
        task = case["id"].removeprefix(f"{domain}-") or case["id"]
        where = folder / _safe(domain) / _safe(task)
        where.mkdir(parents=True, exist_ok=True)
        steps = ((case.get("episode") or {}).get("trajectory")) or []
        lines = [
            json.dumps(
                {
                    "step_num": n,
                    "action": step.get("actions"),
                    "response": step.get("reply"),
                    "reward": 0,
                    "done": n == len(steps),
                    "info": step.get("info") or {},
                    "screenshot_file": step.get("screenshot"),
                },
                ensure_ascii=False,
            )
            for n, step in enumerate((s for s in steps if isinstance(s, dict)), 1)
        ]
        (where / "traj.jsonl").write_text("".join(line + "\n" for line in lines), "utf-8")
        result, score = where / "result.txt", case.get("score")
        if case["verdict"] == ERROR or score is None:
            result.unlink(missing_ok=True)
        else:
            result.write_text(f"{float(score)}\n", "utf-8")
    return folder


def _safe(name: str) -> str:
    """A folder name for a domain or task id: no separator, nothing that climbs."""
    cleaned = name.replace("/", "_").replace("\\", "_").strip(".") or "_"
    return cleaned


def load_any(path: str | Path) -> Report:
    """A guitest JSON report, or a published run's folder read into one (``guitest compare`` takes either on either side);
    :class:`guitest.reporting.compare.ReportError` naming the path when it is neither."""
    from .reporting.compare import ReportError, load_report

    if Path(path).is_dir():
        try:
            return osworld_report(path)
        except PublishedRunError as exc:
            raise ReportError(str(exc)) from None
    return load_report(path)


def _model_folder(path: Path) -> Path:
    """The folder of one model's results under ``path``: ``path`` itself when it holds domains of tasks, else the one
    ``<action_space>/<observation_type>/<model>/`` below it."""
    if is_osworld_results(path):
        return path
    found = [m for a in _dirs(path) for o in _dirs(a) for m in _dirs(o) if is_osworld_results(m)] if path.is_dir() else []
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(os.path.relpath(m, path) for m in found)
        raise PublishedRunError(f"{path} holds the OSWorld results of several models ({names}): give one of their folders")
    raise PublishedRunError(f"{path}: not an OSWorld results folder (<action_space>/<observation_type>/<model>/<domain>/<task_id>/result.txt)")
