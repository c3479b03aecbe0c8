"""--repeats: avg@k, pass@k, spread and flakiness agree with the ledger of the endpoint's answers."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict

import pytest

import fakeserver
from builders import ROWS, center_norm, write_suite
from guitest.reporting.tallies import pass_at, repeat_stats

K = 5
# Probability that the endpoint answers each instruction correctly.
P_CORRECT = {"open the file menu": 0.9, "close the dialog": 0.5, "open settings": 0.3, "save the document": 0.7, "go back": 0.0, "sign in": 1.0}


def script() -> dict:
    out = {}
    for split, _, _, _ in ROWS:
        for row, (*_, instruction, _, _) in enumerate(b for s, _, _, bs in ROWS if s == split for b in bs):
            x, y = center_norm(split, row)
            action = {"p_correct": P_CORRECT[instruction], "point": [x, y], "wrong_point": [0.999, 0.001], "space": "normalized", "render": "Answer: [{x}, {y}]", "decimals": 4}
            out[instruction] = [action] * K
    return out


def ledger(requests: list[dict]) -> dict[str, list[bool]]:
    """Per instruction, whether each answer (in request order: attempt order) was right."""
    out: dict[str, list[bool]] = defaultdict(list)
    for r in requests:
        if r["path"].endswith("/chat/completions"):
            out[r["key"]].append(r["fault"]["correct"])
    return out


def expected(answers: dict[str, list[bool]]) -> dict:
    cases = list(answers.values())
    n = len(cases)
    runs = [sum(c[j] for c in cases) / n for j in range(K)]
    return {
        "avg": sum(sum(c) / len(c) for c in cases) / n,
        **{f"pass@{m}": sum(1 - math.comb(K - sum(c), m) / math.comb(K, m) if K - sum(c) >= m else 1 for c in cases) / n for m in range(1, K + 1)},
        "runs": runs,
        "std": statistics.stdev(runs),
        "flaky": sum(0 < sum(c) < K for c in cases) / n,
    }


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_avg_pass_spread_and_flakiness_match_the_ledger(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path, script=script()) as server:
        result = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", f"--repeats={K}", "-v", "-p", "no:cacheprovider", *mode)
        answers = ledger(server.requests())
    assert result.ret == 0, result.stdout.str()
    assert sorted(answers) == sorted(P_CORRECT) and all(len(a) == K for a in answers.values())
    want = expected(answers)
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    overall = report["overall"]
    rep = overall["repeats"]
    assert overall["n"] == K * len(P_CORRECT) and rep["k"] == K and rep["cases"] == len(P_CORRECT)
    assert overall["accuracy"] == pytest.approx(want["avg"], abs=1e-6)
    for m in range(1, K + 1):
        assert rep[f"pass@{m}"] == pytest.approx(want[f"pass@{m}"], abs=1e-6)
    assert rep["run_accuracies"] == pytest.approx(want["runs"], abs=1e-6)
    assert rep["std_across_runs"] == pytest.approx(want["std"], abs=1e-6)
    assert rep["flaky"] == pytest.approx(want["flaky"], abs=1e-6)
    # the verbose line shows each case's attempts, and the case verdict follows them
    hits = {i: sum(a) for i, a in answers.items()}
    cases = {c["instruction"]: c for c in report["cases"]}
    for instruction, h in hits.items():
        verdict = "hit" if h == K else ("partial" if h else "miss")
        assert cases[instruction]["verdict"] == verdict
        assert [a["verdict"] == "hit" for a in cases[instruction]["attempts"]] == answers[instruction]
    lines = result.stdout.lines
    assert any("::mobile-ios-icon-0" in line and f"MISSED 0/{K}" in line for line in lines)
    assert any("::mobile-android-text-1" in line and f"PASSED {K}/{K}" in line for line in lines)


def test_pass_strategy_stops_at_the_first_hit(pytester: pytest.Pytester, tmp_path) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    with fakeserver.serve(tmp_path, script=script()) as server:
        result = pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url={server.base_url}", f"--repeats={K}", "--attempt-strategy=pass", "-p", "no:cacheprovider")
        answers = ledger(server.requests())
    assert result.ret == 0, result.stdout.str()
    for got in answers.values():  # no request after the first right answer
        assert got.count(True) <= 1 and (got[-1] or len(got) == K)
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    rep = report["overall"]["repeats"]
    assert rep[f"pass@{K}"] == pytest.approx(sum(any(a) for a in answers.values()) / len(answers))
    assert rep["std_across_runs"] is None and rep["pass_estimator"].startswith("first hit")


def test_gate_on_pass_at_k(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny", extra="gate:\n  metric: pass@k\n  accuracy: 0.99\n")
    result = pytester.runpytest_subprocess("suites/tiny", "--model=random", "--repeats=3", "-p", "no:cacheprovider")
    assert result.ret == 10
    result.stdout.fnmatch_lines(["*GATE FAILED: overall pass@k * < 0.9900*"])


def test_repeated_runs_aggregate_identically_serial_and_xdist(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    reports = []
    for extra in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess("suites/tiny", "--model=random", "--seed=7", "--repeats=4", "-p", "no:cacheprovider", *extra)
        assert result.ret == 0
        report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
        report.pop("run")
        reports.append(json.dumps(report, sort_keys=True))
    assert reports[0] == reports[1]


def test_pass_at_k_estimator() -> None:
    # 1 - C(n-c, k) / C(n, k), worked by hand
    assert pass_at(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert pass_at(5, 0, 3) == 0 and pass_at(5, 3, 3) == 1 and pass_at(4, 1, 1) == pytest.approx(0.25)


def test_errored_attempts_leave_their_case_not_the_run() -> None:
    stats = repeat_stats([["hit", "error", "miss"], ["hit", "hit", "hit"]])
    # case 1 stopped at 2 scored attempts: attempts are uneven, so pass@k falls back to the first-hit estimator
    assert stats["avg"] == pytest.approx((0.5 + 1) / 2)
    assert stats["cases"] == 2 and stats["flaky"] == 0.5


def test_flip_rate_is_the_chance_two_runs_of_a_case_disagree() -> None:
    # by hand: [hit, miss] disagree in its one pair (1); [hit, hit] never (0); [miss, miss, hit] in 2 of its 3 pairs (2/3)
    stats = repeat_stats([["hit", "miss"], ["hit", "hit"], ["miss", "miss", "hit"]])
    assert stats["flip_rate"] == round((1 + 0 + 2 / 3) / 3, 6) == 0.555556
    assert repeat_stats([["hit", "hit"], ["miss", "miss"]])["flip_rate"] == 0.0
    assert repeat_stats([["hit"], ["miss"]])["flip_rate"] is None  # one run each: nothing to flip


def test_the_noise_test_of_guitest_compare_reads_the_reports_flip_rate() -> None:
    """``guitest compare``'s noise test and the report's ``repeats.flip_rate`` are one estimate: each case's
    h (K - h) / (K (K - 1)) is half the chance two of its attempts disagree, and one run's standard deviation is
    sqrt(f / (2N)) (docs/live_reports.md, "The noise floor")."""
    import random

    import numpy as np

    from guitest.reporting.significance import fixed_set_test

    rng = random.Random(3)
    cases = [[rng.choice(["hit", "miss"]) if i % 3 else "hit" for _ in range(4)] for i in range(30)]
    stats = repeat_stats(cases)
    hits = np.array([c.count("hit") for c in cases])
    test = fixed_set_test(hits, 4, hits, 4, 0.05)
    assert test is not None and 0 < stats["flip_rate"] < 1
    assert round(float(test["old_flip_rate"]), 6) == stats["flip_rate"]
    assert float(test["old_sigma"]) == pytest.approx(math.sqrt(stats["flip_rate"] / (2 * 30)), rel=1e-5)
    assert float(test["se"]) == pytest.approx(math.sqrt(2 * stats["flip_rate"] / (2 * 30) / 4), rel=1e-5)  # two runs' avg@4
