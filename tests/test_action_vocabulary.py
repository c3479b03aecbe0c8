"""The action vocabulary is open: an environment declares its own kinds once (guitest.live.actions.declare) and lists
what it takes; guitest's own runner reads, writes and prompts them without an edit, the runners that follow a
reference read what their reference reads and note the rest, and the episode loop never hands an environment a kind
it does not take."""

from __future__ import annotations

import pytest

from guitest.live import actions, runners
from guitest.live.actions import KINDS, Action
from guitest.live.loop import Decision, StepInput, run_episode
from guitest.live.protocol import Evaluation, Observation, TaskSpec
from guitest.live.runners.guitest import step_text

SWIPE = actions.Kind("swipe", ("point", "end"), doc="swipe from the first point to the second")
BACK = actions.Kind("back", doc="the system's Back button")


@pytest.fixture(autouse=True)
def touch_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """swipe and back declared for this test only (declarations are per process: other tests see none)."""
    monkeypatch.setattr(actions, "_declared", {})
    assert actions.declare("swipe", ("point", "end"), doc=SWIPE.doc) == SWIPE
    assert actions.declare("back", doc=BACK.doc) == BACK


TASK = TaskSpec(env="touch", name="swipe-left", instruction="Swipe the card away")


class TouchEnv:
    """A 100x50 screen; it takes the built-in kinds and, when ``touch``, swipe and back. Records what it was sent."""

    def __init__(self, touch: bool) -> None:
        if touch:
            self.takes = KINDS + ("swipe", "back")
        self.sent: list[Action] = []

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        self.sent = []
        return Observation(b"png", (100, 50), task.instruction)

    def step(self, action: Action) -> Observation:
        self.sent.append(action)
        return Observation(b"png", (100, 50), "", done=action.kind == "swipe")

    def evaluate(self) -> Evaluation:
        swiped = any(a.kind == "swipe" for a in self.sent)
        return Evaluation(swiped, float(swiped), "swiped" if swiped else "not swiped")

    def close(self) -> None:
        pass


class Replying:
    """A policy that answers ``reply`` every step, read by ``runner`` and mapped to the screen as a model's reply is."""

    def __init__(self, runner: str, reply: str) -> None:
        self.runner, self.reply = runners.get(runner), reply

    def act(self, step: StepInput) -> Decision:
        read = self.runner.read(self.reply)
        size = step.observation.size
        space = self.runner.space_for(None)
        return Decision(self.reply, tuple(self.runner.to_screen(a, space, size, size) for a in read.actions), notes=read.notes)


def test_guitest_runner_reads_writes_and_prompts_a_declared_kind() -> None:
    runner = runners.get("guitest")
    read = runner.read("I will swipe. Action: swipe(0.1, 0.5, 0.9, 0.5)")
    assert read.actions == (Action("swipe", point=(0.1, 0.5), end=(0.9, 0.5), space="normalized"),) and read.notes == ()
    assert runner.render(read.actions) == "Action: swipe(0.1, 0.5, 0.9, 0.5)"
    assert runner.read(runner.render(read.actions)).actions == read.actions
    assert runner.read("Action: back()").actions == (Action("back"),)
    assert runner.read("Action: swipe(0.1, 0.5)").notes == ("no_action",)  # a missing end: not read
    prompt = step_text("Swipe the card away", [], (100, 50))
    assert "swipe(x, y, x2, y2)         swipe from the first point to the second" in prompt and "back()" in prompt


@pytest.mark.parametrize(
    ("runner", "reply", "note"),
    [
        ("qwen3vl", '<tool_call>\n{"name": "computer_use", "arguments": {"action": "swipe", "coordinate": [10, 20]}}\n</tool_call>', "swipe_not_run"),
        ("uitars15", "Thought: swipe it\nAction: swipe(start_box='(10,20)', end_box='(90,20)')", "unknown_action_swipe_does_nothing"),
        ("prompt-agent", "```python\npyautogui.swipe(10, 20, 90, 20)\n```", "line 1: swipe_not_run"),
    ],
)
def test_a_runner_reads_what_its_reference_reads_and_notes_the_rest(runner: str, reply: str, note: str) -> None:
    read = runners.get(runner).read(reply)
    assert read.actions == () and read.notes == (note,)


def test_an_environment_gets_the_kinds_it_takes_and_no_other() -> None:
    touch = TouchEnv(touch=True)
    episode = run_episode(touch, TASK, 0, Replying("guitest", "Action: swipe(0.1, 0.5, 0.9, 0.5)"), max_steps=3)
    assert episode.success and [a.kind for a in touch.sent] == ["swipe"]
    assert touch.sent[0].point == pytest.approx((10.0, 25.0)) and touch.sent[0].end == pytest.approx((90.0, 25.0)) and touch.sent[0].space == "screen"
    desk = TouchEnv(touch=False)  # takes only the built-in kinds
    refused = run_episode(desk, TASK, 0, Replying("guitest", "Action: swipe(0.1, 0.5, 0.9, 0.5)"), max_steps=2)
    assert desk.sent == [] and not refused.success and len(refused.steps) == 2
    assert any("action 1 refused: the environment takes no 'swipe' action" in n for n in refused.steps[0].notes)


def test_declaring_is_checked() -> None:
    assert actions.declare("swipe", ("point", "end"), doc="swipe from the first point to the second") == SWIPE  # again, the same: harmless
    with pytest.raises(ValueError, match="declared already"):
        actions.declare("swipe", ("point",))
    with pytest.raises(ValueError, match="built-in"):
        actions.declare("click", ("point",))
    with pytest.raises(ValueError, match="not colour"):
        actions.declare("paint", ("point", "colour"))
    with pytest.raises(ValueError, match="unknown action kind 'pinch'.*declare"):
        Action("pinch")
    assert Action("back").describe() == {"kind": "back"} and BACK in actions.declared()
