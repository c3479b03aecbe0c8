"""Earlier runs' reports: each run's files are kept beside the latest, so a failed run never destroys the evidence
of the last good one.

In the report folder, ``<suite>.json|md|html`` are always the latest run's. Each run has a folder
``runs/<suite>/<stamp>/`` (the newest ``keep`` runs are kept, and always the last passed run's, which its
``.passed`` reports point at): its JSON and Markdown, its HTML page with the page's one data folder, and a live
suite's episodes. ``<suite>.html`` shows the latest run's folder, and a run that passed (every selected case has a
result, none is an error, the gate, if any, is met) is also ``<suite>.passed.json|md|html`` (the page showing its
folder), which a later failed run leaves in place (``guitest compare reports/<suite>.passed.json reports/<suite>.json``).
So a run's page data, thumbnails and screenshots are written once, in its folder; its JSON and Markdown are
also real files at the top, where the tools and people that read them look (docs/reports.md, "Reports").

"Passed" is pytest's word: the run's exit status was 0. A wrong answer is a result, not a failure (a miss is a passed
test), so a run without a gate passes by finishing without errors, whatever its score, even when every case missed; a
suite whose ``.passed`` reports should hold only runs that met a bar gives itself a gate (``gate:``, ``--min-accuracy``),
and the terminal says so when a run without one replaces them.

A run's copies are written with its report, all or none (:func:`copies`, written by the report's writer in one
:func:`guitest.strictjson.write_together`): a full disk never leaves half a run folder, nor ``.passed`` files of which
some are this run's and some an earlier one's.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path, PurePosixPath
from typing import AbstractSet, Sequence

from ..strictjson import write_together
from .document import Report

RUNS = "runs"
PASSED = "passed"
LAST_PASSED = "last-passed"  # in runs/<suite>/: the stamp of the last passed run, whose folder is kept
EPISODES = "episodes"
MARK = ".guitest-run"  # in a run folder: guitest made it (only such folders are pruned)


def passed(report: Report) -> bool:
    """Whether a run's report becomes the suite's ``.passed`` one: the run passed, as its exit status says (complete, no
    case in error, no gate failure; a run without a gate passes whatever its score: see the module docstring), and it
    covered the whole suite (a run of a part, ``-k``, ``--limit``, a shard, is its own evidence, never the last passed
    run's)."""
    selection = report.get("selection")
    whole = selection is None or not selection.get("subset")
    return whole and bool(report["complete"]) and not report["overall"].get("error") and not report["gate"].get("failures")


def stamp(started: float) -> str:
    """A run's folder name: its local start time and a random suffix (``20261201-081502-3f9a``), unique and in time order."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(started)) + "-" + os.urandom(2).hex()


def run_folder(report_dir: Path, name: str, run_stamp: str) -> Path:
    """The folder of one run's files of suite ``name``: ``runs/<suite>/<stamp>``."""
    return report_dir / RUNS / name / run_stamp


def copies(latest: Sequence[tuple[Path, bytes]], report_dir: Path, name: str, run_stamp: str, good: bool, keep_runs: int, shown: bool = False) -> dict[Path, bytes]:
    """This run's copies of its report files ``latest`` (each path in ``report_dir`` with its bytes), to be written
    together with them: into its run folder (with the folder's mark and, when ``good``, the note naming the last passed
    run) when ``keep_runs`` is not 0, and over the last passed run's ``.passed`` files when ``good``. ``shown``: the
    run folder holds its page already (written with its data folder, which the latest page in ``latest`` shows from
    the top of the report folder, and so will the ``.passed`` page): the HTML is not copied into it."""
    out: dict[Path, bytes] = {}
    if keep_runs > 0:
        folder = run_folder(report_dir, name, run_stamp)
        for path, data in latest:
            if not (shown and path.suffix == ".html"):
                out[folder / path.name] = data
        out[folder / MARK] = b""
        if good:  # the last passed run's folder holds what its .passed reports point at (page data, episodes): never pruned
            out[report_dir / RUNS / name / LAST_PASSED] = f"{run_stamp}\n".encode()
    if good:
        for path, data in latest:
            stem, ext = os.path.splitext(path.name)
            out[report_dir / f"{stem}.{PASSED}{ext}"] = data
    return out


def prune(report_dir: Path, name: str, keep_runs: int, keep_episodes: int | None = None) -> None:
    """Remove suite ``name``'s oldest run folders beyond the newest ``keep_runs`` (and the episodes of those beyond the
    newest ``keep_episodes``, by default ``keep_runs``); the last passed run's folder (and the one the passed page
    shows) is kept whole besides them, and the one the latest page shows is never removed (:func:`shown`; its
    episodes go as any run's do)."""
    if keep_runs > 0 and (report_dir / RUNS / name).is_dir():
        _prune(report_dir / RUNS / name, keep_runs, keep_runs if keep_episodes is None else keep_episodes, shown(report_dir, name, ("",)), shown(report_dir, name, (PASSED,)))


def shown(report_dir: Path, name: str, pages: Sequence[str] = ("", PASSED)) -> set[str]:
    """The run folders (their stamps) whose data suite ``name``'s pages at the top of ``report_dir`` show: by default
    ``<suite>.html`` and ``<suite>.passed.html``; ``pages`` picks among them by infix (``""`` the latest, ``PASSED``)."""
    from .html import named_data

    out = set()
    for page in (report_dir / (f"{name}.{infix}.html" if infix else f"{name}.html") for infix in pages):
        for named in named_data(page):
            parts = PurePosixPath(named).parts
            if len(parts) > 3 and parts[:2] == (RUNS, name):
                out.add(parts[2])
    return out


def keep(files: list[Path], report_dir: Path, name: str, run_stamp: str, good: bool, keep_runs: int, keep_episodes: int | None = None) -> list[Path]:
    """Copy this run's report ``files`` (the latest, in ``report_dir``) into its run folder and, when ``good``, over the
    last passed run's, all or none (:func:`copies`); then remove the oldest run folders beyond ``keep_runs``. Returns the
    copies made; an OSError (a full disk) leaves none of them."""
    made = copies([(path, path.read_bytes()) for path in files], report_dir, name, run_stamp, good, keep_runs)
    write_together(made)
    prune(report_dir, name, keep_runs, keep_episodes)
    return [path for path in made if path.name not in (MARK, LAST_PASSED)]


def _prune(folder: Path, keep_runs: int, keep_episodes: int, shown: AbstractSet[str] = frozenset(), passed: AbstractSet[str] = frozenset()) -> None:
    """Remove the oldest run folders beyond the newest ``keep_runs``, and the ``episodes`` folders (a live run's
    screenshots and trajectories) of runs beyond the newest ``keep_episodes``; the last passed run's folder
    (``LAST_PASSED`` names it) and the ``passed`` ones (what the passed page shows) are kept whole besides them. A
    ``shown`` folder (what the latest page shows) is never removed, but its episodes go as any run's do:
    ``--keep-episodes=0`` asked for a run's report without them."""
    try:
        protected = {(folder / LAST_PASSED).read_text("utf-8").strip(), *passed}
    except OSError:
        protected = set(passed)
    runs = sorted((p for p in folder.iterdir() if (p / MARK).exists() and p.name not in protected), key=lambda p: p.name)
    for old in runs[:-keep_runs]:
        shutil.rmtree(old / EPISODES if old.name in shown else old, ignore_errors=True)
    for old in runs[-keep_runs:][: max(min(keep_runs, len(runs)) - keep_episodes, 0)]:
        shutil.rmtree(old / EPISODES, ignore_errors=True)
