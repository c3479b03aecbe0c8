"""The runners (guitest/live/runners/): what each sends and reads beyond the recorded comparison with OSWorld's own
code (tests/test_osworld_reference.py: every step's messages, and what each reply of the reply tables does on the
machine), and guitest's reading kept safe (fuzzing, round trips, work bound).

Actions are written as the machine would see them on a 1920x1080 screen: ``click(x,y)``, ``paste('t')`` (typed
through the clipboard), ``type('t')``, ``key(a+b)``, ``scroll(clicks at x,y)`` (pyautogui's clicks, positive up),
``move``, ``drag_to``, ``WAIT``, ``DONE``, ``FAIL``.
"""

from __future__ import annotations

import hashlib
import math
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.exchange import SentImage
from guitest.live import runners
from guitest.live.actions import KINDS, Action, from_screen, problem, to_screen
from guitest.live.keys import combo, normalize
from guitest.live.runners import guitest as guitest_runner
from guitest.live.runners import uitars15 as uitars
from guitest.live.runners.runner import Past

SCREEN = (1920, 1080)
DOCS = (Path(__file__).parent.parent / "docs" / "live_agents.md").read_text()


class _Model:
    """Stands for a model adapter where a runner asks one for its planned size (guitest's runner)."""

    def plan_size(self, size: tuple[int, int]) -> tuple[int, int]:
        return size


def _n(v: float) -> str:
    f = round(float(v), 3)
    return str(int(f)) if f == int(f) else f"{f:g}"


def events(actions: list[Action]) -> list[str]:
    """Actions in screen pixels as the machine would see them (see the module docstring)."""

    def xy(p: tuple[float, float]) -> str:
        return f"{_n(p[0])},{_n(p[1])}"

    out = []
    for a in actions:
        if a.kind in ("click", "double_click", "right_click"):
            out.append(f"{a.kind}({xy(a.point)})" if a.point else f"{a.kind}()")
        elif a.kind == "move":
            out.append(f"move({xy(a.point)})")
        elif a.kind == "drag":
            out += ([f"move({xy(a.point)})"] if a.point else []) + [f"drag_to({xy(a.end)})"]
        elif a.kind == "scroll":
            out.append(f"scroll({_n(-a.scroll[1])}" + (f" at {xy(a.point)})" if a.point else ")"))
        elif a.kind == "type":
            out.append(f"{'paste' if a.paste else 'type'}({a.text!r})")
        elif a.kind == "key":
            out.append("key(" + "+".join(a.keys) + ")")
        else:
            out.append(a.kind.upper())
    return out


def episode(name: str, replies: list[str], budget: int = 15) -> tuple[list[list[str]], list[tuple[str, ...]]]:
    """What each reply of an episode runs through runner ``name`` (its stop rules applied, points on the screen), and
    the notes of each step."""
    runner = runners.get(name)
    sent = runner.sizes(SCREEN, _Model())  # type: ignore[arg-type]
    past: list[Past] = []
    done, notes = [], []
    for step, reply in enumerate(replies):
        read = runner.read(reply)
        actions, rules = runner.decide(read, past, step, budget)
        past.append(Past(reply, SentImage(None, sent), actions, runner.line(reply, actions)))
        done.append(events([runner.to_screen(a, runner.space_for(None), sent, SCREEN) for a in actions]))
        notes.append(read.notes + rules)
    return done, notes


def test_notes_say_which_rule_applied_and_which_part_was_not_read() -> None:
    _, notes = episode("uitars15", ["Thought: stuck\nAction: call_user()"] * 4)
    assert notes == [("call_user_waits:1/3",), ("call_user_waits:2/3",), ("call_user_waits:3/3",), ("call_user_fails",)]
    _, notes = episode("uitars15", ["Thought: x\nAction: click(start_box='(100,200)')\n\nclick(start_box='(abc,200)')"])
    assert notes == [("action 2: coordinates_not_numbers", "unreadable_action")]
    _, notes = episode("qwen3vl", ['Action: x\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}\n</tool_call>'])
    assert notes == [("terminate_failure_is_done",)]
    _, notes = episode("prompt-agent", ["```python\nx = 3\npyautogui.click(1, 2)\nos.system('ls')\n```\n```python\nprint(\n```"])
    assert notes == [("code 1: line 1: assign_not_run", "code 1: line 3: os.system_not_run", "code 2: not_python")]
    _, notes = episode("uitars15", ["Thought: a\nAction: click(start_box='(10,20)')", "Thought: b\nAction: click(start_box='(30,40)')"], budget=2)
    assert notes == [(), ("last_step_fails",)]


# -- what a step sends: each runner's messages, as its reference lays them out -----------------------------------


def conversation(name: str, steps: int, images: int | None = None) -> list[tuple[str, list[str]]]:
    """The messages runner ``name`` sends at step ``steps`` (after ``steps - 1`` clicks), each image as ``<image k>``
    (k: the step, from 0, whose screenshot it is)."""
    runner = runners.get(name)
    shots = [SentImage(None, SCREEN, data=bytes([k])) for k in range(steps)]
    past: list[Past] = []
    for k in range(steps - 1):
        reply = {
            "uitars15": f"Thought: step {k + 1}\nAction: click(start_box='({10 * (k + 1)},{20 * (k + 1)})')",
            "qwen25vl": f'Action: step {k + 1}\n<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [1, 2]}}}}\n</tool_call>',
            "qwen3vl": f'Action: step {k + 1}\n<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [1, 2]}}}}\n</tool_call>',
            "prompt-agent": f"step {k + 1}\n```python\npyautogui.click(1, 2)\n```",
            "guitest": "Action: click(0.1, 0.2)",
            "aguvis": "```python\npyautogui.click(x=0.1, y=0.2)\n```",
        }.get(name, "")
        read = runner.read(reply)
        past.append(Past(reply, shots[k], read.actions, runner.line(reply, read.actions)))
    prompt = runner.prompt("Open the settings", past, shots[-1], runner.history_images if images is None else images)
    out = [("system", [prompt.system or ""])]
    for role, parts in prompt.turns or (("user", (0, prompt.user)),):
        out.append((role, [p if isinstance(p, str) else f"<image {prompt.images[p].data[0] if prompt.turns else steps - 1}>" for p in parts]))
    return out


def test_uitars15_sends_every_earlier_reply_and_the_last_four_screenshots() -> None:
    """UITARSAgent.predict: system, the prompt, every earlier reply as an assistant turn (box tokens added back), the
    last history_n - 1 = 4 of them each after its screenshot, then the current screenshot (step 7 of an episode)."""
    said = conversation("uitars15", 7)
    assert [role for role, _ in said] == ["system", "user", "assistant", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert [p for _, parts in said for p in parts if p.startswith("<image")] == [f"<image {k}>" for k in (2, 3, 4, 5, 6)]
    assert said[0][1] == ["You are a helpful assistant."] and said[2][1] == ["Thought: step 1\nAction: click(start_box='<|box_start|>(10,20)<|box_end|>')"]
    assert said[1][1][0].startswith("You are a GUI agent.") and said[1][1][0].endswith("## User Instruction\nOpen the settings\n")


@pytest.mark.parametrize("name", ["qwen25vl", "qwen3vl"])
def test_qwen_agents_send_the_last_four_steps_as_turns_and_older_ones_as_text(name: str) -> None:
    """Qwen25VLAgent.predict / Qwen3VLAgent.predict: the oldest shown screenshot with the instruction (the steps before
    the window as ``Step N:`` lines), each shown step's reply as an assistant turn, then the current screenshot."""
    said = conversation(name, 7)
    assert [role for role, _ in said] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert said[1][1][0] == "<image 2>" and said[1][1][1].startswith("\nPlease generate the next move according")
    assert [p for _, parts in said for p in parts if p.startswith("<image")] == [f"<image {k}>" for k in (2, 3, 4, 5, 6)]
    runner = runners.get(name)
    past = [Past(f"Action: step {k}", SentImage(None, SCREEN), (), f"step {k}") for k in (1, 2, 3)]
    assert "Previous actions:\nStep 1: step 1\nStep 2: step 2\nStep 3: step 3" in runner.prompt("x", past, SentImage(None, SCREEN), 0).user


def test_the_prompt_agent_sends_the_last_three_steps() -> None:
    """PromptAgent.predict (max_trajectory_length 3): each of the last three steps as the question with its screenshot and
    the reply; then the question with the current screenshot; the task in the system message."""
    said = conversation("prompt-agent", 5)
    assert [role for role, _ in said] == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert [p for _, parts in said for p in parts if p.startswith("<image")] == [f"<image {k}>" for k in (1, 2, 3, 4)]
    assert said[1][1][0] == "Given the screenshot as below. What's the next step that you will do to help with the task?"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_prompts_are_the_references_own_texts() -> None:
    """Byte for byte the texts the reference agents send (SHA-256 of each, computed from the references' own messages
    for the task "Open the settings" at step 3 of an episode; docs/live_agents.md names the files)."""
    past = [Past(f"Action: step {k}", SentImage(None, SCREEN), (), f"Action: step {k}") for k in (1, 2)]
    now = SentImage(None, SCREEN)
    ui = runners.get("uitars15").prompt("Open the settings", [], now, 4)
    assert sha(ui.system or "") == "75357d685f238b6afd7738be9786fdafde641eb6ca9a3be7471939715a68a4de"
    assert sha(ui.turns[0][1][0]) == "580d80f2e738fca7f2a3e65b82d7fac6a9182a92fbb4e9c396a3d3ca69c874cd"  # type: ignore[arg-type]
    q25 = runners.get("qwen25vl").prompt("Open the settings", past, now, 0)
    assert sha(q25.system or "") == "83e6d788b1181974e5f6b9819a92b16120f129876cf29c15653688fa18db05dc"
    assert sha(q25.turns[0][1][1]) == "9a995e91108264a67b5990ff2bfb4bbcb6a992b69f244aa61aeca239a6cbdd6e"  # type: ignore[arg-type]
    q3 = runners.get("qwen3vl").prompt("Open the settings", [], now, 0)
    assert sha(q3.system or "") == "f0aa74a3eb2b6a2f3caf83882e2e07c62b5087835adff04f9c7b6c4c2621795b"
    pa = runners.get("prompt-agent").prompt("Open the settings", [], now, 3)
    assert sha(pa.system or "") == "87bb6d78f482ea5923115b7ba160b92b9d2b425865134a8f04346b7a3fcdf5ea"


def test_history_images_chooses_how_many_earlier_screenshots_go() -> None:
    assert [p for _, parts in conversation("uitars15", 7, images=1) for p in parts if p.startswith("<image")] == ["<image 5>", "<image 6>"]
    assert [p for _, parts in conversation("qwen3vl", 7, images=0) for p in parts if p.startswith("<image")] == ["<image 6>"]
    assert [p for _, parts in conversation("guitest", 4, images=2) for p in parts if p.startswith("<image")] == ["<image 1>", "<image 2>", "<image 3>"]
    assert [p for _, parts in conversation("guitest", 4) for p in parts if p.startswith("<image")] == ["<image 3>"]  # its own default: none earlier
    # fewer earlier steps than asked for: all of them (the window's start is never negative)
    assert [p for _, parts in conversation("guitest", 3, images=4) for p in parts if p.startswith("<image")] == ["<image 0>", "<image 1>", "<image 2>"]
    assert [p for _, parts in conversation("qwen3vl", 3) for p in parts if p.startswith("<image")] == ["<image 0>", "<image 1>", "<image 2>"]


def test_image_sizing_and_coordinates_per_runner() -> None:
    model = _Model()
    assert runners.get("uitars15").sizes(SCREEN, model) == (1932, 1092)  # type: ignore[arg-type]  # smart_resize, factor 28
    assert runners.get("qwen25vl").sizes(SCREEN, model) == (1316, 728)  # type: ignore[arg-type]  # max_pixels 1,003,520
    assert runners.get("qwen3vl").sizes(SCREEN, model) == (1920, 1088)  # type: ignore[arg-type]  # factor 32
    assert runners.get("prompt-agent").sizes(SCREEN, model) == SCREEN  # type: ignore[arg-type]  # the screenshot as taken
    q3 = runners.get("qwen3vl")
    assert q3.to_screen(Action("click", point=(999, 500)), "grid999", (1920, 1088), SCREEN).point == (1920.0, 540.0)  # /999, truncated


# -- the profile names the runner; --runner chooses another -----------------------------------------------------


def test_profiles_name_their_runners() -> None:
    class Profiled:
        def __init__(self, name: str) -> None:
            self.profile = type("P", (), {"name": name, "space": "normalized"})()

    expected = {
        "ui-tars-1.5": "uitars15",
        "ui-tars": "uitars15-qwen2vl",
        "qwen2.5-vl": "qwen25vl",
        "qwen3-vl": "qwen3vl",
        "gpt-4o": "prompt-agent",
        "claude": "prompt-agent",
        "aguvis": "aguvis",
        "generic": "guitest",
        "seeclick": "guitest",
    }
    assert {p: runners.for_model(Profiled(p))[0].name for p in expected} == expected
    assert runners.for_model(Profiled("generic"), "qwen3vl")[0].name == "qwen3vl"
    with pytest.raises(Exception, match="unknown runner 'klingon'; known: guitest, uitars15, "):
        runners.get("klingon")
    for runner in map(runners.get, runners.RUNNERS.names()):  # every runner's source is in docs/live_agents.md
        assert runner.name in DOCS and (runner.source.split(" (")[0] in DOCS), runner.name


# -- guitest's own format ------------------------------------------------------------------------------------


def A(kind: str, **kw: object) -> Action:
    return Action(kind, **kw)  # type: ignore[arg-type]


GUITEST = [
    ("The OK button is top left.\nAction: click(0.42, 0.31)", [A("click", point=(0.42, 0.31), space="normalized")]),
    ("Action: click(x=0.5, y=0.25)", [A("click", point=(0.5, 0.25), space="normalized")]),
    ("Action: drag(0.1, 0.2, 0.6, 0.2)", [A("drag", point=(0.1, 0.2), end=(0.6, 0.2), space="normalized")]),
    ('Action: scroll(0.5, 0.5, "down", 2)', [A("scroll", point=(0.5, 0.5), scroll=(0.0, 2.0), space="normalized")]),
    ('Action: scroll("up")', [A("scroll", scroll=(0.0, -3.0))]),
    ('Action: type("hello\\n")', [A("type", text="hello\n")]),
    ("Action: key('Return')", [A("key", keys=("enter",))]),
    ("Action: wait(2)", [A("wait", seconds=2.0)]),
    ('Action: fail("no such button")', [A("fail", text="no such button")]),
    ("<think>maybe click(0.9, 0.9)</think>Action: click(0.1, 0.1)", [A("click", point=(0.1, 0.1), space="normalized")]),
    ("Action: click(0.1, 0.1)\nAction: click(0.2, 0.2)", [A("click", point=(0.2, 0.2), space="normalized")]),  # the last marker
    ('Action: click(0.1, 0.2); type("grüße 東京"); key("enter"); done()', [A("click", point=(0.1, 0.2), space="normalized"), A("type", text="grüße 東京"), A("key", keys=("enter",)), A("done")]),
    ("I would click (the button) here.", []),
    ("Action: click(0.1,", []),
    ("Action: click(0.1, inf)", []),
]


@pytest.mark.parametrize("reply,expected", GUITEST)
def test_guitest_format(reply: str, expected: list[Action]) -> None:
    read = runners.get("guitest").read(reply)
    assert list(read.actions) == expected
    assert ("no_action" in read.notes) == (not expected)


def test_guitest_prompt_lists_actions_that_read_back() -> None:
    past = [Past("r", SentImage(None, (480, 630)), (), "click(0.1, 0.2)")]
    prompt = runners.get("guitest").prompt("Click OK", past, SentImage(None, (480, 630)), 0)
    assert prompt.system is None and "Task: Click OK" in prompt.user and "Step 1: click(0.1, 0.2)" in prompt.user and "480x630" in prompt.user
    for line in guitest_runner.ACTIONS_TEXT.splitlines():
        example = line.split("  ")[0].strip()
        read = runners.get("guitest").read("Action: " + example.replace("x1, y1, x2, y2", "0.1, 0.2, 0.3, 0.4").replace("x, y", "0.5, 0.5"))
        assert [a.kind for a in read.actions] == [example.split("(")[0]], example
    block = guitest_runner.history_block([f"a{i}" for i in range(40)], limit=5)
    assert block.splitlines()[0] == "(35 earlier steps not shown)" and block.splitlines()[-1] == "Step 40: a39"


# -- safety: never raises, never warns, reads in bounded work ---------------------------------------------------


NAMES = tuple(runners.RUNNERS.names())


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(150), deadline=None)
@given(text=st.text(max_size=400))
def test_no_text_raises(name: str, text: str) -> None:
    read = runners.get(name).read(text)
    assert all(a.kind in KINDS for a in read.actions)


@pytest.mark.parametrize("name", NAMES)
def test_a_point_far_past_the_screen_is_refused_by_the_bounds_never_raised(name: str) -> None:
    # a reply's 1e308 is finite, but not once scaled to the screen: the runners that cut points to whole pixels as
    # pyautogui does (int(x)) raised an OverflowError out of the step (uitars15, qwen25vl, qwen3vl, prompt-agent)
    runner = runners.get(name)
    read = runner.read(runner.render([Action("click", point=(1e308, 5.0))], decimals=0))
    actions, _ = runner.decide(read, [], 0, 15)
    assert [a.kind for a in actions] == ["click"], read.notes
    sent = (SCREEN[0] // 2, SCREEN[1] // 2)  # the screenshot sent at half size: a reply's pixel is two on the screen
    (screen,) = [runner.to_screen(a, runner.space_for(None), sent, SCREEN) for a in actions]
    assert "outside the range of coordinates" in (problem(screen) or "")


SYNTAX = st.sampled_from(
    [
        "Action:",
        "click(",
        "pyautogui.",
        "start_box='",
        "<|box_start|>",
        "<tool_call>",
        "</tool_call>",
        '{"action": "left_click"',
        '"coordinate": [',
        ")",
        "(",
        "'",
        '"',
        ",",
        "]",
        "}",
        "1e999",
        "-0",
        "nan",
        "\\",
        "\n",
        "\n\n",
        "<think>",
        "</think>",
        "DONE",
        "type(content='",
        "hotkey(key='",
        "scroll(",
        "drag(",
        "key(",
        '{"name": "computer_use", "arguments": ',
        "x=",
        "y=",
        "```",
        "```python\n",
        "for _ in range(",
        "):\n    ",
        ";",
        "call_user()",
        "finished(",
        "FAIL",
        "WAIT",
        "time.sleep(",
    ]
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(150), deadline=None)
@given(pieces=st.lists(st.one_of(SYNTAX, st.integers(-5000, 5000).map(str), st.text(max_size=5)), max_size=40))
def test_syntax_soup_never_raises(name: str, pieces: list[str]) -> None:
    runner = runners.get(name)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        read = runner.read("".join(pieces))
        actions, _ = runner.decide(read, [], 0, 15)
        screen = [runner.to_screen(a, runner.space_for(None), SCREEN, SCREEN) for a in actions]
    assert [str(w.message) for w in said] == []  # nor warns into the user's run (Python's "invalid escape sequence")
    for action in screen:
        for p in (action.point, action.end):
            assert p is None or all(math.isfinite(v) for v in p)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="type(content=')\nab ", max_size=60))
def test_uitars_type_unwrapping_is_the_references_regular_expression(text: str) -> None:
    # parse_action_to_structure_output: re.sub(r"type\(content='(.*?)'\)", <the content>, action_str), done in one pass
    assert uitars._unwrap_type(text) == re.sub(r"type\(content='(.*?)'\)", lambda m: m.group(1), text)


coord = st.floats(min_value=0, max_value=1, allow_nan=False).map(lambda v: round(v, 4))
point = st.tuples(coord, coord)
# text every runner can say and read back: pyautogui code is cut at ";" as OSWorld cuts it, so no ";" there
text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters=";"), min_size=1, max_size=30).filter(lambda s: s.strip() == s and s != "")
ACTIONS = st.one_of(
    st.builds(lambda k, p: Action(k, point=p), st.sampled_from(["click", "double_click", "right_click", "move"]), point),
    st.builds(lambda p, e: Action("drag", point=p, end=e), point, point),
    st.builds(lambda t: Action("type", text=t), text),
    st.builds(lambda k: Action("key", keys=k), st.sampled_from([("enter",), ("ctrl", "a"), ("tab",), ("ctrl", "shift", "t"), ("f5",)])),
)


def _same(a: Action, b: Action) -> bool:
    def close(p: tuple[float, float] | None, q: tuple[float, float] | None) -> bool:
        return (p is None and q is None) or (p is not None and q is not None and all(abs(x - y) <= 1.0 for x, y in zip(p, q, strict=True)))

    return a.kind == b.kind and close(a.point, b.point) and close(a.end, b.end) and a.text == b.text and a.keys == b.keys


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(100), deadline=None)
@given(actions=st.lists(ACTIONS, min_size=1, max_size=3))
def test_several_actions_render_and_read_back(name: str, actions: list[Action]) -> None:
    runner = runners.get(name)
    if runner.convention == "uitars":  # what UI-TARS cannot write in content='...' as OSWorld reads it: "')", a final \\n
        assume(all("')" not in a.text and not a.text.endswith("\\n") for a in actions))
    space = runner.space_for(None)
    on_screen = [to_screen(replace_space(a), "normalized", (1, 1), SCREEN) for a in actions]
    reply = runner.render([runner.from_screen(a, space, SCREEN, SCREEN) for a in on_screen], 4)
    read = runner.read(reply)
    said = [a for a in read.actions if a.text != uitars.PAUSE]  # UI-TARS's pause after typing is no action of its own
    back = [runner.to_screen(a, space, SCREEN, SCREEN) for a in said]
    assert len(back) == len(on_screen) and all(_same(x, y) for x, y in zip(back, on_screen, strict=True)), (reply, read)


def replace_space(action: Action) -> Action:
    from dataclasses import replace

    return replace(action, space="normalized" if action.point is not None or action.end is not None else None)


def test_to_screen_and_back() -> None:
    said = Action("drag", point=(0.5, 0.25), end=(1.0, 1.0), space="normalized")
    screen = to_screen(said, "pixel_sent", (100, 100), (480, 630))
    assert screen.point == (240.0, 157.5) and screen.end == (480.0, 630.0) and screen.space == "screen"
    grid = from_screen(screen, "grid1000", (100, 100), (480, 630))
    assert grid.point == (500.0, 250.0) and grid.space == "grid1000"


@pytest.mark.parametrize(
    "written,expected",
    [
        ("Control", "ctrl"),
        ("Return", "enter"),
        ("esc", "escape"),
        ("cmd", "meta"),
        ("PgDn", "pagedown"),
        ("ArrowUp", "up"),
        ("<Enter>", "enter"),
        ("A", "A"),
        (" ", "space"),
        ("F5", "f5"),
    ],
)
def test_key_names(written: str, expected: str) -> None:
    assert normalize(written) == expected


def test_key_combinations() -> None:
    assert combo("Ctrl+C") == ("ctrl", "C")
    assert combo("ctrl shift t") == ("ctrl", "shift", "t")
    assert combo("ctrl-alt-delete") == ("ctrl", "alt", "delete")
    assert combo("+") == ("+",)
    assert combo("") == ()


@pytest.mark.parametrize("name", ["uitars15", "qwen25vl", "prompt-agent", "guitest"])
def test_the_step_cache_key_covers_every_message_and_image(name: str) -> None:
    """A step's response-cache key is built from the prompt's system and user text and the digests of all its images
    (guitest.run.live_case's asker): a conversation's user text holds every turn, so an earlier reply or an earlier
    screenshot that differs makes another key."""
    runner = runners.get(name)

    def key(reply: str, shot: bytes) -> tuple[str | None, str, tuple[bytes | None, ...]]:
        actions = runner.read(reply).actions
        past = [Past(reply, SentImage(None, SCREEN, data=shot), actions, runner.line(reply, actions))]
        prompt = runner.prompt("Open the settings", past, SentImage(None, SCREEN, data=b"now"), 1)
        return prompt.system, prompt.user, tuple(i.data for i in prompt.images)

    base = key("Action: click(0.1, 0.2)", b"before")
    assert key("Action: click(0.3, 0.2)", b"before") != base
    assert key("Action: click(0.1, 0.2)", b"other") != base
