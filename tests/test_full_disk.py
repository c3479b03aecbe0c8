"""A full disk: the response cache says at once (once) that it cannot store replies and the run goes on; a report
that cannot be written is one clear message naming the folder and the space needed, the previous report is left as it
was, no temporary file is left, and the run exits 12 (its results are not saved). The report's copies (runs/<suite>/<stamp>/,
.passed.*) are written with it, all or none: when only the report fits, it is written alone, no copy of it is, and the
run exits 14, the same command then resuming the run to write them. On a real 2 MB filesystem where the machine lets
the test mount one, and everywhere with ENOSPC injected."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

import fakeserver
from builders import n_rows, write_suite
from guitest import cache as cache_mod
from guitest import strictjson
from guitest.reporting.writer import not_saved_message
from guitest.run.session import UNCOPIED_EXIT_CODE, UNSAVED_EXIT_CODE
from pages import data_folder
from test_session import KEY, PaidOracle, make
from test_session import run as run_in_process

MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
REPORTS = ("tiny.json", "tiny.md", "tiny.html")
CACHE_SAYS = "guitest: the response cache cannot store replies"


class FullAfterHalf:
    """A file that takes half of what is written to it, then fails as a full disk does."""

    def __init__(self, f: Any) -> None:
        self.f = f

    def __enter__(self) -> FullAfterHalf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()

    def write(self, data: bytes) -> int:
        self.f.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_files_written_together_are_all_written_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    earlier = {tmp_path / "r.json": b"earlier json", tmp_path / "r.html": b"earlier html"}
    for path, data in earlier.items():
        path.write_bytes(data)
    real_open = open

    def fills_on_html(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = real_open(file, mode, *args, **kwargs)
        return FullAfterHalf(f) if ".html." in str(file) else f

    monkeypatch.setattr(strictjson, "open", fills_on_html, raising=False)
    with pytest.raises(OSError) as info:
        strictjson.write_together({tmp_path / "r.json": b"new json", tmp_path / "runs" / "s" / "r.json": b"copy", tmp_path / "r.html": b"<p>" * 10000})
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(tmp_path / "r.html")
    assert {path: path.read_bytes() for path in earlier} == earlier  # the JSON was complete, and still not put in place
    assert sorted(os.listdir(tmp_path)) == ["r.html", "r.json"]  # no temporary file left, nor the folders made for the copy
    monkeypatch.undo()
    strictjson.write_together({tmp_path / "r.json": b"new json"})
    assert (tmp_path / "r.json").read_bytes() == b"new json" and sorted(os.listdir(tmp_path)) == ["r.html", "r.json"]


def test_copies_that_do_not_fit_are_none_of_them_and_the_report_is_saved_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the report was written, then runs/<stamp>/ half made and the .passed files left the earlier run's, and the
    run exited 0. In one process (tests/test_session.py's runs), with a cache: the same command then makes the copies."""
    paid = {"session": {"make_model": lambda spec, settings, profile, reason: PaidOracle(spec, settings, profile, reason)}}
    first = make(tmp_path, **paid)
    run_in_process(first, tmp_path)
    assert first.finish() == 0
    first.close()
    reports, runs = tmp_path / "reports", tmp_path / "reports" / "runs" / "tiny"
    passed = {ext: (reports / f"tiny.passed.{ext}").read_bytes() for ext in ("json", "md", "html")}
    kept = sorted(os.listdir(runs))
    real_open = open

    def fills_on_copies(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:  # room for the report, none for its copies
        f = real_open(file, mode, *args, **kwargs)
        return FullAfterHalf(f) if f"{os.sep}runs{os.sep}" in str(file) or ".passed." in str(file) else f

    monkeypatch.setattr(strictjson, "open", fills_on_copies, raising=False)
    second = make(tmp_path, **paid)
    run_in_process(second, tmp_path)
    assert second.finish() == UNCOPIED_EXIT_CODE
    second.close()
    assert json.loads((reports / "tiny.json").read_text())["run"]["cache"]["run"] == second.run.id  # the report is this run's
    assert sorted(os.listdir(runs)) == kept and not temporary_files(reports)  # no folder of this run, not even an empty one
    assert {ext: (reports / f"tiny.passed.{ext}").read_bytes() for ext in passed} == passed  # all the last passed run's
    said = (
        f"tiny: the report was saved, but not this run's copies of it (no space left in {runs / second.run_stamp}: the files written "
        f"there need SIZE, SIZE are free): nothing was written under {runs}, and {reports / 'tiny'}.passed.* still hold the last run "
        "that passed before this one. Free space there, then run the same command again: it resumes this run and reads back the replies "
        "the response cache stored, not asking for them again, and writes the report with its copies"
    )
    assert re.fullmatch(re.escape(said).replace("SIZE", r"[\d.]+ [KMG]?B"), second.suites.uncopied[KEY]), second.suites.uncopied[KEY]
    monkeypatch.undo()  # space again
    third = make(tmp_path, **paid)
    assert third.run is not None and third.run.resumes is not None and third.run.resumes["id"] == second.run.id
    calls = PaidOracle.calls
    run_in_process(third, tmp_path)
    assert third.finish() == 0 and PaidOracle.calls == calls  # every reply read back
    third.close()
    assert sorted(os.listdir(runs)) == sorted([*kept, third.run_stamp])
    assert (reports / "tiny.passed.json").read_bytes() == (reports / "tiny.json").read_bytes() == (runs / third.run_stamp / "tiny.json").read_bytes()


def test_the_cache_keeps_the_first_reason_it_could_not_store_replies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = cache_mod.ResponseCache(tmp_path, "on")
    reasons = iter(["database or disk is full", "disk I/O error"])

    def full(db: sqlite3.Connection, rows: list[Any]) -> None:
        raise sqlite3.OperationalError(next(reasons))

    monkeypatch.setattr(cache_mod, "_commit", full)
    for i in range(2 * cache_mod.BATCH):
        cache.put(f"k{i}", "text", "stop", "m")  # two batches, both fail; put() never raises into the case
    assert cache.write_errors == 2 * cache_mod.BATCH
    assert cache.failure == f"{cache.path}: database or disk is full"
    assert "The run goes on" in cache_mod.failure_message(cache.failure)
    cache.close()


def test_a_report_folder_it_may_not_write_is_named_with_what_to_do() -> None:
    error = PermissionError(errno.EACCES, "Permission denied", "/r/tiny.json")
    message = not_saved_message("tiny", error, {Path("/r/tiny.json"): b"{}"}, Path("/r"), True, resumable=False, cache_failed=False)
    assert message == (
        "tiny: the report was NOT saved (/r: Permission denied (tiny.json)). The previous report there is untouched and no partial "
        "file is left. Make that folder writable (or pass --report-dir=DIR), then run the same command again"
    )


# -- whole runs --------------------------------------------------------------------------------------

# FULL_DISK=1: every commit of the cache and every file written as a report fails as a full disk does (after taking
# half of what is written); FULL_DISK=runs: only the files under runs/ (the run folder's copy of the report) fail, so, all or none, no .passed file is written either.
CONFTEST = """
import errno, os, sqlite3
import guitest.cache, guitest.strictjson

FULL = os.environ.get("FULL_DISK")
real_open = open


class FullAfterHalf:
    def __init__(self, f):
        self.f = f
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.f.close()
    def write(self, data):
        self.f.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def full_open(file, mode="r", *args, **kwargs):
    f = real_open(file, mode, *args, **kwargs)
    return FullAfterHalf(f) if FULL == "1" or os.sep + "runs" + os.sep in str(file) else f


def full_commit(db, rows):
    raise sqlite3.OperationalError("database or disk is full")


if FULL:
    guitest.strictjson.open = full_open
if FULL == "1":
    guitest.cache.BATCH = 1  # each reply its own commit: the first one fails in the middle of the run
    guitest.cache._commit = full_commit
"""


def run(pytester: pytest.Pytester, base_url: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={base_url}", "--retries=0", "--timeout=20", "-p", "no:cacheprovider", *extra)


def contents(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in REPORTS}


def temporary_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def said_once_at_once(result: pytest.RunResult) -> None:
    """The cache's failure is one line, printed while the cases still ran (before the last progress line)."""
    lines = result.stdout.lines
    said = [i for i, line in enumerate(lines) if line.startswith(CACHE_SAYS)]
    assert len(said) == 1, result.stdout.str()
    assert "guitest-cache.sqlite: database or disk is full" in lines[said[0]] and "The run goes on" in lines[said[0]]
    assert said[0] < max(i for i, line in enumerate(lines) if "[100%]" in line), result.stdout.str()


@MODES
def test_a_full_disk_loses_no_report_and_the_exit_code_says_the_results_were_not_saved(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: list[str]) -> None:
    """Before: a 137-line traceback from pytest_sessionfinish, a 0-byte .json.tmp, and a cache that stopped recording
    without a word."""
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest(CONFTEST)
    reports = pytester.path / "reports"
    with fakeserver.serve(tmp_path) as server:
        assert run(pytester, server.base_url, *mode).ret == 0
        earlier = contents(reports)
        monkeypatch.setenv("FULL_DISK", "1")
        full = run(pytester, server.base_url, *mode)
        assert full.ret == UNSAVED_EXIT_CODE, full.stdout.str()
        said_once_at_once(full)
        full.stdout.fnmatch_lines(
            [
                f"guitest: tiny: the report was NOT saved (no space left in {reports}: the report's files there need * KB (and as much again for "
                "this run's copy under runs/, which --keep-runs keeps), * are free). The previous report there is untouched and no partial file is "
                "left. Free space there (or pass --report-dir=DIR on another disk), then run the same command again: it resumes this run and reads "
                "back the replies the response cache stored before it failed",
            ]
        )
        assert "Traceback" not in full.stdout.str() + full.stderr.str() and not [line for line in full.stdout.lines if line.startswith("reports: ")]
        assert contents(reports) == earlier and not temporary_files(reports)
        kept = sorted(os.listdir(reports / "runs" / "tiny"))
        monkeypatch.setenv("FULL_DISK", "runs")  # space for the report, not for its copies: the report alone, and said
        copies = run(pytester, server.base_url, *mode)
        assert copies.ret == UNCOPIED_EXIT_CODE, copies.stdout.str()  # before: 0, a half-made runs/<stamp>/, .passed the older run's
        copies.stdout.fnmatch_lines(
            [
                "*this run resumes run * its report or the copies of it not saved*",
                f"warning: tiny: the report was saved, but not this run's copies of it (no space left in {reports}{os.sep}runs{os.sep}tiny{os.sep}*: "
                f"the files written there need * KB, * are free): nothing was written under {reports / 'runs' / 'tiny'}, and {reports / 'tiny'}.passed.* "
                "still hold the last run that passed before this one. Free space there, then run the same command again: it resumes this run and *",
            ]
        )
        assert contents(reports) != earlier and not temporary_files(reports)
        assert json.loads((reports / "tiny.json").read_text())["n_results"] == n_rows()
        assert sorted(os.listdir(reports / "runs" / "tiny")) == kept  # nothing of this run's, not even an empty folder
        assert {name: (reports / name.replace("tiny.", "tiny.passed.")).read_bytes() for name in REPORTS} == earlier  # the last passed run's, all three


# -- a real small filesystem ---------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs, mounted for the test (root only; skipped, saying why, where the machine does not allow it)."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a 2 MB tmpfs needs root; the ENOSPC tests of this file check the same behaviour without one")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"this machine does not let the test mount a tmpfs ({done.stderr.strip() or done.returncode}); the ENOSPC tests of this file check the same behaviour without one")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_report_folder_on_a_full_filesystem(pytester: pytest.Pytester, tmp_path: Path, small_disk: Path) -> None:
    """The same as above with no injection, on a real full filesystem: serial only (the run above checks -n 2; the
    report and the cache fail alike in either)."""
    mode: list[str] = []
    write_suite(pytester.path / "suites" / "tiny")
    reports = small_disk / "reports"
    script = {"*": [{"pad": 12000}] * (3 * n_rows())}  # 12 KB replies: the cache and the report need room for them
    with fakeserver.serve(tmp_path, script=script) as server:
        assert run(pytester, server.base_url, f"--report-dir={reports}", *mode).ret == 0
        earlier = contents(reports)
        with open(small_disk / "filler", "wb") as f:  # leave 96 KB: room to open the cache, not for its replies nor the report
            f.write(b"\0" * (shutil.disk_usage(small_disk).free - 96 * 1024))
        full = run(pytester, server.base_url, f"--report-dir={reports}", *mode)
    assert full.ret == UNSAVED_EXIT_CODE, full.stdout.str()
    said = [line for line in full.stdout.lines if line.startswith(CACHE_SAYS)]
    assert len(said) == 1 and "database or disk is full" in said[0], full.stdout.str()
    full.stdout.fnmatch_lines([f"guitest: tiny: the report was NOT saved (no space left in {reports}: the report's files there need * KB *, * are free)*"])
    assert "Traceback" not in full.stdout.str() + full.stderr.str()
    assert contents(reports) == earlier and not temporary_files(small_disk)


def test_copies_that_do_not_fit_on_a_full_filesystem(pytester: pytest.Pytester, tmp_path: Path, small_disk: Path) -> None:
    """Room for the report, not for it and its copies, on a real full filesystem: the report alone is written, no copy
    of it, and the run exits 14 (the injected test above checks -n 2; the copies are the controller's alone)."""
    write_suite(pytester.path / "suites" / "tiny")
    reports = small_disk / "reports"
    where = (f"--report-dir={reports}", f"--cache-dir={tmp_path / 'cache'}")  # the cache elsewhere: only the reports fill this disk
    script = {"*": [{"pad": 12000}] * (2 * n_rows())}  # 12 KB replies: reports of some 150 KB, far above the block size
    with fakeserver.serve(tmp_path, script=script) as server:
        assert run(pytester, server.base_url, *where).ret == 0
        earlier = contents(reports)
        kept = sorted(os.listdir(reports / "runs" / "tiny"))
        shown = data_folder(reports / "tiny.html")  # the page's data folder (the run folder's), written with it
        assert shown is not None and shown.is_relative_to(reports / "runs" / "tiny")
        data = [p for p in shown.rglob("*") if p.is_file()]
        size = sum(map(len, earlier.values())) + sum(p.stat().st_size for p in data)
        with open(small_disk / "filler", "wb") as f:  # room for the report alone (1x), not with its copies (the JSON and Markdown 3x with .passed)
            f.write(b"\0" * (shutil.disk_usage(small_disk).free - size * 3 // 2))
        copies = run(pytester, server.base_url, *where)
    assert copies.ret == UNCOPIED_EXIT_CODE, copies.stdout.str()
    copies.stdout.fnmatch_lines(
        [f"warning: tiny: the report was saved, but not this run's copies of it (no space left in {reports}*: the files written there need * KB, * are free): nothing was written under*"]
    )
    assert "Traceback" not in copies.stdout.str() + copies.stderr.str()
    assert contents(reports) != earlier and json.loads((reports / "tiny.json").read_text())["n_results"] == n_rows()
    assert sorted(os.listdir(reports / "runs" / "tiny")) == kept and not temporary_files(small_disk)
    assert {name: (reports / name.replace("tiny.", "tiny.passed.")).read_bytes() for name in REPORTS} == earlier
