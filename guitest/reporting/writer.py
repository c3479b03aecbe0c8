"""A suite's report written: JSON, Markdown and HTML (the page and its data folder, :func:`guitest.reporting.html.page_files`),
with this run's copies of it (its run folder, its ``.passed`` files: :func:`guitest.reporting.history.copies`), all or
none. When runs are kept, the page's data (its data folder, thumbnails) is written once, in the run's folder, where its
episodes' screenshots are: ``<suite>.html`` and ``<suite>.passed.html`` at the top show it from there. When they do not
fit together, the report is written alone (each page with its data folder beside it, as with ``--keep-runs 0``), all or
none, and the copies not at all; a report that cannot be written leaves the files there before untouched and no
temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from .. import strictjson
from . import history, html
from . import report as report_mod
from .document import Report
from .thumbnails import embed


class ReportNotSaved(Exception):
    """A suite's report could not be written; the message says where, why, and what to do."""


@dataclass(frozen=True)
class Written:
    """What :func:`write` wrote: the report's files, this run's copies (their folders), and why the copies could not be made."""

    paths: list[Path]
    kept: list[str] = field(default_factory=list)
    uncopied: str | None = None


def write(
    report: Report,
    pictures: dict[str, str],
    paths: tuple[list[Path], list[Path], list[Path]],
    *,
    report_dir: Path,
    task_lines: Sequence[str] = (),
    images: str = "link",
    keep_runs: int = 0,
    keep_episodes: int | None = None,
    stamp: str = "",
    resumable: bool = False,
    cache_failed: bool = False,
) -> Written:
    """Write ``report`` as JSON, Markdown and HTML at ``paths`` (each list's first in ``report_dir``), all or none, as
    the builder made it (:func:`guitest.reporting.builder.suite_report`: nothing is added), and keep this run's copies
    under ``report_dir``; ``pictures``: the cases' thumbnails, embedded when ``images`` is ``embed``;
    ``resumable``, ``cache_failed``: what the message of a report not saved says of running again."""
    json_paths, md_paths, html_paths = paths
    name = report["suite"]["name"]
    files = _texts(report, json_paths, md_paths, task_lines)
    originals = pictures
    if images == "embed":
        pictures = embed(pictures)
    files_dir = report_dir.resolve()  # the episodes' screenshots are named relative to the report folder
    full = originals if images == "embed" else None
    texts = dict(files)

    def alone() -> dict[Path, bytes]:  # the report alone, each page with its data folder beside it (no run folder)
        return {**texts, **html.page_files(report, pictures, html_paths, files_dir, full)}

    page_files, pages = _pages(report, pictures, html_paths, files_dir, full, history.run_folder(report_dir, name, stamp) if keep_runs > 0 else None)
    files.update(page_files)
    written = [*json_paths, *md_paths, *html_paths]  # the files a reader opens (a page's data folder goes with it)
    good = history.passed(report)
    latest = [(found[0], files[found[0]]) for found in (json_paths, md_paths, html_paths)]
    copies = history.copies(latest, report_dir, name, stamp, good, keep_runs, shown=keep_runs > 0)
    try:
        strictjson.write_together({**files, **copies})
    except OSError as exc:
        if not copies:
            raise ReportNotSaved(not_saved_message(name, exc, files, report_dir, keep_runs > 0, resumable, cache_failed)) from None
        only = alone() if keep_runs > 0 else files
        try:  # the report alone may fit where it and its copies do not
            strictjson.write_together(only)
        except OSError as failed:
            raise ReportNotSaved(not_saved_message(name, failed, only, report_dir, keep_runs > 0, resumable, cache_failed)) from None
        _tidy(html_paths)
        return Written(written, [], uncopied_message(name, exc, {**files, **copies}, report_dir, good, resumable, cache_failed))
    with contextlib.suppress(OSError):  # housekeeping: a folder that cannot be removed now is removed by a later run
        history.prune(report_dir, name, keep_runs, keep_episodes)
    _tidy(pages)
    folders = sorted({str(p.parent) for p in copies if p.parent != report_dir and p.name != history.LAST_PASSED})
    return Written(written, folders + ([f"{report_dir / name}.passed.*"] if good else []))


def _texts(report: Report, json_paths: list[Path], md_paths: list[Path], task_lines: Sequence[str]) -> dict[Path, bytes]:
    """The JSON and the Markdown report, each at every one of its paths."""
    data = strictjson.encode(report_mod.json_text(report))
    files = dict.fromkeys(json_paths, data)
    data = strictjson.encode(report_mod.markdown(report, task_lines))
    files.update(dict.fromkeys(md_paths, data))
    return files


def _pages(report: Report, pictures: dict[str, str], html_paths: list[Path], files_dir: Path, full: dict[str, str] | None, run_folder: Path | None) -> tuple[dict[Path, bytes], list[Path]]:
    """The pages' files (each page and its data folder) and the pages that name them. With runs kept (``run_folder``,
    this run's), the page and its data once, in the run's folder; the top page (and .passed) shows them from there."""
    if run_folder is None:
        return html.page_files(report, pictures, html_paths, files_dir, full), list(html_paths)
    run_page = run_folder / html_paths[0].name
    return html.page_files(report, pictures, [run_page, *html_paths[1:]], files_dir, full, shown_by=[html_paths[0]]), [*html_paths, run_page]


def _tidy(html_paths: Sequence[Path]) -> None:
    """Housekeeping once the pages and their copies name what they name: the data folders of earlier runs that no page
    names any more (a ``.passed`` page keeps the one it names), and a data folder left empty (the top page shows a run
    folder's); one that cannot be removed now is removed by a later run."""
    for path in html_paths:
        with contextlib.suppress(OSError):
            html.prune(path)
            html.data_folder(path).rmdir()


def not_saved_message(name: str, exc: OSError, files: Mapping[Path, bytes], report_dir: Path, copies: bool, resumable: bool, cache_failed: bool) -> str:
    """Why suite ``name``'s report could not be written (``exc`` names the file) and what to do: for a full disk, the
    folder, the space its files need and the space free there."""
    folder, full, needed = _cause(exc, files, report_dir)
    if full:
        free = _free_bytes(folder)
        why = (
            f"no space left in {folder}: the report's files there need {_size(needed)}"
            + (" (and as much again for this run's copy under runs/, which --keep-runs keeps)" if copies and folder == report_dir else "")
            + (f", {_size(free)} are free" if free is not None else "")
        )
    else:
        why = _refused(exc, folder)
    fix = "Free space there (or pass --report-dir=DIR on another disk)" if full else "Make that folder writable (or pass --report-dir=DIR)"
    return f"{name}: the report was NOT saved ({why}). The previous report there is untouched and no partial file is left. {fix},{_again(resumable, cache_failed)}"


def uncopied_message(name: str, exc: OSError, files: Mapping[Path, bytes], report_dir: Path, good: bool, resumable: bool, cache_failed: bool) -> str:
    """Why this run's copies of suite ``name``'s report (its run folder, its ``.passed`` files) could not be written with
    the report (``files``: the report's and the copies', written together) while the report alone was, that none of
    them was, and what to do."""
    folder, full, needed = _cause(exc, files, report_dir)
    if full:
        free = _free_bytes(folder)
        why = f"no space left in {folder}: the files written there need {_size(needed)}" + (f", {_size(free)} are free" if free is not None else "")
    else:
        why = _refused(exc, folder)
    kept = f"nothing was written under {report_dir / history.RUNS / name}" + (f", and {report_dir / name}.passed.* still hold the last run that passed before this one" if good else "")
    fix = "Free space there" if full else "Make that folder writable"
    again = _again(resumable, cache_failed) + (", and writes the report with its copies" if resumable else " to make them")
    return f"{name}: the report was saved, but not this run's copies of it ({why}): {kept}. {fix},{again}"


def _cause(exc: OSError, files: Mapping[Path, bytes], report_dir: Path) -> tuple[Path, bool, int]:
    """Where ``exc`` happened writing ``files`` (the folder of the file it names, or a folder it could not make), whether the
    disk was full, and how many bytes the files in that folder need."""
    where = Path(exc.filename) if exc.filename else report_dir
    folder = where.parent if where in files else where
    needed = sum(len(data) for path, data in files.items() if path.parent == folder) or sum(map(len, files.values()))
    return folder, exc.errno in (errno.ENOSPC, errno.EDQUOT), needed


def _refused(exc: OSError, folder: Path) -> str:
    where = Path(exc.filename) if exc.filename else folder
    return f"{folder}: {exc.strerror or exc}" + (f" ({where.name})" if where != folder else "")


def _again(resumable: bool, cache_failed: bool) -> str:
    again = " then run the same command again"
    if resumable:
        again += ": it resumes this run and reads back the replies the response cache stored" + (" before it failed" if cache_failed else ", not asking for them again")
    return again


def _free_bytes(folder: Path) -> int | None:
    for path in (folder, *folder.parents):  # the folder itself may not have been made
        try:
            return shutil.disk_usage(path).free
        except OSError:
            continue
    return None


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
