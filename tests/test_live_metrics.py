"""Live metrics: EQA checked against hand-worked examples and an independent computation, success rates, budgets."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.reporting import episodes as metrics
from guitest.reporting.tallies import wilson


def ep(id_: str, success: bool, steps: int, **extra: object) -> dict[str, object]:
    return {"id": id_, "success": success, "steps": steps, **extra}


def test_eqa_hand_worked_one_success_then_a_failure() -> None:
    # a: success in 2 steps, b: failure after 10; N = 2, t_max = 10.
    # u_1 = 2/20 = 0.10 with S_1/N = 1/2; u_2 = 12/20 = 0.60 with S_2/N = 1/2.
    # R = 0 at u = 0.00..0.09 (10 points), 1/2 at u = 0.10..1.00 (91 points): EQA = 45.5 / 101.
    results = [ep("a", True, 2), ep("b", False, 10)]
    assert metrics.eqa(results, 10) == round(45.5 / 101, 6) == 0.450495


def test_eqa_depends_on_the_order_and_the_order_is_by_id() -> None:
    # The failure first: u_1 = 10/20 with 0 successes, u_2 = 12/20 with 1/2: R = 1/2 from u = 0.60 (41 points).
    results = [ep("b", True, 2), ep("a", False, 10)]
    assert metrics.eqa(results, 10) == round(20.5 / 101, 6)
    assert metrics.eqa(list(reversed(results)), 10) == metrics.eqa(results, 10)  # input order does not matter, ids do


def test_eqa_hand_worked_exact_boundaries() -> None:
    # Four one-step successes, t_max = 15: u_k = k/60. R steps to 1/4 at u >= 1/60, 1/2 at 2/60, 3/4 at 3/60
    # (u = 0.05 exactly: it counts), 1 at 4/60. Points: 0.02, 0.03 -> 1/4; 0.04 -> 1/2; 0.05, 0.06 -> 3/4;
    # 0.07..1.00 (94 points) -> 1. EQA = (0.5 + 0.5 + 1.5 + 94) / 101.
    results = [ep(f"t{i}", True, 1) for i in range(4)]
    curve = metrics.eqa_curve(results, 15)
    assert curve[5] == Fraction(3, 4) and curve[4] == Fraction(1, 2) and curve[6] == Fraction(3, 4) and curve[7] == 1
    assert metrics.eqa(results, 15) == round(96.5 / 101, 6)


def test_eqa_extremes_and_errors() -> None:
    assert metrics.eqa([ep("a", False, 15), ep("b", False, 3)], 15) == 0.0
    assert metrics.eqa([], 15) == 0.0
    # every episode solved in 0 steps would be u = 0 throughout: R = 1 everywhere
    assert metrics.eqa([ep("a", True, 0)], 15) == 1.0
    # errored episodes are left out entirely (N counts the scored ones)
    with_error = [ep("a", True, 2), ep("b", False, 10), ep("c", False, 1, error="endpoint down")]
    assert metrics.eqa(with_error, 10) == metrics.eqa(with_error[:2], 10)
    with pytest.raises(ValueError):
        metrics.eqa_curve([ep("a", True, 1)], 0)


def independent_eqa(results: list[dict[str, object]], t_max: int) -> float:
    """EQA recomputed another way: for each u, walk the episodes in id order while the cumulative budget share stays
    within u, in integers (u = i/100: T_k * 100 <= i * N * t_max)."""
    rows = sorted((r for r in results if not r.get("error")), key=lambda r: str(r["id"]))
    n = len(rows)
    if n == 0:
        return 0.0
    total = 0
    for i in range(101):
        used = solved = best = 0
        for r in rows:
            used += int(r["steps"])  # type: ignore[call-overload]
            solved += 1 if r["success"] else 0
            if used * 100 <= i * n * t_max:
                best = solved
        total += best
    return round(total / (n * 101), 6)


@settings(max_examples=examples(200), deadline=None)
@given(
    rows=st.lists(st.tuples(st.booleans(), st.integers(0, 15), st.booleans()), min_size=0, max_size=25),
    t_max=st.integers(1, 15),
)
def test_eqa_equals_an_independent_computation(rows: list[tuple[bool, int, bool]], t_max: int) -> None:
    results = [ep(f"case-{i:03d}", success, min(steps, t_max), **({"error": "x"} if errored else {})) for i, (success, steps, errored) in enumerate(rows)]
    assert metrics.eqa(results, t_max) == independent_eqa(results, t_max)


def test_success_by_budget() -> None:
    results = [ep("a", True, 2), ep("b", True, 5), ep("c", False, 15), ep("d", True, 1, error="x")]
    by_budget = metrics.success_by_budget(results, 6)
    assert by_budget == {1: 0.0, 2: round(1 / 3, 6), 3: round(1 / 3, 6), 4: round(1 / 3, 6), 5: round(2 / 3, 6), 6: round(2 / 3, 6)}
    assert metrics.success_by_budget([], 2) == {1: None, 2: None}


def test_success_rates_overall_per_task_and_family() -> None:
    results = [
        ep("click-button-seed0", True, 1, task="click-button", family="click"),
        ep("click-button-seed1", False, 15, task="click-button", family="click"),
        ep("click-link-seed0", True, 1, task="click-link", family="click"),
        ep("enter-text-seed0", True, 3, tags={"task": "enter-text", "family": "enter"}),
        ep("enter-text-seed1", False, 2, task="enter-text", family="enter", error="browser crashed"),
    ]
    table = metrics.success_rates(results)
    assert table["overall"] == {"n": 4, "successes": 3, "success_rate": 0.75, "ci95": wilson(3, 4), "mean_score": 0.0}
    assert table["by"]["task"]["click-button"]["success_rate"] == 0.5
    assert table["by"]["task"]["enter-text"]["n"] == 1  # the errored one is left out; tags are read too
    assert table["by"]["family"]["click"] == {"n": 3, "successes": 2, "success_rate": round(2 / 3, 6), "ci95": wilson(2, 3), "mean_score": 0.0}


def test_steps_of_successes() -> None:
    stats = metrics.steps_of_successes([ep("a", True, 2), ep("b", True, 4), ep("c", True, 6), ep("d", False, 15)])
    assert stats == {"n": 3, "mean": 4.0, "std": 2.0, "median": 4, "min": 2, "max": 6}
    assert metrics.steps_of_successes([ep("a", True, 3)])["std"] is None
    assert metrics.steps_of_successes([])["mean"] is None


def test_summary_names_the_order_and_counts_errors() -> None:
    summary = metrics.summarize([ep("a", True, 2, task="t", family="f"), ep("b", False, 10, task="t", family="f", error="x")], 10)
    assert summary["errors"] == 1 and summary["eqa_t_max"] == 10 and "sorted by case id" in summary["eqa_order"]
    assert summary["eqa"] == metrics.eqa([ep("a", True, 2)], 10)
    assert summary["success_by_budget"]["2"] == 1.0 and summary["success"]["overall"]["n"] == 1


def test_unsure_episodes_are_left_out_and_counted_apart_like_errors() -> None:
    # a desktop task whose evaluator guitest lacks is unsure: it is neither a success nor a failure
    results = [ep("a", True, 2, score=1.0), ep("b", False, 3, unsure=True), ep("c", False, 4, error="machine down")]
    summary = metrics.summarize(results, 10)
    assert summary["success"]["overall"]["n"] == 1 and summary["success"]["overall"]["success_rate"] == 1.0
    assert summary["unsure"] == 1 and summary["errors"] == 1
    assert summary["eqa"] == metrics.eqa([ep("a", True, 2)], 10)  # the unsure episode adds no steps either
    assert summary["success_by_budget"]["2"] == 1.0


def test_the_mean_score_averages_partial_scores_beside_the_success_rate() -> None:
    # OSWorld's show_result.py averages the per-task result.txt values: 1, 0.5 (a fuzzy match) and 0 give 0.5,
    # where the success rate counts only the 1; an episode the environment gave no score counts 0
    results = [ep("a", True, 3, score=1.0, task="t"), ep("b", False, 5, score=0.5, task="t"), ep("c", False, 5, score=None, task="u"), ep("d", False, 1, score=0.9, unsure=True, task="u")]
    summary = metrics.summarize(results, 10, headline="mean_score")
    assert summary["success"]["overall"]["mean_score"] == 0.5 and summary["success"]["overall"]["success_rate"] == round(1 / 3, 6)
    assert summary["success"]["by"]["task"]["t"]["mean_score"] == 0.75 and summary["success"]["by"]["task"]["u"]["mean_score"] == 0.0
    assert summary["headline"]["figure"] == "mean_score" and summary["headline"]["value"] == 0.5
    assert metrics.summarize(results, 10)["headline"]["value"] == round(1 / 3, 6)
    with pytest.raises(ValueError, match="success_rate, mean_score"):
        metrics.summarize(results, 10, headline="accuracy")


def test_episodes_on_a_machine_in_an_unknown_state_are_counted() -> None:
    results = [ep("a", True, 2, reset="none"), ep("b", True, 2, reset="reset"), ep("c", False, 2, reset="none", error="x"), ep("d", False, 2, reset="none", unsure=True)]
    assert metrics.summarize(results, 5)["unknown_state"] == 1  # the errored and the unsure one are not scored, so not counted
