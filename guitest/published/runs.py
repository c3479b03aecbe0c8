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

Where guitest departs from ``show_result.py`` (docs/compare.md, "Published runs"): a score that is not a
finite number in 0..1 (``inf``, ``nan``, ``1e308``, ``-1``: no OSWorld evaluator gives one) refuses the whole folder
with a :class:`PublishedRunError` naming the task and its file, where ``show_result.py`` adds it to its sums; so does a
task id under two domains (``show_result.py`` counts it twice) and a file that cannot be read. ``result.txt`` is read
up to :data:`MAX_RESULT_BYTES` (a longer one is not a score: the task is an error, as a text that is none is) and
``traj.jsonl`` line by line, each line through :func:`guitest.strictjson.loads` and up to :data:`MAX_STEP_BYTES` (a
longer line is skipped, as a line that is not JSON is), so memory stays bounded whatever the files' sizes.

The other way, :func:`write_osworld` (``--osworld-results``) writes a live report as a published OSWorld run would be,
which OSWorld's ``show_result.py`` and monitor read and this module reads back case by case (docs/live_reports.md, "A run as a
published OSWorld run").
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Mapping

from .. import strictjson
from ..errors import GuitestError
from ..printable import printable
from ..reporting import builder
from ..reporting.document import Report, ShapeRecord
from ..tasks import load_task
from ..verdict import ERROR, HIT, MISS, PARTIAL, UNSURE, CaseResult

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
    steps, response = 0, None
    for step in _trajectory(task / "traj.jsonl"):
        steps += 1
        response = step.get("response") if isinstance(step.get("response"), str) else response
    return steps, response


def _trajectory(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a ``traj.jsonl``, line by line (none without the file): a line that is not one, or is longer
    than :data:`MAX_STEP_BYTES`, skipped; PublishedRunError when the file cannot be read."""
    if not path.exists():
        return
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(_lines(handle, MAX_STEP_BYTES), 1):
                if line is None:
                    continue
                try:
                    item = strictjson.loads(line.decode("utf-8", errors="replace"), f"{path}, line {number}", max_bytes=MAX_STEP_BYTES)
                except strictjson.UnreadableJSON:
                    continue
                if isinstance(item, dict):
                    yield item
    except OSError as exc:
        raise PublishedRunError(f"{printable(str(path))}: cannot read: {exc.strerror or exc}") from None


def osworld_task(report: Report, case: Mapping[str, Any]) -> Path | None:
    """The task folder a case of a published OSWorld run (:func:`osworld_report`) was read from
    (``<model>/<domain>/<task_id>/``), None for a case of any other report."""
    if report["suite"].get("format") != "osworld_results" or not report["suite"].get("path"):
        return None
    domain = str((case.get("tags") or {}).get("app") or "")
    task = str(case.get("id") or "")[len(domain) + 1 :]
    if not domain or not _folder_name(domain) or not _folder_name(task):
        return None
    return Path(str(report["suite"]["path"])) / domain / task


def osworld_trajectory(task: Path) -> list[dict[str, Any]]:
    """A task folder's ``traj.jsonl`` as steps, one per ``step_num`` (the lines of consecutive actions of one reply
    share it): ``n``, ``actions`` (each line's ``action`` as it is: pyautogui code, ``DONE``, or an object),
    ``response`` and ``screenshot`` (the absolute path of the last screenshot its lines name that is in the folder,
    else None). Read as :func:`read_osworld` reads it, line by line, bounded; empty without the file;
    PublishedRunError when it cannot be read."""
    steps: list[dict[str, Any]] = []
    for item in _trajectory(task / "traj.jsonl"):
        n = item.get("step_num")
        if not steps or n is None or n != steps[-1]["n"]:
            steps.append({"n": n if isinstance(n, int) and not isinstance(n, bool) else len(steps) + 1, "actions": [], "response": None, "screenshot": None})
        step = steps[-1]
        step["actions"].append(item.get("action"))
        if isinstance(item.get("response"), str) and step["response"] is None:
            step["response"] = item["response"]
        shot = item.get("screenshot_file")
        if isinstance(shot, str) and _folder_name(shot) and (task / shot).is_file():
            step["screenshot"] = str((task / shot).resolve())
    return steps


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
    shape: ShapeRecord = {"tables": ["app"], "cross": [], "average": "micro", "macro_over": None}
    return builder.suite_report(
        {"name": "osworld", "path": str(path), "format": "osworld_results", "task": "live", "settings": task.settings, "max_steps": max_steps, "shape": shape},
        task,
        model={"spec": f"published:{model}", "adapter": "OSWorld results", "space": "screen", "settings": {}, "action_space": action_space, "observation_type": observation},
        results=cases,
        selected=[case["id"] for case in cases],
        run={"data": str(path)},
        limits=None,  # guitest gates none of a published run's figures
    )


@dataclass(frozen=True)
class OSWorldExport:
    """What :func:`write_osworld` wrote: the model's ``folder``, and ``problems``, a sentence each, where it is not what
    OSWorld would have written (cases the folder does not read back as, screenshots the report's folder lacks)."""

    folder: Path
    problems: tuple[str, ...] = ()


#: how OSWorld's ``lib_run_single.py`` stamps an action (``action_timestamp``, and in its screenshot's name): the format
#: most of its loops write, and the one its monitor reads (``run_single_example``'s ``%f`` makes the monitor fail)
ACTION_TIMESTAMP = "%Y%m%d@%H%M%S"
#: what OSWorld's agents answer for guitest's ``done``, ``fail`` and ``wait``: the strings ``DesktopEnv.step`` takes
SPECIAL_ACTIONS = {"done": "DONE", "fail": "FAIL", "wait": "WAIT"}
#: the name ``lib_run_single.py`` gives the screenshot after an action (an earlier export's are replaced)
_SCREENSHOT_NAME = re.compile(r"step_\d+_\d{8}@\d{6}\d*\.png")
#: how an episode ends when its last action's screen said it was over (``done`` in OSWorld's line)
_ENDED = ("done", "fail", "env_done")


def write_osworld(report: Report, root: str | Path, report_dir: str | Path | None = None, action_space: str = "pyautogui", observation_type: str = "screenshot") -> OSWorldExport:
    """A live report's episodes as a published OSWorld run would hold them, under ``root``
    (``<action_space>/<observation_type>/<model>/<domain>/<task_id>/``; OSWorld's run scripts' ``args.json`` in the
    model's folder, with the suite's step budget, which OSWorld's monitor reads). Each task folder as
    ``lib_run_single.py`` leaves it (read in the fork mrwwk/DeskCraft at 3e11457):

    - ``result.txt``: ``f"{result}\\n"``, in OSWorld's 0..1: the episode's score where the report's headline is the mean
      score (``show_result.py`` then prints it), else 1.0 for a success and 0.0 for a miss by the suite's rule (a
      MiniWoB++ success rule, not its raw reward in -1..1), so ``show_result.py`` prints the report's headline either
      way; none for an episode that errored (``show_result.py`` counts it nowhere, as the report leaves it out).
    - ``traj.jsonl``: one line per action that ran (a reply of several actions gives several lines with its step's
      ``step_num``), the fields in OSWorld's order (``step_num``, ``action_timestamp``, ``action``, ``response``,
      ``reward``, ``done``, ``info``, ``screenshot_file``) as :func:`osworld_steps` fills them.
    - ``task_instruction.jsonl``: ``{"instruction": ...}``, the episode's instruction, no newline after it.
    - ``step_<n>_<timestamp>.png``: the screen after each action, copied from the report's episodes (their paths are
      relative to ``report_dir``, the report's folder; by default the current one).

    A case goes to the folders :func:`osworld_place` names, so the reader reads the folder back case by case. Cases a
    judge decides (unsure) and repeated cases are not written: no one ``result.txt`` says them. Screenshots of an
    earlier export in a task folder are replaced. What could not be written as OSWorld would have it is in the
    result's ``problems``."""
    model = str(report["model"].get("spec") or "model").replace("/", "_").replace(":", "_")
    folder = Path(root) / action_space / observation_type / model
    folder.mkdir(parents=True, exist_ok=True)
    budget = int(report["suite"].get("max_steps") or DEFAULT_MAX_STEPS)
    args = {"action_space": action_space, "observation_type": observation_type, "model": model, "max_steps": budget}
    (folder / "args.json").write_text(json.dumps(args, indent=4), "utf-8")
    mean_score = (report.get("headline") or {}).get("figure") == "mean_score"
    start, shots = _started(report), Path(report_dir or ".")
    unpaired: list[str] = []
    missing = 0
    for case in report["cases"]:
        if case["verdict"] in (UNSURE, PARTIAL) or case.get("attempts"):
            continue  # a judge's to decide, or repeated attempts: no one result.txt says it
        place = osworld_place(case["id"], case.get("tags") or {})
        if place is None:
            unpaired.append(case["id"])
            place = (_safe(str(report["suite"].get("env") or "env")), _safe(case["id"]))
        missing += _write_task(folder / place[0] / place[1], case, start, shots, mean_score)
    problems = []
    if unpaired:
        shown = ", ".join(unpaired[:5]) + (f" and {len(unpaired) - 5} more" if len(unpaired) > 5 else "")
        problems.append(f"{len(unpaired)} case ids are not <domain>-<task_id> with two folder names, so the folder read back does not pair them: {shown}")
    if missing:
        problems.append(f"{missing} screenshots the report names were not found under {report_dir or '.'}: their traj.jsonl lines have no screenshot_file")
    return OSWorldExport(folder, tuple(problems))


def _write_task(where: Path, case: CaseResult, start: datetime, shots: Path, mean_score: bool) -> int:
    """One case's task folder as ``lib_run_single.py`` leaves it (:func:`write_osworld`): its instruction, ``traj.jsonl``,
    the screenshots (from ``shots``, the report's folder; an earlier export's replaced) and ``result.txt`` (none for an
    episode that errored; the score where the headline is the mean score, else 1.0 or 0.0). How many of the screenshots
    its episode names were not found."""
    where.mkdir(parents=True, exist_ok=True)
    episode = case.get("episode") or {}
    instruction = episode.get("instruction") or case.get("instruction")
    if instruction:
        (where / "task_instruction.jsonl").write_text(json.dumps({"instruction": instruction}, ensure_ascii=False), "utf-8")
    lines = osworld_steps(episode, start)
    missing = 0
    for line, source in lines:
        if source is None:
            continue
        try:
            shutil.copyfile(shots / source, where / line["screenshot_file"])
        except FileNotFoundError:
            line["screenshot_file"] = None
            missing += 1
    kept = {line["screenshot_file"] for line, _ in lines}
    for old in where.iterdir():
        if _SCREENSHOT_NAME.fullmatch(old.name) and old.name not in kept:
            old.unlink()
    (where / "traj.jsonl").write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line, _ in lines), "utf-8")
    result = where / "result.txt"
    if case["verdict"] == ERROR:
        result.unlink(missing_ok=True)
    else:
        value = float(case.get("score") or 0.0) if mean_score else (1.0 if case["verdict"] == HIT else 0.0)
        result.write_text(f"{value}\n", "utf-8")
    return missing


def osworld_place(case_id: str, tags: Mapping[str, Any]) -> tuple[str, str] | None:
    """The ``(domain, task_id)`` folders of a case whose names read back as ``case_id`` (``<domain>-<task_id>``): the
    domain is the case's ``app`` tag, else the first of its tags whose value starts the id (a MiniWoB++ case
    ``click-test-seed0`` of task ``click-test``: ``click-test``, ``seed0``), else the id's part before its first ``-``.
    None for an id no split makes two folder names of (no ``-``, a ``/``, a ``..``)."""
    candidates = [str(v) for _, v in sorted(tags.items(), key=lambda kv: kv[0] != "app") if v not in (None, "")]
    for domain in (*candidates, case_id.partition("-")[0]):
        task = case_id[len(domain) + 1 :]
        if case_id.startswith(f"{domain}-") and _folder_name(domain) and _folder_name(task):
            return domain, task
    return None


def osworld_steps(episode: Mapping[str, Any], start: datetime) -> list[tuple[dict[str, Any], str | None]]:
    """The ``traj.jsonl`` lines of an episode (a report case's ``episode``), one per action that ran, each with the
    report's path of the screenshot its ``screenshot_file`` names (None: none).

    ``action``: the pyautogui code of the action (on the desktop the code the machine reported running; else the code
    :func:`guitest.desktopenv.machine.pyautogui_code` writes for it on the screen the environment showed, its own pixels),
    ``DONE``, ``FAIL`` or ``WAIT`` as OSWorld's agents answer them, or guitest's plain form of an action that has no
    code (an environment's own kind). ``response``: the step's reply. ``reward``: 0, as ``DesktopEnv.step`` returns.
    ``done``, ``info``: true, with ``{"done": true}`` or ``{"fail": true}`` as ``DesktopEnv.step`` says them, on the
    action after which the episode was over. ``action_timestamp``: guitest keeps no clock time per action, so it is
    the run's start (the report's ``run.started``) plus one second per action of the episode, in the format OSWorld's
    monitor reads: an order, not a time. ``screenshot_file``: ``step_<n>_<timestamp>.png``, the screen after the
    action; guitest keeps the screen after a reply's last action only, so an action followed by another of the same
    reply has none (null)."""
    steps = [s for s in episode.get("trajectory") or [] if isinstance(s, Mapping)]
    size, scale = episode.get("screen_size"), float(episode.get("scale") or 1.0)
    screen = (round(size[0] / scale), round(size[1] / scale)) if size and scale > 0 else None
    ended = episode.get("end") in _ENDED
    out: list[tuple[dict[str, Any], str | None]] = []
    for index, step in enumerate(steps):
        actions = [a for a in step.get("actions") or [] if isinstance(a, Mapping)]
        ran = actions[: int(step.get("executed", len(actions)))]
        after = steps[index + 1].get("screenshot") if index + 1 < len(steps) else episode.get("final_screenshot")
        reported = (step.get("info") or {}).get("code")
        number = int(step.get("number") or index + 1)
        for j, action in enumerate(ran):
            last = j == len(ran) - 1
            kind = action.get("kind")
            stamp = (start + timedelta(seconds=len(out))).strftime(ACTION_TIMESTAMP)
            done = last and ended and index == len(steps) - 1
            code = reported if last and isinstance(reported, str) and kind not in SPECIAL_ACTIONS else osworld_action(action, screen, scale)
            shot = str(after) if last and after else None
            line = {
                "step_num": number,
                "action_timestamp": stamp,
                "action": code,
                "response": step.get("reply"),
                "reward": 0,
                "done": done,
                "info": {kind: True} if done and kind in ("done", "fail") else {},
                "screenshot_file": f"step_{number}_{stamp}.png" if shot else None,
            }
            out.append((line, shot))
    return out


def osworld_action(described: Mapping[str, Any], screen: tuple[int, int] | None, scale: float = 1.0) -> str | dict[str, Any]:
    """An action (its plain form, screen pixels) as OSWorld's ``traj.jsonl`` holds it in the pyautogui action space:
    ``DONE``, ``FAIL``, ``WAIT``, or pyautogui code for a screen of size ``screen`` (``scale`` screenshot pixels per
    screen pixel); the plain form itself for an action no code performs (an environment's own kind)."""
    kind = described.get("kind")
    if kind in SPECIAL_ACTIONS:
        return SPECIAL_ACTIONS[str(kind)]
    from ..desktopenv.task import action_from
    from ..desktopenv.machine import pyautogui_code

    try:
        return pyautogui_code(action_from(dict(described)), screen, scale) if screen else dict(described)
    except (ValueError, TypeError, KeyError, IndexError):
        return dict(described)


def _started(report: Report) -> datetime:
    """The run's start on the clock the report records it by (its time zone left off), or the epoch when it records none."""
    try:
        return datetime.strptime(str(report["run"].get("started"))[:19], "%Y-%m-%dT%H:%M:%S")
    except (KeyError, ValueError):
        return datetime(1970, 1, 1)


def _folder_name(name: str) -> bool:
    """Whether ``name`` is one folder's name as it is (no separator, nothing that climbs, not too long)."""
    return name not in ("", ".", "..") and not any(c in name for c in "/\\\0") and len(name.encode("utf-8", "surrogatepass")) <= 255


def _safe(name: str) -> str:
    """A folder name for a domain or task id: no separator, nothing that climbs."""
    cleaned = name.replace("/", "_").replace("\\", "_").strip(".") or "_"
    return cleaned


def load_any(path: str | Path) -> Report:
    """A guitest JSON report, or a published run's folder read into one (``guitest compare`` takes either on either side);
    :class:`guitest.reporting.compare.ReportError` naming the path when it is neither."""
    from ..reporting.compare import ReportError, load_report

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
