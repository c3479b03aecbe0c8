"""Every OSWorld results folder whose ``show_result.py`` printout the tests check, made here so that the tests and
tests/reference/record_osworld_show_result.py (run by hand, never in CI) make the same ones; the digest of what
``show_result.py`` reads of a folder; and the lookup of its recorded printout (tests/data/osworld_reference/
show_result.json, keyed by that digest).

``show_result.get_result(action_space, use_model, observation_type, result_dir)`` reads, under
``<result_dir>/<action_space>/<observation_type>/<use_model>/``, only the names of the domain folders, the names of
the task folders in each, whether each holds a ``result.txt``, and that file's text: :func:`digest` hashes exactly
that, so two folders with one digest print the same.

The folders of the end-to-end runs (a MiniWoB++ run through pytest in tests/test_published_runs.py, the desktop runs
of tests/test_desktop_e2e.py) come from pytest runs too slow to repeat here. What ``show_result.py`` reads of them is
determined by their scripted replies (a ``result.txt`` of 1.0 or 0.0 per task, by the suite's success rule), so they
are written here as that alone: the run's folder has the same digest when the run does what its test says.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from guitest.published.runs import osworld_report, write_osworld
from guitest.reporting.document import Report

from . import osworld_results_case as results_case

#: the recording of what show_result.py printed for each folder below, by digest
RECORDING = Path(__file__).resolve().parents[1] / "data" / "osworld_reference" / "show_result.json"
#: the copy of OSWorld the recording ran (the upstream xlang-ai/OSWorld cannot be fetched here)
REPOSITORY, COMMIT = "mrwwk/DeskCraft", "3e11457c9f4d0cd81f27d961b98ae65f8b6ed309"
RECORD_COMMAND = f"PYTHONPATH=$PWD python tests/reference/record_osworld_show_result.py --osworld /tmp/osworld-3e11457 --repo {REPOSITORY} --commit {COMMIT}"

#: a published run's scores per domain and task (None: a task that did not finish). show_result.py prints Office,
#: Daily and Professional from these domains: it needs each to have a finished task
SCORES: dict[str, dict[str, str | None]] = {
    "libreoffice_calc": {"c1": "1.0", "c2": "0.0", "c3": "0.5"},
    "libreoffice_impress": {"i1": "0.25", "i2": None},
    "libreoffice_writer": {"w1": "1"},
    "vlc": {"v1": "0.0", "v2": "True"},
    "thunderbird": {"t1": "1.0", "t2": None, "t3": "0.0"},
    "chrome": {"ch1": "0.6666666666666666", "ch2": "1.0"},
    "gimp": {"g1": "0.0"},
    "vs_code": {"vs1": "1.0", "vs2": "0.75"},
    "os": {"o1": "1.0", "o2": "0.0", "o3": None},
}
#: scores a published result.txt may hold that guitest refuses (tests/test_published_runs.py)
BAD_SCORES = ("inf", "nan", "1e308", "1.5", "-0.5")
#: raw MiniWoB++-style rewards given to tests/reference/osworld_results_case.py's cases under a success-rate headline
RAW_REWARDS = {"chrome-t1": 0.97, "gimp-t4": -1.0, "vlc-t2": -0.5}


def model_folder(root: Path, model: str) -> Path:
    """The folder ``show_result.get_result("pyautogui", model, "screenshot", root)`` reads."""
    return root / "pyautogui" / "screenshot" / model


def write_results(root: Path) -> Path:
    """:data:`SCORES` in OSWorld's layout as lib_run_single.py writes it (result.txt ``"{result}\\n"``, traj.jsonl);
    the model's folder, ``some-model``."""
    model = model_folder(root, "some-model")
    for domain, tasks in SCORES.items():
        for task, score in tasks.items():
            folder = model / domain / task
            folder.mkdir(parents=True)
            steps = [
                {
                    "step_num": n,
                    "action_timestamp": "20261204@000000",
                    "action": "pyautogui.click(1, 2)",
                    "response": f"step {n}",
                    "reward": 0,
                    "done": False,
                    "info": {},
                    "screenshot_file": f"step_{n}.png",
                }
                for n in (1, 2)
            ]
            (folder / "traj.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
            if score is not None:
                (folder / "result.txt").write_text(f"{score}\n")
    return model


def with_score(root: Path, text: str) -> Path:
    """:func:`write_results` with ``text`` as chrome/ch2's score."""
    folder = write_results(root)
    (folder / "chrome" / "ch2" / "result.txt").write_text(f"{text}\n")
    return folder


def with_task_twice(root: Path) -> Path:
    """:func:`write_results` with chrome/ch1 also under vlc: one task id in two domains."""
    folder = write_results(root)
    shutil.copytree(folder / "chrome" / "ch1", folder / "vlc" / "ch1")
    return folder


def written_back(root: Path) -> tuple[Report, Path]:
    """:func:`write_results` under ``root/published`` read into a report (its model ``openai:my/model``), and that report
    written as OSWorld results under ``root/ours`` by guitest."""
    report = osworld_report(write_results(root / "published"))
    report["model"]["spec"] = "openai:my/model"
    return report, write_osworld(report, root / "ours").folder


def results_case_export(root: Path, headline: str) -> tuple[Report, Path]:
    """tests/reference/osworld_results_case.py's report under ``headline`` (with :data:`RAW_REWARDS` as its scores under a
    success-rate headline), its screenshots under ``root/reports``, written as OSWorld results under ``root/osworld``."""
    report = results_case.report(root / "reports", headline)
    if headline == "success_rate":
        for case in report["cases"]:
            case["score"] = RAW_REWARDS.get(case["id"], case["score"])
    return report, write_osworld(report, root / "osworld", root / "reports").folder


def stand_in(root: Path, model: str, results: dict[str, dict[str, str]]) -> Path:
    """A folder holding only what show_result.py reads: ``results`` as domain -> task -> result.txt's text."""
    folder = model_folder(root, model)
    for domain, tasks in results.items():
        for task, text in tasks.items():
            (folder / domain / task).mkdir(parents=True)
            (folder / domain / task / "result.txt").write_text(text)
    return folder


#: what tests/test_published_runs.py's MiniWoB++ run writes (serial and -n 2 alike): click-widget seed 1 succeeds,
#: seed 2 submits a wrong answer (raw reward -1), click-tab seed 0 runs out of steps
MINIWOB_RUN = {"click-widget": {"seed1": "1.0\n", "seed2": "0.0\n"}, "click-tab": {"seed0": "0.0\n"}}
#: what each scripted policy of tests/test_desktop_e2e.py writes: every task a success but the terminal command under
#: UI-TARS (its runner pastes, which the terminal does not take) and the infeasible task under Qwen (its failure is DONE)
DESKTOP_RUNS = {
    family: {
        app: {task: "0.0\n" if (family, app) in (("ui-tars", "terminal"), ("qwen3", "os")) else "1.0\n"}
        for app, task in (("chromium", "pick-green"), ("mousepad", "new-note"), ("terminal", "make-folder"), ("os", "photoshop-crop"))
    }
    for family in ("pyautogui", "ui-tars", "qwen3")
}

#: every folder the tests hand to show_result.py: name -> writer (under the root given) of the model folder it reads
FOLDERS: dict[str, Callable[[Path], Path]] = {
    "published": write_results,
    **{f"published, chrome/ch2 {text}": (lambda root, text=text: with_score(root, text)) for text in BAD_SCORES},
    "published, chrome/ch1 also under vlc": with_task_twice,
    "published, read and written back by guitest": lambda root: written_back(root)[1],
    **{f"osworld_results_case, {h}": (lambda root, h=h: results_case_export(root, h)[1]) for h in ("success_rate", "mean_score")},
    "miniwob run": lambda root: stand_in(root, "random", MINIWOB_RUN),
    **{f"desktop run, {family}": (lambda root, family=family: stand_in(root, f"family-{family}", DESKTOP_RUNS[family])) for family in DESKTOP_RUNS},
}


def reads(folder: Path) -> dict[str, dict[str, str | None]]:
    """What show_result.py reads of a model folder: each domain folder's task folders and their result.txt's text (None:
    no result.txt), names sorted."""
    out: dict[str, dict[str, str | None]] = {}
    for domain in sorted(p for p in folder.iterdir() if p.is_dir()):
        out[domain.name] = {}
        for task in sorted(p for p in domain.iterdir() if p.is_dir()):
            result = task / "result.txt"
            out[domain.name][task.name] = result.read_bytes().decode("utf-8", "surrogateescape") if "result.txt" in os.listdir(task) else None
    return out


def digest(folder: Path) -> str:
    """The SHA-256 of :func:`reads` of ``folder``, written canonically: the key of its recorded printout."""
    return hashlib.sha256(json.dumps(reads(folder), sort_keys=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Printout:
    """What show_result.py's ``get_result`` printed on a folder, and the exception it ended with (``"KeyError: 'vlc'"``;
    None when it returned)."""

    printed: str
    raised: str | None


class NotRecorded(LookupError):
    """A folder whose printout is not in the recording: the message names it, its digest and the command to re-record."""


def recording() -> dict[str, Any]:
    """The recording as stored."""
    data: dict[str, Any] = json.loads(RECORDING.read_text("utf-8"))
    return data


def recorded(folder: Path) -> Printout:
    """What show_result.py printed on a folder that reads as ``folder`` does; :class:`NotRecorded` when none was recorded,
    saying where ``folder`` differs from the recorded folder nearest it (a writer that changed what it writes shows
    there) and how to record it."""
    key, seen = digest(folder), reads(folder)
    printouts = recording()["printouts"]
    entry = printouts.get(key)
    if entry is None:
        nearest = min(printouts.values(), key=lambda e: len(_differences(seen, e["reads"])))
        shown = "; ".join(_differences(seen, nearest["reads"])[:3])
        raise NotRecorded(
            f"{folder}: no recorded printout of OSWorld's show_result.py for this folder (what it reads, {len(seen)} domains and "
            f"{sum(map(len, seen.values()))} task folders, has digest {key}; the nearest recorded, {nearest['folders'][0]!r}, differs in {shown}): "
            f"if the folder is meant to be new, add it to FOLDERS in tests/reference/osworld_show_result_folders.py and re-record with "
            f"tests/reference/record_osworld_show_result.py: {RECORD_COMMAND}"
        )
    return Printout(entry["printed"], entry["raised"])


def _differences(ours: dict[str, dict[str, str | None]], theirs: dict[str, dict[str, str | None]]) -> list[str]:
    """Each task folder of either reading that the other lacks or reads otherwise, as ``domain/task: ours vs recorded``."""
    absent = object()
    out = []
    for domain in sorted(set(ours) | set(theirs)):
        mine, recorded_ = ours.get(domain, {}), theirs.get(domain, {})
        for task in sorted(set(mine) | set(recorded_)):
            a, b = mine.get(task, absent), recorded_.get(task, absent)
            if a != b:
                out.append(f"{domain}/{task}: {_said(a)} here, {_said(b)} recorded")
    return out


def _said(value: object) -> str:
    return "no folder" if not isinstance(value, str | None) else "no result.txt" if value is None else f"result.txt {value!r}"
