"""MiniWoB++'s success rules (guitest/miniwob/rules.py): raw rewards around each threshold under both rules,
which rule a suite runs by (the option over the suite's setting over the default), bad names, and the rule reaching
the environment, the header, the report and each case's prediction in a pytest run. The real pages are in
tests/test_live_browser.py (circle-center by the oracle, click-checkboxes with a box left unticked)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from guitest.miniwob import rules
from guitest.errors import SuiteError
from guitest.run.live_case import LiveSetup
from guitest.live.protocol import EnvFailure
from guitest.tasks import load_task

# suites/miniwob/thresholds.py: the figures behind the thresholds, computed from the task pages' formulas
_spec = importlib.util.spec_from_file_location("miniwob_thresholds", Path(__file__).resolve().parents[1] / "suites" / "miniwob" / "thresholds.py")
evidence = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(evidence)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "task,raw,binary,browsergym",
    [
        ("click-test", 1.0, True, True),
        ("click-test", 0.9999, False, True),
        ("click-checkboxes", 1 / 3, False, True),  # one of three boxes wrong
        ("click-checkboxes", 0.0, False, False),
        ("click-test", -1.0, False, False),
        ("circle-center", 0.9717, True, True),  # the best whole-pixel click: raw 1 is impossible there
        ("circle-center", 0.85, True, True),
        ("circle-center", 0.8499, False, True),
        ("find-midpoint", 0.85, True, True),
        ("find-midpoint", 0.8499, False, True),
        ("bisect-angle", 0.9, True, True),
        ("bisect-angle", 0.8999, False, True),
        ("use-colorwheel", 0.95, True, True),
        ("use-colorwheel-2", 0.9499, False, True),
        ("circle-center", -1.0, False, False),  # outside the circle
    ],
)
def test_raw_rewards_around_the_thresholds_under_both_rules(task: str, raw: float, binary: bool, browsergym: bool) -> None:
    assert rules.judge("binary", task, raw)[0] is binary
    assert rules.judge("browsergym", task, raw)[0] is browsergym


def test_the_reason_says_which_rule_and_threshold_decided() -> None:
    assert rules.judge("binary", "circle-center", 0.9717) == (True, "raw reward 0.9717 >= 0.85, circle-center's threshold (success rule binary)")
    assert rules.judge("binary", "click-checkboxes", 1 / 3) == (False, "raw reward 0.3333 != 1 (success rule binary)")
    assert rules.judge("browsergym", "click-checkboxes", 1 / 3) == (True, "raw reward 0.3333 > 0 (success rule browsergym)")
    finished = rules.evaluation("browsergym", "click-option", {"done": True, "raw": -1, "reason": "wrong option"})
    assert (finished.success, finished.score, finished.reason) == (False, -1.0, "wrong option; raw reward -1 <= 0 (success rule browsergym)")
    unfinished = rules.evaluation("browsergym", "click-test", {"done": False, "raw": 1, "reason": None})
    assert (unfinished.success, unfinished.score) == (False, 0.0) and "did not finish" in unfinished.reason
    with pytest.raises(ValueError, match="binary, browsergym"):
        rules.judge("strict", "click-test", 1.0)


def test_each_threshold_accepts_what_its_reason_says() -> None:
    """The geometry figures of suites/miniwob/thresholds.py, computed from the pages' formulas, against the thresholds."""
    cc, fm = evidence.circle_center(), evidence.find_midpoint()
    for figures, task in ((cc, "circle-center"), (fm, "find-midpoint")):
        assert rules.judge("binary", task, figures["worst within 1 px"])[0], (task, figures)
        assert figures["worst within 1 px"] < 0.86 and not rules.judge("binary", task, 0.84)[0]
    assert round(cc["best click (r = 25)"], 4) == 0.9717 and round(cc["pointer on the drawn centre"], 4) == 0.9151
    assert round(fm["pointer on the drawn midpoint"], 4) == 0.9057
    assert set(rules.THRESHOLDS) == {"bisect-angle", "circle-center", "find-midpoint", "use-colorwheel", "use-colorwheel-2"}


def test_the_option_overrides_the_suite_setting_which_overrides_the_default() -> None:
    assert rules.choose("miniwob", {"success_rule": "binary"}, "browsergym", "s.yaml") == rules.Chosen("browsergym", "--success-rule")
    assert rules.choose("miniwob", {"success_rule": "browsergym"}, None, "s.yaml") == rules.Chosen("browsergym", "settings.success_rule")
    assert rules.choose("miniwob", {}, None, "s.yaml") == rules.Chosen("binary", "default")
    record = rules.Chosen("binary", "default").to_dict()
    assert record["thresholds"]["circle-center"] == 0.85 and rules.Chosen("browsergym", "default").to_dict()["thresholds"] == {}


def test_other_backends_have_no_rule() -> None:
    # --success-rule is for every MiniWoB++ suite of a run: another suite of the same run ignores it ...
    assert rules.choose("webapp", {}, "browsergym", "s.yaml") is None and rules.record("desktop", {}, "binary") == {}
    # ... but a suite that sets one where its backend decides by its own check is told to remove it
    with pytest.raises(SuiteError, match=r"web/suite.yaml, field 'settings.success_rule': only MiniWoB\+\+ suites .* env 'webapp' .*remove the setting"):
        rules.choose("webapp", {"success_rule": "binary"}, None, "web/suite.yaml")


def test_a_bad_rule_name_names_the_rules() -> None:
    with pytest.raises(SuiteError, match=r"field 'settings.success_rule': 'strict' is not one of \['binary', 'browsergym'\]"):
        load_task("live", {"success_rule": "strict"}, "suites/miniwob/suite.yaml")
    with pytest.raises(SuiteError, match="unknown success rule 'strict'; the rules: binary, browsergym"):
        rules.choose("miniwob", {"success_rule": "strict"}, None, "s.yaml")
    with pytest.raises(EnvFailure, match="success_rule must be one of binary, browsergym, got 'strict'"):
        rules.rule_option({"success_rule": "strict"})


def test_the_rule_reaches_the_backend_and_keys_its_pool() -> None:
    plain = LiveSetup(env="webapp", env_options={"zoom": 1})
    binary = LiveSetup(env="miniwob", env_options={"zoom": 3}, success_rule="binary")
    browsergym = LiveSetup(env="miniwob", env_options={"zoom": 3}, success_rule="browsergym")
    assert plain.options() == {"zoom": 1} and binary.options() == {"zoom": 3, "success_rule": "binary"}
    assert binary.key() != browsergym.key()


FAKE_BACKEND = '''
from guitest import envs
from guitest.miniwob import rules as miniwob_rules
from guitest.live.protocol import Observation

class PartialCredit:
    """Stands in for the miniwob backend: every episode ends at the first action with raw reward 1/3."""
    def __init__(self, options, base_dir):
        self.rule = miniwob_rules.rule_option(options)
    def reset(self, task, seed):
        self.task = task.name
        return Observation(b"png", (10, 10), "tick the boxes")
    def step(self, action):
        return Observation(b"png", (10, 10), "", done=True)
    def evaluate(self):
        return miniwob_rules.evaluation(self.rule, self.task, {"done": True, "raw": 1 / 3, "reason": None})
    def close(self):
        pass

envs.register("miniwob", lambda options, base_dir: PartialCredit(options, base_dir))
'''


def _suite(pytester: pytest.Pytester, name: str, settings: str) -> None:
    folder = pytester.path / "suites" / name
    folder.mkdir(parents=True)
    (folder / "tasks.json").write_text('[{"task": "click-checkboxes", "seeds": [0]}]')
    (folder / "suite.yaml").write_text(
        f'name: {name}\nformat: miniwob\ndata: {{dir: ., base: suite, annotations: tasks.json}}\ntask: live\nenv: miniwob\nmax_steps: 2\nid: "{{task}}-seed{{seed}}"\ntags: [task]\n{settings}'
    )


def _case(pytester: pytest.Pytester, name: str) -> tuple[dict, dict]:
    report = json.loads((pytester.path / "reports" / f"{name}.json").read_text())
    return report["run"].get("success_rule"), report["cases"][0]


def test_a_run_judges_by_the_suites_rule_or_the_option_and_says_so(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(FAKE_BACKEND)
    _suite(pytester, "lenient", "settings:\n  success_rule: browsergym\n")
    _suite(pytester, "plain", "")
    result = pytester.runpytest_subprocess("suites", "--model=random")
    rule, case = _case(pytester, "lenient")
    assert (rule["name"], rule["source"], case["verdict"], case["prediction"]["success_rule"], case["score"]) == ("browsergym", "settings.success_rule", "hit", "browsergym", 1 / 3)
    rule, case = _case(pytester, "plain")
    assert (rule["name"], rule["source"], case["verdict"], case["prediction"]["success_rule"]) == ("binary", "default", "miss", "binary")
    assert case["prediction"]["reason"] == "raw reward 0.3333 != 1 (success rule binary)"
    result.stdout.fnmatch_lines(
        ["success rule: browsergym (settings.success_rule): raw reward > 0*", "success rule: binary (default): raw reward == 1*thresholds bisect-angle 0.9, circle-center 0.85*"]
    )
    assert "guitest success rule:" not in result.stdout.str()  # no option: no header line

    first = json.loads((pytester.path / "reports" / "lenient.json").read_text())["run"]["started"]
    pytester.runpytest_subprocess("suites/lenient", "--model=random", "--lf")  # the same rule: --lf merges into the last report
    assert json.loads((pytester.path / "reports" / "lenient.json").read_text())["run"]["merged_into_report_of"] == first

    result = pytester.runpytest_subprocess("suites/lenient", "--model=random", "--success-rule=binary", "--lf")
    rule, case = _case(pytester, "lenient")
    assert (rule["name"], rule["source"], case["verdict"], case["prediction"]["success_rule"]) == ("binary", "--success-rule", "miss", "binary")
    result.stdout.fnmatch_lines(["guitest success rule: binary for MiniWoB++ suites (--success-rule): *"])
    # another rule: not merged into a report of cases judged by the first one
    assert json.loads((pytester.path / "reports" / "lenient.json").read_text())["run"]["merged_into_report_of"] is None

    result = pytester.runpytest_subprocess("suites/lenient", "--model=random", "--success-rule=strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --success-rule: invalid choice: 'strict' (choose from *binary*browsergym*)"])
