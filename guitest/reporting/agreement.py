"""Agreement between two raters (a judge and the labels): confusion counts, precision, recall, Cohen's kappa.

Exact arithmetic on integer counts (fractions), rounded once at the end, so any order of
the pairs gives the same numbers.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Hashable, Iterable

DIGITS = 6


def rate(part: int, whole: int) -> float | None:
    """``part / whole`` rounded to 6 digits; None when ``whole`` is 0."""
    return round(part / whole, DIGITS) if whole else None


def binary_confusion(pairs: Iterable[tuple[str, str]], positive: str = "yes") -> dict[str, int]:
    """Counts ``tp, fp, fn, tn`` of ``(truth, judged)`` pairs, ``positive`` being the class of interest."""
    counts = Counter((truth == positive, judged == positive) for truth, judged in pairs)
    return {"tp": counts[(True, True)], "fp": counts[(False, True)], "fn": counts[(True, False)], "tn": counts[(False, False)]}


def precision(confusion: dict[str, int]) -> float | None:
    """Of the cases judged positive, the share that truly are; None when none was judged positive."""
    return rate(confusion["tp"], confusion["tp"] + confusion["fp"])


def recall(confusion: dict[str, int]) -> float | None:
    """Of the truly positive cases, the share judged positive; None when none is truly positive."""
    return rate(confusion["tp"], confusion["tp"] + confusion["fn"])


def cohen_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two raters over ``(rater_a, rater_b)`` pairs: (p_o - p_e) / (1 - p_e).

    None when there are no pairs or when chance agreement is certain (p_e = 1: both raters gave one
    and the same category throughout), where kappa is undefined.
    """
    pairs = list(pairs)
    n = len(pairs)
    if not n:
        return None
    observed = Fraction(sum(a == b for a, b in pairs), n)
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum((Fraction(first[c], n) * Fraction(second[c], n) for c in first.keys() | second.keys()), Fraction(0))
    if expected == 1:
        return None
    return round(float((observed - expected) / (1 - expected)), DIGITS)
