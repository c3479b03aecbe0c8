"""Shards: --shard=K/N splits a suite's cases stably, and `guitest merge` rebuilds the report of the whole run.

One grounding suite (24 cases whose targets cover a tenth to three quarters of the screen, so the fake server's answer,
the screen's centre, both hits and misses), run whole and as three shards (one of them with -n 2), while the endpoint
failed every case of part 2 (the part 2 shard ran while it was down: every case an error); the merged report equals the
whole run's in every case and figure, and so does the exit code (pytest's 1 for the errored cases, before the gate's);
shards of different models, a missing part and a part given twice are refused or named, and so is a part changed after
its run (a verdict forged, a case deleted, a verdict NaN or "banana"), naming the file and the case. The verdicts are
re-derived as the task judges them (the grounding rule on the stored point and truth box), which a property test checks
against the task's own judge.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fakeserver
from builders import write_suite
from guitest.scale import merge as merge_mod
from guitest.plan import sharding
from guitest.run.case import _shown
from guitest.cli import main
from guitest.profiles import PROFILES
from guitest.tasks import grounding, hallucination
from guitest.verdict import HIT, MISS
from propbudget import examples

ROWS = [("desktop", f"shot{n}.png", (400, 300), [(0, 0, 40 + 60 * k, 300, f"target {n}-{k}", "text", "windows") for k in range(6)]) for n in range(4)]
KEY = "suites/tiny/suite.yaml"
# ROWS' cases in file order: case id (the suite's id template) and instruction
CASES = [(f"desktop-windows-text-{6 * n + k}", f"target {n}-{k}") for n in range(4) for k in range(6)]
DOWN = [instruction for case_id, instruction in CASES if sharding.part_of(f"{KEY}::{case_id}", 3) == 2]


def merge(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "guitest.cli", "merge", *args], cwd=pytester.path, capture_output=True, text=True)


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """The report less what differs between runs of the same cases: the run record, the seconds the model took, and an
    errored case's message and failed calls (a shard whose endpoint failed every request took it out and asked no more:
    it made fewer failed calls than the whole run, whose other cases' replies kept the endpoint in)."""

    def timeless(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k != "seconds"}
        return [timeless(v) for v in value] if isinstance(value, list) else value

    cases = [{**{k: v for k, v in c.items() if k != "failed_usage"}, "error": "(failed)"} if c["verdict"] == "error" else c for c in report["cases"]]
    usage = {k: v for k, v in (report.get("usage") or {}).items() if k != "failed"}
    return timeless({**{k: v for k, v in report.items() if k != "run"}, "cases": cases, "usage": usage})


def test_three_shards_merged_equal_the_whole_run(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    # One request in flight (--concurrency=1), its case started by one of two threads in the order of the cases: the
    # whole run's first reply is then one of the first cases', none of them part 2's, so the endpoint has answered before
    # any 503 and is never taken out; in the part 2 shard it never answers, so each worker takes it out at the first 503
    # and asks no more (its other cases are errors too, not asked)
    assert 0 < len(DOWN) < 24 and not set(DOWN) & {instruction for _, instruction in CASES[:8]}
    write_suite(pytester.path / "suites" / "tiny", rows=ROWS)
    # the endpoint fails every request of part 2's cases (503, and --retries=0), as often as the runs below ask them
    with fakeserver.serve(pytester.path, script={instruction: [{"status": 503}] * 3 for instruction in DOWN}) as server:
        run = ["suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", "--retries=0", "--concurrency=1", "--cache=off", "--min-accuracy=0.5", "-p", "no:cacheprovider"]
        whole = pytester.runpytest_subprocess(*run)
        expected = json.loads((pytester.path / "reports" / "tiny.json").read_text())
        assert whole.ret == 1 and expected["overall"]["error"] == len(DOWN)  # pytest's "tests failed", whatever the gate
        assert 0 < expected["overall"]["hit"] < 24 - len(DOWN) and not expected["gate"]["failures"]  # the gate passes on the scored cases
        ids: list[set[str]] = []
        for k, mode in ((1, []), (2, ["-n", "2"]), (3, [])):
            shard = pytester.runpytest_subprocess(*run, f"--shard={k}/3", f"--report-dir=shard{k}", *mode)
            report = json.loads((pytester.path / f"shard{k}" / "tiny.json").read_text())
            assert shard.ret in ((1,) if k == 2 else (0, 10)), shard.stdout.str()[-2000:]  # a shard's own gate is not the verdict
            assert report["run"]["shard"] == f"{k}/3" and report["n_selected"] == len(report["cases"])
            ids.append({c["id"] for c in report["cases"]})
        assert all(c["verdict"] == "error" for c in json.loads((pytester.path / "shard2" / "tiny.json").read_text())["cases"])  # the endpoint was down
        assert all(ids) and sum(map(len, ids)) == 24 and set().union(*ids) == {c["id"] for c in expected["cases"]}
        # a shard asked more at once (another host's --concurrency) is the same model: merged
        faster = pytester.runpytest_subprocess(*run, "--shard=3/3", "--report-dir=faster", "--concurrency=3")
        assert faster.ret in (0, 10)
    done = merge(pytester, "shard1/tiny.json", "shard2/tiny.json", "shard3/tiny.json", "--report-dir=merged")
    assert done.returncode == whole.ret, done.stdout + done.stderr  # before: 0, "gate passed" over the two live parts
    assert f"ERRORS: {len(DOWN)} case(s) ended in error in part(s) 2/3" in done.stdout
    merged = json.loads((pytester.path / "merged" / "tiny.json").read_text())
    assert figures(merged) == figures(expected)
    assert [s["shard"] for s in merged["run"]["merged_shards"]] == ["1/3", "2/3", "3/3"] and all(s["verdicts_rechecked"] for s in merged["run"]["merged_shards"])
    # the cases part 2 did not ask once its endpoint was taken out (all but the first of each worker's) are said of the
    # whole run, though part 2 was not the first part given
    down = json.loads((pytester.path / "shard2" / "tiny.json").read_text())["run"]["unreachable"]
    assert merged["run"]["unreachable"] == down and 1 <= down["cases_not_asked"] <= len(DOWN) - 1
    assert (pytester.path / "merged" / "tiny.md").is_file() and (pytester.path / "merged" / "tiny.html").is_file()
    assert merge(pytester, "shard1/tiny.json", "shard2/tiny.json", "faster/tiny.json", "--report-dir=faster-merged").returncode == whole.ret

    # from the parts alone (they record the suite's tables): no suite file under --rootdir, the same report, the same exit
    # code (this merge and the ones below run in this process). Before: exit 2, the suite file must be readable there
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    parts = ["shard1/tiny.json", "shard2/tiny.json", "shard3/tiny.json"]
    assert main(["merge", *parts, f"--rootdir={elsewhere}", "--report-dir=alone"]) == whole.ret
    alone = json.loads((pytester.path / "alone" / "tiny.json").read_text())
    assert {**alone, "run": {**alone["run"], "merged_at": ""}} == {**merged, "run": {**merged["run"], "merged_at": ""}}
    # parts written before reports recorded the tables: read from the suite file under --rootdir, as before, or refused
    for k, part_path in enumerate(parts, 1):
        older = json.loads((pytester.path / part_path).read_text())
        del older["suite"]["shape"]
        (pytester.path / f"older{k}").mkdir()
        (pytester.path / f"older{k}" / "tiny.json").write_text(json.dumps(older))
    olders = [f"older{k}/tiny.json" for k in (1, 2, 3)]
    assert main(["merge", *olders, f"--rootdir={pytester.path}", "--report-dir=older-merged"]) == whole.ret
    older_merged = json.loads((pytester.path / "older-merged" / "tiny.json").read_text())
    assert {k: v for k, v in older_merged.items() if k != "run"} == {k: v for k, v in merged.items() if k != "run"}
    capsys.readouterr()
    assert main(["merge", *olders, f"--rootdir={elsewhere}", "--report-dir=refused-older"]) == 2
    assert f"guitest: the shards' suite file {KEY} must be readable under --rootdir {elsewhere}: " in capsys.readouterr().err

    # a part missing: named, and the run is incomplete (exit 11, as pytest's incomplete run)
    partial = merge(pytester, "shard1/tiny.json", "shard3/tiny.json", "--report-dir=partial")
    assert partial.returncode == 11 and "(part 2/3 of the run: its report was not given)" in partial.stdout
    # one part twice
    twice = merge(pytester, "shard1/tiny.json", "shard1/tiny.json", "--report-dir=twice")
    assert twice.returncode == 2 and "are both part 1/3: give each part once" in twice.stderr
    # a shard of another model
    other = pytester.runpytest_subprocess("suites/tiny", "--model=center", "--shard=2/3", "--report-dir=center", "-p", "no:cacheprovider")
    assert other.ret == 0
    refused = merge(pytester, "shard1/tiny.json", "center/tiny.json", "--report-dir=refused")
    assert refused.returncode == 2 and "differ in their model (its spec, adapter, profile and the settings that change its replies) (model)" in refused.stderr

    # a part changed after its run: refused (exit 2, one line) naming the file and the case (the merge runs in this process)
    part = json.loads((pytester.path / "shard1" / "tiny.json").read_text())
    missed = next(c for c in part["cases"] if c["verdict"] == "miss")

    def changed(name: str, edit: Any, *, nan: bool = False) -> tuple[int, str]:
        report = json.loads(json.dumps(part))
        edit(report)
        text = json.dumps(report)
        (pytester.path / name).mkdir()
        (pytester.path / name / "tiny.json").write_text(text.replace('"verdict": "NaN"', '"verdict": NaN') if nan else text)
        capsys.readouterr()
        code = main(["merge", f"{name}/tiny.json", "shard2/tiny.json", "shard3/tiny.json", f"--rootdir={pytester.path}", f"--report-dir={pytester.path / name / 'out'}"])
        err = capsys.readouterr().err
        assert not (pytester.path / name / "out").exists() and len(err.splitlines()) == 1, err
        return code, err

    def forged(report: dict[str, Any]) -> None:  # a miss made a hit, its point left outside the box, and the counts made to agree
        case = next(c for c in report["cases"] if c["id"] == missed["id"])
        case["verdict"] = "hit"
        report["overall"]["hit"] += 1
        report["overall"]["miss"] -= 1

    code, err = changed("forged", forged)
    point, box = ", ".join(f"{v:g}" for v in missed["prediction"]["pixel"]), ", ".join(f"{v:g}" for v in missed["truth"])
    assert code == 2 and f"forged/tiny.json: case {missed['id']}: verdict hit, but its point ({point}) lies outside its truth box [{box}], edges included" in err

    def counted_only(report: dict[str, Any]) -> None:  # the verdict changed, the counts left as they were
        next(c for c in report["cases"] if c["id"] == missed["id"])["verdict"] = "hit"

    code, err = changed("uncounted", counted_only)
    assert code == 2 and "uncounted/tiny.json: not the report its run wrote (changed since?): overall.hit is" in err

    def deleted(report: dict[str, Any]) -> None:  # a case gone, and every count made to agree with what is left
        case = report["cases"].pop(0)
        report["n_selected"] -= 1
        report["n_results"] -= 1
        report["overall"][case["verdict"]] -= 1

    code, err = changed("deleted", deleted)
    assert code == 2 and f"the parts hold 23 selected case(s) (deleted/tiny.json {part['n_selected'] - 1}, shard2/tiny.json" in err and "but their run selected 24" in err
    code, err = changed("lost", lambda report: report["cases"].pop(0))
    assert code == 2 and f"lost/tiny.json: not the report its run wrote (changed since?): n_results is {part['n_results']}, but it holds {part['n_results'] - 1} case(s)" in err
    for verdict, name in (("NaN", "nan"), ("banana", "banana")):
        code, err = changed(name, lambda report, v=verdict: report["cases"][0].update(verdict=v), nan=verdict == "NaN")
        assert code == 2 and f"{name}/tiny.json: not a guitest JSON report as guitest writes one: case {part['cases'][0]['id']} (cases[0]).verdict:" in err, err

    # the merged report cannot be written (its folder is a file): exit 12, as a run whose report was not saved, in one line
    (pytester.path / "taken").write_text("")
    capsys.readouterr()
    assert main(["merge", "shard1/tiny.json", "shard2/tiny.json", "shard3/tiny.json", f"--rootdir={pytester.path}", "--report-dir=taken"]) == 12
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "tiny: the report was NOT saved (" in err, err


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
    result = pytester.runpytest_subprocess("suites/tiny", "--model=random", "--shard=0/2", "-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--shard=0/2: expected K/N with 1 <= K <= N*"])


def generic(space: str) -> Any:
    """The generic profile reading its answer styles in ``space``."""
    profile = PROFILES["generic"]
    return dataclasses.replace(profile, space=space, styles=tuple((style, space) for style, _ in profile.styles))


def stored(verdict: str, prediction: dict[str, Any] | None, truth: tuple[float, ...], **row: Any) -> dict[str, Any]:
    """A report's row of a case as the flow of a case writes it (the truth box rounded as the report shows it)."""
    return {"id": "c", "verdict": verdict, "tags": {}, "prediction": prediction, "response": row.pop("response", "Answer: [0.5, 0.5]"), "finish_reason": "stop", "truth": _shown(truth), **row}


@settings(max_examples=examples(300), deadline=None)
@given(
    size=st.tuples(st.integers(1, 4000), st.integers(1, 4000)),
    corners=st.tuples(*[st.floats(0, 1, allow_nan=False) for _ in range(4)]),
    answer=st.tuples(st.integers(-100, 1100), st.integers(-100, 1100)),
    space=st.sampled_from(["grid1000", "pixel_sent"]),
)
def test_merge_rederives_every_grounding_verdict_as_the_task_judges_it(size: tuple[int, int], corners: tuple[float, ...], answer: tuple[int, int], space: str) -> None:
    """The task's own judge gives a verdict from a reply; the row it stores is never refused, and the other verdict on
    the same row is, unless its point lies within the report's rounding of the box (where a hit may stand) or the
    forged verdict is a miss (a sample that expects a refusal makes a point inside the box one, and a row does not say
    whether it does)."""
    w, h = size
    truth = (min(corners[0], corners[2]) * w, min(corners[1], corners[3]) * h, max(corners[0], corners[2]) * w, max(corners[1], corners[3]) * h)
    verdict, prediction = grounding.judge(f"Answer: [{answer[0]}, {answer[1]}]", "stop", truth, generic(space), (w, h), (w, h))
    assert verdict in (HIT, MISS) and prediction is not None
    task = grounding.Grounding()
    assert task.recheck(stored(verdict, prediction, truth)) is None
    forged = task.recheck(stored(HIT if verdict == MISS else MISS, prediction, truth))
    x, y = prediction["pixel"]
    margin = 0.011 + 0.006  # the check's own margin, and the rounding of the truth box the row keeps
    near = truth[0] - margin <= x <= truth[2] + margin and truth[1] - margin <= y <= truth[3] + margin
    if verdict == MISS and not near:
        assert forged is not None and forged.startswith("verdict hit, but its point (")
    if verdict == HIT:
        assert forged is None


def test_what_a_grounding_row_settles_and_what_it_does_not() -> None:
    task = grounding.Grounding()
    box = (10.0, 10.0, 50.0, 30.0)
    on_edge = {"point": [0.5, 0.1], "pixel": [50.0, 10.0], "raw": [0.5, 0.1], "space": "normalized", "via": "pair"}
    beside = {**on_edge, "pixel": [50.02, 10.0]}
    assert task.recheck(stored(HIT, on_edge, box)) is None  # edges included
    assert task.recheck(stored(HIT, beside, box)) == "verdict hit, but its point (50.02, 10) lies outside its truth box [10, 10, 50, 30], edges included"
    assert task.recheck(stored(HIT, {**on_edge, "pixel": [50.01, 10.0]}, box)) is None  # within the report's rounding of the edge
    assert task.recheck(stored(MISS, on_edge, box)) is None  # a sample that expects a refusal makes it a miss; the row does not say
    assert task.recheck(stored("unparsed", on_edge, box)) == "verdict unparsed, but it names a point (50, 10), which is a hit or a miss"
    cut = stored(HIT, on_edge, box, finish_reason="length")
    assert task.recheck(cut) == "verdict hit, but its reply was cut off at the token limit (finish_reason length), which is truncated whatever it holds"
    assert task.recheck(stored(HIT, None, box)) == "verdict hit, but it has no point and its reply is no refusal"
    assert task.recheck(stored(HIT, None, box, response="The element does not exist on this screen.")) is None  # a refusal, where one is expected
    for verdict in ("unparsed", "refused", "truncated", "error"):  # read from the text by the model's adapter, or nothing judged
        assert task.recheck(stored(verdict, None, box)) is None
    assert task.recheck(stored(HIT, {"pixel": ["a", math.inf]}, box, response="Answer: [0.5, 0.1]")) == "verdict hit, but it has no point and its reply is no refusal"
    fabrication = {"kind": "fabrication", "target": None, "distractor": None}
    confusion = {"kind": "confusion", "target": list(box), "distractor": None}
    halluc = hallucination.Hallucination()
    assert halluc.recheck({**stored(HIT, on_edge, box), "truth": fabrication}) == "verdict hit, but its sample expects a refusal and it names a point (50, 10), a miss"
    inside = {**on_edge, "pixel": [30.0, 20.0]}
    assert halluc.recheck({**stored(MISS, inside, box), "truth": confusion}) == "verdict miss, but its point (30, 20) lies inside its truth box [10, 10, 50, 30], edges included"
    assert halluc.recheck({**stored(MISS, on_edge, box), "truth": confusion}) is None  # on the edge, as far as the rounded numbers tell
    assert halluc.recheck({**stored(HIT, None, box, response="There is no such button."), "truth": fabrication}) is None
    refused = {**stored(HIT, None, box, response="There is no such button."), "truth": confusion}
    assert halluc.recheck(refused) == "verdict hit, but it names no point, and its sample's target is there (only the refusal of an absent one is a hit without a point)"


def test_the_exit_status_is_the_run_in_one_piece_s() -> None:
    """pytest's 1 for an errored case comes before the run's own: a budget reached (13, before all), a part or case
    missing (11), a failed gate (its exit code), as guitest.run.session.exit_status orders them for a run in one piece."""

    def report(verdicts: list[str], complete: bool = True, failures: tuple[str, ...] = (), budget: dict[str, Any] | None = None) -> Any:
        return {"cases": [{"id": str(n), "verdict": v} for n, v in enumerate(verdicts)], "complete": complete, "gate": {"failures": list(failures)}, "run": {"budget": budget}}

    reached = {"reached": "--max-cost=1", "cases_not_asked": 3}
    assert merge_mod.exit_status(report(["hit", "miss"])) == 0
    assert merge_mod.exit_status(report(["hit", "miss"], failures=("overall accuracy 0.5 < 0.6",))) == 10
    assert merge_mod.exit_status(report(["hit", "miss"], failures=("overall accuracy 0.5 < 0.6",)), gate_exit_code=3) == 3
    assert merge_mod.exit_status(report(["hit"], complete=False, failures=("overall accuracy 0.5 < 0.6",))) == 11
    assert merge_mod.exit_status(report(["hit", "error"], complete=False, failures=("overall accuracy 0.5 < 0.6",))) == 1
    assert merge_mod.exit_status(report(["hit", "error"], complete=False, budget=reached)) == 13
    assert merge_mod.exit_status(report(["hit"], budget={"reached": None, "cases_not_asked": 0})) == 0


def test_a_repeated_case_s_verdict_is_its_attempts() -> None:
    case = {"id": "c", "verdict": HIT, "attempts": [{"verdict": HIT}, {"verdict": MISS}]}
    assert merge_mod._attempts_problem(case) == "verdict hit, but its attempts (hit, miss) make it partial"  # type: ignore[arg-type]
    assert merge_mod._attempts_problem({**case, "verdict": "partial"}) is None  # type: ignore[arg-type]
    assert merge_mod._attempts_problem({"id": "c", "verdict": "partial"}) == "verdict partial, which only a case of several attempts has, and it has none"  # type: ignore[arg-type]


def test_a_part_is_checked_against_itself() -> None:
    """Each count, case and record a part keeps that its run derived from its cases, against them: a report as its run
    wrote it has no problem, and each change made after the run is named."""
    from guitest.reporting import builder
    from guitest.tasks import load_task

    ids = [case_id for case_id, _ in CASES]
    part = [i for i in ids if sharding.part_of(f"{KEY}::{i}", 3) == 1]
    cases = [{"id": i, "verdict": HIT if n % 2 else MISS, "tags": {"split": "desktop"}, "prediction": None, "response": "x"} for n, i in enumerate(part)]
    record = {"name": "tiny", "path": KEY, "format": "screenspot", "task": "grounding", "settings": {}, "shape": {"tables": ["split"], "cross": [], "average": "micro", "macro_over": None}}
    selection = {"n_suite": 24, "subset": False, "by": [], "limit": {"n": 12, "seed": 0, "strata": ["split"]}}
    kwargs: dict[str, Any] = {"model": {"spec": "random"}, "run": {"shard": "1/3"}, "limits": {"metric": "accuracy", "accuracy": None, "by": {}}}
    written = builder.suite_report(record, load_task("grounding"), results=cases, selected=part, selection=selection, **kwargs)  # type: ignore[arg-type]
    assert merge_mod.own_problems(written) == []

    def problems(**changed: Any) -> list[str]:
        return merge_mod.own_problems({**json.loads(json.dumps(written)), **changed})

    n = len(part)
    assert problems(n_results=n + 1) == [f"n_results is {n + 1}, but it holds {n} case(s)"]
    assert problems(cases=written["cases"][1:])[:2] == [f"n_results is {n}, but it holds {n - 1} case(s)", f"n_selected is {n}, but it holds {n - 1} case(s) and 0 missing"]
    assert problems(complete=False) == ["complete is false, but 0 case(s) are missing"]
    misses = written["overall"]["miss"]  # the first case is one of them; made an error, the counts say otherwise
    assert problems(cases=[{**written["cases"][0], "verdict": "error"}, *written["cases"][1:]]) == [
        f"overall.miss is {misses}, but its cases count {misses - 1}",
        "overall.error is 0, but its cases count 1",
    ]
    stray = next(i for i in ids if sharding.part_of(f"{KEY}::{i}", 3) == 2)
    assert problems(missing=[stray], n_selected=n + 1, complete=False) == [f"case {stray} is in part 2/3 of the run, not in this part 1/3"]
    assert problems(selection={**selection, "subset": False}) == [f"selection.subset is false for {n} selected case(s) of the suite's 24"]
    assert problems(selection={**selection, "subset": True, "limit": {**selection["limit"], "n": n - 1}}) == [f"n_selected is {n}, more than the {n - 1} cases of its --limit"]
