"""Shards: --shard=K/N splits a suite's cases stably, and `guitest merge` rebuilds the report of the whole run.

One grounding suite (24 cases whose targets cover a tenth to three quarters of the screen, so the seeded random
baseline both hits and misses), run whole and as three shards (one of them with -n 2); the merged report equals the
whole run's in every case and figure, and so does the gate's exit code; shards of different models, a missing part
and a part given twice are refused or named.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from builders import write_suite
from guitest import sharding

ROWS = [("desktop", f"shot{n}.png", (400, 300), [(0, 0, 40 + 60 * k, 300, f"target {n}-{k}", "text", "windows") for k in range(6)]) for n in range(4)]
RUN = ["suites/tiny", "--model=random", "--seed=7", "--min-accuracy=0.5", "-p", "no:cacheprovider"]


def merge(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "guitest.cli", "merge", *args], cwd=pytester.path, capture_output=True, text=True)


def figures(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "run"}


def test_three_shards_merged_equal_the_whole_run(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    whole = pytester.runpytest_subprocess(*RUN)
    expected = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert 0 < expected["overall"]["hit"] < 24  # the random baseline hits some and misses some
    ids: list[set[str]] = []
    for k, mode in ((1, []), (2, ["-n", "2"]), (3, [])):
        shard = pytester.runpytest_subprocess(*RUN, f"--shard={k}/3", f"--report-dir=shard{k}", *mode)
        assert shard.ret in (0, 10), shard.stdout.str()[-2000:]
        report = json.loads((pytester.path / f"shard{k}" / "tiny.json").read_text())
        assert report["run"]["shard"] == f"{k}/3" and report["n_selected"] == len(report["cases"])
        ids.append({c["id"] for c in report["cases"]})
    assert all(ids) and sum(map(len, ids)) == 24 and set().union(*ids) == {c["id"] for c in expected["cases"]}
    done = merge(pytester, "shard1/tiny.json", "shard2/tiny.json", "shard3/tiny.json", "--report-dir=merged")
    assert done.returncode == whole.ret, done.stdout + done.stderr
    merged = json.loads((pytester.path / "merged" / "tiny.json").read_text())
    assert figures(merged) == figures(expected)
    assert [s["shard"] for s in merged["run"]["merged_shards"]] == ["1/3", "2/3", "3/3"]
    assert (pytester.path / "merged" / "tiny.md").is_file() and (pytester.path / "merged" / "tiny.html").is_file()

    # a part missing: named, and the run is incomplete (exit 11, as pytest's incomplete run)
    partial = merge(pytester, "shard1/tiny.json", "shard3/tiny.json", "--report-dir=partial")
    assert partial.returncode == 11 and "(part 2/3 of the run: its report was not given)" in partial.stdout
    # one part twice
    twice = merge(pytester, "shard1/tiny.json", "shard1/tiny.json", "--report-dir=twice")
    assert twice.returncode == 2 and "are both part 1/3: give each part once" in twice.stderr
    # a shard of another model
    other = pytester.runpytest_subprocess(*RUN[:1], "--model=center", *RUN[3:], "--shard=2/3", "--report-dir=center")
    assert other.ret in (0, 10)
    refused = merge(pytester, "shard1/tiny.json", "center/tiny.json", "--report-dir=refused")
    assert refused.returncode == 2 and "differ in their model (its spec, adapter, profile and the settings that change its replies) (model)" in refused.stderr
    # a shard asked more at once (another host's --concurrency) is the same model: merged
    faster = pytester.runpytest_subprocess(*RUN, "--shard=2/3", "--report-dir=faster", "--concurrency=3")
    assert faster.ret in (0, 10)
    assert merge(pytester, "shard1/tiny.json", "faster/tiny.json", "shard3/tiny.json", "--report-dir=faster-merged").returncode == whole.ret


def test_a_case_is_in_the_same_part_whatever_else_is_collected() -> None:
    ids = [f"suites/s/suite.yaml::case-{i}" for i in range(3000)]
    parts = [sharding.part_of(i, 3) for i in ids]
    assert parts == [sharding.part_of(i, 3) for i in reversed(ids)][::-1]
    assert all(900 <= parts.count(k) <= 1100 for k in (1, 2, 3))  # even within a few percent
    with pytest.raises(sharding.ShardError, match=r"--shard=4/3: expected K/N with 1 <= K <= N"):
        sharding.parse("4/3")
    assert sharding.parse("2/5") == (2, 5)


def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    result = pytester.runpytest_subprocess(*RUN, "--shard=0/2")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--shard=0/2: expected K/N with 1 <= K <= N*"])
