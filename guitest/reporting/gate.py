"""The release gate: accuracy thresholds, overall and per category, and no gate on machines in an unknown state.

A live episode records how its machine was brought into shape before it ran (``prediction["reset"]``:
``reverted``, ``reset`` or ``none``, see :mod:`guitest.desktopenv.machine`). An episode on a machine nothing reset
(``none``) may have been decided by what earlier episodes left there (a file the previous agent wrote, a
window over the click point), so a gate does not pass on a run with such a scored episode unless the user
says so (``allow_unknown_state``, ``--allow-unknown-state``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping
from .document import GateThresholds, Report

DEFAULT_EXIT_CODE = 10
#: the share of the cases both runs selected that a comparison needs scored in both (``--min-paired``, ``--baseline-min-paired``)
DEFAULT_MIN_PAIRED = 0.9
#: verdicts of a live episode that count in its suite's score (an error or an unsure one does not)
SCORED = ("hit", "miss")
UNKNOWN = "none"


def thresholds(suite_gate: dict[str, Any], min_accuracy: float | None, metric: str | None = None, default_metric: str = "accuracy") -> GateThresholds:
    """The thresholds in force: the suite's ``gate:``, with ``--min-accuracy`` replacing its overall one
    and ``--gate-metric`` its metric (``accuracy``, which is avg@k with repeats, ``pass@k``, or a live suite's
    ``mean_score``); without either, the task's ``default_metric`` (a live suite's headline figure)."""
    out: GateThresholds = {"metric": metric or suite_gate.get("metric", default_metric), "accuracy": suite_gate.get("accuracy"), "by": dict(suite_gate.get("by", {}))}
    if min_accuracy is not None:
        out["accuracy"] = min_accuracy
    return out


def value(row: Mapping[str, Any], metric: str) -> float | None:
    """A table row's value of the gate metric: accuracy (avg@k), pass@k (pass@1 = accuracy without repeats), or
    the mean score of a live suite's episodes."""
    if metric == "pass@k" and "repeats" in row:
        return row["repeats"].get(f"pass@{row['repeats']['k']}")
    if metric == "mean_score":
        return row.get("mean_score")
    return row["accuracy"]


def unknown_state(cases: Iterable[Mapping[str, Any]]) -> int:
    """How many scored episodes of ``cases`` (report rows; each attempt of a repeated case) ran on a machine in
    an unknown state (``prediction["reset"] == "none"``)."""
    count = 0
    for case in cases:
        for episode in case.get("attempts") or [case]:
            prediction = episode.get("prediction")
            if episode.get("verdict") in SCORED and isinstance(prediction, dict) and prediction.get("reset") == UNKNOWN:
                count += 1
    return count


def unknown_state_line(aggregate: Report) -> str | None:
    """The summary's sentence on episodes that ran on a machine in an unknown state, or None when there were none."""
    n = unknown_state(aggregate.get("cases", ()))
    if not n:
        return None
    return f"{n} scored episode(s) ran on a machine in an unknown state (reset: none: nothing reverted or reset it before the episode, so what earlier episodes left there may have decided them)"


def subset_note(n_selected: int, n_suite: int | None) -> str:
    """The gate's note on a run of part of its suite (``n_selected`` of the suite's ``n_suite`` cases, None: not known):
    what it decides, it decides on those cases only."""
    if n_suite is None:
        return f"gated on a subset of the suite ({n_selected} selected cases): a pass says nothing of the cases not selected"
    return f"gated on a subset: {n_selected} of the suite's {n_suite} cases; a pass says nothing of the other {n_suite - n_selected}"


def check(limits: GateThresholds, aggregate: Report, allow_unknown_state: bool = False) -> tuple[list[str], list[str]]:
    """Return ``(failures, notes)``: one line per threshold not met, per threshold that could not be checked,
    and, when a threshold is in force, one failure for scored episodes on machines in an unknown state (a note
    instead with ``allow_unknown_state``)."""
    failures: list[str] = []
    notes: list[str] = []
    if limits.get("accuracy") is not None or limits.get("by"):
        line = unknown_state_line(aggregate)
        if line and allow_unknown_state:
            notes.append(f"{line}; gated on anyway (--allow-unknown-state)")
        elif line:
            failures.append(
                f"{line}: the gate does not pass on them; revert the machines before each episode (--env-provider) or use guitest's own desktop, or pass --allow-unknown-state to gate on them anyway"
            )
    metric = limits.get("metric", "accuracy")
    overall = value(aggregate["overall"], metric)
    floor = limits.get("accuracy")
    if floor is not None:
        if overall is None:
            failures.append(f"overall {metric}: no scored case, needs >= {floor:.4f}")
        elif overall < floor:
            failures.append(f"overall {metric} {overall:.4f} < {floor:.4f}")
    for key, minimum in sorted(limits.get("by", {}).items()):
        tag, _, wanted = key.partition("=")
        row = aggregate["breakdown"].get(tag, {}).get(wanted)
        got = value(row, metric) if row else None
        if got is None:
            notes.append(f"{key}: no scored case in this run, threshold {minimum:.4f} not checked")
        elif got < minimum:
            failures.append(f"{key} {metric} {got:.4f} < {minimum:.4f}")
    return failures, notes
