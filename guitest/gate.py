"""The release gate: accuracy thresholds, overall and per category."""

from __future__ import annotations

from typing import Any

DEFAULT_EXIT_CODE = 10


def thresholds(suite_gate: dict[str, Any], min_accuracy: float | None) -> dict[str, Any]:
    """The thresholds in force: the suite's ``gate:``, with ``--min-accuracy`` replacing its overall one."""
    out = {"accuracy": suite_gate.get("accuracy"), "by": dict(suite_gate.get("by", {}))}
    if min_accuracy is not None:
        out["accuracy"] = min_accuracy
    return out


def check(limits: dict[str, Any], aggregate: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Return ``(failures, notes)``: one line per threshold not met, and per threshold that could not be checked."""
    failures: list[str] = []
    notes: list[str] = []
    overall = aggregate["overall"]["accuracy"]
    if limits.get("accuracy") is not None:
        if overall is None:
            failures.append(f"overall accuracy: no scored case, needs >= {limits['accuracy']:.4f}")
        elif overall < limits["accuracy"]:
            failures.append(f"overall accuracy {overall:.4f} < {limits['accuracy']:.4f}")
    for key, minimum in sorted(limits.get("by", {}).items()):
        tag, _, value = key.partition("=")
        row = aggregate["breakdown"].get(tag, {}).get(value)
        if row is None or row["accuracy"] is None:
            notes.append(f"{key}: no scored case in this run, threshold {minimum:.4f} not checked")
        elif row["accuracy"] < minimum:
            failures.append(f"{key} accuracy {row['accuracy']:.4f} < {minimum:.4f}")
    return failures, notes
