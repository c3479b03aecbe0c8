"""Earlier runs' reports: each run's files are kept beside the latest, so a failed run never destroys the evidence
of the last good one.

In the report folder, ``<suite>.json|md|html`` are always the latest run's. Each run's files are also copied to
``runs/<suite>/<stamp>/`` (the newest ``keep`` runs are kept, and always the last passed run's, which its
``.passed`` reports point at; a live suite's episodes are written there too), and a run that passed (every selected case has a
result, none is an error, the gate, if any, is met) to ``<suite>.passed.json|md|html``, which a later failed run
leaves in place (``guitest compare reports/<suite>.passed.json reports/<suite>.json``).

"Passed" is pytest's word: the run's exit status was 0. A wrong answer is a result, not a failure (a miss is a passed
test), so a run without a gate passes by finishing without errors, whatever its score, even when every case missed; a
suite whose ``.passed`` reports should hold only runs that met a bar gives itself a gate (``gate:``, ``--min-accuracy``),
and the terminal says so when a run without one replaces them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path
from typing import Callable

from ..strictjson import encode, write_together
from .document import Report

RUNS = "runs"
PASSED = "passed"
LAST_PASSED = "last-passed"
EPISODES = "episodes"  # in runs/<suite>/: the stamp of the last passed run, whose folder is kept


def passed(report: Report) -> bool:
    """Whether a run passed, as its exit status says: complete, no case in error, and no gate failure (a run without a
    gate passes whatever its score: see the module docstring)."""
    return bool(report["complete"]) and not report["overall"].get("error") and not report["gate"].get("failures")


def stamp(started: float) -> str:
    """A run's folder name: its local start time and a random suffix (``20261201-081502-3f9a``), unique and in time order."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(started)) + "-" + os.urandom(2).hex()


def run_folder(report_dir: Path, name: str, run_stamp: str) -> Path:
    """The folder of one run's files of suite ``name``: ``runs/<suite>/<stamp>``."""
    return report_dir / RUNS / name / run_stamp


def keep(files: list[Path], report_dir: Path, name: str, run_stamp: str, good: bool, keep_runs: int, page: Callable[[Path], str] | None = None, keep_episodes: int | None = None) -> list[Path]:
    """Copy this run's report ``files`` (the latest, in ``report_dir``) into its run folder and, when ``good``,
    over the last passed run's; remove the oldest run folders beyond ``keep_runs``. Returns the copies made.
    ``page(folder)``, when given, renders the HTML page anew for the run folder (its links to screenshot files
    are relative to the page) instead of copying the latest one."""
    made: list[Path] = []
    if keep_runs > 0:
        folder = run_folder(report_dir, name, run_stamp)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".guitest-run").touch()
        for path in files:
            if page is not None and path.suffix == ".html":
                target = folder / path.name
                write_together({target: encode(page(folder.resolve()))})
                made.append(target)
            else:
                made.append(_copy(path, folder / path.name))
        if good:  # the last passed run's folder holds what its .passed reports point at (episodes): never pruned
            (report_dir / RUNS / name / LAST_PASSED).write_text(run_stamp + "\n", "utf-8")
        _prune(report_dir / RUNS / name, keep_runs, keep_runs if keep_episodes is None else keep_episodes)
    if good:
        for path in files:
            stem, ext = os.path.splitext(path.name)
            made.append(_copy(path, report_dir / f"{stem}.{PASSED}{ext}"))
    return made


def _copy(source: Path, target: Path) -> Path:
    tmp = target.with_name(f"{target.name}.{os.getpid()}-{os.urandom(3).hex()}.tmp")
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)  # a crash mid-copy never leaves half a file where the last good one was
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()  # a copy that failed (a full disk) leaves no temporary file
    return target


def _prune(folder: Path, keep_runs: int, keep_episodes: int) -> None:
    """Remove the oldest run folders beyond the newest ``keep_runs``, and the ``episodes`` folders (a live run's
    screenshots and trajectories) of runs beyond the newest ``keep_episodes``; the last passed run's folder
    (``LAST_PASSED`` names it) is kept whole besides them."""
    try:
        protected = (folder / LAST_PASSED).read_text("utf-8").strip()
    except OSError:
        protected = ""
    runs = sorted((p for p in folder.iterdir() if (p / ".guitest-run").exists() and p.name != protected), key=lambda p: p.name)
    for old in runs[:-keep_runs]:
        shutil.rmtree(old, ignore_errors=True)
    for old in runs[-keep_runs:][: max(min(keep_runs, len(runs)) - keep_episodes, 0)]:
        shutil.rmtree(old / EPISODES, ignore_errors=True)
