"""Counting verdicts: per-category tables with accuracy and a 95% Wilson interval.

Integer counts summed over results sorted by case id, so any order of arrival
(serial or ``-n 8``) gives the same numbers, byte for byte.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

from .verdict import ERROR, HIT, VERDICTS

Z95 = 1.959963984540054


def wilson(hits: int, n: int, z: float = Z95) -> list[float]:
    """The Wilson score interval for ``hits`` of ``n`` (``[0, 0]`` when ``n`` is 0)."""
    if n == 0:
        return [0.0, 0.0]
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)]


def counts(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Verdict counts, accuracy over the scored cases (errors excluded) and its 95% interval."""
    table = {v: 0 for v in VERDICTS}
    for result in results:
        table[result["verdict"]] += 1
    n = sum(table.values())
    scored = n - table[ERROR]
    return {
        "n": n,
        **table,
        "accuracy": round(table[HIT] / scored, 6) if scored else None,
        "ci95": wilson(table[HIT], scored),
    }


def group_key(result: dict[str, Any], tags: Sequence[str]) -> str | None:
    """The value of one tag, or of a combination joined by '/', for a result; None when a tag is absent.

    In a combination, '%' and '/' inside a value are escaped (``%25``, ``%2F``) so that
    ``('a/b', 'c')`` and ``('a', 'b/c')`` stay two categories.
    """
    values = [result["tags"].get(t) for t in tags]
    if any(v is None for v in values):
        return None
    if len(values) == 1:
        return values[0]
    return "/".join(v.replace("%", "%25").replace("/", "%2F") for v in values)


def aggregate(results: list[dict[str, Any]], tags: Sequence[str], cross: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """Overall counts, a breakdown per tag and per tag combination, and macro averages."""
    ordered = sorted(results, key=lambda r: r["id"])
    breakdown: dict[str, dict[str, Any]] = {}
    macro: dict[str, float | None] = {}
    for combo in [(t,) for t in tags] + [tuple(c) for c in cross]:
        name = "/".join(combo)
        groups: dict[str, list[dict[str, Any]]] = {}
        for result in ordered:
            key = group_key(result, combo)
            if key is not None:
                groups.setdefault(key, []).append(result)
        breakdown[name] = {value: counts(groups[value]) for value in sorted(groups)}
        accs = [row["accuracy"] for row in breakdown[name].values() if row["accuracy"] is not None]
        macro[name] = round(math.fsum(accs) / len(accs), 6) if accs else None
    notes: dict[str, int] = {}
    for result in ordered:
        for note in result.get("notes") or ():
            notes[note] = notes.get(note, 0) + 1
    return {"overall": counts(ordered), "breakdown": breakdown, "macro": macro, "notes": dict(sorted(notes.items()))}


def headline(agg: dict[str, Any], average: str, macro_over: str | None) -> dict[str, Any]:
    """The number the benchmark's paper reports, beside the other average, each named."""
    micro = agg["overall"]["accuracy"]
    macro = agg["macro"].get(macro_over) if macro_over else None
    if average == "macro":
        return {"average": "macro", "over": macro_over, "accuracy": macro, "micro": micro, "macro": macro,
                "what": f"unweighted mean of the accuracies of the {macro_over} values (the paper's average)"}
    return {"average": "micro", "over": None, "accuracy": micro, "micro": micro, "macro": macro,
            "what": "hits over all scored cases (the paper's average)"}
