"""A failed run never destroys the last good report: every run's reports are kept, and the last passed one apart."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

import fakeserver
from builders import center_norm, n_rows, write_suite
from guitest.reporting import history
from guitest.cli import main as guitest_main


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
