"""A suite's report written: JSON, Markdown and HTML (the page and its data folder, :func:`guitest.reporting.html.page_files`), all or none (a report that cannot be written leaves the files
there before untouched and no temporary file), then this run's copies kept (:func:`guitest.reporting.history.keep`).
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
    keep_episodes: int = 0,
    stamp: str = "",
    resumable: bool = False,
    cache_failed: bool = False,
) -> Written:
    """Write ``report`` as JSON, Markdown and HTML at ``paths`` (each list's first in ``report_dir``), all or none, and keep
    this run's copies under ``report_dir``; ``pictures``: the cases' thumbnails, embedded when ``images`` is ``embed``;
    ``resumable``, ``cache_failed``: what the message of a report not saved says of running again."""
    json_paths, md_paths, html_paths = paths
    name = report["suite"]["name"]
    problems = report_mod.validate(report)
    if problems:  # a bug in guitest, not in the user's input: say so loudly, still write the data
        report["schema_problems"] = problems
    files: dict[Path, bytes] = {}
    data = strictjson.encode(report_mod.json_text(report))
    for path in json_paths:
        files[path] = data
    data = strictjson.encode(report_mod.markdown(report, task_lines))
    for path in md_paths:
        files[path] = data
    originals = pictures
    if images == "embed":
        pictures = embed(pictures)
    files_dir = report_dir.resolve()  # the episodes' screenshots are named relative to the report folder

    def page(folder: Path) -> str:  # a copy's page travels alone: it carries its cases' data
        return html.render(report, pictures, folder, files_dir)

    files.update(html.page_files(report, pictures, html_paths, files_dir, originals if images == "embed" else None))  # each page and its data folder
    del data
    try:
        strictjson.write_together(files)
    except OSError as exc:
        raise ReportNotSaved(not_saved_message(name, exc, files, report_dir, keep_runs > 0, resumable, cache_failed)) from None
    written = [*json_paths, *md_paths, *html_paths]  # the files a reader opens (a page's data folder goes with it)
    good = history.passed(report)
    try:
        kept = history.keep([json_paths[0], md_paths[0], html_paths[0]], report_dir, name, stamp, good, keep_runs, page=page, keep_episodes=keep_episodes)
    except OSError as exc:  # the latest report is complete; its copies are not
        uncopied = (
            f"the report was written, but this run's copies of it (under {report_dir / history.RUNS}, or its .passed.* files) were not: {exc}. Free space there; the next run makes its own copies"
        )
        return Written(written, [], uncopied)
    finally:
        for path in html_paths:  # housekeeping once the copies name what they name: an earlier run's data no page names
            with contextlib.suppress(OSError):
                html.prune(path)
    folders = sorted({str(p.parent) for p in kept if p.parent != report_dir})
    return Written(written, folders + ([f"{report_dir / name}.passed.*"] if good and kept else []))


def not_saved_message(name: str, exc: OSError, files: Mapping[Path, bytes], report_dir: Path, copies: bool, resumable: bool, cache_failed: bool) -> str:
    """Why suite ``name``'s report could not be written (``exc`` names the file) and what to do: for a full disk, the
    folder, the space its files need and the space free there."""
    where = Path(exc.filename) if exc.filename else report_dir
    folder = where.parent if where in files else where  # a file it could not write, or a folder it could not make
    needed = sum(len(data) for path, data in files.items() if path.parent == folder) or sum(map(len, files.values()))
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if full:
        free = _free_bytes(folder)
        why = (
            f"no space left in {folder}: the report's files there need {_size(needed)}"
            + (" (and as much again for this run's copy under runs/, which --keep-runs keeps)" if copies and folder == report_dir else "")
            + (f", {_size(free)} are free" if free is not None else "")
        )
    else:
        why = f"{folder}: {exc.strerror or exc}" + (f" ({where.name})" if where != folder else "")
    again = " then run the same command again"
    if resumable:
        again += ": it resumes this run and reads back the replies the response cache stored" + (" before it failed" if cache_failed else ", not asking for them again")
    fix = "Free space there (or pass --report-dir=DIR on another disk)" if full else "Make that folder writable (or pass --report-dir=DIR)"
    return f"{name}: the report was NOT saved ({why}). The previous report there is untouched and no partial file is left. {fix},{again}"


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
