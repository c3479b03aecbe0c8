"""The release gate: accuracy thresholds, overall and per category."""

from __future__ import annotations

from typing import Any

DEFAULT_EXIT_CODE = 10


def thresholds(suite_gate: dict[str, Any], min_accuracy: float | None, metric: str | None = None, default_metric: str = "accuracy") -> dict[str, Any]:
    """The thresholds in force: the suite's ``gate:``, with ``--min-accuracy`` replacing its overall one
    and ``--gate-metric`` its metric (``accuracy``, which is avg@k with repeats, ``pass@k``, or a live suite's
    ``mean_score``); without either, the task's ``default_metric`` (a live suite's headline figure)."""
    out = {"metric": metric or suite_gate.get("metric", default_metric), "accuracy": suite_gate.get("accuracy"), "by": dict(suite_gate.get("by", {}))}
    if min_accuracy is not None:
        out["accuracy"] = min_accuracy
    return out


def value(row: dict[str, Any], metric: str) -> float | None:
    """A table row's value of the gate metric: accuracy (avg@k), pass@k (pass@1 = accuracy without repeats), or
    the mean score of a live suite's episodes."""
    if metric == "pass@k" and "repeats" in row:
        return row["repeats"].get(f"pass@{row['repeats']['k']}")
    if metric == "mean_score":
        return row.get("mean_score")
    return row["accuracy"]


def check(limits: dict[str, Any], aggregate: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Return ``(failures, notes)``: one line per threshold not met, and per threshold that could not be checked."""
    failures: list[str] = []
    notes: list[str] = []
    metric = limits.get("metric", "accuracy")
    overall = value(aggregate["overall"], metric)
    if limits.get("accuracy") is not None:
        if overall is None:
            failures.append(f"overall {metric}: no scored case, needs >= {limits['accuracy']:.4f}")
        elif overall < limits["accuracy"]:
            failures.append(f"overall {metric} {overall:.4f} < {limits['accuracy']:.4f}")
    for key, minimum in sorted(limits.get("by", {}).items()):
        tag, _, wanted = key.partition("=")
        row = aggregate["breakdown"].get(tag, {}).get(wanted)
        got = value(row, metric) if row else None
        if got is None:
            notes.append(f"{key}: no scored case in this run, threshold {minimum:.4f} not checked")
        elif got < minimum:
            failures.append(f"{key} {metric} {got:.4f} < {minimum:.4f}")
    return failures, notes
