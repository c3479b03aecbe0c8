"""A full disk: the response cache says at once (once) that it cannot store replies and the run goes on; a report
that cannot be written is one clear message naming the folder and the space needed, the previous report is left as it
was, no temporary file is left, and the run exits 12 (its results are not saved). On a real 2 MB filesystem where the
machine lets the test mount one, and everywhere with ENOSPC injected."""

from __future__ import annotations

import errno
import json
import os
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
from guitest.reporting import history
from guitest.reporting.writer import not_saved_message
from guitest.session import UNSAVED_EXIT_CODE

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
        strictjson.write_together({tmp_path / "r.json": b"new json", tmp_path / "r.html": b"<p>" * 10000})
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(tmp_path / "r.html")
    assert {path: path.read_bytes() for path in earlier} == earlier  # the JSON was complete, and still not put in place
    assert sorted(os.listdir(tmp_path)) == ["r.html", "r.json"]  # no temporary file left
    monkeypatch.undo()
    strictjson.write_together({tmp_path / "r.json": b"new json"})
    assert (tmp_path / "r.json").read_bytes() == b"new json" and sorted(os.listdir(tmp_path)) == ["r.html", "r.json"]


def test_a_copy_that_fills_the_disk_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.json").write_text("new")
    (tmp_path / "b.json").write_text("earlier")

    def fills(source: Any, target: Any) -> None:
        Path(target).write_text("ne")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(history.shutil, "copyfile", fills)
    with pytest.raises(OSError):
        history._copy(tmp_path / "a.json", tmp_path / "b.json")
    assert sorted(os.listdir(tmp_path)) == ["a.json", "b.json"] and (tmp_path / "b.json").read_text() == "earlier"


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
# half of what is written); FULL_DISK=runs: only this run's copies of its report (runs/ and .passed) fail.
CONFTEST = """
import errno, os, shutil, sqlite3
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


def full_copy(source, target):
    with real_open(target, "wb") as f:
        f.write(b"half")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def full_commit(db, rows):
    raise sqlite3.OperationalError("database or disk is full")


if FULL:
    guitest.strictjson.open = full_open
    shutil.copyfile = full_copy
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
        monkeypatch.setenv("FULL_DISK", "runs")  # space for the report, not for its copies: written, and said
        copies = run(pytester, server.base_url, *mode)
        assert copies.ret == 0, copies.stdout.str()
        copies.stdout.fnmatch_lines(
            ["*this run resumes run * its report not saved*", "warning: the report was written, but this run's copies of it (under *runs*) were not: *No space left on device*"]
        )
        assert contents(reports) != earlier and not temporary_files(reports)
        assert json.loads((reports / "tiny.json").read_text())["n_results"] == n_rows()


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
