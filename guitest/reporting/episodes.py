"""Metrics of live tasks over episodes: success rates with 95% intervals, steps, EQA, success by budget.

Every function takes episode results as plain dicts: ``id`` (the case id; the fixed order of EQA),
``success`` (bool), ``score`` (the environment's own score: MiniWoB++'s raw reward, an OSWorld
metric's value in 0..1; None when it gave none), ``steps`` (policy decisions taken, a failed
episode's included), ``error`` (truthy when the episode errored), ``unsure`` (truthy when no check of
guitest's decided it: an OSWorld/WAA evaluator guitest lacks, left to the judge), ``reset`` (how the
machine was brought to the task's start: ``"none"`` when it could not be, an unknown state), and the
tags named by ``by`` (``task``, ``family``). Errored and unsure episodes are left out of every rate,
as errors are left out of accuracy, and counted apart. With repeats, pass every attempt as one
episode (ids ``case#attempt`` keep the order fixed).

Two figures per group: the success rate (successes over decided episodes) and the mean score (the
mean of the decided episodes' scores, an episode without a score counting 0). A live suite's
headline is the one its benchmark's leaderboard uses (``settings.headline``: MiniWoB++ reports the
success rate, OSWorld's ``show_result.py`` the mean of the per-task ``result.txt`` scores).

EQA (Efficiency-Quality Area, MMBench-GUI, arXiv:2507.19478, section 3.5): over the N episodes in a
fixed, documented order (here: sorted by id), T_k = the steps taken by the first k episodes,
S_k = the successes among them, u_k = T_k / (N * t_max); R(u) = max over k with u_k <= u of S_k / N
(k = 0 included: R(0) >= 0); EQA = the mean of R at the 101 points u = 0, 0.01, ..., 1. Computed in
exact fractions, rounded once at the end.
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction
from typing import Any, Iterable, Sequence

from .tallies import wilson

EQA_POINTS = 101


HEADLINES = ("success_rate", "mean_score")


def scored(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The episodes that count (neither errored nor unsure), sorted by id: the order every metric here uses."""
    return sorted((r for r in results if not r.get("error") and not r.get("unsure")), key=lambda r: str(r["id"]))


def score_of(result: dict[str, Any]) -> float:
    """An episode's score for the mean: its finite ``score``, else 0 (an episode the environment gave no score)."""
    value = result.get("score")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def rate(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``n``, ``successes``, ``success_rate`` with its 95% Wilson interval ``ci95``, and ``mean_score`` over
    ``results`` (already scored)."""
    n = len(results)
    hits = sum(1 for r in results if r["success"])
    mean = round(math.fsum(score_of(r) for r in results) / n, 6) if n else None
    return {"n": n, "successes": hits, "success_rate": round(hits / n, 6) if n else None, "ci95": wilson(hits, n), "mean_score": mean}


def success_rates(results: Iterable[dict[str, Any]], by: Sequence[str] = ("task", "family")) -> dict[str, Any]:
    """The success rate overall and per value of each tag in ``by`` (``{"overall": ..., "by": {tag: {value: ...}}}``)."""
    rows = scored(results)
    out: dict[str, Any] = {"overall": rate(rows), "by": {}}
    for tag in by:
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            value = r.get(tag, r.get("tags", {}).get(tag))
            if value is not None:
                groups.setdefault(str(value), []).append(r)
        out["by"][tag] = {value: rate(groups[value]) for value in sorted(groups)}
    return out


def steps_of_successes(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Steps taken by the successful episodes: ``n``, ``mean``, ``std`` (sample; None under 2), ``median``, ``min``, ``max``."""
    steps = [int(r["steps"]) for r in scored(results) if r["success"]]
    if not steps:
        return {"n": 0, "mean": None, "std": None, "median": None, "min": None, "max": None}
    return {
        "n": len(steps),
        "mean": round(math.fsum(steps) / len(steps), 6),
        "std": round(statistics.stdev(steps), 6) if len(steps) > 1 else None,
        "median": statistics.median(steps),
        "min": min(steps),
        "max": max(steps),
    }


def eqa_curve(results: Iterable[dict[str, Any]], t_max: int) -> list[Fraction]:
    """R(u) at the 101 points u = i / 100 (see the module docstring), exact; all zero for no episodes."""
    if t_max < 1:
        raise ValueError(f"t_max must be at least 1, got {t_max}")
    rows = scored(results)
    n = len(rows)
    if n == 0:
        return [Fraction(0)] * EQA_POINTS
    budget = n * t_max
    cumulative: list[tuple[Fraction, Fraction]] = [(Fraction(0), Fraction(0))]  # (u_k, S_k / N), k = 0..N
    steps = successes = 0
    for r in rows:
        steps += int(r["steps"])
        successes += 1 if r["success"] else 0
        cumulative.append((Fraction(steps, budget), Fraction(successes, n)))
    curve = []
    for i in range(EQA_POINTS):
        u = Fraction(i, EQA_POINTS - 1)
        curve.append(max(s for uk, s in cumulative if uk <= u))
    return curve


def eqa(results: Iterable[dict[str, Any]], t_max: int) -> float:
    """EQA, MMBench-GUI's Efficiency-Quality Area (see the module docstring), in 0..1."""
    curve = eqa_curve(results, t_max)
    return round(float(sum(curve, Fraction(0)) / len(curve)), 6)


def success_by_budget(results: Iterable[dict[str, Any]], max_steps: int) -> dict[int, float | None]:
    """The success rate had the budget been 1, 2, ..., ``max_steps`` steps: a success counts at budget b when it
    took at most b steps (the episode is the same up to b steps: a deterministic policy and environment). Budgets
    past the longest episode change nothing, so they are left out but for ``max_steps`` itself (a budget of
    1,000,000 steps gives as many entries as the episodes took steps, not a million)."""
    rows = scored(results)
    n = len(rows)
    longest = max((int(r["steps"]) for r in rows), default=0)
    budgets = sorted({*range(1, min(max_steps, max(longest, 1)) + 1), max_steps})
    return {b: (round(sum(1 for r in rows if r["success"] and int(r["steps"]) <= b) / n, 6) if n else None) for b in budgets}


def summarize(results: Iterable[dict[str, Any]], max_steps: int, by: Sequence[str] = ("task", "family"), headline: str = "success_rate") -> dict[str, Any]:
    """All live metrics as plain builtins: success rates and mean scores (overall, per tag), steps of successes,
    EQA with its order and budget, success by budget, the errored and unsure episodes left out (counted), the
    episodes that ran on a machine in an unknown state, and the headline (``headline``: which figure)."""
    if headline not in HEADLINES:
        raise ValueError(f"headline must be one of {', '.join(HEADLINES)}, got {headline!r}")
    rows = list(results)
    success = success_rates(rows, by)
    overall = success["overall"]
    return {
        "headline": {"figure": headline, "value": overall[headline], "success_rate": overall["success_rate"], "ci95": overall["ci95"], "mean_score": overall["mean_score"], "n": overall["n"]},
        "success": success,
        "steps_of_successes": steps_of_successes(rows),
        "eqa": eqa(rows, max_steps),
        "eqa_order": "episodes sorted by case id; errored and unsure episodes left out; a failed episode counts the steps it took",
        "eqa_t_max": max_steps,
        "success_by_budget": {str(b): v for b, v in success_by_budget(rows, max_steps).items()},
        "errors": sum(1 for r in rows if r.get("error")),
        "unsure": sum(1 for r in rows if r.get("unsure") and not r.get("error")),
        "unknown_state": sum(1 for r in scored(rows) if r.get("reset") == "none"),  # as the gate counts them (guitest.reporting.gate.unknown_state)
    }
