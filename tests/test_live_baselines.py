"""The live baselines without a browser: what the oracle and the random policy say, in every convention, and why a task has no oracle."""

from __future__ import annotations

from typing import Any

import pytest

from guitest.errors import ModelError
from guitest.live.baseline_policies import OraclePolicy, RandomPolicy, action_line, oracle_reason
from guitest.live import runners
from guitest.live.runners import uitars15
from guitest.live.actions import Action
from guitest.live.loop import Decision, StepInput
from guitest.miniwob.oracle import SOLVED, script
from guitest.live.protocol import Observation, TaskSpec

RUNNERS = ["guitest", "uitars15", "uitars15-qwen2vl", "qwen25vl", "qwen3vl", "prompt-agent", "aguvis"]


class PageStub:
    """An environment whose ``run_js`` answers like a page: the MiniWoB++ solution's next action, or a selector's centre."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[str, Any]] = []

    def run_js(self, expression: str, arg: Any = None) -> Any:
        self.calls.append((expression, arg))
        return self.answer(arg) if callable(self.answer) else self.answer


def only(decision: Decision) -> Action:
    """The one action of a decision (the baselines decide one action per step; the UI-TARS runners' pause after typing,
    OSWorld's ``time.sleep(0.5)``, goes with the typing)."""
    actions = [a for a in decision.actions if a.text != uitars15.PAUSE]
    assert len(actions) == 1, decision
    return actions[0]


def step_input(task: TaskSpec, step: int = 0, size: tuple[int, int] = (480, 630), scale: float = 3.0) -> StepInput:
    return StepInput(task, 0, "do it", Observation(b"png", size, "do it", scale=scale), (), step, 15)


@pytest.mark.parametrize("runner", RUNNERS)
def test_oracle_click_goes_through_the_runner_and_back_to_screen_pixels(runner: str) -> None:
    env = PageStub({"kind": "click", "x": 40, "y": 70})
    decision = OraclePolicy(env, runners.get(runner)).act(step_input(TaskSpec("miniwob", "click-button")))
    action = only(decision)
    assert action.kind == "click" and action.space == "screen"
    assert action.point == pytest.approx((120.0, 210.0), abs=1.0)  # CSS (40, 70) at zoom 3 (the Qwen runners truncate to whole pixels)
    assert decision.reply and decision.text and "```" not in decision.text and "tool_call>" not in decision.text
    assert env.calls[0] == (script("click-button"), 0)


@pytest.mark.parametrize("runner", RUNNERS)
def test_oracle_typing_and_keys(runner: str) -> None:
    typed = only(OraclePolicy(PageStub({"kind": "type", "text": 'Ada "Lovelace"'}), runners.get(runner)).act(step_input(TaskSpec("miniwob", "enter-text"))))
    assert typed.kind == "type" and typed.text == 'Ada "Lovelace"'
    keyed = only(OraclePolicy(PageStub({"kind": "key", "keys": ["ctrl", "a"]}), runners.get(runner)).act(step_input(TaskSpec("miniwob", "enter-text"))))
    assert keyed.keys == ("ctrl", "a")


def test_a_solution_that_answers_nonsense_says_fail() -> None:
    decision = OraclePolicy(PageStub("not an action")).act(step_input(TaskSpec("miniwob", "click-button")))
    assert only(decision).kind == "fail"


def test_web_solution_steps_then_done() -> None:
    spec = TaskSpec("webapp", "add", "Add it", {"success": "true", "solution": [{"click": "#new"}, {"type": "Buy milk"}, {"key": "enter"}, {"drag": ["#a", "#b"]}]})
    centres = {"#new": [100, 20], "#a": [10, 10], "#b": [30, 40]}
    policy = OraclePolicy(PageStub(lambda selector: centres.get(selector)))
    actions = [only(policy.act(step_input(spec, i, size=(800, 600), scale=1.0))) for i in range(5)]
    assert [a.kind for a in actions] == ["click", "type", "key", "drag", "done"]
    assert actions[0].point == pytest.approx((100, 20), abs=1e-3) and actions[1].text == "Buy milk" and actions[2].keys == ("enter",)
    assert actions[3].end == pytest.approx((30, 40), abs=1e-3)
    missing = TaskSpec("webapp", "x", "x", {"success": "true", "solution": [{"click": "#gone"}]})
    assert only(policy.act(step_input(missing, size=(800, 600), scale=1.0))).kind == "fail"


def test_oracle_reasons() -> None:
    assert oracle_reason(TaskSpec("miniwob", "click-button")) is None
    assert "no scripted solution for MiniWoB++ task 'book-flight'" in oracle_reason(TaskSpec("miniwob", "book-flight"))  # type: ignore[operator]
    assert "gives no solution steps" in oracle_reason(TaskSpec("webapp", "x", config={"success": "1"}))  # type: ignore[operator]
    assert "desktop task 'x' gives no scripted solution" in oracle_reason(TaskSpec("desktop", "x"))  # type: ignore[operator]
    assert oracle_reason(TaskSpec("desktop", "x"), {"oracle": [{"kind": "click", "point": [1, 2], "space": "screen"}]}) is None
    assert "backend 'android'" in oracle_reason(TaskSpec("android", "x"))  # type: ignore[operator]  # a backend without an oracle
    with pytest.raises(ModelError, match="book-flight"):
        OraclePolicy(PageStub(None)).act(step_input(TaskSpec("miniwob", "book-flight")))
    with pytest.raises(ModelError, match="run_js"):
        OraclePolicy(object()).act(step_input(TaskSpec("miniwob", "click-button")))
    assert len(SOLVED) == 33 and {"bisect-angle", "circle-center", "find-midpoint", "use-colorwheel", "use-colorwheel-2"} <= set(SOLVED) and script("book-flight") is None


@pytest.mark.parametrize("runner", RUNNERS)
def test_random_policy_is_seeded_and_stays_on_screen(runner: str) -> None:
    task = TaskSpec("miniwob", "click-button")
    first = [RandomPolicy(3, runners.get(runner)).act(step_input(task, i)) for i in range(30)]
    again = [RandomPolicy(3, runners.get(runner)).act(step_input(task, i)) for i in range(30)]
    other = [RandomPolicy(4, runners.get(runner)).act(step_input(task, i)) for i in range(30)]
    assert [d.reply for d in first] == [d.reply for d in again] != [d.reply for d in other]
    actions = [only(d) for d in first]
    kinds = {a.kind for a in actions}
    assert "click" in kinds and "done" not in kinds
    for a in actions:
        if a.point:
            assert 0 <= a.point[0] <= 480.5 and 0 <= a.point[1] <= 630.5


def test_action_line() -> None:
    assert action_line('<tool_call>\n{"name": "computer_use"}\n</tool_call>') == '{"name": "computer_use"}'
    assert action_line("Thought: click.\nAction: click(start_box='(1,2)')") == "Action: click(start_box='(1,2)')"
    assert action_line("```python\npyautogui.click(x=1, y=2)\n```") == "pyautogui.click(x=1, y=2)"


def test_an_environment_brings_its_own_oracle() -> None:
    """A backend of a project's own registers its scripted solutions beside itself (guitest.live.oracles): the oracle
    baseline runs them through the runner with no guitest module naming the backend."""
    from guitest.live import oracles

    class TapOracle:
        spoken = True

        def reason(self, task: TaskSpec, data: Any) -> str | None:
            return None if task.name == "tap" else f"{task.name}: only tap is scripted"

        def next_action(self, env: Any, step: StepInput, data: Any) -> Action:
            return Action("click", point=(100.0, 200.0), space="screen") if step.step == 0 else Action("done")

    oracles.register("tapenv", TapOracle())
    spec = TaskSpec("tapenv", "tap")
    policy = OraclePolicy(object(), runners.get("qwen3vl"))
    first = policy.act(step_input(spec, 0))
    assert only(first).kind == "click" and only(first).point == pytest.approx((100.0, 200.0), abs=1.0)
    assert "<tool_call>" in (first.reply or "")  # said as Qwen3-VL would say it, read back
    assert only(policy.act(step_input(spec, 1))).kind == "done"
    assert oracle_reason(TaskSpec("tapenv", "swipe")) == "swipe: only tap is scripted"
    with pytest.raises(ModelError, match="only tap"):
        policy.act(step_input(TaskSpec("tapenv", "swipe")))
