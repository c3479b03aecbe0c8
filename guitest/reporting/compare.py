"""Compare two guitest reports: accuracy per category, a paired exact McNemar test, a CI exit status.

``guitest compare OLD.json NEW.json [--fail-on-regression] [--min-drop X] [--alpha A] [--min-paired X] [--cluster TAG] [--json OUT] [--html PAGE]``

Accuracies are the reports' own (``overall`` and ``breakdown``). Significance is decided
on the cases both runs share and both scored (an error in either run takes the case out):
b = hit in old but not in new, c = hit in new but not in old, and the exact two-sided
McNemar p-value from b and c, computed with integers so it is exact for any n. A category
is "worse" when p < alpha, new lost more than it gained (b > c) and the paired drop
(b - c) / n_paired is at least ``min_drop``; "better" when p < alpha and c > b. The
p-values are per category and not corrected for multiple comparisons. A case counts as a
hit in the paired test only when its verdict is "hit" (with ``--repeats``, a "partial" case
is not a hit).

A comparison is only evidence when enough cases are paired: of the cases both runs selected,
at least ``min_paired`` (default :data:`DEFAULT_MIN_PAIRED`) must be scored in both. Below that
(every case of the new run errored, a run that stopped early, two different suites) the runs are
"not comparable", which ``--fail-on-regression`` fails like a regression: a run that produced
nothing must not pass a gate as "no detectable change".

Below the verdicts, on the overall paired cases, each figure says which question it answers (this task set, or the
population of tasks it samples; :mod:`~guitest.reporting.significance` holds the formulas): the change McNemar's test
detects with 80% power at the discordance observed, with ``--repeats`` the two-sample test of the change of avg@K
against the runs' own noise, and the task population's standard error of the paired change (``--cluster TAG``:
clustered by a tag). When either run's headline is its mean score (OSWorld's), the table leads with the mean score as
OSWorld's show_result.py prints it, the success rate beside it.

The cases that flipped (:func:`flipped`: lost, gained, newly errored, no longer errored) are named in the text (the
first :data:`FLIPS_SHOWN` of each kind) and all of them in the JSON's ``flipped``; ``--html PAGE`` writes a page of
them (:mod:`~guitest.reporting.compare_page`).
"""

from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .. import strictjson
from ..errors import GuitestError
from . import costs
from .gate import DEFAULT_MIN_PAIRED
from .tallies import group_key
from .report import align_table
from .document import Counts, Report, from_json
from .significance import POWER, fixed_set_test, mcnemar_detectable, mcnemar_exact, population_test
from .significance import mcnemar_p as mcnemar_p  # where callers of guitest compare have always found it
from . import manifest
from ..verdict import CASE_VERDICTS, ERROR, HIT, VERDICTS, CaseResult

BETTER, WORSE, SAME = "better", "worse", "no detectable change"
OVERALL = "overall"


class ReportError(GuitestError):
    """A report file that cannot be read or is not a guitest report; the message names the file."""


# -- reading reports ------------------------------------------------------------------------------


def load_report(path: str | Path) -> Report:
    """Read (:func:`guitest.strictjson.load`: bounded in size and depth) and check a report file; raise
    :class:`ReportError` naming the file and the problem, in one line."""
    path = Path(path)
    try:
        report = strictjson.load(path)
    except strictjson.UnreadableJSON as exc:
        raise ReportError(str(exc)) from None
    problems = check_report(report)
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise ReportError(f"{path}: not a guitest report: " + "; ".join(problems[:5]) + more)
    return from_json(report)  # what an older guitest did not write, filled in: every report a user has still opens


def check_report(report: Any) -> list[str]:
    """What makes ``report`` unusable for a comparison (empty when it is usable)."""
    if not isinstance(report, dict):
        return [f"the top level is {strictjson.kind(report)}, expected an object"]
    problems = []
    for key in ("overall", "breakdown"):
        if not isinstance(report.get(key), dict):
            problems.append(f"'{key}' missing or not an object")
    if isinstance(report.get("overall"), dict) and not _is_rate(report["overall"].get("accuracy")):
        problems.append("'overall.accuracy' missing or not a number in 0..1 or null")
    if isinstance(report.get("breakdown"), dict):
        for name, values in report["breakdown"].items():
            if not isinstance(values, dict) or not all(isinstance(row, dict) and _is_rate(row.get("accuracy")) for row in values.values()):
                problems.append(f"'breakdown.{name}' is not a table of value -> counts with an accuracy")
    for path, kind in OPTIONAL:  # older reports lack some of these (from_json fills in what is needed), none is another kind
        value = _at(report, path)
        if (value is not None or (path in report and "." not in path)) and not isinstance(value, kind):
            problems.append(f"'{path}' is not {'an object' if kind is dict else 'a list' if kind is list else 'a string'}")
    if isinstance(report.get("headline"), dict) and not _is_rate(report["headline"].get("accuracy")):
        problems.append("'headline.accuracy' is not a number in 0..1 or null")
    if "missing" in report and not (isinstance(report["missing"], list) and all(isinstance(m, str) for m in report["missing"])):
        problems.append("'missing' is not a list of case ids")
    cases = report.get("cases")
    if not isinstance(cases, list):
        problems.append("'cases' missing or not a list")
        return problems
    seen: set[str] = set()
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("id"), str) or case.get("verdict") not in CASE_VERDICTS:
            problems.append(f"cases[{i}]: needs a string 'id' and a 'verdict' ({', '.join(CASE_VERDICTS)})")
        elif not isinstance(case.get("tags"), dict) or not all(isinstance(v, (str, int, float)) or v is None for v in case["tags"].values()):
            problems.append(f"cases[{i}] ({case['id']}): 'tags' is not an object of names to values")
        elif case.get("attempts") is not None and not (isinstance(case["attempts"], list) and all(isinstance(a, dict) and a.get("verdict") in VERDICTS for a in case["attempts"])):
            problems.append(f"cases[{i}] ({case['id']}): 'attempts' is not a list of attempts with a verdict each")
        elif case["id"] in seen:
            problems.append(f"cases[{i}]: case id {case['id']!r} appears twice")
        else:
            seen.add(case["id"])
    return problems


#: the parts of a report that are optional (older reports lack them) but, when present, of one kind; what the
#: comparison reads of them (guitest.reporting.manifest.differences, the headline, the costs)
OPTIONAL: tuple[tuple[str, type], ...] = (
    ("suite", dict),
    ("suite.runner", dict),
    ("model", dict),
    ("model.settings", dict),
    ("run", dict),
    ("run.success_rule", dict),
    ("run.served_model", dict),
    ("run.served_model.served", list),
    ("gate", dict),
    ("headline", dict),
    ("manifest", dict),
    ("manifest.digests", dict),
    ("manifest.suite_file", dict),
    ("manifest.guitest", dict),
    ("manifest.guitest.commit", str),
    ("manifest.packages", dict),
    ("manifest.data", dict),
    ("manifest.data.digests", dict),
    ("usage", dict),
)


def _at(report: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of ``report``; None where a part of it is missing or not an object."""
    value: Any = report
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _is_rate(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1)


# -- comparing ------------------------------------------------------------------------------------


def _paired(pairs: Iterable[tuple[str, str]], alpha: Fraction, min_drop: float) -> dict[str, Any]:
    """The paired counts, exact p-value and verdict for (old verdict, new verdict) pairs, errors already removed."""
    both = b = c = neither = 0
    for old, new in pairs:
        o, n = old == HIT, new == HIT
        if o and n:
            both += 1
        elif o:
            b += 1
        elif n:
            c += 1
        else:
            neither += 1
    total = both + b + c + neither
    exact = mcnemar_exact(b, c)
    drop = Fraction(b - c, total) if total else Fraction(0)
    verdict = SAME
    if exact < alpha and c > b:
        verdict = BETTER
    elif exact < alpha and b > c and drop >= Fraction(str(min_drop)):
        verdict = WORSE
    return {
        "n": total,
        "both_hit": both,
        "b": b,
        "c": c,
        "neither": neither,
        "old_accuracy": round((both + b) / total, 6) if total else None,
        "new_accuracy": round((both + c) / total, 6) if total else None,
        "delta": round(float(-drop), 6) if total else None,
        "p_value": float(exact),
        "verdict": verdict,
    }


def _side(row: Counts | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"n": row.get("n"), "hit": row.get("hit"), "error": row.get("error"), "accuracy": row.get("accuracy"), "mean_score": row.get("mean_score")}


def _difference(new: float | None, old: float | None) -> float | None:
    return round(new - old, 6) if old is not None and new is not None else None


def _row(category: str, value: str, old_row: Counts | None, new_row: Counts | None, paired: dict[str, Any]) -> dict[str, Any]:
    return {
        "category": category,
        "value": value,
        "old": _side(old_row),
        "new": _side(new_row),
        "delta": _difference(new_row.get("accuracy") if new_row else None, old_row.get("accuracy") if old_row else None),
        "mean_score_delta": _difference(new_row.get("mean_score") if new_row else None, old_row.get("mean_score") if old_row else None),
        "paired": paired,
        "verdict": paired["verdict"],
    }


def _describe(report: Report) -> dict[str, Any]:
    model = report["model"]
    profile = model.get("profile")
    return {
        "suite": report["suite"]["name"],
        "model": model.get("spec"),
        "profile": profile.get("name") if isinstance(profile, dict) else profile,
        "guitest": report["guitest"],
        "n_results": len(report["cases"]),
        "complete": report["complete"],
        "headline": report["headline"].get("accuracy"),
        "headline_figure": report["headline"].get("figure") or "accuracy",
        "success_rate": report["overall"].get("accuracy"),
        "mean_score": report["overall"].get("mean_score"),
    }


def compare(old: Report, new: Report, min_drop: float = 0.0, alpha: float = 0.05, min_paired: float = DEFAULT_MIN_PAIRED, power: float = POWER, cluster: str | None = None) -> dict[str, Any]:
    """Compare two reports: overall and per breakdown value (present in either), accuracies, the paired test, a verdict.

    Returns plain builtins (JSON-ready): ``rows`` (overall first, then each breakdown's
    values in sorted order), ``regressions`` and ``improvements`` (the rows judged worse
    or better), ``only_in_old`` / ``only_in_new`` (case ids in one run only, sorted),
    ``excluded`` (shared case ids left out of the paired test because they errored), ``flipped`` (the shared cases
    whose outcome changed, by kind: :func:`flipped`),
    ``warnings`` (different suites, incomplete runs, tags that changed between the runs),
    ``comparable`` (how many of the cases both runs selected were paired, and whether that reaches ``min_paired``),
    ``figure`` (``mean_score`` when either run's headline is its mean score, as OSWorld's is: the table leads with it),
    and on the overall paired cases, each saying which question it answers: ``detectable`` (the change McNemar's test
    detects with ``power`` at the discordance observed), ``noise`` (with ``--repeats`` on either side: the two-sample
    test of avg@K on this task set) and ``population`` (the paired change's standard error over the task population,
    clustered by the new run's tag ``cluster``, else case by case). :class:`ClusterError` when a paired case lacks
    the ``cluster`` tag.
    """
    _check_parameters(min_drop, alpha, min_paired, power)
    alpha_q = Fraction(str(alpha))
    old_cases = {c["id"]: c for c in old["cases"]}
    new_cases = {c["id"]: c for c in new["cases"]}
    shared = sorted(old_cases.keys() & new_cases.keys())
    scored = [i for i in shared if old_cases[i]["verdict"] != ERROR and new_cases[i]["verdict"] != ERROR]
    # A case's category comes from the new run's tags (tags come from the data set, so they agree
    # unless the data changed between the runs; such cases are listed in the warnings).
    tag_changed = [i for i in shared if (old_cases[i].get("tags") or {}) != (new_cases[i].get("tags") or {})]
    rows = _rows(old, new, old_cases, new_cases, scored, alpha_q, min_drop)
    d_old, d_new = _describe(old), _describe(new)
    only_old = sorted(old_cases.keys() - new_cases.keys())
    only_new = sorted(new_cases.keys() - old_cases.keys())
    differences = manifest.differences(old, new)
    pairs = [(old_cases[i], new_cases[i]) for i in scored]
    return {
        "flipped": flipped(old_cases, new_cases, shared),
        "old": d_old,
        "new": d_new,
        "figure": "mean_score" if "mean_score" in (d_old["headline_figure"], d_new["headline_figure"]) else "accuracy",
        "differences": differences,
        "unrecorded": manifest.unrecorded(old, new),
        "detectable": _detectable(rows[0]["paired"], alpha_q, power),
        "noise": _noise(pairs, old["overall"].get("repeats"), new["overall"].get("repeats"), alpha, power),
        "population": _population(pairs, alpha, power, cluster),
        "cost": costs.difference(old.get("usage"), new.get("usage")),
        "alpha": alpha,
        "min_drop": min_drop,
        "comparable": _comparable(old_cases, new_cases, _id_set(old["missing"]), _id_set(new["missing"]), len(scored), min_paired),
        "test": "exact two-sided McNemar on shared cases scored in both runs (errors excluded); p-values not corrected for multiple comparisons",
        "shared": len(shared),
        "paired": len(scored),
        "rows": rows,
        "regressions": [_label(r) for r in rows if r["verdict"] == WORSE],
        "improvements": [_label(r) for r in rows if r["verdict"] == BETTER],
        "only_in_old": only_old,
        "only_in_new": only_new,
        "excluded": _errored(old_cases, new_cases, shared),
        "tag_changed": tag_changed,
        "warnings": _warnings(d_old, d_new, only_old, only_new, tag_changed, differences),
    }


def _errored(old_cases: dict[str, CaseResult], new_cases: dict[str, CaseResult], shared: list[str]) -> dict[str, list[str]]:
    """The ``shared`` cases left out of the paired test because they errored, in either run."""
    return {
        "error_in_old": [i for i in shared if old_cases[i]["verdict"] == ERROR],
        "error_in_new": [i for i in shared if new_cases[i]["verdict"] == ERROR],
    }


def _check_parameters(min_drop: float, alpha: float, min_paired: float, power: float) -> None:
    """ValueError naming the first of :func:`compare`'s parameters out of its range."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    if min_drop < 0:
        raise ValueError(f"min_drop must be >= 0, got {min_drop}")
    if not 0 <= min_paired <= 1:
        raise ValueError(f"min_paired must be in [0, 1], got {min_paired}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")


def _rows(old: Report, new: Report, old_cases: dict[str, CaseResult], new_cases: dict[str, CaseResult], scored: list[str], alpha: Fraction, min_drop: float) -> list[dict[str, Any]]:
    """The table's rows: overall first, then each breakdown's values (in either report, or among the paired cases by
    the new run's tags) in sorted order, each with the paired test of its ``scored`` cases."""
    rows = [_row(OVERALL, "", old["overall"], new["overall"], _paired(((old_cases[i]["verdict"], new_cases[i]["verdict"]) for i in scored), alpha, min_drop))]
    names = list(old["breakdown"]) + [n for n in new["breakdown"] if n not in old["breakdown"]]
    for name in names:
        old_values, new_values = old["breakdown"].get(name, {}), new["breakdown"].get(name, {})
        tag_names = name.split("/")
        groups: dict[str, list[tuple[str, str]]] = {}
        for i in scored:
            key = group_key({"tags": new_cases[i].get("tags") or {}}, tag_names)
            if key is not None:
                groups.setdefault(key, []).append((old_cases[i]["verdict"], new_cases[i]["verdict"]))
        for value in sorted(set(old_values) | set(new_values) | set(groups)):
            rows.append(_row(name, value, old_values.get(value), new_values.get(value), _paired(groups.get(value, ()), alpha, min_drop)))
    return rows


def _warnings(d_old: dict[str, Any], d_new: dict[str, Any], only_old: list[str], only_new: list[str], tag_changed: list[str], differences: list[str]) -> list[str]:
    """What makes the two runs less comparable: other suites, an incomplete run, cases in one run only, tags that
    changed, benchmark files that changed (``differences``: the manifests')."""
    warnings = []
    if d_old["suite"] != d_new["suite"]:
        warnings.append(f"the reports are of different suites: {d_old['suite']!r} and {d_new['suite']!r}")
    for side, d in (("old", d_old), ("new", d_new)):
        if d["complete"] is False:
            warnings.append(f"the {side} run is incomplete: some selected cases produced no result")
    if only_old or only_new:
        warnings.append(f"{len(only_old)} case(s) only in the old run and {len(only_new)} only in the new run: not in the paired test")
    if tag_changed:
        warnings.append(
            f"{len(tag_changed)} shared case(s) have different tags in the two runs; grouped by the new run's tags: {', '.join(tag_changed[:5])}" + (" ..." if len(tag_changed) > 5 else "")
        )
    for what in differences:
        if what.startswith(("data changed", "suite file changed")):
            warnings.append(f"{what}: the runs did not read the same benchmark files, so a difference may be the data's")
    return warnings


#: the kinds of flip, in the order they are listed: a flip is a shared case whose outcome (hit, not a hit, error) changed
FLIPS: tuple[tuple[str, str], ...] = (
    ("lost", "lost (hit in old, not in new)"),
    ("gained", "gained (hit in new, not in old)"),
    ("newly_errored", "newly errored (an error in new, none in old)"),
    ("no_longer_errored", "no longer errored (an error in old, none in new)"),
)


def _outcome(verdict: str) -> str:
    """A verdict as the paired test reads it: an error, a hit, or not a hit (a "partial" of --repeats is not a hit)."""
    return ERROR if verdict == ERROR else HIT if verdict == HIT else "not a hit"


def flipped(old_cases: Mapping[str, CaseResult], new_cases: Mapping[str, CaseResult], shared: Iterable[str]) -> dict[str, list[dict[str, str]]]:
    """The shared cases whose outcome changed, by kind (:data:`FLIPS`), each ``{"id", "old", "new"}`` (the verdicts),
    sorted by id: ``lost`` and ``gained`` are exactly the overall row's paired ``b`` and ``c`` cases; ``newly_errored``
    and ``no_longer_errored`` left the paired test. A change between two ways of being wrong (miss to unparsed) is no flip."""
    out: dict[str, list[dict[str, str]]] = {kind: [] for kind, _ in FLIPS}
    for i in sorted(shared):
        old, new = old_cases[i]["verdict"], new_cases[i]["verdict"]
        o, n = _outcome(old), _outcome(new)
        if o == n:
            continue
        kind = "newly_errored" if n == ERROR else "no_longer_errored" if o == ERROR else "gained" if n == HIT else "lost"
        out[kind].append({"id": i, "old": old, "new": new})
    return out


def _detectable(paired: dict[str, Any], alpha: Fraction, power: float) -> dict[str, Any]:
    """The power of the paired exact McNemar test at the discordance observed: of ``paired`` cases, ``discordant``
    changed verdict; the smallest expected change (``points``) the test then detects with ``power`` at ``alpha``
    (None when no split of so few discordant cases reaches p < alpha), and its power there."""
    n, m = paired["n"], paired["b"] + paired["c"]
    found = mcnemar_detectable(n, m, alpha, power)
    return {
        "question": "these paired cases, one run of each side: a change beyond the verdict flips chance gives (this task set when no task's chance changed; its population when tasks are drawn independently)",
        "test": "exact two-sided McNemar",
        "alpha": float(alpha),
        "power": power,
        "paired": n,
        "discordant": m,
        "discordance": round(m / n, 6) if n else None,
        "points": round(100 * found["change"], 2) if found else None,
        "power_at_points": round(found["power"], 6) if found else None,
    }


def _hits(case: CaseResult) -> tuple[int, int]:
    """A case's hits and scored attempts (one for a case that ran once)."""
    verdicts = [a.get("verdict") for a in case["attempts"]] if case.get("attempts") else [case["verdict"]]
    scored = [v for v in verdicts if v != ERROR]
    return scored.count(HIT), len(scored)


def _attempt_table(pairs: list[tuple[CaseResult, CaseResult]]) -> tuple[list[int], set[int], list[int], set[int]]:
    """Each paired case's hits, old then new, and the attempt counts each side's cases had."""
    old = [_hits(o) for o, _ in pairs]
    new = [_hits(n) for _, n in pairs]
    return [h for h, _ in old], {k for _, k in old}, [h for h, _ in new], {k for _, k in new}


def _number(value: Any, digits: int = 6) -> float | None:
    """A figure for the JSON: rounded to ``digits``, None for NaN (an infinite z stays: the strict JSON writer nulls it)."""
    x = float(value)
    if math.isnan(x):
        return None
    return x if math.isinf(x) else round(x, digits)


def _noise(pairs: list[tuple[CaseResult, CaseResult]], old_repeats: Any, new_repeats: Any, alpha: float, power: float) -> dict[str, Any] | None:
    """With --repeats on either side, the two-sample test of the change of avg@K on this task set (the paired cases):
    each side's avg@K over its own K attempts, its flip rate and one run's standard deviation, the change, its standard
    error, z, p, whether the change is inside the noise (p >= alpha) and the change the test detects with ``power``.
    A side that ran once is taken as noisy as the other; ``unavailable`` says why no test was made."""
    old_h, old_ks, new_h, new_ks = _attempt_table(pairs)
    if max(old_ks | new_ks, default=1) < 2 or 0 in old_ks | new_ks:
        return None
    out: dict[str, Any] = {"question": "this task set: did the model's chance of success on these very cases change, beyond what reruns of one setting vary by", "cases": len(pairs)}
    uneven = [side for side, ks in (("old", old_ks), ("new", new_ks)) if len(ks) > 1]
    if uneven:
        out["unavailable"] = f"the {' and '.join(uneven)} run's cases had different numbers of attempts (stopped at the first hit, --attempt-strategy=pass): its share of hits is not avg@K"
        return out
    old_k, new_k = old_ks.pop(), new_ks.pop()
    test = fixed_set_test(np.array(old_h), old_k, np.array(new_h), new_k, alpha, power)
    assert test is not None  # a side repeated
    spread = {"old": old_repeats, "new": new_repeats}
    for side, k in (("old", old_k), ("new", new_k)):
        reported = spread[side].get("std_across_runs") if isinstance(spread[side], dict) else None
        out[side] = {
            "k": k,
            "avg": _number(test[f"{side}_avg"]),
            "flip_rate": _number(test[f"{side}_flip_rate"]),
            "sigma": _number(test[f"{side}_sigma"]),
            "std_across_runs": reported,
        }
    figures = _test_figures(test, alpha, power)
    out.update({"measured_by": "both" if min(old_k, new_k) > 1 else ("old" if old_k > 1 else "new"), **figures, "within": not figures["p_value"] < alpha})
    return out


def _test_figures(test: Mapping[str, Any], alpha: float, power: float) -> dict[str, Any]:
    """A normal test's figures for the JSON (:mod:`~guitest.reporting.significance`): the change, its standard error,
    z, p, the alpha and power it is stated at, and the change it detects with that power."""
    return {
        "change": _number(test["change"]),
        "se": _number(test["se"]),
        "z": _number(test["z"]),
        "p_value": float(f"{float(test['p_value']):.6g}"),
        "alpha": alpha,
        "power": power,
        "detectable": _number(test["detectable"]),
    }


class ClusterError(GuitestError):
    """``--cluster TAG`` names a tag a paired case does not have; the message names the case."""


def _population(pairs: list[tuple[CaseResult, CaseResult]], alpha: float, power: float, cluster: str | None) -> dict[str, Any] | None:
    """The paired change over the task population (the paired cases as a sample of tasks drawn like them): its mean,
    standard error clustered by the new run's ``cluster`` tag (case by case without one, each case with its attempts a
    cluster), the case-by-case standard error beside it, z, p and the change detected with ``power``. None with fewer
    than two clusters."""
    old_h, old_ks, new_h, new_ks = _attempt_table(pairs)
    if len(old_ks) > 1 or len(new_ks) > 1 or not pairs or 0 in old_ks | new_ks:
        return None  # attempts stopped at the first hit: a case's share of hits is not its chance
    groups = None
    if cluster is not None:
        values = []
        for _, case in pairs:
            value = (case.get("tags") or {}).get(cluster)
            if not isinstance(value, str):
                raise ClusterError(f"--cluster {cluster}: the new run's case {case['id']!r} has no tag {cluster!r} (its tags: {', '.join(sorted(case.get('tags') or {})) or 'none'})")
            values.append(value)
        names = sorted(set(values))
        groups = np.array([names.index(v) for v in values], dtype=np.int64)
    test = population_test(np.array(old_h), old_ks.pop(), np.array(new_h), new_ks.pop(), alpha, power, groups)
    if math.isnan(float(test["se"])):
        return None
    return {
        "question": "the task population: would the change hold on other tasks drawn as these were (which tasks were drawn is noise too)",
        "cases": len(pairs),
        "cluster": cluster or "case",
        "clusters": len(set(groups.tolist())) if groups is not None else len(pairs),
        **_test_figures(test, alpha, power),
        "se_by_case": _number(test["se_by_case"]),
    }


def _id_set(value: Any) -> set[str]:
    """A report's ``missing`` (selected case ids without a result) as a set; nothing when absent or not a list of ids."""
    return {i for i in value if isinstance(i, str)} if isinstance(value, list) else set()


def _comparable(old_cases: dict[str, CaseResult], new_cases: dict[str, CaseResult], old_missing: set[str], new_missing: set[str], paired: int, min_paired: float) -> dict[str, Any]:
    """Of the cases both runs selected, how many were paired (scored in both) and why the others were not; ``enough`` when
    at least one was and their share reaches ``min_paired``."""
    both = (old_cases.keys() | old_missing) & (new_cases.keys() | new_missing)
    share = Fraction(paired, len(both)) if both else Fraction(0)
    return {
        "selected_by_both": len(both),
        "paired": paired,
        "share": round(float(share), 6),
        "min_paired": min_paired,
        "enough": paired > 0 and share >= Fraction(str(min_paired)),
        "error_in_new": sum(1 for i in both if i in new_cases and new_cases[i]["verdict"] == ERROR),
        "no_result_in_new": len(both & new_missing),
        "error_in_old": sum(1 for i in both if i in old_cases and old_cases[i]["verdict"] == ERROR),
        "no_result_in_old": len(both & old_missing),
    }


def not_comparable(result: dict[str, Any]) -> str | None:
    """Why the two runs of a comparison are not comparable (too few cases paired), or None when they are."""
    c = result["comparable"]
    if c["enough"]:
        return None
    if not c["selected_by_both"]:
        return "the runs share no selected case (different suites, or case ids that changed): there is nothing to compare"
    why = [
        f"{c[key]} {label}"
        for key, label in (
            ("error_in_new", "errored in the new run"),
            ("no_result_in_new", "have no result in the new run"),
            ("error_in_old", "errored in the old run"),
            ("no_result_in_old", "have no result in the old run"),
        )
        if c[key]
    ]
    return (
        f"only {c['paired']} of the {c['selected_by_both']} cases both runs selected were scored in both ({100 * c['share']:.1f}%, "
        f"below --min-paired {100 * c['min_paired']:.1f}%)"
        + (f": {', '.join(why)}" if why else "")
        + ". Too few paired cases say nothing about a regression: re-run the failed cases (pytest --lf) and compare again, "
        "or pass a lower --min-paired to accept fewer"
    )


def _label(row: dict[str, Any]) -> str:
    return OVERALL if row["category"] == OVERALL else f"{row['category']}={row['value']}"


# -- text output ----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _pts(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}"


def _p(value: float) -> str:
    if value == 0:
        return "<1e-300"  # the exact value is positive, below the smallest float
    if value >= 0.001:
        return f"{value:.3f}"
    return f"{value:.1e}"


#: how many flipped cases of each kind the text names (the JSON and the page name them all)
FLIPS_SHOWN = 20


def _flip_lines(result: dict[str, Any], limit: int = FLIPS_SHOWN) -> list[str]:
    """The flipped cases, by kind, each with its two verdicts; at most ``limit`` of a kind, then how many more."""
    found = result.get("flipped") or {}
    counts = {kind: len(found.get(kind) or ()) for kind, _ in FLIPS}
    total = sum(counts.values())
    lines = [f"flipped: {total} of the {result['shared']} shared cases (" + ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in counts.items()) + ")"]
    for kind, label in FLIPS:
        cases = found.get(kind) or []
        if not cases:
            continue
        shown = ", ".join(f"{c['id']} ({c['old']} -> {c['new']})" for c in cases[:limit])
        more = f", and {len(cases) - limit} more: see --json or --html" if len(cases) > limit else ""
        lines.append(f"  {label}, {len(cases)}: {shown}{more}")
    return lines


def _ids(ids: list[str], limit: int = 20) -> str:
    return ", ".join(ids[:limit]) + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


HEADER = ("category", "value", "old%", "new%", "delta", "paired", "lost", "gained", "p", "verdict")
#: the table when a run's headline is its mean score (OSWorld's): the mean score first, x 100 as OSWorld prints it
MEAN_SCORE_HEADER = ("category", "value", "old mean score", "new mean score", "delta", "old success%", "new success%", "paired", "lost", "gained", "p", "verdict")


def _score100(value: float | None) -> str:
    """A mean score x 100 to two decimals, as OSWorld's show_result.py prints it ("Success Rate: 41.67 %" rounded)."""
    return "-" if value is None else f"{100 * value:.2f}"


def _score_pts(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.2f}"


def _table(result: dict[str, Any]) -> list[str]:
    """The per-category table and its legend: accuracies, or with a mean-score headline the mean score and the success
    rate beside it, each named."""
    by_score = result.get("figure") == "mean_score"
    cells = [MEAN_SCORE_HEADER if by_score else HEADER]
    for r in result["rows"]:
        p = r["paired"]
        old, new = r["old"] or {}, r["new"] or {}
        verdict = r["verdict"].upper() if r["verdict"] in (WORSE, BETTER) else r["verdict"] if p["n"] else "no paired case"
        tested = (str(p["n"]), str(p["b"]), str(p["c"]), _p(p["p_value"]), verdict)
        if by_score:
            figures: tuple[str, ...] = (_score100(old.get("mean_score")), _score100(new.get("mean_score")), _score_pts(r.get("mean_score_delta")), _pct(old.get("accuracy")), _pct(new.get("accuracy")))
        else:
            figures = (_pct(old.get("accuracy")), _pct(new.get("accuracy")), _pts(r["delta"]))
        cells.append((r["category"], r["value"], *figures, *tested))
    lines = align_table(cells, left=(0, 1, len(cells[0]) - 1))
    lines.append("")
    if by_score:
        lines += [
            "mean score: the mean of the tasks' scores x 100, the figure OSWorld's show_result.py prints as each domain's and the overall",
            '"Success Rate"; delta: new - old mean score; success%: the share of tasks that succeeded (score 1), each report\'s own;',
            "paired: cases scored in both runs (errors left out); lost: succeeded in old only; gained: in new only; p: exact",
            "two-sided McNemar on lost vs gained, per row, not corrected for multiple comparisons.",
        ]
    else:
        lines += [
            "delta: new - old accuracy in points (each report's own); paired: cases scored in both runs (errors left out);",
            "lost: hit in old only; gained: hit in new only; p: exact two-sided McNemar on lost vs gained, per row, not corrected",
            "for multiple comparisons.",
        ]
    lines[-1] += f" worse = p < {result['alpha']:g} and paired {'success rate' if by_score else 'accuracy'} down by at least {100 * result['min_drop']:.1f} points."
    return lines


def _headline_line(o: dict[str, Any], n: dict[str, Any], by_score: bool) -> str:
    if by_score:
        return f"headline: mean score {_score100(o.get('mean_score'))} -> {_score100(n.get('mean_score'))} (x 100, as OSWorld's show_result.py prints it); success rate {_pct(o.get('success_rate'))}% -> {_pct(n.get('success_rate'))}%"
    return f"headline: {_pct(o['headline'])}% -> {_pct(n['headline'])}%"


def _power_lines(result: dict[str, Any]) -> list[str]:
    """What the paired test could have seen, the noise of repeated runs, and the task population's standard error,
    each line naming the question it answers."""
    lines = []
    d = result.get("detectable") or {}
    if d.get("paired"):
        seen = f"power of the paired test (McNemar on these cases: a change beyond the flips chance gives): {d['discordant']} of the {d['paired']} paired cases changed verdict ({100 * d['discordance']:.1f}%)"
        if d.get("points") is not None:
            lines.append(f"{seen}; at that discordance, at alpha {d['alpha']:g}, it detects a change of {d['points']:.1f} points {100 * d['power']:.0f}% of the time")
        else:
            lines.append(f"{seen}: too few for any split of them to reach p < {d['alpha']:g}, so no change is detectable at this discordance")
    noise = result.get("noise")
    if noise and noise.get("unavailable"):
        lines.append(f"noise (this task set, --repeats): not tested: {noise['unavailable']}")
    elif noise:
        o, n = noise["old"], noise["new"]
        flips = " and ".join(f"{100 * s['flip_rate']:.1f}%" for s in (o, n) if s["flip_rate"] is not None)
        borrowed = {"old": " (the new run ran each case once: its noise taken as the old run's)", "new": " (the old run ran each case once: its noise taken as the new run's)"}.get(
            noise["measured_by"], ""
        )
        p = "0 (no case's attempts ever differed)" if noise["se"] == 0 and noise["change"] else _p(noise["p_value"])
        lines.append(
            f"noise (this task set: did these cases' chance of success change? --repeats): avg@K {_pct(o['avg'])}% (K={o['k']}) -> {_pct(n['avg'])}% (K={n['k']}) "
            f"on {noise['cases']} paired cases, {_pts(noise['change'])} points; standard error {100 * noise['se']:.1f} points from the runs' flip rates ({flips}){borrowed}; "
            f"p {p}: {'inside' if noise['within'] else 'outside'} the noise. At alpha {noise['alpha']:g} it detects a change of {100 * noise['detectable']:.1f} points {100 * noise['power']:.0f}% of the time"
        )
    pop = result.get("population")
    what = "the success rate" if result.get("figure") == "mean_score" else "accuracy"
    if pop and pop["se"] == 0 and pop["change"] == 0:
        lines.append(f"task population (would the change hold on other tasks drawn like these?): no paired case changed, so these runs say nothing of how {what} varies from task to task")
    elif pop:
        by = (
            f"clustered by {pop['cluster']}: {pop['clusters']} clusters; {100 * pop['se_by_case']:.1f} case by case"
            if pop["cluster"] != "case"
            else "case by case; --cluster TAG for tasks drawn in groups"
        )
        p = "0 (every case changed by the same)" if pop["se"] == 0 and pop["change"] else _p(pop["p_value"])
        lines.append(
            f"task population (would the change hold on other tasks drawn like these?): paired change of {what} {_pts(pop['change'])} points over {pop['cases']} cases, "
            f"standard error {100 * pop['se']:.1f} points ({by}), p {p}; at alpha {pop['alpha']:g} it detects a change of {100 * pop['detectable']:.1f} points {100 * pop['power']:.0f}% of the time"
        )
    return lines


def format_text(result: dict[str, Any]) -> str:
    """The comparison as aligned plain text for CI logs: who was compared, the table, the verdict, the odd cases."""
    o, n = result["old"], result["new"]
    lines = [
        f"{side}: {d['suite'] or '-'} | {d['model'] or '-'} | profile {d['profile'] or '-'} | guitest {d['guitest'] or '-'} | {d['n_results']} cases" + (f" | {d['path']}" if d.get("path") else "")
        for side, d in (("old", o), ("new", n))
    ]
    differs = result.get("differences") or []
    lines.append("the runs differ in: " + "; ".join(differs) if differs else "the runs differ in nothing both reports record (versions, data, prompts, settings, case selection)")
    lines += result.get("unrecorded") or []
    lines.append(_headline_line(o, n, result.get("figure") == "mean_score"))
    if result.get("cost"):  # beside the score: what a point costs
        lines.append(result["cost"])
    lines.append("")
    lines += _table(result)
    if result["regressions"]:
        lines.append("REGRESSION: " + ", ".join(result["regressions"]))
    if result["improvements"]:
        lines.append("improved: " + ", ".join(result["improvements"]))
    unfit = not_comparable(result)
    if unfit is not None:
        lines.append(f"NOT COMPARABLE: {unfit}")
    elif not result["regressions"] and not result["improvements"]:
        lines.append("no detectable change")
    lines += _power_lines(result)
    lines += _flip_lines(result)
    for w in result["warnings"]:
        lines.append(f"warning: {w}")
    if result["only_in_old"]:
        lines.append(f"only in old ({len(result['only_in_old'])}): {_ids(result['only_in_old'])}")
    if result["only_in_new"]:
        lines.append(f"only in new ({len(result['only_in_new'])}): {_ids(result['only_in_new'])}")
    for key, label in (("error_in_old", "errored in old"), ("error_in_new", "errored in new")):
        ids = result["excluded"][key]
        if ids:
            lines.append(f"{label}, left out of the paired test ({len(ids)}): {_ids(ids)}")
    return "\n".join(lines) + "\n"


# -- command line ---------------------------------------------------------------------------------


def _fraction_arg(lo: float, hi: float, lo_open: bool) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or value > hi or value < lo or (lo_open and value == lo):
            raise argparse.ArgumentTypeError(f"{text} is not in {'(' if lo_open else '['}{lo:g}, {hi:g}]")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``compare`` command's arguments to ``parser`` (a subcommand parser of ``guitest``)."""
    parser.add_argument("old", help="the baseline: a JSON report written by guitest, or a published run's folder (OSWorld's results layout: <action_space>/<observation_type>/<model>/)")
    parser.add_argument("new", help="the run to check against it (a report or a published run's folder, as OLD)")
    parser.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when any category is significantly worse (by at least --min-drop), or when the runs are not comparable (--min-paired)"
    )
    parser.add_argument(
        "--min-drop", type=_fraction_arg(0, 1, False), default=0.0, metavar="X", help="smallest drop of paired accuracy (0..1, e.g. 0.02 = 2 points) that counts as a regression; default 0"
    )
    parser.add_argument("--alpha", type=_fraction_arg(0, 1, True), default=0.05, metavar="A", help="significance level of the McNemar test, the noise test and the detectable changes; default 0.05")
    parser.add_argument(
        "--cluster",
        metavar="TAG",
        help="the tag whose cases were drawn together (the same screenshot, app or document): the task population's standard error is clustered by its value; default: case by case",
    )
    parser.add_argument(
        "--min-paired",
        type=_fraction_arg(0, 1, False),
        default=DEFAULT_MIN_PAIRED,
        metavar="X",
        help=f"the share (0..1) of the cases both runs selected that must be scored in both (not an error, a result in each); below it the runs are not comparable; default {DEFAULT_MIN_PAIRED}",
    )
    parser.add_argument("--json", metavar="OUT", help="also write the comparison as JSON to OUT ('-' for stdout)")
    parser.add_argument(
        "--html",
        metavar="PAGE",
        help="also write a page of the flipped cases to PAGE (.html): the statistics and what differs between the runs, then each flipped case with both runs' answers on its screenshot, or both episodes' steps side by side",
    )


def run(args: argparse.Namespace, load: Callable[[str], Report] = load_report, published: Any = None) -> int:
    """Run the ``compare`` command from parsed arguments: 0, 1 (with --fail-on-regression: a regression, or runs not
    comparable) or 2 (bad input). ``load`` reads each side (the command line's reads published runs' folders too), and
    ``published`` a published run's steps for ``--html`` (:class:`~guitest.reporting.compare_page.Published`)."""
    try:
        old = load(args.old)
        new = load(args.new)
    except ReportError as exc:
        print(f"guitest compare: {exc}", file=sys.stderr)
        return 2
    try:
        result = compare(old, new, min_drop=args.min_drop, alpha=args.alpha, min_paired=args.min_paired, cluster=args.cluster)
    except ClusterError as exc:
        print(f"guitest compare: {args.new}: {exc}", file=sys.stderr)
        return 2
    result["old"]["path"], result["new"]["path"] = str(args.old), str(args.new)
    # With --json - the JSON owns stdout and the table goes to stderr.
    print(format_text(result), end="", file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        text = strictjson.dumps(result, indent=1) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            try:
                strictjson.write_text(Path(args.json), text)
            except OSError as exc:
                print(f"guitest compare: cannot write {args.json}: {exc}", file=sys.stderr)
                return 2
    if args.html:
        from . import compare_page

        try:
            compare_page.write(Path(args.html), result, format_text(result), FLIPS, old, new, Path(args.old), Path(args.new), published)
        except OSError as exc:
            print(f"guitest compare: cannot write {args.html}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if args.fail_on_regression and (result["regressions"] or not result["comparable"]["enough"]):
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``guitest compare OLD.json NEW.json [--fail-on-regression] [--min-drop X] [--alpha A] [--min-paired X] [--cluster TAG] [--json OUT] [--html PAGE]``."""
    parser = argparse.ArgumentParser(
        prog="guitest compare",
        description="Compare two guitest reports: accuracy per category and an exact paired McNemar test on the shared cases.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
