"""A task's ``evaluator`` run the way OSWorld's and Windows Agent Arena's harness runs it.

Order, as in ``DesktopEnv.evaluate``:

1. The FAIL rule (:func:`guitest.formats.waa.infeasible_rule`): an ``infeasible`` task scores 1 exactly when the
   agent's last action is FAIL (else 0); a feasible task whose last action is FAIL scores 0. Decided
   without any getter or metric.
2. A task with a metric or getter guitest does not implement is not scored: its
   :class:`~guitest.live.protocol.Evaluation` has ``decided_by="judge"`` and a reason naming what is
   missing, so the trajectory judge decides it (as UFO does); never a silent 0.
3. ``postconfig`` steps run (saving the file, closing the app, ...).
4. Each metric ``func[i]`` gets ``result[i]`` from its getter and, when given, ``expected[i]``, with
   ``options[i]``. A getter or metric that fails (a missing file, a malformed value) scores 0, as there;
   a machine that stops answering is an EnvFailure (an error outcome), not a 0.
   ``conj: and`` (the default): 0 as soon as one metric is 0, else the mean; ``or``: 1 as soon as one is
   1, else the maximum.

Success is a score of 1; the raw score (partial credit of ``fuzzy_match`` and the like) is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ..live.protocol import EnvFailure, Evaluation
from ..formats.waa import infeasible_rule
from .getters import GETTERS, GetterContext
from .metrics import INFEASIBLE, METRICS

ENVIRONMENT, JUDGE = "environment", "judge"


@dataclass(frozen=True)
class Part:
    """One metric of an evaluator with its getters' configs and options."""

    func: str
    result: dict[str, Any] | None
    expected: dict[str, Any] | None
    options: dict[str, Any] = field(default_factory=dict)


def _listed(value: Any, n: int, default: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if value is None:
        return [default] * n
    return [value] * n


def parts(evaluator: dict[str, Any]) -> list[Part]:
    """The evaluator's metrics, each with its result and expected getter configs and options.

    ValueError naming the field when ``func`` is a list and ``result``, ``expected`` or ``options``
    is a list of another length (desktop-env requires equal lengths).
    """
    funcs = evaluator.get("func")
    if isinstance(funcs, list):
        n = len(funcs)
        columns = {}
        for name, default in (("result", None), ("expected", None), ("options", {})):
            column = _listed(evaluator.get(name), n, default)
            if len(column) != n:
                raise ValueError(f"evaluator.{name} has {len(column)} entries for {n} metrics in evaluator.func")
            columns[name] = column
        return [Part(str(f), columns["result"][i] or None, columns["expected"][i] or None, columns["options"][i] or {}) for i, f in enumerate(funcs)]
    return [Part(str(funcs), evaluator.get("result") or None, evaluator.get("expected") or None, evaluator.get("options") or {})]


def is_infeasible(evaluator: dict[str, Any]) -> bool:
    """Whether the task is infeasible by design (its metric is ``infeasible``)."""
    funcs = evaluator.get("func")
    return INFEASIBLE in (funcs if isinstance(funcs, list) else [funcs])


def missing(evaluator: dict[str, Any]) -> list[str]:
    """What of ``evaluator`` guitest does not implement (``metric compare_table``, ``getter vm_wallpaper``); empty when it can score it."""
    if is_infeasible(evaluator):
        return []
    out: list[str] = []
    try:
        items = parts(evaluator)
    except ValueError as exc:
        return [f"a well-formed evaluator ({exc})"]
    for part in items:
        if part.func not in METRICS:
            out.append(f"metric {part.func}")
        for config in (part.result, part.expected):
            if config is not None:
                kind = config.get("type") if isinstance(config, dict) else None
                if kind not in GETTERS:
                    out.append(f"getter {kind}")
    return list(dict.fromkeys(out))


def decided_by(evaluator: dict[str, Any]) -> str:
    """``environment`` when guitest scores this evaluator itself, ``judge`` when the trajectory judge must."""
    return JUDGE if missing(evaluator) else ENVIRONMENT


def _describe(config: dict[str, Any] | None) -> str:
    if not config:
        return "-"
    kind = config.get("type", "?")
    for key in ("path", "file_name", "filename", "command"):
        if key in config:
            value = config[key]
            shown = " ".join(map(str, value)) if isinstance(value, list) else str(value)
            return f"{kind} {shown[:60]}"
    return str(kind)


def _score(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def evaluate(
    evaluator: dict[str, Any],
    ctx: GetterContext,
    *,
    last_action: str | None,
    postconfig: Callable[[list[dict[str, Any]]], None] | None = None,
) -> Evaluation:
    """The evaluator's verdict on the episode as it stands; ``last_action`` is the kind of the agent's
    last action (``fail`` triggers the FAIL rule). ``postconfig`` runs the evaluator's postconfig steps
    (the backend passes its set-up runner). EnvFailure when the machine fails."""
    infeasible = is_infeasible(evaluator)
    rule = infeasible_rule(infeasible, last_action == "fail")
    if rule is not None:
        verdict, why = rule
        return Evaluation(verdict == "yes", 1.0 if verdict == "yes" else 0.0, f"FAIL rule: {why}")
    if infeasible:
        return Evaluation(False, 0.0, "FAIL rule: an infeasible task, and the agent did not answer FAIL")
    lacking = missing(evaluator)
    if lacking:
        return Evaluation(False, 0.0, f"guitest does not implement {', '.join(lacking)}: the trajectory judge decides this task", decided_by=JUDGE)
    if postconfig is not None and evaluator.get("postconfig"):
        postconfig(evaluator["postconfig"])
    conj = evaluator.get("conj", "and")
    scores: list[float] = []
    notes: list[str] = []
    for part in parts(evaluator):
        value, note = _one(part, ctx)
        notes.append(note)
        scores.append(value)
        if conj == "and" and value == 0.0:
            return Evaluation(False, 0.0, "; ".join(notes))
        if conj == "or" and value == 1.0:
            return Evaluation(True, 1.0, "; ".join(notes))
    total = math.fsum(scores) / len(scores) if conj == "and" else max(scores)
    return Evaluation(total >= 1.0, total, "; ".join(notes) + (f" ({conj})" if len(scores) > 1 else ""))


def _one(part: Part, ctx: GetterContext) -> tuple[float, str]:
    """One metric's score and a note saying how it came about."""
    label = f"{part.func}({_describe(part.result)}, {_describe(part.expected)})"
    values = []
    for which, config in (("result", part.result), ("expected", part.expected)):
        try:
            values.append(GETTERS[config["type"]](ctx, config) if config else None)
        except EnvFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - desktop-env scores a failing getter 0; so do we, saying why
            return 0.0, f"{label} = 0: the {which} getter failed ({type(exc).__name__}: {exc})"
    result, expected = values
    try:
        raw = METRICS[part.func](result, expected, **part.options) if expected is not None else METRICS[part.func](result, **part.options)
    except Exception as exc:  # noqa: BLE001 - a malformed value scores 0, with its reason
        return 0.0, f"{label} = 0: the metric failed ({type(exc).__name__}: {exc})"
    value = _score(raw)
    if value is None:
        return 0.0, f"{label} = 0: the metric gave {raw!r}, not a number"
    return value, f"{label} = {value:g}"
