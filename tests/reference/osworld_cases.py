"""The inputs tests/reference/record_osworld.py runs OSWorld's agents on: episodes (for the messages) and reply rows
(for what each reply does). The recording holds them beside what OSWorld did, so the tests read only the recording."""

from __future__ import annotations

import json
from typing import Any


def call(action: str, **arguments: Any) -> str:
    """A Qwen ``computer_use`` tool call block."""
    return "<tool_call>\n" + json.dumps({"name": "computer_use", "arguments": {"action": action, **arguments}}, ensure_ascii=False) + "\n</tool_call>"


# -- episodes: every step's messages --------------------------------------------------------------------------------


def qwen_reply(k: int) -> str:
    return [
        f"Action: click the box {k}\n" + call("left_click", coordinate=[10 * k, 20 * k]),
        f"I type the name.\n{call('type', text=f'step {k}')}",
        "Action: press enter\n" + call("key", keys=["enter"]),
        f"Nothing to do at step {k}, no call.",
        f"Step {k}: scroll down\n" + call("scroll", pixels=-3),
        f"Action: move to {k}\n" + call("mouse_move", coordinate=[5 * k, 7 * k]),
    ][k % 6]


def prompt_agent_reply(k: int) -> str:
    return [
        f"I click the field {k}.\n```python\npyautogui.click({10 * k}, {20 * k})\n```",
        f"```python\npyautogui.typewrite('step {k}')\n```",
        "",
        " \n ",
        "```WAIT```",
        f"Then scroll.\n```python\npyautogui.scroll(-{k})\n```\n",
    ][k % 6]


def uitars_reply(k: int) -> str:
    return [
        f"Thought: 点击第{k}个\nAction: click(start_box='({10 * k},{20 * k})')",
        f"Thought: type\nAction: type(content='step {k}')",
        "Thought: save\nAction: hotkey(key='ctrl s')",
        f"Thought: scroll\nAction: scroll(start_box='({30 * k},{40 * k})', direction='down')",
        f"Thought: drag\nAction: drag(start_box='(1,2)', end_box='({50 * k},{60 * k})')",
        f"  Thought: double {k}\nAction: left_double(start_box='({k},{k})')  ",
    ][k % 6]


REPLIES = {"qwen25vl": qwen_reply, "qwen3vl": qwen_reply, "prompt-agent": prompt_agent_reply, "uitars15": uitars_reply, "uitars15-qwen2vl": uitars_reply}
#: the runner's default window, a shorter one, and none (OSWorld's history_n / max_trajectory_length; UI-TARS: history_n
#: counts the current screenshot, so 3 is two earlier ones)
OTHER_WINDOWS = {"qwen25vl": (2, 0), "qwen3vl": (2, 0), "prompt-agent": (1, 0), "uitars15": (3, 1), "uitars15-qwen2vl": (3,)}

EPISODES: list[tuple[str, str, list[str], int | None]] = []
for _runner, _reply in REPLIES.items():
    EPISODES.append((f"{_runner}-7", _runner, [_reply(k) for k in range(1, 8)], None))
    EPISODES.append((f"{_runner}-12", _runner, [_reply(k) for k in range(1, 13)], None))
    for _window in OTHER_WINDOWS[_runner]:
        EPISODES.append((f"{_runner}-7-window{_window}", _runner, [_reply(k) for k in range(1, 8)], _window))


# -- reply rows: what each reply does on the machine -----------------------------------------------------------------


def row(name: str, runner: str, *replies: str, budget: int = 15) -> dict[str, Any]:
    return {"name": name, "runner": runner, "replies": list(replies), "budget": budget}


UT = "uitars15"
ROWS = [
    row("uitars-click-type-enter", UT, "Thought: 点击搜索框并输入\nAction: click(start_box='(100,200)')\n\ntype(content='abc\\n')"),
    row("uitars-three-actions", UT, "Thought: x\nAction: click(start_box='(966,546)')\n\nhotkey(key='ctrl a')\n\ntype(content='hello')"),
    row("uitars-action-then-finished", UT, "Thought: done after a click\nAction: click(start_box='(100,200)')\n\nfinished(content='ok')"),
    row("uitars-finished-content", UT, "Thought: done\nAction: finished(content='The answer is \\'42\\'.')"),
    row("uitars-finished-in-thought-prose", UT, "Thought: I will say finished() when done, not yet.\nAction: click(start_box='(100,200)')"),
    row("uitars-wait", UT, "Thought: loading\nAction: wait()"),
    row("uitars-wait-after-click", UT, "Thought: x\nAction: click(start_box='(100,200)')\n\nwait()"),
    row("uitars-call-user-x4", UT, *["Thought: stuck\nAction: call_user()"] * 4),
    row("uitars-budget-fail", UT, "Thought: a\nAction: click(start_box='(10,20)')", "Thought: b\nAction: click(start_box='(30,40)')", budget=2),
    row("uitars-budget-finished", UT, "Thought: a\nAction: click(start_box='(10,20)')", "Thought: b\nAction: finished(content='')", budget=2),
    row("uitars-non-ascii", UT, "Thought: x\nAction: type(content='北京 café')"),
    row("uitars-quote-in-content", UT, "Thought: x\nAction: type(content='it's fine')"),
    row("uitars-escaped-quote-in-content", UT, "Thought: x\nAction: type(content='it\\'s \"fine\"')"),
    row("uitars-backslash-in-content", UT, "Thought: x\nAction: type(content='C:\\\\temp\\\\a.txt')"),
    row("uitars-newline-inside-content", UT, "Thought: x\nAction: type(content='line one\\nline two')"),
    row("uitars-scroll-drag-hotkey", UT, "Thought: x\nAction: scroll(start_box='(500,500)', direction='down')\n\ndrag(start_box='(10,10)', end_box='(200,300)')\n\nhotkey(key='ctrl c')"),
    row("uitars-scroll-up-no-point", UT, "Thought: x\nAction: scroll(direction='up')"),
    row("uitars-scroll-left", UT, "Thought: x\nAction: scroll(start_box='(500,500)', direction='left')"),
    row("uitars-three-key-hotkey", UT, "Thought: x\nAction: hotkey(key='ctrl shift t')"),
    row("uitars-x-style-key", UT, "Thought: x\nAction: hotkey(key='Control_L c')"),
    row("uitars-unparseable-part", UT, "Thought: x\nAction: click(start_box='(100,200)')\n\nclick(start_box='(abc,200)')"),
    row("uitars-no-action", UT, "I think I should click the button."),
    row("uitars-box-tokens", UT, "Thought: x\nAction: click(start_box='<|box_start|>(100,200)<|box_end|>')"),
    row("uitars-point-argument", UT, "Thought: x\nAction: click(point='<point>100 200</point>')"),
    row("uitars-start-point-argument", UT, "Thought: x\nAction: drag(start_point='<point>10 20</point>', end_point='<point>300 400</point>')"),
    row("uitars-double-right-hover", UT, "Thought: x\nAction: left_double(start_box='(100,200)')\n\nright_single(start_box='(300,400)')\n\nhover(start_box='(50,60)')"),
    row("uitars-enter-literal-n", UT, "Thought: x\nAction: type(content='Jan\\\\n')"),
    row("uitars-think-block", UT, "<think>maybe click(start_box='(5,5)')</think>\nThought: x\nAction: click(start_box='(100,200)')"),
]

Q25, Q3 = "qwen25vl", "qwen3vl"
for _r, _p in ((Q25, "q25"), (Q3, "q3")):
    ROWS += [
        row(f"{_p}-several", _r, "Action: click the box, type, press enter\n" + "\n".join([call("left_click", coordinate=[658, 364]), call("type", text="hello"), call("key", keys=["enter"])])),
        row(f"{_p}-two-tool-calls", _r, "Action: two\n" + call("double_click", coordinate=[100, 100]) + "\n" + call("right_click", coordinate=[300, 200])),
        row(f"{_p}-terminate-success", _r, "Action: done\n" + call("terminate", status="success")),
        row(f"{_p}-terminate-failure", _r, "Action: give up\n" + call("terminate", status="failure")),
        row(f"{_p}-click-then-terminate", _r, "Action: click and finish\n" + call("left_click", coordinate=[100, 100]) + "\n" + call("terminate", status="success")),
        row(f"{_p}-terminate-in-prose", _r, "Thought: I will terminate with status failure if this fails.\n" + call("double_click", coordinate=[10, 20])),
        row(f"{_p}-one-line-tool-call", _r, call("left_click", coordinate=[100, 100]).replace("\n", "")),
        row(f"{_p}-bare-json-line", _r, json.dumps({"name": "computer_use", "arguments": {"action": "right_click", "coordinate": [100, 100]}})),
        row(
            f"{_p}-scroll-drag-move-wait",
            _r,
            "Action: x\n"
            + "\n".join([call("scroll", pixels=-5, coordinate=[100, 100]), call("left_click_drag", coordinate=[200, 300]), call("mouse_move", coordinate=[50, 60]), call("wait", time=2)]),
        ),
        row(f"{_p}-scroll-up-no-point", _r, "Action: x\n" + call("scroll", pixels=3)),
        row(f"{_p}-drag-from-a-point", _r, "Action: x\n" + call("mouse_move", coordinate=[10, 20]) + "\n" + call("left_click_drag", coordinate=[300, 400])),
        row(f"{_p}-triple-hscroll-answer", _r, "Action: x\n" + "\n".join([call("triple_click", coordinate=[100, 100]), call("hscroll", pixels=3), call("answer", text="42")])),
        row(f"{_p}-middle-click", _r, "Action: x\n" + call("middle_click", coordinate=[100, 100])),
        row(f"{_p}-key-combo-and-cleanup", _r, "Action: x\n" + call("key", keys=["ctrl", "c"]) + "\n" + call("key", keys=["keys=['enter']"])),
        row(f"{_p}-three-key-combo", _r, "Action: x\n" + call("key", keys=["ctrl", "shift", "t"])),
        row(f"{_p}-x-style-key", _r, "Action: x\n" + call("key", keys=["Control_L", "c"])),
        row(f"{_p}-keys-as-a-string", _r, "Action: x\n" + call("key", keys="ctrl+a")),
        row(f"{_p}-non-ascii", _r, "Action: type\n" + call("type", text="北京 café")),
        row(f"{_p}-quote-in-text", _r, "Action: type\n" + call("type", text="it's")),
        row(f"{_p}-double-quote-in-text", _r, "Action: type\n" + call("type", text='say "hi"')),
        row(f"{_p}-backslash-in-text", _r, "Action: type\n" + call("type", text="C:\\temp")),
        row(f"{_p}-newline-in-text", _r, "Action: type\n" + call("type", text="hello\n")),
        row(
            f"{_p}-broken-json-then-good",
            _r,
            'Action: x\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 2]\n</tool_call>\n' + call("left_click", coordinate=[100, 100]),
        ),
        row(
            f"{_p}-arguments-as-a-json-string",
            _r,
            "Action: x\n<tool_call>\n" + json.dumps({"name": "computer_use", "arguments": json.dumps({"action": "left_click", "coordinate": [100, 100]})}) + "\n</tool_call>",
        ),
        row(f"{_p}-call-inside-think", _r, "<think>\n" + call("left_click", coordinate=[5, 5]) + "\n</think>\nAction: x\n" + call("left_click", coordinate=[100, 100])),
        row(f"{_p}-corner", _r, "Action: corner\n" + call("left_click", coordinate=[999, 999] if _r == Q3 else [1315, 727]) + "\n" + call("right_click", coordinate=[333, 1])),
    ]

PA = "prompt-agent"
ROWS += [
    row("pa-several-in-one-block", PA, "```python\npyautogui.click(100, 200)\ntime.sleep(0.5)\npyautogui.typewrite('hello')\npyautogui.press('enter')\n```"),
    row("pa-click-then-done-in-prose", PA, "I click the button.\n```python\npyautogui.click(100, 200)\n```\nDONE"),
    row("pa-fail-in-prose", PA, "This might FAIL, let me try.\nFAIL\n```python\npyautogui.click(5, 6)\n```"),
    row("pa-done-block-after-code", PA, "```python\npyautogui.click(100, 200)\n```\n```DONE```"),
    row("pa-done-last-line-of-block", PA, "```python\npyautogui.click(100, 200)\nDONE\n```"),
    row("pa-whole-reply-fail", PA, "FAIL"),
    row("pa-wait-code", PA, "```WAIT```"),
    row("pa-press-presses", PA, "```python\npyautogui.press('tab', presses=3)\npyautogui.press(['down', 'enter'])\n```"),
    row("pa-typewrite-list-hotkey", PA, "```python\npyautogui.typewrite(['a', 'b', 'enter'])\npyautogui.hotkey('ctrl', 's')\n```"),
    row("pa-three-key-hotkey", PA, "```python\npyautogui.hotkey('ctrl', 'shift', 't')\n```"),
    row("pa-x-style-key", PA, "```python\npyautogui.hotkey('Control_L', 'c')\n```"),
    row("pa-semicolon-line", PA, "```python\npyautogui.click(10, 20); pyautogui.write('x')\n```"),
    row("pa-semicolon-in-text", PA, "```python\npyautogui.write('a; b')\n```"),
    row("pa-non-ascii", PA, "```python\npyautogui.write('naïve 東京')\n```"),
    row("pa-quotes-backslash-newline", PA, "```python\npyautogui.write(\"it's \\\"x\\\"\")\npyautogui.write('C:\\\\temp')\npyautogui.write('a\\nb')\n```"),
    row("pa-less-than", PA, "```python\npyautogui.typewrite('a<b')\npyautogui.press('<')\n```"),
    row(
        "pa-click-kwargs-double-right",
        PA,
        "```python\npyautogui.click(x=100, y=200, clicks=2)\npyautogui.click(300, 400, button='right')\npyautogui.moveTo(1, 2)\npyautogui.dragTo(30, 40, duration=0.5)\n```",
    ),
    row("pa-triple-and-middle", PA, "```python\npyautogui.tripleClick(100, 200)\npyautogui.middleClick(300, 400)\npyautogui.click(5, 6, clicks=3)\npyautogui.click(7, 8, button='middle')\n```"),
    row("pa-scroll-with-and-without-point", PA, "```python\npyautogui.scroll(-3)\npyautogui.scroll(5, x=100, y=200)\npyautogui.hscroll(2)\n```"),
    row("pa-two-blocks", PA, "```python\npyautogui.click(1, 2)\n```\nthen\n```python\npyautogui.scroll(-3)\n```"),
    row("pa-for-range-loop-first", PA, "```python\nfor i in range(2):\n    pyautogui.press('tab')\npyautogui.click(5, 5)\n```"),
    row("pa-for-range-loop-after-a-call", PA, "```python\npyautogui.click(5, 5)\nfor i in range(2):\n    pyautogui.press('tab')\n```"),
    row("pa-if-first", PA, "```python\nif True:\n    pyautogui.click(5, 5)\n```"),
    row("pa-import-then-loop", PA, "```python\nimport pyautogui\nfor _ in range(3):\n    pyautogui.press('down')\n```"),
    row("pa-comment-first", PA, "```python\n# open the menu\npyautogui.click(5, 5)\n```"),
    row("pa-variable", PA, "```python\nx = 3\npyautogui.click(1, 2)\nos.system('ls')\npyautogui.click(3, 4)\n```"),
    row("pa-not-python", PA, "```python\npyautogui.click(1, 2\n```"),
    row("pa-code-inside-think", PA, "<think>\n```python\npyautogui.click(5, 5)\n```\n</think>\n```python\npyautogui.click(100, 200)\n```"),
    row("pa-no-code", PA, "I would click the OK button."),
]
