"""The agent loop over a fake environment: how episodes end, what each step records, errors, timing; trajectories."""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import pytest
from PIL import Image

from guitest.run.case import DEFAULT_OPTIONS
from guitest.errors import ModelError
from guitest.exchange import Case, Prompt, Reply, SentImage
from guitest.live import runners
from guitest.live.actions import MAX_ACTIONS, MAX_COORDINATE, MAX_SCROLL, MAX_SECONDS, Action, problem
from guitest.live.agent import ModelPolicy
from guitest.run.live_case import _asker
from guitest.live.loop import Decision, Episode, StepInput, describe, run_episode
from guitest.live.protocol import EnvFailure, Environment, Evaluation, Observation, TaskSpec
from guitest.live.record import folder_sink, to_trajectory
from guitest.models.base import Model, Settings
from guitest.sample import Sample
from guitest.trajectory import Trajectory

DOCS = (Path(__file__).parent.parent / "docs" / "live_agents.md").read_text()

TASK = TaskSpec(env="fake", name="press-button", instruction="Press the button")


class FakeEnv:
    """A screen with one button at (10..20, 10..20): clicking it ends the episode with success
    (unless ``ends`` is False: then it only lights up); every other click counts as a miss-click."""

    def __init__(self, fail_at: str | None = None, ends: bool = True) -> None:
        self.fail_at = fail_at
        self.ends = ends
        self.pressed = False
        self.actions: list[Action] = []
        self.resets: list[int | None] = []
        self.closed = False

    def _obs(self) -> Observation:
        png = b"\x89PNG-fake-" + (b"pressed" if self.pressed else b"idle") + bytes(len(self.actions))
        return Observation(
            png,
            (100, 50),
            "Press the button (from the env)",
            scale=2.0,
            done=self.pressed and self.ends,
            info={"notes": ["outside_screen"]} if self.actions and self.actions[-1].point == (999, 999) else {},
        )

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        if self.fail_at == "reset":
            raise EnvFailure("the page crashed")
        self.resets.append(seed)
        self.pressed = False
        self.actions = []
        return self._obs()

    def step(self, action: Action) -> Observation:
        if self.fail_at == "step":
            raise EnvFailure("the page stopped answering")
        self.actions.append(action)
        if action.point is not None and 10 <= action.point[0] <= 20 and 10 <= action.point[1] <= 20:
            self.pressed = True
        return self._obs()

    def evaluate(self) -> Evaluation:
        if self.fail_at == "evaluate":
            raise EnvFailure("cannot read the reward")
        return Evaluation(self.pressed, 1.0 if self.pressed else 0.0, "pressed" if self.pressed else "not pressed")

    def close(self) -> None:
        self.closed = True


class Scripted:
    """A policy answering a fixed list of decisions (then repeating the last)."""

    def __init__(self, decisions: list[Decision | Exception]) -> None:
        self.decisions = decisions
        self.inputs: list[StepInput] = []

    def act(self, step: StepInput) -> Decision:
        self.inputs.append(step)
        item = self.decisions[min(step.step, len(self.decisions) - 1)]
        if isinstance(item, Exception):
            raise item
        return item


def click(x: float, y: float) -> Decision:
    return Decision(reply=f"Action: click({x}, {y})", actions=(Action("click", point=(x, y), space="screen"),))


GARBAGE = Decision(reply="I am not sure what to do.", notes=("no_action",))


def test_fake_env_satisfies_the_protocol() -> None:
    assert isinstance(FakeEnv(), Environment)


def test_success_when_the_environment_ends_the_episode() -> None:
    env = FakeEnv()
    policy = Scripted([click(50, 40), click(15, 15)])
    episode = run_episode(env, TASK, 7, policy, max_steps=5)
    assert episode.end == "env_done" and episode.success and episode.score == 1.0
    assert [s.number for s in episode.steps] == [1, 2]
    assert env.resets == [7]
    assert episode.instruction == "Press the button (from the env)"
    assert episode.steps[0].actions == ({"kind": "click", "point": [50, 40], "space": "screen"},) and episode.steps[0].executed == 1
    # the policy saw the screen before each step, the history of earlier decisions, and the budget
    assert [i.step for i in policy.inputs] == [0, 1]
    assert policy.inputs[1].history == (policy.decisions[0],)
    assert policy.inputs[1].history_texts == [policy.decisions[0].history_text]
    assert policy.inputs[0].budget == 5 and policy.inputs[0].seed == 7
    assert policy.inputs[0].screenshot_digest != policy.inputs[1].screenshot_digest
    assert episode.steps[0].png == policy.inputs[0].observation.screenshot
    assert episode.screen_size == (100, 50) and episode.scale == 2.0


def test_unreadable_replies_use_steps_and_the_episode_goes_on() -> None:
    env = FakeEnv()
    episode = run_episode(env, TASK, 0, Scripted([GARBAGE, GARBAGE, click(15, 15)]), max_steps=5)
    assert episode.success and len(episode.steps) == 3 and episode.end == "env_done"
    assert [s.actions for s in episode.steps[:2]] == [(), ()]
    assert all("unreadable_action" in s.notes and "no_action" in s.notes for s in episode.steps[:2])
    assert episode.steps[0].text == "(no readable action)"
    assert len(env.actions) == 1  # unreadable replies execute nothing


def test_garbage_to_the_end_is_a_miss_after_the_budget() -> None:
    episode = run_episode(FakeEnv(), TASK, 0, Scripted([GARBAGE]), max_steps=4)
    assert episode.end == "budget" and not episode.success and episode.score == 0.0
    assert len(episode.steps) == 4 and all(s.reply == GARBAGE.reply for s in episode.steps)


def test_done_and_fail_end_the_episode_and_the_environment_decides() -> None:
    env = FakeEnv(ends=False)
    done = Decision("Action: done()", (Action("done"),))
    episode = run_episode(env, TASK, 0, Scripted([click(15, 15), done]), max_steps=5)
    assert episode.end == "done" and episode.success and len(episode.steps) == 2
    early = run_episode(FakeEnv(), TASK, 0, Scripted([done]), max_steps=5)
    assert early.end == "done" and not early.success  # saying done does not make it so
    failed = run_episode(FakeEnv(), TASK, 0, Scripted([Decision("FAIL", (Action("fail", text="cannot"),))]), max_steps=5)
    assert failed.end == "fail" and not failed.success and len(failed.steps) == 1


@pytest.mark.parametrize(
    "where,steps,message",
    [
        ("reset", 0, "environment failed at reset: the page crashed"),
        ("step", 1, "step 1: environment failed: the page stopped answering"),
        ("evaluate", 1, "environment failed at evaluation: cannot read the reward"),
    ],
)
def test_environment_failures_end_as_errors(where: str, steps: int, message: str) -> None:
    decisions = [Decision("Action: done()", (Action("done"),))] if where == "evaluate" else [click(15, 15)]
    episode = run_episode(FakeEnv(fail_at=where), TASK, 0, Scripted(decisions), max_steps=3)
    assert episode.end == "error" and episode.evaluation is None and not episode.success
    assert episode.error_source == "environment" and episode.error == message
    assert len(episode.steps) == steps


def test_model_failure_mid_episode_is_an_error_with_the_steps_so_far() -> None:
    episode = run_episode(FakeEnv(), TASK, 0, Scripted([click(50, 40), ModelError("endpoint returned 503 after 3 retries")]), max_steps=5)
    assert episode.end == "error" and episode.error_source == "model"
    assert "step 2" in episode.error and "503" in episode.error
    assert len(episode.steps) == 1


def test_other_policy_exceptions_are_bugs_and_propagate() -> None:
    with pytest.raises(ZeroDivisionError):
        run_episode(FakeEnv(), TASK, 0, Scripted([ZeroDivisionError()]), max_steps=2)


def test_points_not_mapped_to_the_screen_are_a_policy_bug() -> None:
    unmapped = Decision("Action: click(0.1, 0.2)", (Action("click", point=(0.1, 0.2), space="normalized"),))
    with pytest.raises(ValueError, match="to_screen"):
        run_episode(FakeEnv(), TASK, 0, Scripted([unmapped]), max_steps=2)
    with pytest.raises(ValueError, match="at least 1"):
        run_episode(FakeEnv(), TASK, 0, Scripted([unmapped]), max_steps=0)


def test_environment_notes_are_recorded_on_the_step() -> None:
    episode = run_episode(FakeEnv(), TASK, 0, Scripted([click(999, 999), click(15, 15)]), max_steps=3)
    assert "outside_screen" in episode.steps[0].notes and "info" not in episode.steps[0].to_dict()


def test_time_is_split_between_environment_and_policy() -> None:
    now = [0.0]

    def clock() -> float:
        return now[0]

    class SlowEnv(FakeEnv):
        def step(self, action: Action) -> Observation:
            now[0] += 0.25
            return super().step(action)

    class SlowPolicy(Scripted):
        def act(self, step: StepInput) -> Decision:
            now[0] += 2.0
            return super().act(step)

    episode = run_episode(SlowEnv(), TASK, 0, SlowPolicy([click(50, 40), click(15, 15)]), max_steps=3, clock=clock)
    assert episode.policy_seconds == 4.0 and episode.env_seconds == 0.5 and episode.wall_seconds == 4.5
    assert [s.policy_seconds for s in episode.steps] == [2.0, 2.0] and [s.env_seconds for s in episode.steps] == [0.25, 0.25]


def test_screenshots_go_to_the_sink_and_the_trajectory_names_them(tmp_path) -> None:
    sink = folder_sink(str(tmp_path / "shots"))
    episode = run_episode(FakeEnv(), TASK, 3, Scripted([GARBAGE, click(15, 15)]), max_steps=5, save_screenshot=sink)
    assert episode.steps[0].png is None and episode.steps[0].screenshot == str(tmp_path / "shots" / "step-01.png")
    assert episode.final_screenshot == str(tmp_path / "shots" / "final.png")
    assert sorted(os.listdir(tmp_path / "shots")) == ["final.png", "step-01.png", "step-02.png"]
    assert (tmp_path / "shots" / "final.png").read_bytes().endswith(b"pressed" + bytes(1))
    trajectory = to_trajectory(episode, "press-button-seed3")
    assert trajectory.labels.complete() == "yes" and trajectory.request == episode.instruction
    assert [s.screenshot for s in trajectory.steps] == [episode.steps[0].screenshot, episode.steps[1].screenshot]
    assert trajectory.steps[1].action == "click (15, 15)" and trajectory.steps[0].thought == GARBAGE.reply
    assert Trajectory.from_dict(trajectory.to_dict()) == trajectory
    record = episode.to_dict()
    assert record["success"] is True and record["steps"] == 2 and record["trajectory"][0]["notes"] == ["no_action", "unreadable_action"]


def test_a_failed_episode_is_labelled_not_complete_and_fail_is_recorded_as_fail() -> None:
    episode = run_episode(FakeEnv(), TASK, 0, Scripted([Decision("FAIL", (Action("fail"),))]), max_steps=2)
    trajectory = to_trajectory(episode, "x")
    assert trajectory.labels.complete() == "no" and trajectory.last_action_is_fail
    errored = run_episode(FakeEnv(fail_at="reset"), TASK, 0, Scripted([GARBAGE]), max_steps=2)
    assert to_trajectory(errored, "y").labels.complete() is None and isinstance(errored, Episode)


@pytest.mark.parametrize(
    "action,text",
    [
        (Action("click", point=(10.4, 20.6), space="screen"), "click (10, 21)"),
        (Action("drag", point=(1, 2), end=(3, 4)), "drag (1, 2) to (3, 4)"),
        (Action("type", text="hi"), "type 'hi'"),
        (Action("key", keys=("ctrl", "a")), "key ctrl+a"),
        (Action("scroll", scroll=(0.0, 3.0)), "scroll by 0, 3"),
        (Action("wait", seconds=2.0), "wait 2 s"),
    ],
)
def test_describe(action: Action, text: str) -> None:
    assert describe(action) == text
    assert Decision(None, (action,)).history_text == text


def act(kind: str, x: float | None = None, y: float | None = None, **fields: object) -> Action:
    return Action(kind, point=(x, y) if x is not None and y is not None else None, space="screen" if x is not None else None, **fields)  # type: ignore[arg-type]


def test_every_action_of_a_decision_runs_in_order_within_one_step() -> None:
    # OSWorld's lib_run_single.run_single_example: `for action in actions: env.step(action)`, then step_idx += 1
    env = FakeEnv(ends=False)
    several = Decision("click, type, key", (act("click", 50, 40), act("type", text="hé"), act("key", keys=("enter",))))
    policy = Scripted([several, click(15, 15), Decision("done", (act("done"),))])
    episode = run_episode(env, TASK, 0, policy, max_steps=3)
    assert [a.kind for a in env.actions] == ["click", "type", "key", "click", "done"]
    assert episode.end == "done" and len(episode.steps) == 3  # three model calls, five actions
    first = episode.steps[0]
    assert [a["kind"] for a in first.actions] == ["click", "type", "key"] and first.executed == 3
    assert first.to_dict()["actions"][1] == {"kind": "type", "text": "hé"} and "executed" not in first.to_dict()
    assert first.text == "click (50, 40); type 'hé'; key enter"


def test_the_next_step_sees_the_screen_after_each_action_of_the_previous_one() -> None:
    env = FakeEnv(ends=False)
    policy = Scripted([Decision("two", (act("click", 50, 40), act("click", 15, 15))), GARBAGE, click(1, 1)])
    run_episode(env, TASK, 0, policy, max_steps=3)
    first, second, third = policy.inputs
    assert first.results == ()
    assert len(second.results) == 2 and second.results[-1] == second.observation
    assert second.results[0].screenshot.endswith(b"idle" + bytes(1)) and second.results[1].screenshot.endswith(b"pressed" + bytes(2))
    assert third.results == ()  # the decision before it ran nothing


def test_done_after_actions_ends_the_episode_after_they_run_and_nothing_after_it_runs() -> None:
    env = FakeEnv(ends=False)
    decision = Decision("click then DONE then click", (act("click", 15, 15), act("done"), act("click", 50, 40)))
    episode = run_episode(env, TASK, 0, Scripted([decision]), max_steps=5)
    assert [a.kind for a in env.actions] == ["click", "done"]
    assert episode.end == "done" and episode.success and len(episode.steps) == 1
    step = episode.steps[0]
    assert step.executed == 2 and len(step.actions) == 3 and "not_run:1" in step.notes and step.to_dict()["executed"] == 2


def test_the_environment_ending_the_episode_mid_decision_stops_it_there() -> None:
    env = FakeEnv()
    episode = run_episode(env, TASK, 0, Scripted([Decision("two", (act("click", 15, 15), act("type", text="late")))]), max_steps=5)
    assert episode.end == "env_done" and episode.success and [a.kind for a in env.actions] == ["click"]
    assert episode.steps[0].executed == 1 and "not_run:1" in episode.steps[0].notes


def test_an_environment_failure_names_the_action_it_failed_at() -> None:
    class FailsSecond(FakeEnv):
        def step(self, action: Action) -> Observation:
            if len(self.actions) == 1:
                raise EnvFailure("the page stopped answering")
            return super().step(action)

    episode = run_episode(FailsSecond(ends=False), TASK, 0, Scripted([Decision("two", (act("click", 50, 40), act("type", text="x")))]), max_steps=3)
    assert episode.end == "error" and episode.error == "step 1: environment failed: action 2 of 2 (type): the page stopped answering"
    assert episode.steps[0].executed == 1


def test_the_budget_counts_model_calls_not_actions() -> None:
    env = FakeEnv(ends=False)
    many = Decision("four", tuple(act("click", 50, 40) for _ in range(4)))
    episode = run_episode(env, TASK, 0, Scripted([many]), max_steps=2)
    assert episode.end == "budget" and len(episode.steps) == 2 and len(env.actions) == 8


def test_a_decision_takes_a_sequence_of_actions() -> None:
    with pytest.raises(TypeError, match=r"actions=\(action,\)"):
        Decision("x", Action("done"))  # type: ignore[arg-type]
    assert Decision("x", [Action("done")]).actions == (Action("done"),) and Decision("x", [Action("done")]).final == Action("done")


# -- bounds: every number of an action finite and in range, at most MAX_ACTIONS a step -------------------------------

HOSTILE = [
    (act("wait", seconds=math.nan), "action 1 refused: nan seconds is outside the range of waits, 0 to 100 seconds"),
    (act("hold_key", keys=("shift",), seconds=1e300), "action 2 refused: 1e+300 seconds is outside the range of waits, 0 to 100 seconds"),
    (act("wait", seconds=-1.0), "action 3 refused: -1 seconds is outside the range of waits, 0 to 100 seconds"),
    (act("scroll", 50, 40, scroll=(0.0, -1e12)), "action 4 refused: a scroll of (0, -1e+12) notches is outside the range of scrolls, -1000 to 1000 notches each way"),
    (act("scroll", scroll=(math.inf, 0.0)), "action 5 refused: a scroll of (inf, 0) notches is outside the range of scrolls, -1000 to 1000 notches each way"),
    (act("click", math.nan, 4.0), "action 6 refused: point (nan, 4) is outside the range of coordinates, -100000 to 100000 pixels"),
    (Action("drag", point=(1.0, 2.0), end=(1e300, 2.0), space="screen"), "action 7 refused: end (1e+300, 2) is outside the range of coordinates, -100000 to 100000 pixels"),
]


def test_an_action_with_a_number_out_of_range_is_refused_and_the_others_of_its_step_run() -> None:
    env = FakeEnv(ends=False)
    fine = (act("wait", seconds=100.0), act("scroll", 50, 40, scroll=(-1000.0, 1000.0)), act("click", -100000.0, 100000.0))
    decision = Decision("hostile", tuple(a for a, _ in HOSTILE) + fine)
    episode = run_episode(env, TASK, 0, Scripted([decision, Decision("done", (act("done"),))]), max_steps=2)
    assert env.actions == [*fine, act("done")]  # not one hostile action reached the environment
    step = episode.steps[0]
    assert [n for n in step.notes if "refused" in n] == [said for _, said in HOSTILE]
    assert [a["kind"] for a in step.actions] == ["wait", "scroll", "click"] and step.executed == 3 and "not_run" not in " ".join(step.notes)
    json.dumps(episode.to_dict(), allow_nan=False)  # the report holds no NaN or infinity (strict JSON)
    assert episode.end == "done"


def test_a_step_runs_at_most_max_actions_and_notes_the_rest() -> None:
    env = FakeEnv(ends=False)
    many = Decision("10 000 clicks", tuple(act("click", 50, 40) for _ in range(10_000)) + (act("done"),))
    episode = run_episode(env, TASK, 0, Scripted([many]), max_steps=2)
    step = episode.steps[0]
    assert "over_cap:9801" in step.notes and len(step.actions) == step.executed == MAX_ACTIONS == 200
    # the rest are not run, the done after them neither, so the episode goes on: 200 actions a step
    assert episode.end == "budget" and len(env.actions) == 2 * MAX_ACTIONS


@pytest.mark.parametrize(
    ("action", "ok"),
    [
        (Action("wait", seconds=MAX_SECONDS), True),
        (Action("wait", seconds=math.nextafter(MAX_SECONDS, math.inf)), False),
        (Action("scroll", scroll=(-MAX_SCROLL, MAX_SCROLL)), True),
        (Action("scroll", scroll=(0.0, math.nextafter(MAX_SCROLL, math.inf))), False),
        (Action("move", point=(MAX_COORDINATE, -MAX_COORDINATE), space="screen"), True),
        (Action("move", point=(0.0, -math.inf), space="screen"), False),
        (Action("type", text="x" * 10), True),
        (Action("done"), True),
    ],
)
def test_the_documented_ranges_hold_at_their_edges(action: Action, ok: bool) -> None:
    assert (problem(action) is None) is ok


def test_the_bounds_are_the_documented_ones() -> None:
    assert f"`MAX_SECONDS` ({MAX_SECONDS:g} s)" in DOCS and f"`MAX_SCROLL` ({MAX_SCROLL:g} notches)" in DOCS
    assert f"`MAX_ACTIONS` ({MAX_ACTIONS})" in DOCS and f"`MAX_COORDINATE` ({MAX_COORDINATE:g} pixels)" in DOCS


class ScriptedModel(Model):
    """A model adapter answering the replies given, in order (for a runner's reader in a whole episode)."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__("scripted", Settings())
        self.replies = list(replies)

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        return Reply(text=self.replies.pop(0))


@pytest.mark.parametrize(
    ("runner", "reply", "done", "ran", "refused"),
    [
        (
            "guitest",
            'Action: scroll(0.5, 0.5, "down", 1e12); wait(1e300); click(0.5, 0.5)',
            "Action: done()",
            ["click"],
            ["action 1 refused: a scroll of (0, 1e+12)", "action 2 refused: 1e+300 seconds"],
        ),
        (
            "prompt-agent",
            "```python\npyautogui.scroll(-1000000000000, 10, 10)\ntime.sleep(1e300)\n" + "pyautogui.press('tab')\n" * 250 + "```",
            "DONE",
            ["key"] * 198,
            ["action 1 refused: a scroll of (0, 1e+12)", "action 2 refused: 1e+300 seconds", "over_cap:52"],
        ),
    ],
)
def test_a_runners_reader_gets_the_same_bounds(runner: str, reply: str, done: str, ran: list[str], refused: list[str]) -> None:
    model = ScriptedModel([reply, done])
    sample = Sample(id="t", image="", instruction="", box=(0, 0, 1, 1), tags={}, source="test")
    policy = ModelPolicy(model, sample, _asker(model, DEFAULT_OPTIONS, []), runner=runners.get(runner))
    env = PngEnv()
    episode = run_episode(env, TASK, 0, policy, max_steps=2)
    assert [a.kind for a in env.actions[:-1]] == ran and env.actions[-1].kind == "done"
    notes = episode.steps[0].notes
    assert all(any(n.startswith(r) for n in notes) for r in refused), notes


class PngEnv(FakeEnv):
    """FakeEnv with real PNG screenshots (a model's policy decodes them)."""

    def _obs(self) -> Observation:
        image = io.BytesIO()
        Image.new("RGB", (100, 50), (len(self.actions) % 256, 0, 0)).save(image, format="PNG")
        return Observation(image.getvalue(), (100, 50), "Press the button")


@pytest.mark.parametrize(("presses", "count", "note"), [(3, 3, ""), (200, 200, ""), (201, 0, "presses_too_many_not_run"), (1e12, 0, "presses_too_many_not_run")])
def test_a_press_repeated_past_the_cap_is_not_unrolled(presses: float, count: int, note: str) -> None:
    # before: press('tab', presses=1e12) built 10**12 actions inside the reader, before any cap on a step applied
    from guitest.live.runners.prompt_agent import pyautogui_call

    actions, why = pyautogui_call("press", ("tab",), {"presses": presses})
    assert (len(actions), why) == (count, note)
