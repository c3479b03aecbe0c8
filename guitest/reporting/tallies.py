"""Counting verdicts: per-category tables with accuracy and a 95% Wilson interval.

Integer counts summed over results sorted by case id, so any order of arrival
(serial or ``-n 8``) gives the same numbers, byte for byte.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from ..verdict import ERROR, HIT, MISS, REFUSED, TRUNCATED, UNPARSED, UNSURE, VERDICTS, CaseResult
from .document import Counts, Headline, Tallies

Z95 = 1.959963984540054
#: the verdicts left out of accuracy by default: errors (a task may leave out more: live tasks, unsure episodes)
LEFT_OUT = frozenset({ERROR})


def wilson(hits: float, n: int, z: float = Z95) -> list[float]:
    """The Wilson score interval for ``hits`` of ``n`` (``[0, 0]`` when ``n`` is 0)."""
    if n == 0:
        return [0.0, 0.0]
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)]


def counts(results: Iterable[Mapping[str, Any]], left_out: frozenset[str] = LEFT_OUT) -> Counts:
    """Verdict counts, accuracy over the scored cases (verdicts in ``left_out`` excluded: errors, and for live
    tasks episodes no check decided) and its 95% interval; ``mean_score`` too when the results carry scores.

    With repeats (results carrying ``attempts``) the verdicts of attempts are counted,
    ``accuracy`` is avg@k (the mean over cases of each case's share of hits) with an
    interval over cases, and ``repeats`` holds pass@k, the spread across runs and flakiness.
    """
    table = {v: 0 for v in VERDICTS}
    per_case: list[list[str]] = []
    scores: list[Any] = []
    for result in results:
        runs = result["attempts"] if result.get("attempts") else [result]
        for run in runs:
            table[run["verdict"]] += 1
            if run["verdict"] not in left_out:
                scores.append(run.get("score"))
        per_case.append([run["verdict"] for run in runs])
    if not any(len(v) > 1 for v in per_case):
        out = _counts_of(Counter(table), left_out)
    else:
        stats = repeat_stats(per_case, left_out)
        out = _row(table, stats.pop("avg"), stats.pop("ci95"))
        out["repeats"] = stats  # type: ignore[typeddict-item]  # repeat_stats's record less avg and ci95: a Repeats
    if any(_is_score(v) for v in scores):
        out["mean_score"] = mean_score(scores)
    return out


def exact_accuracy(results: Iterable[Mapping[str, Any]], left_out: frozenset[str] = LEFT_OUT) -> float | None:
    """The accuracy :func:`counts` gives, not rounded: hits over the scored cases as the float nearest to that fraction
    (``hits / scored`` as Python divides, bit for bit; with repeats, avg@k), None when no case was scored."""
    cases: list[tuple[int, int]] = []  # per case with a scored attempt: its hits, its scored attempts
    repeated = False
    for result in results:
        runs = result["attempts"] if result.get("attempts") else [result]
        repeated |= len(runs) > 1
        verdicts = [run["verdict"] for run in runs if run["verdict"] not in left_out]
        if verdicts:
            cases.append((verdicts.count(HIT), len(verdicts)))
    if not cases:
        return None
    if not repeated:
        return sum(hits for hits, _ in cases) / len(cases)
    return float(sum((Fraction(hits, n) for hits, n in cases), Fraction(0)) / len(cases))


def _is_score(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def mean_score(scores: Sequence[Any]) -> float | None:
    """The mean of scores (a missing or non-finite one counts 0: an episode the environment gave no score), None for none."""
    if not scores:
        return None
    return round(math.fsum(float(v) if _is_score(v) else 0.0 for v in scores) / len(scores), 6)


def pass_at(n: int, c: int, k: int) -> Fraction:
    """The unbiased pass@k estimator of Chen et al. (2021) for ``c`` hits in ``n`` attempts: 1 - C(n-c, k) / C(n, k)."""
    if n - c < k:
        return Fraction(1)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def repeat_stats(per_case: Sequence[Sequence[str]], left_out: frozenset[str] = LEFT_OUT) -> dict[str, Any]:
    """avg@k with a 95% interval over cases, pass@1..k, the standard deviation of accuracy across the k runs, flakiness.

    ``per_case`` lists each case's attempt verdicts in attempt order; errored attempts
    (and any verdict in ``left_out``) are left out of their case. Cases stopped at their first hit (``--attempt-strategy=pass``)
    have fewer attempts: pass@k is then the share of cases with a hit, and no spread is given.
    """
    cases = [[v for v in verdicts if v not in left_out] for verdicts in per_case]
    cases = [c for c in cases if c]
    k = max((len(c) for c in cases), default=0)
    complete = all(len(c) == k for c in cases)
    scores = [Fraction(sum(v == HIT for v in c), len(c)) for c in cases]
    n = len(scores)
    avg = sum(scores, Fraction(0)) / n if n else None
    # The attempts of one case are not independent: the interval counts cases, not attempts
    # (a Wilson interval at the avg@k rate with n = cases; it never shrinks with more repeats).
    ci = wilson(float(avg) * n, n) if avg is not None else [0.0, 0.0]
    if complete and k:
        passes: dict[str, float | None] = {f"pass@{m}": round(float(sum((pass_at(k, sum(v == HIT for v in c), m) for c in cases), Fraction(0)) / n), 6) for m in range(1, k + 1)}
        runs = [Fraction(sum(c[j] == HIT for c in cases), n) for j in range(k)]
        mean_run = sum(runs, Fraction(0)) / k
        std = math.sqrt(sum(((r - mean_run) ** 2 for r in runs), Fraction(0)) / (k - 1)) if k >= 2 else None
        estimator = "unbiased (Chen et al. 2021)"
    else:
        passes = {f"pass@{k}": round(sum(HIT in c for c in cases) / n, 6) if n else None}
        runs, std, estimator = [], None, "first hit (attempts stopped early)"
    flaky = sum(len(set(c)) > 1 for c in cases)
    # how often two runs of one case disagree: per case, the share of its pairs of attempts with one hit and one not
    # (an unbiased estimate of the chance that two reruns flip it), averaged over the cases with two attempts or more
    pairs = [Fraction(2 * h * (len(c) - h), len(c) * (len(c) - 1)) for c in cases if len(c) > 1 for h in [sum(v == HIT for v in c)]]
    return {
        "avg": round(float(avg), 6) if avg is not None else None,
        "ci95": ci,
        "k": k,
        "cases": n,
        **passes,
        "pass_estimator": estimator,
        "run_accuracies": [round(float(r), 6) for r in runs],
        "std_across_runs": round(std, 6) if std is not None else None,
        "flaky": round(flaky / n, 6) if n else None,
        "flip_rate": round(float(sum(pairs, Fraction(0)) / len(pairs)), 6) if pairs else None,
    }


def group_key(result: Mapping[str, Any], tags: Sequence[str]) -> str | None:
    """The value of one tag, or of a combination joined by '/', for a result; None when a tag is absent.

    In a combination, '%' and '/' inside a value are escaped (``%25``, ``%2F``) so that
    ``('a/b', 'c')`` and ``('a', 'b/c')`` stay two categories.
    """
    values = [result["tags"].get(t) for t in tags]
    return _combo_name(values[0] if len(values) == 1 else tuple(values))


def aggregate(results: list[CaseResult], tags: Sequence[str], cross: Sequence[Sequence[str]] = (), left_out: frozenset[str] = LEFT_OUT) -> Tallies:
    """Overall counts, a breakdown per tag and per tag combination, and macro averages (verdicts in ``left_out``
    excluded from accuracy; a ``mean_score`` per row when the results carry scores)."""
    ordered = sorted(results, key=lambda r: r["id"])
    repeated = any(r.get("attempts") for r in ordered)
    scored = any("score" in r for r in ordered)
    tag_maps = [r["tags"] for r in ordered]
    verdicts = [r["verdict"] for r in ordered]
    values: dict[str, list[Any]] = {}  # tag -> its value per result (in order), computed once for all combinations
    breakdown: dict[str, dict[str, Counts]] = {}
    macro: dict[str, float | None] = {}
    for combo in [(t,) for t in tags] + [tuple(c) for c in cross]:
        name = "/".join(combo)
        columns = [values.setdefault(t, [m.get(t) for m in tag_maps]) for t in combo]
        keys = columns[0] if len(combo) == 1 else list(zip(*columns, strict=True))
        names = {k: _combo_name(k) for k in set(keys)}  # a few distinct keys: name each once
        if repeated or scored:
            groups: dict[str, list[CaseResult]] = {}
            for key, result in zip(keys, ordered, strict=True):
                if (label := names[key]) is not None:
                    groups.setdefault(label, []).append(result)
            breakdown[name] = {value: counts(groups[value], left_out) for value in sorted(groups)}
        else:
            tallies: dict[str, Counter[str]] = {}
            for (key, verdict), n in Counter(zip(keys, verdicts, strict=True)).items():
                if (label := names[key]) is not None:
                    tallies.setdefault(label, Counter())[verdict] += n
            breakdown[name] = {value: _counts_of(tallies[value], left_out) for value in sorted(tallies)}
        accs = [row["accuracy"] for row in breakdown[name].values() if row["accuracy"] is not None]
        macro[name] = round(math.fsum(accs) / len(accs), 6) if accs else None
    notes = Counter(note for r in ordered for note in r.get("notes") or ())
    overall = counts(ordered, left_out) if repeated or scored else _counts_of(Counter(verdicts), left_out)
    return {"overall": overall, "breakdown": breakdown, "macro": macro, "notes": dict(sorted(notes.items()))}


def _combo_name(key: Any) -> str | None:
    """:func:`group_key`'s name for one tag value or a tuple of them; None when a value is absent or not text."""
    if not isinstance(key, tuple):
        return key if isinstance(key, str) else None
    if any(not isinstance(v, str) for v in key):
        return None
    return "/".join(v.replace("%", "%25").replace("/", "%2F") for v in key)


def _counts_of(tally: Counter[str], left_out: frozenset[str] = LEFT_OUT) -> Counts:
    """:func:`counts` of results without repeats or scores, from their verdict tally."""
    table = {v: tally.get(v, 0) for v in VERDICTS}
    scored = sum(table.values()) - sum(table[v] for v in left_out)
    return _row(table, round(table[HIT] / scored, 6) if scored else None, wilson(table[HIT], scored))


def _row(table: Mapping[str, int], accuracy: float | None, ci95: list[float]) -> Counts:
    """A table row from its verdict tally (every verdict of :data:`~guitest.verdict.VERDICTS` a key), in the report's key order."""
    return {
        "n": sum(table.values()),
        "hit": table[HIT],
        "miss": table[MISS],
        "unparsed": table[UNPARSED],
        "refused": table[REFUSED],
        "truncated": table[TRUNCATED],
        "unsure": table[UNSURE],
        "error": table[ERROR],
        "accuracy": accuracy,
        "ci95": ci95,
    }


def headline(agg: Tallies, average: str, macro_over: str | None) -> Headline:
    """The number the benchmark's paper reports, beside the other average, each named."""
    micro = agg["overall"]["accuracy"]
    macro = agg["macro"].get(macro_over) if macro_over else None
    if average == "macro":
        return {
            "average": "macro",
            "over": macro_over,
            "accuracy": macro,
            "micro": micro,
            "macro": macro,
            "what": f"unweighted mean of the accuracies of the {macro_over} values (the suite's declared headline, as its benchmark reports it)",
        }
    return {"average": "micro", "over": None, "accuracy": micro, "micro": micro, "macro": macro, "what": "hits over all scored cases (the suite's declared headline, as its benchmark reports it)"}
