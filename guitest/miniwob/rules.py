"""When a MiniWoB++ episode counts as a success: the named success rules, and which one a suite runs by.

A finished MiniWoB++ episode has a raw reward in -1..1 (``WOB_RAW_REWARD_GLOBAL``: the task's own
reward before the time penalty); a few tasks give partial credit. How that becomes a success is a
choice the reference harnesses make differently:

- ``binary`` (the default): success when the raw reward is 1, as Farama's ``miniwob`` package counts
  it (``get_binary_reward``, miniwob/reward.py; its docs, docs/content/reward.md, call it the reward
  "used in most previous publications"). Five tasks score a continuous distance to the answer, which
  whole-pixel clicks seldom make exactly 1 (on circle-center never); for them the package's own
  docstrings (miniwob/envs/miniwob_envs.py) say to
  binarize with ``get_thresholded_reward`` (raw >= a threshold) instead, and leave the threshold to
  the user: :data:`THRESHOLDS` are guitest's, each derived from the task page's reward formula.
- ``browsergym``: success when the raw reward is above 0, as BrowserGym 0.14.3 scores a MiniWoB++ task
  (browsergym/miniwob/src/browsergym/miniwob/base.py, ``validate``:
  ``reward = float(info["RAW_REWARD_GLOBAL"] > 0)``). Partial credit counts in full: click-checkboxes
  with one of three boxes wrong (raw 1/3) is a success.

Only the ``miniwob`` backend has a rule: the other backends decide success by their own check (a web
task's ``success`` expression, a desktop task's evaluator). The rule is the suite's
``settings.success_rule``, or ``--success-rule`` for every MiniWoB++ suite of a run (:func:`choose`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import SuiteError, where
from ..report_parts import SuccessRule

if TYPE_CHECKING:  # the live protocol is imported where an episode is scored, not when a grounding run reads its options
    from ..live.protocol import Evaluation

BINARY, BROWSERGYM = "binary", "browsergym"
RULES = (BINARY, BROWSERGYM)
#: where a suite's rule came from, as the report's ``run.success_rule.source`` says it
OPTION, SETTING, DEFAULTED = "--success-rule", "settings.success_rule", "default"
SOURCES = (OPTION, SETTING, DEFAULTED)
DEFAULT = BINARY
MEANING = {
    BINARY: "raw reward == 1 (Farama's get_binary_reward), or >= the task's threshold for the 5 continuous tasks (get_thresholded_reward)",
    BROWSERGYM: "raw reward > 0 (BrowserGym 0.14.3's MiniWoB++ reward: partial credit counts in full)",
}


@dataclass(frozen=True)
class Threshold:
    """A continuous task's success threshold under ``binary``: ``value``, and why that value (from the task's formula)."""

    value: float
    why: str


# Each task page (miniwob/html/miniwob/<task>.html) scores a distance to the answer; suites/miniwob/thresholds.py
# computes every figure below. The three geometry tasks draw and score their blue dot at the click's page coordinates
# read as svg coordinates less the 50 px query (pageX, pageY - 50): 2 px right of and below the pointer, as they
# ignore #area's 2 px padding; and page coordinates are whole CSS pixels (Chromium floors the pointer position).
THRESHOLDS: dict[str, Threshold] = {
    "circle-center": Threshold(
        0.85,
        "raw = 1 - d/r, r the radius (25..39), d the distance of the dot's centre from the circle's plus (0.5, 0.5) "
        "(the page takes the dot's box at 3.5 px from its centre, the circle's at 3): raw 1 is impossible; the dot "
        "on the centre scores 1 - 0.71/r (0.972 at r = 25), the pointer on the drawn centre 1 - 2.12/r (0.915), and "
        "a pointer within 1 CSS pixel of the drawn centre on each axis at least 1 - 3.54/25 = 0.859",
    ),
    "find-midpoint": Threshold(
        0.85,
        "raw = 1 - d/30, d the distance of the dot from the midpoint of the two drawn points: the pointer on the "
        "drawn midpoint scores 1 - 2.83/30 (0.906), and a pointer within 1 CSS pixel of it on each axis at least "
        "1 - 4.24/30 = 0.859 (circle-center's tolerance); the dot on a whole-pixel midpoint scores 1",
    ),
    "bisect-angle": Threshold(
        0.9,
        "raw = 1 - (larger part - smaller part) / angle for a line inside the angle: 0.9 accepts a split no "
        "worse than 45:55; the best whole-pixel click reaches 0.99 in 99.6% of 3,000 simulated problems and "
        "misses 0.9 only where the angle is under 1 degree",
    ),
    "use-colorwheel": Threshold(
        0.95,
        "raw = 1 - the mean of |chosen - asked| over R, G, B / 255: 0.95 allows a mean error of 5% (12.75 of 255); "
        "on jscolor's 101x71 hue-saturation pad and 71 px value slider the best position scores at least 0.993 "
        "for the 19 colour names and one pixel off it on each control at least 0.959",
    ),
    "use-colorwheel-2": Threshold(
        0.95,
        "as use-colorwheel, for a random #rgb colour: the best picker position scores at least 0.988 and one pixel off it on each control at least 0.960 (300 random colours)",
    ),
}


def judge(rule: str, task: str, raw: float) -> tuple[bool, str]:
    """Whether the raw reward ``raw`` of a finished episode of MiniWoB++ task ``task`` is a success under ``rule``,
    and a sentence saying why (for the case's reason). ValueError for a rule not in :data:`RULES`."""
    if rule == BROWSERGYM:
        return raw > 0, f"raw reward {raw:.4g} {'>' if raw > 0 else '<='} 0 (success rule browsergym)"
    if rule != BINARY:
        raise ValueError(f"unknown MiniWoB++ success rule {rule!r}; the rules: {', '.join(RULES)}")
    threshold = THRESHOLDS.get(task)
    if threshold is None:
        return raw == 1.0, f"raw reward {raw:.4g} {'==' if raw == 1.0 else '!='} 1 (success rule binary)"
    success = raw >= threshold.value
    return success, f"raw reward {raw:.4g} {'>=' if success else '<'} {threshold.value:g}, {task}'s threshold (success rule binary)"


def evaluation(rule: str, task: str, state: Mapping[str, Any]) -> Evaluation:
    """The evaluation of a MiniWoB++ episode of ``task`` whose page reads ``state`` (``done``, ``raw``: the raw reward,
    ``reason``: the task's own, or None): the raw reward as the score, success as ``rule`` judges it; an unfinished
    episode scores 0 and is no success."""
    from ..live.protocol import Evaluation

    if not state.get("done"):
        return Evaluation(False, 0.0, "the episode did not finish (the task's reward was never given)")
    raw = float(state["raw"])
    success, why = judge(rule, task, raw)
    return Evaluation(success, raw, f"{state['reason']}; {why}" if state.get("reason") else why)


def rule_option(options: Mapping[str, Any]) -> str:
    """The backend option ``success_rule`` (:data:`DEFAULT` when absent); EnvFailure naming the rules for another value."""
    rule = options.get("success_rule", DEFAULT)
    if rule not in RULES:
        from ..live.protocol import EnvFailure

        raise EnvFailure(f"success_rule must be one of {', '.join(RULES)}, got {rule!r}")
    return str(rule)


@dataclass(frozen=True)
class Chosen:
    """The rule a suite runs by (``name``) and where it came from (``source``: ``--success-rule``,
    ``settings.success_rule`` or ``default``)."""

    name: str
    source: str

    def to_dict(self) -> SuccessRule:
        """The report's record of the rule: name, source, meaning, and the thresholds it applies (task -> value)."""
        thresholds = {task: t.value for task, t in sorted(THRESHOLDS.items())} if self.name == BINARY else {}
        return {"name": self.name, "source": self.source, "meaning": MEANING[self.name], "thresholds": thresholds}


def choose(env: str, settings: Mapping[str, Any], option: str | None, suite_path: str) -> Chosen | None:
    """The success rule of a live suite on backend ``env``: ``option`` (``--success-rule``) when given, else the
    suite's ``settings["success_rule"]``, else :data:`DEFAULT`. None for a backend other than ``miniwob``, whose
    checks are pass or fail: ``--success-rule`` does not apply to it (a run may hold several suites), and a
    ``settings.success_rule`` there is a SuiteError, as is a rule name that does not exist."""
    setting = settings.get("success_rule")
    if env != "miniwob":
        if setting is not None:
            raise SuiteError(
                f"{where(suite_path, field='settings.success_rule')}: only MiniWoB++ suites (env: miniwob) have a success rule, "
                f"since only their rewards are partial; env {env!r} decides success by its own check: remove the setting"
            )
        return None
    if option is not None:
        name, source = option, OPTION
    elif setting is not None:
        name, source = setting, SETTING
    else:
        name, source = DEFAULT, DEFAULTED
    if name not in RULES:
        raise SuiteError(f"{where(suite_path, field=source)}: unknown success rule {name!r}; the rules: {', '.join(RULES)}")
    return Chosen(name, source)


def record(env: str | None, settings: Mapping[str, Any], option: str | None) -> dict[str, SuccessRule]:
    """``{"success_rule": ...}`` for a report's run record (:meth:`Chosen.to_dict`) when ``env`` is a MiniWoB++ suite's
    backend with a valid rule; else nothing (``{}``: other suites have no rule, and a bad one failed collection)."""
    try:
        chosen = choose(env, settings, option, "suite.yaml") if env else None
    except SuiteError:
        return {}
    return {"success_rule": chosen.to_dict()} if chosen else {}


def header_line(option: str) -> str:
    """The run header's line for ``--success-rule=option``."""
    return f"guitest success rule: {option} for MiniWoB++ suites (--success-rule): {MEANING[option]}; other backends decide success by their own check"


def summary_line(record: Mapping[str, Any]) -> str:
    """A suite summary's line for the report's ``run.success_rule`` record (:meth:`Chosen.to_dict`)."""
    return f"success rule: {record['name']} ({record['source']}): {record['meaning']}" + (
        "; thresholds " + ", ".join(f"{task} {value:g}" for task, value in record["thresholds"].items()) if record["thresholds"] else ""
    )
