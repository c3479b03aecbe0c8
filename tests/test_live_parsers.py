"""Action parsers per model convention, key names, and the step prompts: hand-written replies, fuzzing, round trips."""

from __future__ import annotations

import json
import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guitest.live import parsers, prompts
from guitest.live.actions import KINDS, Action, from_screen, to_screen
from guitest.live.keys import combo, normalize

CONVENTIONS = tuple(parsers.CONVENTIONS)


def A(kind: str, **kw: object) -> Action:
    return Action(kind, **kw)  # type: ignore[arg-type]


# (convention, reply, expected action or None, a note expected among the notes or None)
TABLE = [
    # guitest's own format
    ("guitest", "The OK button is top left.\nAction: click(0.42, 0.31)", A("click", point=(0.42, 0.31), space="normalized"), None),
    ("guitest", "Action: click(x=0.5, y=0.25)", A("click", point=(0.5, 0.25), space="normalized"), None),
    ("guitest", "Action: double_click(0.1, 0.2)", A("double_click", point=(0.1, 0.2), space="normalized"), None),
    ("guitest", "Action: right_click(0.1, 0.2)", A("right_click", point=(0.1, 0.2), space="normalized"), None),
    ("guitest", "Action: move(0.1, 0.2)", A("move", point=(0.1, 0.2), space="normalized"), None),
    ("guitest", "Action: drag(0.1, 0.2, 0.6, 0.2)", A("drag", point=(0.1, 0.2), end=(0.6, 0.2), space="normalized"), None),
    ("guitest", 'Action: scroll(0.5, 0.5, "down", 2)', A("scroll", point=(0.5, 0.5), scroll=(0.0, 2.0), space="normalized"), None),
    ("guitest", 'Action: scroll("up")', A("scroll", scroll=(0.0, -3.0)), None),
    ("guitest", 'Action: type("hello\\n")', A("type", text="hello\n"), None),
    ("guitest", "Action: key('ctrl+a')", A("key", keys=("ctrl", "a")), None),
    ("guitest", "Action: key('Return')", A("key", keys=("enter",)), None),
    ("guitest", "Action: wait(2)", A("wait", seconds=2.0), None),
    ("guitest", "Action: done()", A("done"), None),
    ("guitest", 'Action: fail("no such button")', A("fail", text="no such button"), None),
    ("guitest", "<think>maybe click(0.9, 0.9)</think>Action: click(0.1, 0.1)", A("click", point=(0.1, 0.1), space="normalized"), None),
    ("guitest", "Action: click(0.1, 0.1)\nAction: click(0.2, 0.2)", A("click", point=(0.2, 0.2), space="normalized"), None),
    ("guitest", "I would click (the button) here.", None, "no_action"),
    ("guitest", "Action: click(0.1,", None, "no_action"),
    ("guitest", "Action: click(0.1, inf)", None, "no_action"),
    # pyautogui (OSWorld, Aguvis)
    ("pyautogui", "```python\npyautogui.click(x=100, y=200)\n```", A("click", point=(100.0, 200.0)), None),
    ("pyautogui", "pyautogui.click(100, 200, clicks=2)", A("double_click", point=(100.0, 200.0)), None),
    ("pyautogui", "pyautogui.click(button='right', x=5, y=6)", A("right_click", point=(5.0, 6.0)), None),
    ("pyautogui", "pyautogui.click()", A("click"), None),
    ("pyautogui", "pyautogui.doubleClick(3, 4)", A("double_click", point=(3.0, 4.0)), None),
    ("pyautogui", "pyautogui.tripleClick(3, 4)", A("double_click", point=(3.0, 4.0)), "triple_click_as_double"),
    ("pyautogui", "pyautogui.rightClick(x=3, y=4)", A("right_click", point=(3.0, 4.0)), None),
    ("pyautogui", "pyautogui.moveTo(3, 4)", A("move", point=(3.0, 4.0)), None),
    ("pyautogui", "pyautogui.moveTo(1, 2)\npyautogui.dragTo(3, 4, duration=0.5)", A("drag", point=(1.0, 2.0), end=(3.0, 4.0)), None),
    ("pyautogui", "pyautogui.dragTo(3, 4)", A("drag", end=(3.0, 4.0)), None),
    ("pyautogui", "pyautogui.write('it is')", A("type", text="it is"), None),
    ("pyautogui", "pyautogui.typewrite(['a', 'b'])", A("type", text="ab"), None),
    ("pyautogui", "pyautogui.press('Return')", A("key", keys=("enter",)), None),
    ("pyautogui", "pyautogui.hotkey('ctrl', 'c')", A("key", keys=("ctrl", "c")), None),
    ("pyautogui", "pyautogui.scroll(-3, x=5, y=6)", A("scroll", point=(5.0, 6.0), scroll=(0.0, 3.0)), None),
    ("pyautogui", "pyautogui.hscroll(2)", A("scroll", scroll=(2.0, 0.0)), None),
    ("pyautogui", "pyautogui.click(10, 10)\ntime.sleep(0.5)\npyautogui.write('x')", A("type", text="x"), "several_actions"),
    ("pyautogui", "DONE", A("done"), None),
    ("pyautogui", "```\nFAIL\n```", A("fail"), None),
    ("pyautogui", "Let me wait.\n```WAIT```", A("wait", seconds=1.0), None),
    ("pyautogui", "pyautogui.click(*pyautogui.locateCenterOnScreen('ok.png'))", None, "coordinates_not_numbers"),
    ("pyautogui", "pyautogui.press(['tab', 'tab'])", None, "key_sequence"),
    ("pyautogui", "I am DONE with thinking, now pyautogui.click(1, 2)", A("click", point=(1.0, 2.0)), None),
    ("pyautogui", "import pyautogui", None, "no_action"),
    # UI-TARS
    ("uitars", "Thought: the button.\nAction: click(start_box='<|box_start|>(120,340)<|box_end|>')", A("click", point=(120.0, 340.0)), None),
    ("uitars", "Action: click(start_box='(120,340)')", A("click", point=(120.0, 340.0)), None),
    ("uitars", "Action: click(point='<point>10 20</point>')", A("click", point=(10.0, 20.0)), None),
    ("uitars", "Action: click(start_box='[10, 20, 30, 40]')", A("click", point=(20.0, 30.0)), None),
    ("uitars", "Action: left_double(start_box='(1,2)')", A("double_click", point=(1.0, 2.0)), None),
    ("uitars", "Action: right_single(start_box='(1,2)')", A("right_click", point=(1.0, 2.0)), None),
    ("uitars", "Action: hover(start_box='(1,2)')", A("move", point=(1.0, 2.0)), None),
    ("uitars", "Action: drag(start_box='(1,2)', end_box='(3,4)')", A("drag", point=(1.0, 2.0), end=(3.0, 4.0)), None),
    ("uitars", "Action: drag(start_point='<point>1 2</point>', end_point='<point>3 4</point>')", A("drag", point=(1.0, 2.0), end=(3.0, 4.0)), None),
    ("uitars", "Action: hotkey(key='ctrl c')", A("key", keys=("ctrl", "c")), None),
    ("uitars", "Action: type(content='hello\\n')", A("type", text="hello\n"), None),
    ("uitars", "Action: type(content='it's done')", A("type", text="it's done"), None),
    ("uitars", "Action: scroll(start_box='(5,5)', direction='down')", A("scroll", point=(5.0, 5.0), scroll=(0.0, 5.0)), None),
    ("uitars", "Action: scroll(direction='left')", A("scroll", scroll=(-5.0, 0.0)), None),
    ("uitars", "Action: wait()", A("wait", seconds=5.0), None),
    ("uitars", "Action: finished(content='all set')", A("done", text="all set"), None),
    ("uitars", "Action: finished()", A("done"), None),
    ("uitars", "Action: call_user()", A("fail", text="call_user"), "call_user"),
    ("uitars", "Thought: I should click(start_box='(9,9)') maybe.\nAction: type(content='x')", A("type", text="x"), None),
    ("uitars", "Action: click(start_box='')", None, "no_action"),
    ("uitars", "Action: press_home()", None, "no_action"),
    # Qwen computer_use
    ("computer_use", '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [100, 200]}}\n</tool_call>', A("click", point=(100.0, 200.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click"}}</tool_call>', A("click"), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "right_click", "coordinate": [1, 2]}}</tool_call>', A("right_click", point=(1.0, 2.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "double_click", "coordinate": [1, 2]}}</tool_call>', A("double_click", point=(1.0, 2.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "triple_click", "coordinate": [1, 2]}}</tool_call>', A("double_click", point=(1.0, 2.0)), "triple_click_as_double"),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "mouse_move", "coordinate": [1, 2]}}</tool_call>', A("move", point=(1.0, 2.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click_drag", "coordinate": [3, 4]}}</tool_call>', A("drag", end=(3.0, 4.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "key", "keys": ["ctrl", "a"]}}</tool_call>', A("key", keys=("ctrl", "a")), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "key", "keys": "Return"}}</tool_call>', A("key", keys=("enter",)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "type", "text": "hi"}}</tool_call>', A("type", text="hi"), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -5}}</tool_call>', A("scroll", scroll=(0.0, 5.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "hscroll", "pixels": 2}}</tool_call>', A("scroll", scroll=(2.0, 0.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "wait", "time": 2}}</tool_call>', A("wait", seconds=2.0), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}</tool_call>', A("done", text="success"), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}</tool_call>', A("fail", text="failure"), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "answer", "text": "42"}}</tool_call>', A("done", text="42"), "answer"),
    ("computer_use", '{"name": "computer_use", "arguments": "{\\"action\\": \\"type\\", \\"text\\": \\"hi\\"}"}', A("type", text="hi"), None),
    ("computer_use", '{"function": {"name": "computer_use", "arguments": "{\\"action\\": \\"left_click\\", \\"coordinate\\": [7, 8]}"}}', A("click", point=(7.0, 8.0)), None),
    ("computer_use", "<tool_call>{'name': 'computer_use', 'arguments': {'action': 'left_click', 'coordinate': [5, 6],}}</tool_call>", A("click", point=(5.0, 6.0)), None),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 1]}}</tool_call>\n<tool_call>{"name": "computer_use", "arguments": {"action": "type", "text": "z"}}</tool_call>', A("type", text="z"), "several_actions"),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": ["a", 1]}}</tool_call>', None, "coordinates_not_numbers"),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "teleport"}}</tool_call>', None, "unknown_action_teleport"),
    ("computer_use", '<tool_call>{"name": "computer_use", "arguments": {"action": "left_cl', None, "no_action"),
]


@pytest.mark.parametrize("convention,reply,expected,note", TABLE, ids=[f"{c}-{i}" for i, (c, *_rest) in enumerate(TABLE)])
def test_reply_table(convention: str, reply: str, expected: Action | None, note: str | None) -> None:
    parsed = parsers.read(convention, reply)
    assert parsed.action == expected
    if note is not None:
        assert note in parsed.notes
    assert parsers.module(convention).parse(reply) == expected


def test_unknown_convention_and_profile_mapping() -> None:
    with pytest.raises(ValueError, match="known: guitest"):
        parsers.read("klingon", "x")
    assert parsers.read("guitest", None).notes == ("no_reply",)
    assert parsers.convention_of("ui-tars-1.5") == "uitars"
    assert parsers.convention_of("qwen3-vl") == "computer_use"
    assert parsers.convention_of("aguvis") == "pyautogui"
    assert parsers.convention_of("gpt-4o") == "guitest"


@pytest.mark.parametrize("convention", CONVENTIONS)
@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400))
def test_no_text_raises(convention: str, text: str) -> None:
    parsed = parsers.read(convention, text)
    assert parsed.action is None or parsed.action.kind in KINDS


@pytest.mark.parametrize(("convention", "reply", "text"), [
    ("uitars", "Action: type(content='C:\\home\\docs\\n')", "C:\\home\\docs\n"),  # \\h kept as Python keeps it, \\n a newline
    ("uitars", "Action: type(content='a\\\\hb')", "a\\hb"),  # an escaped backslash stays one
    ("uitars", "Action: type(content=r'C:\\home\\new')", "C:\\home\\new"),  # a raw literal is read raw
    ("pyautogui", "pyautogui.write('\\d+ \\w')", "\\d+ \\w"),
    ("computer_use", "<tool_call>{'name': 'computer_use', 'arguments': {'action': 'type', 'text': '\\d\\t'}}</tool_call>", "\\d\t"),
])
def test_backslashes_in_typed_text_read_as_python_reads_them(convention: str, reply: str, text: str) -> None:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        parsed = parsers.read(convention, reply)
    assert parsed.action is not None and parsed.action.kind == "type" and parsed.action.text == text
    assert [str(w.message) for w in said] == []


SYNTAX = st.sampled_from([
    "Action:", "click(", "pyautogui.", "start_box='", "<|box_start|>", "<tool_call>", "</tool_call>", '{"action": "left_click"',
    '"coordinate": [', ")", "(", "'", '"', ",", "]", "}", "1e999", "-0", "nan", "\\", "\n", "<think>", "</think>", "DONE",
    "type(content='", "hotkey(key='", "scroll(", "drag(", "key(", '{"name": "computer_use", "arguments": ', "x=", "y=",
])


@pytest.mark.parametrize("convention", CONVENTIONS)
@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.one_of(SYNTAX, st.integers(-5000, 5000).map(str), st.text(max_size=5)), max_size=40))
def test_syntax_soup_never_raises(convention: str, pieces: list[str]) -> None:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        parsed = parsers.read(convention, "".join(pieces))
    assert [str(w.message) for w in said] == []  # nor warns into the user's run (Python's "invalid escape sequence")
    if parsed.action is not None:
        for p in (parsed.action.point, parsed.action.end):
            assert p is None or all(math.isfinite(v) for v in p)


coord = st.floats(min_value=0, max_value=1, allow_nan=False).map(lambda v: round(v, 4))
point = st.tuples(coord, coord)
text = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30).filter(lambda s: s.strip() == s and s != "")
ACTIONS = st.one_of(
    st.builds(lambda k, p: Action(k, point=p), st.sampled_from(["click", "double_click", "right_click", "move"]), point),
    st.builds(lambda p, e: Action("drag", point=p, end=e), point, point),
    st.builds(lambda p, n: Action("scroll", point=p, scroll=(0.0, float(n))), point, st.sampled_from([-5, -3, -1, 1, 2, 5])),
    st.builds(lambda t: Action("type", text=t), text),
    st.builds(lambda k: Action("key", keys=k), st.sampled_from([("enter",), ("ctrl", "a"), ("tab",), ("ctrl", "shift", "t"), ("f5",)])),
    st.just(Action("done")),
)


def _same(a: Action, b: Action) -> bool:
    def close(p: tuple[float, float] | None, q: tuple[float, float] | None) -> bool:
        return (p is None and q is None) or (p is not None and q is not None and all(abs(x - y) < 1e-3 for x, y in zip(p, q)))

    return a.kind == b.kind and close(a.point, b.point) and close(a.end, b.end) and a.text == b.text and a.keys == b.keys and a.scroll == b.scroll


@pytest.mark.parametrize("convention", CONVENTIONS)
@settings(max_examples=200, deadline=None)
@given(action=ACTIONS)
def test_render_reads_back(convention: str, action: Action) -> None:
    reply = parsers.render(convention, action, 4)
    parsed = parsers.read(convention, reply)
    assert parsed.action is not None, reply
    expected = action
    if convention == "uitars" and action.kind == "done":
        expected = Action("done", text="")
    if convention == "computer_use" and action.kind == "done":
        expected = Action("done", text="success")
    if convention == "uitars" and action.kind == "scroll":  # UI-TARS names a direction, never an amount: 5 notches
        expected = Action("scroll", point=action.point, scroll=(0.0, math.copysign(5.0, action.scroll[1])))
    assert _same(parsed.action, expected), (reply, parsed.action)


def test_to_screen_and_back() -> None:
    said = Action("drag", point=(0.5, 0.25), end=(1.0, 1.0), space="normalized")
    screen = to_screen(said, "pixel_sent", (100, 100), (480, 630))
    assert screen.point == (240.0, 157.5) and screen.end == (480.0, 630.0) and screen.space == "screen"
    grid = from_screen(screen, "grid1000", (100, 100), (480, 630))
    assert grid.point == (500.0, 250.0) and grid.space == "grid1000"
    # a reply without its own space takes the profile's
    assert to_screen(Action("click", point=(50, 50)), "pixel_sent", (100, 100), (480, 630)).point == (240.0, 315.0)


@pytest.mark.parametrize("written,expected", [
    ("Control", "ctrl"), ("Return", "enter"), ("esc", "escape"), ("cmd", "meta"), ("PgDn", "pagedown"), ("ArrowUp", "up"),
    ("<Enter>", "enter"), ("A", "A"), (" ", "space"), ("F5", "f5"),
])
def test_key_names(written: str, expected: str) -> None:
    assert normalize(written) == expected


def test_key_combinations() -> None:
    assert combo("Ctrl+C") == ("ctrl", "C")
    assert combo("ctrl shift t") == ("ctrl", "shift", "t")
    assert combo("ctrl-alt-delete") == ("ctrl", "alt", "delete")
    assert combo("+") == ("+",)
    assert combo("") == ()


# -- prompts ------------------------------------------------------------------------------------


def test_guitest_prompt_lists_actions_that_parse() -> None:
    prompt = prompts.step_prompt("guitest", "Click OK", ["click(0.1, 0.2)"], (480, 630))
    assert prompt.system is None
    assert "Task: Click OK" in prompt.user and "Step 1: click(0.1, 0.2)" in prompt.user and "480x630" in prompt.user
    # every example of the action list is readable by the guitest parser as the action it names
    for line in prompts.GUITEST_ACTIONS.splitlines():
        example = line.split("  ")[0].strip()
        parsed = parsers.read("guitest", "Action: " + example.replace("x1, y1, x2, y2", "0.1, 0.2, 0.3, 0.4").replace("x, y", "0.5, 0.5"))
        assert parsed.action is not None, example
        assert parsed.action.kind == example.split("(")[0]


def test_computer_use_system_prompt() -> None:
    system = prompts.computer_use_system((1288, 728))
    tool = json.loads(system.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0])
    assert "1288x728" in tool["function"]["description"]
    assert "left_click_drag" in tool["function"]["parameters"]["properties"]["action"]["enum"]
    qwen3 = json.loads(prompts.computer_use_system((1288, 728), "qwen3").split("<tools>\n", 1)[1].split("\n</tools>", 1)[0])
    assert "1000x1000" in qwen3["function"]["description"] and "answer" in qwen3["function"]["parameters"]["properties"]["action"]["enum"]
    with pytest.raises(ValueError):
        prompts.computer_use_system((1, 1), "qwen4")


def test_uitars_and_pyautogui_prompts() -> None:
    ui = prompts.step_prompt("uitars", "Open settings", [], (100, 100), language="Chinese")
    assert ui.user.rstrip().endswith("Open settings") and "Use Chinese in `Thought` part." in ui.user
    assert "Action History" not in ui.user
    assert "Step 2: b" in prompts.step_prompt("uitars", "x", ["a", "b"], (1, 1)).user
    py = prompts.step_prompt("pyautogui", "Open settings", [], (640, 480), normalized=True)
    assert "640x480" in py.system and "fractions" in py.system and "Open settings" in py.user
    with pytest.raises(ValueError):
        prompts.step_prompt("nope", "x", [], (1, 1))


def test_history_is_bounded() -> None:
    block = prompts.history_block([f"a{i}" for i in range(40)], limit=5)
    assert block.splitlines()[0] == "(35 earlier steps not shown)"
    assert block.splitlines()[-1] == "Step 40: a39" and len(block.splitlines()) == 6
