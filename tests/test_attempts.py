"""A case's attempts: the typed record, the repeats loop and the one place they become the case's result."""

from __future__ import annotations

import time

from guitest.run.attempts import Attempt, case_outcome, repeat
from guitest.cache import Stored

TAGS = {"platform": "web"}
COMMON = {"notes": [], "instruction": "click ok"}


def stored(created: float, run: str) -> Stored:
    return Stored(text="Answer: [0.5, 0.5]", finish_reason="stop", created=created, run=run)


def test_one_attempt_becomes_the_case_and_what_only_the_run_needs_stays_out() -> None:
    down = {"url": "http://a/v1", "state": "unreachable", "reason": "refused"}
    hit = Attempt("hit", {"point": [1, 2]}, "Answer: [1, 2]", shown={"finish_reason": "stop", "first_response": "?"}, stored=(stored(1e9, "r1"),), cached=True)
    result = case_outcome("c1", TAGS, [hit], 1, dict(COMMON))
    assert list(result) == ["id", "verdict", "tags", "prediction", "response", "finish_reason", "first_response", "notes", "instruction", "cached", "cached_recorded", "cached_runs"]
    assert result["cached"] is True and result["cached_runs"] == ["r1"] and "cached_attempts" not in result
    failed = case_outcome("c2", TAGS, [Attempt.failed("not asked", unreachable=down)], 1, dict(COMMON))
    assert failed == {"id": "c2", "verdict": "error", "tags": TAGS, "prediction": None, "response": None, "error": "not asked", **COMMON, "unreachable": down}


def test_repeats_keep_every_attempt_as_its_row_and_show_the_representative_one() -> None:
    a = [
        Attempt("miss", {"p": 0}, "r0", shown={"finish_reason": "stop"}),
        Attempt("hit", {"p": 1}, "r1", shown={"finish_reason": "stop"}, stored=(stored(2e9, "r2"), stored(1e9, "r1")), cached=True),
        Attempt("miss", {"p": 2}, "r2", "judge raised", shown={"finish_reason": "length"}),
    ]
    result = case_outcome("c", TAGS, a, 3, dict(COMMON))
    assert result["verdict"] == "partial" and result["prediction"] == {"p": 1} and result["response"] == "r1"  # the first hit
    assert result["attempts"][2] == {"verdict": "miss", "prediction": {"p": 2}, "response": "r2", "finish_reason": "length", "error": "judge raised"}
    assert [list(row) for row in result["attempts"][:2]] == [["verdict", "prediction", "response", "finish_reason"]] * 2
    assert result["cached_attempts"] == 1 and result["cached_runs"] == ["r1", "r2"] and result["cached_recorded"] == time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(1e9))  # the oldest
    errored = case_outcome("c", TAGS, [a[1], Attempt.failed("HTTP 500")], 3, dict(COMMON))
    assert errored["verdict"] == "error" and errored["error"] == "HTTP 500"  # so --lf runs it again


def test_the_pass_strategy_stops_at_the_first_hit() -> None:
    verdicts = iter(["miss", "hit", "hit"])
    asked: list[int] = []

    def attempt(index: int) -> Attempt:
        asked.append(index)
        return Attempt(next(verdicts))

    assert [x.verdict for x in repeat(attempt, 3, "pass")] == ["miss", "hit"] and asked == [0, 1]
    assert len(repeat(lambda i: Attempt("hit"), 3, "avg")) == 3


def test_a_combined_row_round_trips_with_its_private_fields() -> None:
    row = {"verdict": "miss", "prediction": {"variants": []}, "response": "B", "finish_reason": "stop", "error": None}
    attempt = Attempt.from_row(row, cached=True, stored=(stored(1e9, "r"),))
    assert attempt.row() == {"verdict": "miss", "prediction": {"variants": []}, "response": "B", "finish_reason": "stop"}
    assert attempt.cached and attempt.stored[0].run == "r"
