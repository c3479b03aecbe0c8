"""The outcome vocabulary and a case's result, as plain builtins that travel between processes."""

from __future__ import annotations

from typing import Any

HIT, MISS, UNPARSED, REFUSED, TRUNCATED, ERROR = "hit", "miss", "unparsed", "refused", "truncated", "error"
# A judge that could not decide (trajectory judging): counted as not a hit, reported apart.
UNSURE = "unsure"
VERDICTS = (HIT, MISS, UNPARSED, REFUSED, TRUNCATED, UNSURE, ERROR)
# With --repeats, a case whose attempts hit only some of the time; its attempts carry the verdicts above.
PARTIAL = "partial"
CASE_VERDICTS = VERDICTS + (PARTIAL,)

# What pytest shows for each verdict: (category, letter, word). hit is a plain pass and
# error a plain failure; the others are passed reports with their own category.
STATUS = {
    MISS: ("missed", "m", "MISSED"),
    UNPARSED: ("unparsed", "u", "UNPARSED"),
    REFUSED: ("refused", "r", "REFUSED"),
    TRUNCATED: ("truncated", "t", "TRUNCATED"),
    UNSURE: ("unsure", "?", "UNSURE"),
    PARTIAL: ("partial", "p", "PARTIAL"),
}


def test_status(result: dict[str, Any]) -> tuple[str, str, str] | None:
    """What pytest shows for a passed case with this result: ``(category, letter, word)`` from :data:`STATUS`, the
    word with the attempts' hits when the case was repeated (``PARTIAL 2/3``); None for a plain hit."""
    verdict = result["verdict"]
    category, letter, word = STATUS.get(verdict, ("passed", ".", "PASSED"))
    attempts = result.get("attempts")
    if attempts:
        return category, letter, f"{word} {sum(a['verdict'] == HIT for a in attempts)}/{len(attempts)}"
    return (category, letter, word) if verdict in STATUS else None


def case_result(
    case_id: str,
    verdict: str,
    tags: dict[str, str],
    *,
    prediction: dict[str, Any] | None = None,
    response: str | None = None,
    error: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One case's result as a dict of builtins (the wire format and a report row)."""
    if verdict not in CASE_VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}")
    out: dict[str, Any] = {"id": case_id, "verdict": verdict, "tags": dict(tags), "prediction": prediction, "response": response}
    if error is not None:
        out["error"] = error
    out.update(extra)
    return out
