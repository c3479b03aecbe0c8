"""The statistics of two runs set side by side: the exact McNemar test and its power, and the normal test of a change
of avg@K, each figure saying which question it answers.

Two questions, kept apart (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640, which treats a benchmark's
questions as a sample from a super-population):

- **this task set**: did the model's chance of success on these very tasks change? The tasks are fixed; the only
  noise is a run's own randomness (a case's verdict flips between reruns), which ``--repeats`` measures.
- **the task population**: would the change hold on other tasks drawn as these were? The noise is the run's
  randomness and which tasks were drawn: the spread of the per-task changes, clustered when tasks come in groups.

Formulas (s_i = case i's share of hits over its K attempts, N cases, z_q the standard normal quantile):

- exact two-sided McNemar p-value: p = min(1, 2 * sum_{i <= min(b, c)} C(b + c, i) / 2^(b + c)) (McNemar 1947, the
  exact binomial form: conditional on the m = b + c discordant pairs, b ~ Binomial(m, 1/2) under no change).
- its power at m discordant pairs, each a loss with probability q: P(B <= k) + P(B >= m - k), B ~ Binomial(m, q), k
  the largest min(b, c) the test rejects (:func:`mcnemar_critical`); the expected change is (m / n) (1 - 2 q).
- one run's variance on a fixed task set: sum_i p_i (1 - p_i) / N^2; each p_i (1 - p_i) estimated without bias by
  h_i (K - h_i) / (K (K - 1)) (half the chance two of the case's attempts disagree: the flip rate f, so a run's
  standard deviation is sqrt(f / (2N)), docs/live_reports.md "The noise floor"). avg@K divides it by K (Miller,
  "Resampling"); two runs' avg@K are independent given the tasks, so Var(difference) = V_old / K_old + V_new / K_new.
- the task population's standard error of the paired change d_i = s_new,i - s_old,i: the clustered standard error
  sqrt(C / (C - 1) * sum_c (sum_{i in c} (d_i - mean d))^2) / N over C clusters (Miller, "Clustered standard errors"
  and Appendix A; with the finite-cluster factor C / (C - 1) of inspect_ai's ``_clustered_stderr``,
  src/inspect_ai/scorer/_metrics/std.py at 499e615); with each case its own cluster it is sd(d) / sqrt(N), the
  paired-difference standard error (Miller, "Paired differences").
- a normal test: z = change / SE, p = erfc(|z| / sqrt(2)); the change it detects with power 1 - beta at level alpha,
  two-sided: (z_{1 - alpha/2} + z_{1 - beta}) * SE (Miller, "Power analysis"; the far tail is left out, as there).

The normal figures take arrays whose last axis is the cases (leading axes: independent replications), so the tests'
simulations run the very code ``guitest compare`` runs, thousands of comparisons at once.
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]

#: the power the detectable changes are stated at
POWER = 0.8

_NORMAL = NormalDist()


# -- McNemar --------------------------------------------------------------------------------------


def mcnemar_exact(b: int, c: int) -> Fraction:
    """The exact two-sided McNemar p-value for b and c discordant pairs, as an exact fraction.

    p = min(1, 2 * sum_{i=0}^{min(b, c)} C(b + c, i) / 2^(b + c)), and 1 when b + c = 0.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return Fraction(1)
    tail = 0
    term = 1  # C(n, 0), then C(n, i) by the exact recurrence C(n, i+1) = C(n, i) * (n - i) / (i + 1)
    for i in range(min(b, c) + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def mcnemar_p(b: int, c: int) -> float:
    """The exact two-sided McNemar p-value as the float nearest to the exact fraction."""
    return float(mcnemar_exact(b, c))


def mcnemar_critical(m: int, alpha: Fraction) -> int | None:
    """The largest k for which k pairs one way and m - k the other is significant: with m discordant pairs the exact
    test at ``alpha`` rejects exactly when min(b, c) <= k. None when no split of m pairs is (m < 6 at 0.05)."""
    if m < 0:
        raise ValueError(f"discordant count must be >= 0, got {m}")
    found = None
    tail, term, whole = 0, 1, 2**m
    for k in range((m + 1) // 2):  # below m / 2 the p-value is 2 * tail / 2^m, rising with k
        tail += term
        if 2 * tail * alpha.denominator >= alpha.numerator * whole:
            break
        found = k
        term = term * (m - k) // (k + 1)
    return found


def _power_curve(m: int, alpha: Fraction) -> Callable[[float], float] | None:
    """The power of the exact test at ``alpha`` with ``m`` discordant pairs as a function of the loss share q:
    P(B <= k) + P(B >= m - k), B ~ Binomial(m, q) (the two tails are disjoint: k < m / 2); None when no split is
    significant. The binomial coefficients are summed in logs, so any m."""
    k = mcnemar_critical(m, alpha)
    if k is None:
        return None
    j = np.arange(k + 1, dtype=np.float64)
    log_choose = np.concatenate([[0.0], np.cumsum(np.log(m - j[:-1]) - np.log(j[1:]))])  # log C(m, j), j = 0..k

    def power(q: float) -> float:
        if q <= 0.0 or q >= 1.0:
            return 1.0  # every pair one way: min(b, c) = 0 <= k
        low = np.exp(log_choose + j * math.log(q) + (m - j) * math.log1p(-q))  # P(B = j)
        high = np.exp(log_choose + j * math.log1p(-q) + (m - j) * math.log(q))  # P(B = m - j), as C(m, m - j) = C(m, j)
        return min(1.0, math.fsum(low.tolist()) + math.fsum(high.tolist()))

    return power


def mcnemar_power(m: int, loss_share: float, alpha: Fraction) -> float:
    """The chance that the exact two-sided McNemar test at ``alpha`` rejects when each of ``m`` discordant pairs is a
    loss with probability ``loss_share``, independently (0 when no split of m pairs is significant)."""
    curve = _power_curve(m, alpha)
    return 0.0 if curve is None else curve(loss_share)


def mcnemar_detectable(paired: int, discordant: int, alpha: Fraction, power: float = POWER) -> dict[str, Any] | None:
    """The smallest expected change (a share of the ``paired`` cases) the exact McNemar test detects with at least
    ``power`` when ``discordant`` of the cases change verdict: ``change`` (m / n) (1 - 2 q) at the largest loss share
    q (or, the same, gain share) whose power reaches ``power``, that ``loss_share``, and the test's ``power`` there.
    None when no split of that many discordant pairs is significant.

    The power falls as q rises to 1/2 (its derivative in q is m C(m-1, k) [q^(m-k-1) (1-q)^k - q^k (1-q)^(m-k-1)],
    not positive for q < 1/2 and k < m / 2), so the largest such q is found by bisection."""
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    curve = _power_curve(discordant, alpha) if paired > 0 else None
    if curve is None:
        return None
    lo, hi = 0.0, 0.5  # power(0) = 1 >= power; power(1/2) <= alpha < power
    for _ in range(60):
        mid = (lo + hi) / 2
        if curve(mid) >= power:
            lo = mid
        else:
            hi = mid
    return {"change": discordant / paired * (1 - 2 * lo), "loss_share": lo, "power": curve(lo)}


# -- the normal test of a change of avg@K ---------------------------------------------------------


def z_quantile(p: float) -> float:
    """The standard normal quantile z_p (Python's ``statistics.NormalDist.inv_cdf``, Wichura's AS241)."""
    return _NORMAL.inv_cdf(p)


def two_sided_p(z: Array | float) -> Array:
    """The two-sided normal p-value erfc(|z| / sqrt(2)) of each z (NaN stays NaN)."""
    arr = np.abs(np.asarray(z, dtype=np.float64)) / math.sqrt(2)
    return np.asarray(np.frompyfunc(math.erfc, 1, 1)(arr), dtype=np.float64)


def detectable_change(se: Array | float, alpha: float, power: float = POWER) -> Array:
    """The change a two-sided normal test at ``alpha`` detects with ``power``: (z_{1-alpha/2} + z_power) * se."""
    return (z_quantile(1 - alpha / 2) + z_quantile(power)) * np.asarray(se, dtype=np.float64)


def _z(change: Array, se: Array) -> Array:
    """change / se; 0 for no change, and +-inf for a change where the runs showed no noise at all (se 0); NaN without an se."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, change / np.where(se > 0, se, 1.0), np.where(change == 0, 0.0, np.copysign(np.inf, change)))
    return np.where(np.isnan(se), np.nan, z)


def case_variance(hits: Array, k: int) -> Array | None:
    """Each case's p (1 - p) estimated without bias from ``hits`` of ``k`` attempts: h (k - h) / (k (k - 1)) (half the
    chance that two of its attempts disagree); None with one attempt a case, which cannot show it."""
    if k < 2:
        return None
    h = np.asarray(hits, dtype=np.float64)
    return h * (k - h) / (k * (k - 1))


def fixed_set_test(old_hits: Array, old_k: int, new_hits: Array, new_k: int, alpha: float, power: float = POWER) -> dict[str, Array] | None:
    """The normal two-sample test of a change of avg@K on this task set: each side's avg@K (its cases' share of hits
    over its own ``k`` attempts), the ``change`` (new - old), its standard error ``se`` (sqrt(V_old / K_old + V_new /
    K_new), V a run's variance from its cases' flips), ``z``, ``p_value``, the change it detects with ``power``, and
    each side's ``flip_rate`` (NaN for a side that ran once) and ``sigma`` (one run's standard deviation). A side that
    ran each case once is taken to be as noisy, case by case, as the other; None when neither repeated.

    Arrays of hits have the cases on their last axis; the figures are arrays over the leading axes."""
    old_h, new_h = np.asarray(old_hits, dtype=np.float64), np.asarray(new_hits, dtype=np.float64)
    n = old_h.shape[-1]
    old_v, new_v = case_variance(old_h, old_k), case_variance(new_h, new_k)
    if n == 0 or (old_v is None and new_v is None):
        return None
    old_var = old_v if old_v is not None else new_v
    new_var = new_v if new_v is not None else old_v
    assert old_var is not None and new_var is not None
    se = np.sqrt(old_var.sum(axis=-1) / old_k + new_var.sum(axis=-1) / new_k) / n
    change = new_h.mean(axis=-1) / new_k - old_h.mean(axis=-1) / old_k
    z = _z(change, se)
    nan = np.full(np.shape(change), np.nan)
    return {
        "old_avg": old_h.mean(axis=-1) / old_k,
        "new_avg": new_h.mean(axis=-1) / new_k,
        "change": change,
        "se": se,
        "z": z,
        "p_value": two_sided_p(z),
        "detectable": detectable_change(se, alpha, power),
        "old_flip_rate": 2 * old_v.mean(axis=-1) if old_v is not None else nan,
        "new_flip_rate": 2 * new_v.mean(axis=-1) if new_v is not None else nan,
        "old_sigma": np.sqrt(old_var.sum(axis=-1)) / n,
        "new_sigma": np.sqrt(new_var.sum(axis=-1)) / n,
    }


def clustered_se(values: Array, clusters: npt.NDArray[np.int64] | None = None) -> Array:
    """The standard error of the mean of ``values`` (cases on the last axis) with cases grouped by ``clusters`` (an
    integer per case; None: each case its own cluster): sqrt(C / (C - 1) * sum_c (sum_{i in c} (v_i - mean))^2) / N,
    as inspect_ai's clustered ``stderr`` computes it; NaN with fewer than two clusters."""
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[-1]
    dev = v - v.mean(axis=-1, keepdims=True) if n else v
    if clusters is None:
        sums, count = dev, n
    else:
        ids = np.unique(clusters, return_inverse=True)[1].reshape(-1)
        count = int(ids.max()) + 1 if n else 0
        order = np.argsort(ids, kind="stable")  # the cases cluster by cluster, so each cluster's sum is one run of them
        starts = np.concatenate([[0], np.cumsum(np.bincount(ids))[:-1]]) if n else np.zeros(0, dtype=np.int64)
        sums = np.add.reduceat(dev[..., order], starts, axis=-1) if n else dev
    if count < 2:
        return np.full(v.shape[:-1], np.nan)
    return np.asarray(np.sqrt((sums**2).sum(axis=-1) * count / (count - 1)) / n, dtype=np.float64)


def population_test(old_hits: Array, old_k: int, new_hits: Array, new_k: int, alpha: float, power: float = POWER, clusters: npt.NDArray[np.int64] | None = None) -> dict[str, Array]:
    """The normal test of the paired change over the task population: the mean of d_i = s_new,i - s_old,i
    (``change``), its clustered standard error ``se`` (by ``clusters``; each case its own without), ``se_by_case``
    (each case its own cluster), ``z``, ``p_value`` and the change it detects with ``power`` (NaN figures with fewer
    than two clusters)."""
    d = np.asarray(new_hits, dtype=np.float64) / new_k - np.asarray(old_hits, dtype=np.float64) / old_k
    change = d.mean(axis=-1) if d.shape[-1] else np.full(d.shape[:-1], np.nan)
    se = clustered_se(d, clusters)
    z = _z(change, se)
    return {
        "change": change,
        "se": se,
        "se_by_case": clustered_se(d) if clusters is not None else se,
        "z": z,
        "p_value": two_sided_p(z),
        "detectable": detectable_change(se, alpha, power),
    }
