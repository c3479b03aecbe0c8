"""A failed run never destroys the last good report: every run's reports are kept, and the last passed one apart."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path

import pytest

import fakeserver
from builders import center_norm, n_rows, write_suite
from guitest.reporting import history
from guitest.cli import main as guitest_main
from pages import data_folder, pictures, viewer_data
from test_session import make, run


def _report(**over) -> dict:
    base = {"complete": True, "overall": {"error": 0}, "gate": {"failures": []}}
    base.update(over)
    return base


def test_what_counts_as_a_passed_run() -> None:
    assert history.passed(_report())
    assert not history.passed(_report(complete=False))
    assert not history.passed(_report(overall={"error": 1}))
    assert not history.passed(_report(gate={"failures": ["accuracy 0.1 < 0.5"]}))
    # a run of part of the suite (-k, --limit, a shard) is never the last passed run's evidence
    assert not history.passed(_report(selection={"n_suite": 24, "subset": True, "by": ["-k 'icon'"], "limit": None}))
    assert history.passed(_report(selection={"n_suite": 24, "subset": False, "by": [], "limit": None}))


def test_runs_are_kept_and_pruned_to_the_newest(tmp_path: Path) -> None:
    latest = tmp_path / "s.json"
    for n in range(4):
        latest.write_text(json.dumps({"n": n}))
        history.keep([latest], tmp_path, "s", history.stamp(1_796_000_000 + n), good=n == 1, keep_runs=2)
    runs = sorted(p.name for p in (tmp_path / "runs" / "s").iterdir() if p.is_dir())
    # the newest 2, and the last passed run's folder (its .passed reports point into it), kept through later ones
    assert [json.loads((tmp_path / "runs" / "s" / r / "s.json").read_text())["n"] for r in runs] == [1, 2, 3]
    assert json.loads((tmp_path / "s.passed.json").read_text()) == {"n": 1}


def test_two_runs_in_the_same_second_keep_two_folders(tmp_path: Path) -> None:
    latest = tmp_path / "s.json"
    latest.write_text("{}")
    for _ in range(2):
        history.keep([latest], tmp_path, "s", history.stamp(1_796_000_000), good=False, keep_runs=5)
    assert len(list((tmp_path / "runs" / "s").iterdir())) == 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_run_against_a_dead_endpoint_leaves_the_last_good_report(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    x, y = center_norm("desktop", 0)
    reports = pytester.path / "reports"
    with fakeserver.serve(tmp_path, script={"open the file menu": [{"content": f"Answer: [{x}, {y}]"}]}) as server:
        good = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", "-p", "no:cacheprovider", *mode)
    assert good.ret == 0, good.stdout.str()
    good_report = json.loads((reports / "tiny.json").read_text())
    bad = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url=http://127.0.0.1:{free_port()}/v1", "--retry-backoff=0.01", "-p", "no:cacheprovider", *mode)
    assert bad.ret == 1
    assert json.loads((reports / "tiny.json").read_text())["overall"]["error"] == n_rows()  # the latest is the failed run
    for ext in ("json", "md", "html"):
        assert (reports / f"tiny.passed.{ext}").exists()
    assert json.loads((reports / "tiny.passed.json").read_text()) == good_report  # the last green evidence, unchanged
    runs = sorted(p for p in (reports / "runs" / "tiny").iterdir() if p.is_dir())
    assert len(runs) == 2 and all({p.name for p in r.iterdir()} >= {"tiny.json", "tiny.md", "tiny.html"} for r in runs)
    assert guitest_main(["compare", str(reports / "tiny.passed.json"), str(reports / "tiny.json")]) == 0  # comparable


def test_a_run_without_a_gate_passes_whatever_its_score_and_says_so_when_it_replaces_passed(pytester: pytest.Pytester) -> None:
    # .passed is the last run whose exit status was 0 (a miss is a result, not a failure): without a gate a run of misses
    # passes and replaces it, and the summary says so; with a gate it fails and leaves .passed as it was.
    write_suite(pytester.path / "suites" / "tiny")
    passed = pytester.path / "reports" / "tiny.passed.json"
    args = ["suites/tiny", "-p", "no:cacheprovider"]
    good = pytester.runpytest_subprocess(*args, "--model=oracle", "--min-accuracy=0.5")
    assert good.ret == 0 and "this run has no gate" not in good.stdout.str()  # a gate met: nothing more to say
    assert json.loads(passed.read_text())["overall"]["accuracy"] == 1.0
    missed = pytester.runpytest_subprocess(*args, "--model=center")  # the centre of every image is outside its box
    assert missed.ret == 0, missed.stdout.str()
    assert json.loads(passed.read_text())["overall"]["accuracy"] == 0.0
    missed.stdout.fnmatch_lines(
        [
            "note: this run has no gate, so it passed by finishing without errors, whatever its score, and *.passed.* is now this run; "
            "give the suite a gate: (or --min-accuracy) to keep *.passed.* for runs that meet it"
        ]
    )
    before = passed.read_text()
    gated = pytester.runpytest_subprocess(*args, "--model=center", "--min-accuracy=0.5")
    assert gated.ret != 0 and "this run has no gate" not in gated.stdout.str()
    assert passed.read_text() == before


def _digests(folder: Path) -> dict[str, list[str]]:
    """Each file's content digest -> the files under ``folder`` (relative names) that hold it."""
    out: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        out.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), []).append(path.relative_to(folder).as_posix())
    return out


def test_a_run_is_written_once_and_the_latest_and_passed_pages_show_its_folder(tmp_path: Path) -> None:
    """Before: the page's data was written at the top (<suite>_files/) and again inside the run folder's page, which
    carried it with its thumbnails as data URIs. Now the run folder holds the page, its data folder and its thumbnails
    once; tiny.html and tiny.passed.html show them from there, and the JSON and Markdown stay real files at the top."""
    reports = tmp_path / "reports"
    first = make(tmp_path, report_images="embed")
    run(first, tmp_path)
    assert first.finish() == 0
    first.close()
    stamp = first.run_stamp
    assert sorted(os.listdir(reports / "runs" / "tiny")) == sorted([stamp, history.LAST_PASSED])
    folder = reports / "runs" / "tiny" / stamp
    data = data_folder(folder / "tiny.html")
    assert data is not None and data.parent == folder / "tiny_files"
    assert data_folder(reports / "tiny.html") == data_folder(reports / "tiny.passed.html") == data  # the references resolve: to the run folder's data
    index, details = viewer_data(reports / "tiny.html")
    assert len(index["cases"]) == len(details) == n_rows()
    images = sorted(p for p in (data / "img").iterdir())
    assert len(images) == 3 and {s[1:] for s in pictures(index).values()} == {f"img/{p.name}" for p in images}  # three screenshots, a thumbnail each
    # one copy of the page's data and of each thumbnail in the whole report folder: no page carries them
    assert [p.relative_to(reports).as_posix() for p in reports.rglob("index.js")] == [(data / "index.js").relative_to(reports).as_posix()]
    pages = [p.read_text("utf-8") for p in reports.rglob("*.html")]
    assert len(pages) == 3 and not any('id="gv-index"' in page or "data:image/" in page for page in pages)
    same = [names for names in _digests(reports).values() if len(names) > 1 and not names[0].endswith((".json", ".md"))]
    assert same == [["tiny.html", "tiny.passed.html"]]  # the two top pages are the same small page; the rest is once
    assert not (reports / "tiny_files").exists()
    assert (reports / "tiny.passed.json").read_bytes() == (reports / "tiny.json").read_bytes() == (folder / "tiny.json").read_bytes()
    assert json.loads((reports / "tiny.json").read_text())["n_results"] == n_rows()

    # a run that does not pass: tiny.html shows its folder, tiny.passed.html still the first's; pruning keeps both
    second = make(tmp_path, keep_runs=1, keep_episodes=0)
    run(second, tmp_path, drop=1)
    assert second.finish() != 0
    second.close()
    assert data_folder(reports / "tiny.passed.html") == data and (data / "index.js").is_file()
    latest = data_folder(reports / "tiny.html")
    assert latest is not None and latest.parent.parent.name == second.run_stamp and (latest / "index.js").is_file()
    assert sorted(os.listdir(reports / "runs" / "tiny")) == sorted([stamp, second.run_stamp, history.LAST_PASSED])


def test_keep_runs_0_writes_the_report_once_at_the_top(tmp_path: Path) -> None:
    session = make(tmp_path, keep_runs=0)
    run(session, tmp_path)
    assert session.finish() == 0
    session.close()
    reports = tmp_path / "reports"
    data = data_folder(reports / "tiny.html")
    assert data is not None and data.parent == reports / "tiny_files" and data_folder(reports / "tiny.passed.html") == data
    assert not (reports / "runs").exists() and len(list(reports.rglob("index.js"))) == 1


def test_pruning_keeps_the_run_folders_the_latest_and_passed_pages_show(tmp_path: Path) -> None:
    """Whatever their names' order (a clock set back) and with no last-passed note: the folder the passed page shows
    stays whole, the one the latest page shows stays without its episodes (--keep-episodes=0 asked for that)."""
    runs = tmp_path / "runs" / "s"
    for name in ("a", "b", "c", "d"):
        (runs / name / history.EPISODES).mkdir(parents=True)
        (runs / name / history.MARK).touch()
    (tmp_path / "s.html").write_text('<meta name="guitest-data" content="runs/s/a/s_files/0123456789abcdef/">')
    (tmp_path / "s.passed.html").write_text('<meta name="guitest-data" content="runs/s/b/s_files/0123456789abcdef/">')
    history.prune(tmp_path, "s", keep_runs=1, keep_episodes=0)
    assert sorted(os.listdir(runs)) == ["a", "b", "d"]  # c: the oldest beyond the newest 1 that no page shows
    assert (runs / "b" / history.EPISODES).is_dir() and not (runs / "a" / history.EPISODES).exists() and not (runs / "d" / history.EPISODES).exists()
