"""Qwen2.5-VL and Qwen3-VL driven as OSWorld's Qwen agents drive them: ``computer_use`` tool calls.

References: xlang-ai/OSWorld ``mm_agents/qwen25vl_agent.py`` (``Qwen25VLAgent.predict``, ``parse_response``,
``process_image``) with ``runners/run_multienv_qwen25vl.py``, and ``mm_agents/qwen3vl_agent.py`` (``Qwen3VLAgent``,
``coordinate_type`` ``relative``) with ``runners/run_multienv_qwen3vl.py``; ``mm_agents/utils/qwen_vl_utils.py``
(``smart_resize``). Read and run in the fork copy mrwwk/DeskCraft at ba3cee3 (its first commit, before its
qwen3vl_agent.py grew an interactive mode), the upstream repository not being reachable here.

What a step sends: the system message declaring the ``computer_use`` function (Qwen2.5-VL: ``You are a helpful
assistant`` and a short tool description; Qwen3-VL: the tool with its longer description, a 1000x1000 screen and a
response format); then, for each of the last ``history_n`` (4) earlier steps, a user turn with the screenshot it
answered (the oldest one with the instruction text) and the reply as an assistant turn; then the current screenshot
(alone; with the instruction text when no earlier step is shown). The instruction text lists the steps older than
that window as ``Step N: <its Action: line>`` under ``Previous actions``.

What a reply does: read line by line; the lines of each ``<tool_call>`` block (or a line that is a JSON object with
``name`` and ``arguments``) make one call of ``computer_use``; every call runs, in order. ``terminate`` is DONE
whatever its ``status`` (a failure too), ``wait`` is WAIT; ``triple_click``, ``hscroll`` and ``answer`` run nothing
(the agents write no code for them). ``scroll`` turns the wheel where the pointer is (its ``coordinate`` is not
read). Coordinates: Qwen2.5-VL answers in pixels of the image sent (``smart_resize`` factor 28, at most 1,003,520
pixels), Qwen3-VL on a 0..999 grid (``x * width / 999``); both truncated to whole screen pixels.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ...answers import jsonscan
from ...exchange import Prompt, SentImage, conversation
from ...images import smart_resize
from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, KEY, MIDDLE_CLICK, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from ..keys import combo, normalize
from .runner import ASSISTANT, USER, Past, Read, Runner, merge_drags, whole, window
from .calls import MAX_REPLY, fmt, number

ENUM = ["key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click", "double_click", "scroll", "wait", "terminate"]
PARAMETERS = {
    "keys": {"description": "Required only by `action=key`.", "type": "array"},
    "text": {"description": "Required only by `action=type`.", "type": "string"},
    "coordinate": {"description": "The x,y coordinates for mouse actions.", "type": "array"},
    "pixels": {"description": "The amount of scrolling.", "type": "number"},
    "time": {"description": "The seconds to wait.", "type": "number"},
    "status": {"description": "The status of the task.", "type": "string", "enum": ["success", "failure"]},
}
TOOLS_HEAD = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
QWEN3_FORMAT = (
    "\n\n# Response format\n\nResponse format for every step:\n"
    "1) Action: a short imperative describing what to do in the UI.\n"
    '2) A single <tool_call>...</tool_call> block containing only the JSON: {"name": <function-name>, "arguments": <args-json-object>}.\n\n'
    "Rules:\n- Output exactly in the order: Action, <tool_call>.\n- Be brief: one sentence for Action.\n"
    "- Do not output anything else outside those parts.\n- If finishing, use action=terminate in the tool call."
)
QWEN3_DESCRIPTION = "\n".join(
    [
        "Use a mouse and keyboard to interact with a computer, and take screenshots.",
        "* This is an interface to a desktop GUI. You do not have access to a terminal or applications menu. You must click on desktop icons to start applications.",
        "* Some applications may take time to start or process actions, so you may need to wait and take successive screenshots to see the results of your actions. E.g. if you click on Firefox and a window doesn't open, try wait and taking another screenshot.",
        "* The screen's resolution is 1000x1000.",
        "* Whenever you intend to move the cursor to click on an element like an icon, you should consult a screenshot to determine the coordinates of the element before moving the cursor.",
        "* If you tried clicking on a program or link but it failed to load even after waiting, try adjusting your cursor position so that the tip of the cursor visually falls on the element that you want to click.",
        "* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of the element. Don't click boxes on their edges unless asked.",
    ]
)
QWEN3_ACTIONS = """
* `key`: Performs key down presses on the arguments passed in order, then performs key releases in reverse order.
* `type`: Type a string of text on the keyboard.
* `mouse_move`: Move the cursor to a specified (x, y) pixel coordinate on the screen.
* `left_click`: Click the left mouse button at a specified (x, y) pixel coordinate on the screen.
* `left_click_drag`: Click and drag the cursor to a specified (x, y) pixel coordinate on the screen.
* `right_click`: Click the right mouse button at a specified (x, y) pixel coordinate on the screen.
* `middle_click`: Click the middle mouse button at a specified (x, y) pixel coordinate on the screen.
* `double_click`: Double-click the left mouse button at a specified (x, y) pixel coordinate on the screen.
* `triple_click`: Triple-click the left mouse button at a specified (x, y) pixel coordinate on the screen (simulated as double-click since it's the closest action).
* `scroll`: Performs a scroll of the mouse scroll wheel.
* `hscroll`: Performs a horizontal scroll (mapped to regular scroll).
* `wait`: Wait specified seconds for the change to happen.
* `terminate`: Terminate the current task and report its completion status.
* `answer`: Answer a question.
        """
INSTRUCTION = "\nPlease generate the next move according to the UI screenshot, instruction and previous actions.\n\nInstruction: {instruction}\n\nPrevious actions:\n{previous}"

#: what each call becomes (the pyautogui function the agents write, for history lines)
CLICKS = {"left_click": (CLICK, "click"), "right_click": (RIGHT_CLICK, "rightClick"), "middle_click": (MIDDLE_CLICK, "middleClick"), "double_click": (DOUBLE_CLICK, "doubleClick")}


def tool(description: str, action_description: str) -> dict[str, Any]:
    """The ``computer_use`` function as the agents declare it (``tools_def``)."""
    return {
        "type": "function",
        "function": {
            "name_for_human": "computer_use",
            "name": "computer_use",
            "description": description,
            "parameters": {"properties": {"action": {"description": action_description, "enum": ENUM, "type": "string"}, **PARAMETERS}, "required": ["action"], "type": "object"},
            "args_format": "Format the arguments as a JSON object.",
        },
    }


@dataclass(frozen=True)
class QwenRunner(Runner):
    """One of OSWorld's Qwen agents (see the module docstring). ``system``: the system message; ``factor``,
    ``max_pixels``: ``process_image``'s resize; ``grid``: the coordinate grid (999 for Qwen3-VL's relative
    coordinates; 0: pixels of the image sent); ``instruction_lines``: the prefixes of the lines ``parse_response``
    takes for the step's history line (and skips); ``markers``: the starts of a tool-call block's first line."""

    system: str = ""
    factor: int = 28
    max_pixels: int = 14 * 14 * 4 * 1280
    grid: int = 0
    instruction_lines: tuple[str, ...] = ("action:",)
    markers: tuple[str, ...] = ("<tool_call>",)

    def resizes(self) -> bool:
        return True

    def sizes(self, screen: tuple[int, int], model: Any) -> tuple[int, int]:
        """``process_image``: ``smart_resize`` (a side over 8192 scaled down first, as ``qwen_vl_utils`` does)."""
        w, h = screen
        if max(w, h) > 8192:
            beta = max(w, h) / 8192
            w, h = int(w / beta), int(h / beta)
        return smart_resize(w, h, self.factor, 56 * 56, self.max_pixels)

    def prompt(self, instruction: str, past: Sequence[Past], sent: SentImage, images: int) -> Prompt:
        shown = window(past, images)  # `history_start_idx = max(0, current_step - self.history_n)`
        older = past[: len(past) - len(shown)]
        previous = "\n".join(f"Step {i + 1}: {p.line}" for i, p in enumerate(older)) or "None"
        text = INSTRUCTION.format(instruction=instruction, previous=previous)
        if not shown:
            return conversation(self.system, [(USER, (0, text))], (sent,))
        turns: list[tuple[str, tuple[str | int, ...]]] = []
        for index, step in enumerate(shown):
            turns.append((USER, (index, text) if index == 0 else (index,)))
            turns.append((ASSISTANT, (step.reply or "",)))
        turns.append((USER, (len(shown),)))
        return conversation(self.system, turns, (*(p.image for p in shown), sent))

    def read(self, text: str) -> Read:
        return read(text, self.instruction_lines, self.markers)

    def decide(self, read: Read, past: Sequence[Past], step: int, budget: int) -> tuple[tuple[Action, ...], tuple[str, ...]]:
        """Every call in order; ``terminate`` says DONE whatever its status (noted when the status was failure)."""
        notes = tuple("terminate_failure_is_done" for a in read.actions if a.kind == DONE and a.text == "failure")
        return read.actions, notes

    def line(self, text: str, actions: Sequence[Action]) -> str:
        """``parse_response``'s low-level instruction: the first ``Action:`` line (Qwen2.5-VL: also lines starting ``step``,
        ``i will``, ``i'll``, ``now i``), else ``Performing <function> action`` after the first call."""
        from ...answers.region import strip_think

        for raw in strip_think(text[-MAX_REPLY:]).split("\n"):
            line = raw.strip()
            if line.lower().startswith(self.instruction_lines):
                return line.split("Action:")[-1].strip() if self.grid else line
        if actions:
            return f"Performing {FUNCTIONS.get(actions[0].kind, actions[0].kind)} action"
        return ""

    def render(self, actions: Sequence[Action], decimals: int | None = None) -> str:
        places = 1 if decimals is None else decimals
        return "Action: " + ", ".join(a.kind.replace("_", " ") for a in actions) + "\n" + "\n".join(_tool_call(a, places) for a in actions)

    def to_screen(self, action: Action, space: str, sent: tuple[int, int], screen: tuple[int, int]) -> Action:
        """``adjust_coordinates``: ``int(x * width / 999)`` (Qwen3-VL) or ``int(x * width / sent width)`` (Qwen2.5-VL)."""
        across, down = (self.grid, self.grid) if self.grid else sent

        def mapped(p: tuple[float, float] | None) -> tuple[float, float] | None:
            return None if p is None else (whole(p[0] * screen[0] / across), whole(p[1] * screen[1] / down))

        return replace(action, point=mapped(action.point), end=mapped(action.end), space="screen")

    def from_screen(self, action: Action, space: str, sent: tuple[int, int], screen: tuple[int, int]) -> Action:
        across, down = (self.grid, self.grid) if self.grid else sent

        def mapped(p: tuple[float, float] | None) -> tuple[float, float] | None:
            return None if p is None else (p[0] * across / screen[0], p[1] * down / screen[1])

        return replace(action, point=mapped(action.point), end=mapped(action.end), space=None)


QWEN25VL = QwenRunner(
    name="qwen25vl",
    source="xlang-ai/OSWorld mm_agents/qwen25vl_agent.py (Qwen25VLAgent) and runners/run_multienv_qwen25vl.py",
    convention="computer_use",
    space="pixel_sent",
    history_images=4,
    reference={"temperature": 1.0, "top_p": 0.9, "max_tokens": 1500, "history_n": 4},
    sleep_after_execution=0.0,  # runners/run_multienv_qwen25vl.py
    evaluate_after=20.0,  # lib_run_single.run_single_example: time.sleep(20) before env.evaluate
    system="You are a helpful assistant\n\n" + TOOLS_HEAD + json.dumps(tool("Use a mouse and keyboard to interact with a computer, and take screenshots.", "The action to perform.")) + TOOLS_TAIL,
    instruction_lines=("action:", "step", "i will", "i'll", "now i"),
    markers=("<tool_call>", "⚗", "📐"),
)
QWEN3VL = QwenRunner(
    name="qwen3vl",
    source="xlang-ai/OSWorld mm_agents/qwen3vl_agent.py (Qwen3VLAgent, coordinate_type relative) and runners/run_multienv_qwen3vl.py",
    convention="computer_use",
    space="grid999",
    history_images=4,
    reference={"max_tokens": 32768, "temperature": "not sent", "top_p": "not sent", "history_n": 4},
    sleep_after_execution=0.0,  # runners/run_multienv_qwen3vl.py
    evaluate_after=20.0,  # lib_run_single.run_single_example: time.sleep(20) before env.evaluate
    system=TOOLS_HEAD + json.dumps(tool(QWEN3_DESCRIPTION, QWEN3_ACTIONS)) + TOOLS_TAIL + QWEN3_FORMAT,
    factor=32,
    max_pixels=16 * 16 * 4 * 12800,
    grid=999,
)

#: the pyautogui function each action kind is written as (``Performing click action``)
FUNCTIONS = {
    CLICK: "click",
    RIGHT_CLICK: "rightClick",
    DOUBLE_CLICK: "doubleClick",
    MIDDLE_CLICK: "middleClick",
    TYPE: "typewrite",
    KEY: "hotkey",
    SCROLL: "scroll",
    MOVE: "moveTo",
    DRAG: "dragTo",
    WAIT: "WAIT",
    DONE: "DONE",
}


def read(text: str, instruction_lines: tuple[str, ...] = ("action:",), markers: tuple[str, ...] = ("<tool_call>",)) -> Read:
    """The calls of a reply in order (``parse_response``, see the module docstring), points in the reply's numbers.
    Never raises."""
    from ...answers.region import strip_think

    blocks: list[str] = []
    inside = False
    current: list[str] = []
    for raw in strip_think(text[-MAX_REPLY:]).split("\n"):
        line = raw.strip()
        if not line or line.lower().startswith(instruction_lines):
            continue
        if line.startswith(markers):
            inside = True
        elif line.startswith("</tool_call>"):
            if current:
                blocks.append("\n".join(current))
                current = []
            inside = False
        elif inside:
            current.append(line)
        elif line.startswith("{") and line.endswith("}"):
            blocks.append(line)
    if current:
        blocks.append("\n".join(current))
    actions: list[Action] = []
    notes: list[str] = []
    for number_, block in enumerate(blocks, 1):
        found, note = _call(block)
        if note:
            notes.append(f"call {number_}: {note}" if len(blocks) > 1 else note)
        actions.extend(found)
    if not blocks:
        notes.append("no_action")
    return Read(tuple(merge_drags(actions)), tuple(notes))


def _call(block: str) -> tuple[list[Action], str]:
    """The actions of one tool call (``process_tool_call``) and a note; a block that is no JSON call of ``computer_use``
    runs nothing."""
    try:
        call = json.loads(block)
    except (ValueError, RecursionError):
        return [], "not_json"
    arguments = jsonscan.call_arguments(call) if isinstance(call, dict) and call.get("name") == "computer_use" else None
    if arguments is None:
        return [], "not_a_computer_use_call"
    name = arguments["action"]
    coordinate = arguments.get("coordinate")
    point: tuple[float, float] | None = None
    if coordinate is not None:
        values = [number(v) for v in coordinate] if isinstance(coordinate, list) else []
        if len(values) != 2 or any(v is None for v in values):
            return [], "coordinates_not_a_point"
        point = (values[0], values[1])  # type: ignore[assignment]
    if name in CLICKS:
        kind, _ = CLICKS[name]
        return [Action(kind, point=point)], ""
    if name == "type":
        text = arguments.get("text", "")
        return ([Action(TYPE, text=text)], "") if isinstance(text, str) and text else ([], "type_without_text_does_nothing")
    if name == "key":
        keys = _keys(arguments.get("keys", []))
        if any("'" in k or '"' in k for k in keys):
            return [], "key_in_quotes_does_nothing"  # the agents' code for it is no Python
        return ([Action(KEY, keys=keys)], "") if keys else ([], "key_without_keys")
    if name == "scroll":
        pixels = number(arguments.get("pixels", 0))
        if pixels is None:
            return [], "pixels_not_a_number"
        return ([Action(SCROLL, scroll=(0.0, -pixels))], "") if pixels else ([], "scroll_by_0_does_nothing")
    if name == "wait":
        seconds = number(arguments.get("time", 1.0))
        return [Action(WAIT, seconds=seconds if seconds is not None and seconds >= 0 else 1.0)], ""
    if name == "terminate":
        return [Action(DONE, text=str(arguments.get("status", "")))], ""
    if name == "mouse_move":
        return [Action(MOVE, point=point or (0.0, 0.0))], ""
    if name == "left_click_drag":
        return [Action(DRAG, end=point or (0.0, 0.0))], ""
    return [], f"{re.sub(r'[^a-z0-9_]', '', name.lower())[:30]}_not_run"


def _keys(keys: Any) -> tuple[str, ...]:
    """The keys of a ``key`` call, cleaned as ``process_tool_call`` cleans them (``keys=[``, brackets, quotes)."""
    if isinstance(keys, str):
        return combo(keys)  # the agents spell a string out character by character; guitest reads a combination
    if not isinstance(keys, list):
        return ()
    out = []
    for key in keys:
        if not isinstance(key, str):
            continue
        if key.startswith("keys=["):
            key = key[6:]
        if key.endswith("]"):
            key = key[:-1]
        if key.startswith(("['", '["')):
            key = key[2:] if len(key) > 2 else key
        if key.endswith(("']", '"]')):
            key = key[:-2] if len(key) > 2 else key
        key = key.strip()
        if key:
            out.append(normalize(key))
    return tuple(out)


def _tool_call(action: Action, decimals: int) -> str:
    """A ``<tool_call>`` block for ``action`` (points already in the reply's numbers)."""

    def xy(point: tuple[float, float]) -> list[float]:
        return [float(fmt(v, decimals)) for v in point]

    kind = action.kind
    args: dict[str, Any]
    if kind in (CLICK, DOUBLE_CLICK, RIGHT_CLICK, MIDDLE_CLICK, MOVE):
        args = {"action": {CLICK: "left_click", DOUBLE_CLICK: "double_click", RIGHT_CLICK: "right_click", MIDDLE_CLICK: "middle_click", MOVE: "mouse_move"}[kind]}
        if action.point:
            args["coordinate"] = xy(action.point)
    elif kind == DRAG:  # the agents drag from where the pointer is: a drag that starts elsewhere moves there first
        drag = {"action": "left_click_drag", "coordinate": xy(action.end or (0.0, 0.0))}
        if action.point is None:
            args = drag
        else:
            return _tool_call(Action(MOVE, point=action.point), decimals) + "\n" + _tool_call(Action(DRAG, end=action.end), decimals)
    elif kind == SCROLL:
        args = {"action": "scroll", "pixels": -action.scroll[1]}
    elif kind == TYPE:
        args = {"action": "type", "text": action.text}
    elif kind == KEY:
        args = {"action": "key", "keys": list(action.keys)}
    elif kind == WAIT:
        args = {"action": "wait", "time": action.seconds}
    else:
        args = {"action": "terminate", "status": "success" if kind == DONE else "failure"}
    return "<tool_call>\n" + json.dumps({"name": "computer_use", "arguments": args}, ensure_ascii=False) + "\n</tool_call>"
