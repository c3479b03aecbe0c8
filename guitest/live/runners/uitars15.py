"""UI-TARS-1.5 (and UI-TARS v1) driven as OSWorld's runner drives them.

Reference: xlang-ai/OSWorld ``mm_agents/uitars15_v1.py`` (``UITARSAgent.predict``, ``parse_action_to_structure_output``,
``parse_action``, ``parsing_response_to_pyautogui_code``, ``add_box_token``, ``linear_resize``, ``smart_resize``) with
the runtime settings of ``runners/run_multienv_uitars15_v1.py`` (``infer_mode`` ``qwen25vl_normal`` for UI-TARS-1.5,
``qwen2vl_user`` with ``model_type`` ``qwen2vl`` for UI-TARS v1); read in fork copies (mrwwk/DeskCraft,
limenlp/OS_Blind, v3yu/osworld-eval), the upstream repository not being reachable here. The model's own parser
(the ``ui-tars`` package 0.5.1, ``ui_tars.action_parser``) reads the same replies alike where the tests say so.

What a step sends: a system message ``You are a helpful assistant.``; a user message with the prompt (the action
space, ``Use Chinese in `Thought` part``, the instruction); then every earlier reply as an assistant turn (its
points written back between ``<|box_start|>``/``<|box_end|>``), the last ``history_n - 1`` of them each after a user
turn holding the screenshot it answered; then the current screenshot. ``history_n`` is 5: four earlier screenshots.

What a reply does: the text after the last ``Action:``, split at blank lines, one call each, read as Python
(``type(content='...')`` with its quotes escaped first). A part that cannot be read makes the whole reply
unreadable. ``finished`` (done), ``wait``, ``call_user`` or ``error_env`` (fail) anywhere in the reply is the
step's only action: what came before it does not run. The first ``callusr_tolerance`` (3) ``call_user`` of an
episode wait instead of failing. At the last step of the budget the reply's actions are replaced by FAIL.
``type`` pastes its text through the clipboard, pauses 0.5 s (the generated code's ``time.sleep(0.5)``) and presses
Enter when the text ends with a newline; ``scroll`` turns the wheel 5 notches up or down (left and right do nothing);
``hotkey`` splits its keys at spaces. ``point=``, ``start_point=`` and ``end_point=`` name the boxes, as the
``ui-tars`` package reads them (OSWorld's runner fails on them). Coordinates are pixels of the screenshot as the model
saw it (``smart_resize``: factor 28, 100*28*28 to 16384*28*28 pixels) for UI-TARS-1.5, 0..1000 for UI-TARS v1,
mapped to the screen as the reference maps them and cut to whole pixels as pyautogui cuts them.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ...answers import pyliteral
from ...exchange import Prompt, SentImage, conversation
from ...images import smart_resize
from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from ..keys import normalize
from .runner import ASSISTANT, USER, Past, Read, Runner, whole, whole_pixels
from .calls import MAX_REPLY, fmt

PROMPT = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task. \n\n"
    "## Output Format\n```\nThought: ...\nAction: ...\n```\n\n"
    "## Action Space\n{action_space}\n\n"
    "## Note\n- Use {language} in `Thought` part.\n"
    "- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.\n\n"
    "## User Instruction\n{instruction}\n"
)
_ACTIONS = (
    "\nclick(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
    "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
    "right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
    "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\n"
    "hotkey(key='')\n"
    "type(content='') #If you want to submit your input, use \"\\n\" at the end of `content`.\n"
    "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n"
    "wait() #Sleep for 5s and take a screenshot to check for any changes.\n"
)
#: ``UITARS_NORMAL_ACTION_SPACE`` (infer_mode qwen25vl_normal)
NORMAL_ACTION_SPACE = _ACTIONS + "finished(content='xxx') # Use escape characters \\', \\\", and \\n in content part to ensure we can parse the content in normal python string format.\n"
#: ``UITARS_CALL_USR_ACTION_SPACE`` (infer_mode qwen2vl_user)
CALL_USER_ACTION_SPACE = _ACTIONS + "finished()\ncall_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.\n"
SYSTEM = "You are a helpful assistant."

FACTOR = 28
NOTCHES = 5.0  # parsing_response_to_pyautogui_code: pyautogui.scroll(+-5)
WAIT_SECONDS = 5.0  # "wait() #Sleep for 5s and take a screenshot"
TYPE_PAUSE, PAUSE = 0.5, "after_typing"  # parsing_response_to_pyautogui_code: `time.sleep(0.5)` after the text, before its Enter
#: the ``ui-tars`` package's names for the box arguments (``ui_tars.action_parser``'s ``KEY_MAPPING``)
POINT_NAMES = {"point": "start_box", "start_point": "start_box", "end_point": "end_box"}
CALL_USER, ERROR_ENV = "call_user", "error_env"
CLICKS = {"click": CLICK, "left_single": CLICK, "left_double": DOUBLE_CLICK, "right_single": RIGHT_CLICK, "hover": MOVE}
ARROWS = {"arrowleft": "left", "arrowright": "right", "arrowup": "up", "arrowdown": "down"}
TYPE_OPEN = "type(content='"
_UNESCAPED_QUOTE = re.compile(r"(?<!\\)'")
_BOX = re.compile(r"(start_box|end_box)='\((\d+),\s*(\d+)\)'")
_POINT = re.compile(r"<point>\s*(-?[\d.]+)[\s,]+(-?[\d.]+)\s*</point>")


@dataclass(frozen=True)
class UITarsRunner(Runner):
    """OSWorld's UI-TARS runner (see the module docstring); its ``space`` is its ``model_type``'s (``qwen25vl``:
    pixels of the screenshot as the model saw it; ``qwen2vl``: 0..1000). ``action_space``: the prompt's list;
    ``language``: of the thought;
    ``min_pixels``/``max_pixels``: the runtime settings' image limits; ``callusr_tolerance``: the ``call_user`` that
    wait before one fails."""

    action_space: str = NORMAL_ACTION_SPACE
    language: str = "Chinese"
    min_pixels: int = 100 * 28 * 28
    max_pixels: int = 16384 * 28 * 28
    callusr_tolerance: int = 3

    def resizes(self) -> bool:
        return True

    def sizes(self, screen: tuple[int, int], model: Any) -> tuple[int, int]:
        """``linear_resize`` into the runtime settings' pixel range, then the ``smart_resize`` the model's processor makes of
        that (the reference sends the first and leaves the second to the server; guitest resizes on the client to the
        size the model sees, so the coordinates read are pixels of the image sent)."""
        w, h = linear_resize(screen, self.min_pixels, self.max_pixels)
        return smart_resize(w, h, FACTOR, self.min_pixels, self.max_pixels)

    def prompt(self, instruction: str, past: Sequence[Past], sent: SentImage, images: int) -> Prompt:
        text = PROMPT.format(instruction=instruction, action_space=self.action_space, language=self.language)
        turns: list[tuple[str, tuple[str | int, ...]]] = [(USER, (text,))]
        shown: list[SentImage] = []
        for index, step in enumerate(past):
            if index + images >= len(past):  # `history_idx + history_n > len(history_responses)`, history_n = images + 1
                turns.append((USER, (len(shown),)))
                shown.append(step.image)
            turns.append((ASSISTANT, (add_box_token((step.reply or "").strip()),)))
        turns.append((USER, (len(shown),)))
        return conversation(SYSTEM, turns, (*shown, sent))

    def read(self, text: str) -> Read:
        return read(text)

    def to_screen(self, action: Action, space: str, sent: tuple[int, int], screen: tuple[int, int]) -> Action:
        """``parse_action_to_structure_output`` then ``parsing_response_to_pyautogui_code``: the reply's number over the
        side of the image the model saw (``model_type`` qwen2vl: over 1000), times the screen's side, rounded to 3
        places; pyautogui then cuts it to a whole pixel (``int(x)``)."""
        across, down = sent if space == "pixel_sent" else (1000, 1000) if space == "grid1000" else (0, 0)
        if not (across and down):
            return whole_pixels(super().to_screen(action, space, sent, screen))

        def mapped(p: tuple[float, float] | None) -> tuple[float, float] | None:
            return None if p is None else (whole(round(p[0] / across * screen[0], 3)), whole(round(p[1] / down * screen[1], 3)))

        return replace(action, point=mapped(action.point), end=mapped(action.end), space="screen")

    def decide(self, read: Read, past: Sequence[Past], step: int, budget: int) -> tuple[tuple[Action, ...], tuple[str, ...]]:
        """``UITARSAgent.predict``'s rules (see the module docstring); ``wait``/``call_user`` read as WAIT/FAIL with the text
        ``call_user``, a ``call_user`` within the tolerance runs as a WAIT with that text."""
        actions: list[Action] = []
        for action in read.actions:
            if action.kind == DONE or (action.kind == WAIT and action.text != PAUSE) or (action.kind == FAIL and action.text == ERROR_ENV):
                return (action,), (("stops_here",) if len(read.actions) > 1 else ())
            if action.kind == FAIL and action.text == CALL_USER:
                waited = sum(1 for p in past for a in p.actions if a.kind == WAIT and a.text == CALL_USER)
                if waited < self.callusr_tolerance:
                    return (Action(WAIT, seconds=WAIT_SECONDS, text=CALL_USER),), (f"call_user_waits:{waited + 1}/{self.callusr_tolerance}",)
                return (action,), ("call_user_fails",)
            actions.append(action)
        if actions and step + 1 >= budget:  # `len(self.history_responses) >= self.max_trajectory_length`: FAIL
            return (Action(FAIL, text="budget"),), ("last_step_fails",)
        return tuple(actions), ()

    def render(self, actions: Sequence[Action], decimals: int | None = None) -> str:
        places = 1 if decimals is None else decimals
        return "Thought: " + ", ".join(a.kind.replace("_", " ") for a in actions) + ".\nAction: " + "\n\n".join(_call(a, places) for a in actions)


UITARS15 = UITarsRunner(
    name="uitars15",
    source="xlang-ai/OSWorld mm_agents/uitars15_v1.py (UITARSAgent, infer_mode qwen25vl_normal) and runners/run_multienv_uitars15_v1.py",
    convention="uitars",
    space="pixel_sent",
    history_images=4,
    reference={"temperature": 0.0, "top_p": 0.9, "max_tokens": 1000, "frequency_penalty": 1, "history_n": 5, "input_swap": True},
    sleep_after_execution=3.0,  # runners/run_multienv_uitars15_v1.py
    evaluate_after=20.0,  # lib_run_single.run_single_example: time.sleep(20) before env.evaluate
)
UITARS_V1 = UITarsRunner(
    name="uitars15-qwen2vl",
    source="xlang-ai/OSWorld mm_agents/uitars15_v1.py (UITARSAgent, infer_mode qwen2vl_user, model_type qwen2vl) and runners/run_multienv_uitars15_v1.py",
    convention="uitars",
    space="grid1000",
    history_images=4,
    action_space=CALL_USER_ACTION_SPACE,
    min_pixels=3136,
    max_pixels=2116800,
    reference={"temperature": 0.0, "top_p": 0.9, "max_tokens": 1000, "frequency_penalty": 1, "history_n": 5, "input_swap": True},
    sleep_after_execution=3.0,  # runners/run_multienv_uitars15_v1.py
    evaluate_after=20.0,  # lib_run_single.run_single_example: time.sleep(20) before env.evaluate
)


def linear_resize(size: tuple[int, int], min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """uitars15_v1.py's resize of the screenshot before sending (aspect ratio kept): down into ``max_pixels`` (sides
    truncated), up to ``min_pixels`` (sides rounded up)."""
    w, h = size
    if w * h > max_pixels:
        factor = math.sqrt(max_pixels / (w * h))
        w, h = int(w * factor), int(h * factor)
    if w * h < min_pixels:
        factor = math.sqrt(min_pixels / (w * h))
        w, h = math.ceil(w * factor), math.ceil(h * factor)
    return w, h


def add_box_token(reply: str) -> str:
    """``add_box_token``: an earlier reply as it is sent again, its ``start_box='(x,y)'`` written between box tokens
    (everything after the first ``Action: `` joined at blank lines)."""
    if "Action: " not in reply or "start_box=" not in reply:
        return reply
    head, *calls = reply.split("Action: ")
    done = []
    for call in calls:
        call = call.strip()
        for kind, x, y in _BOX.findall(call):
            call = call.replace(f"{kind}='({x},{y})'", f"{kind}='<|box_start|>({x},{y})<|box_end|>'")
        done.append(call)
    return head + "Action: " + "\n\n".join(done)


def read(text: str) -> Read:
    """The actions of a UI-TARS reply in order (see the module docstring), points in the reply's numbers; the whole
    reply unreadable when one of its parts is. Never raises."""
    from ...answers.region import strip_think

    text = strip_think(text[-MAX_REPLY:]).strip()
    if "Action:" not in text:
        return Read((), ("no_action",))
    parts = text.split("Action:")[-1].split("\n\n")
    actions: list[Action] = []
    notes: list[str] = []
    readable = True
    for number, part in enumerate(parts, 1):
        where = f"action {number}: " if len(parts) > 1 else ""
        parsed = _parse(part)
        found, note, ok = (None, parsed, False) if isinstance(parsed, str) else _action(*parsed)
        readable = readable and ok
        if note:
            notes.append(where + note)
        actions.extend(found or ())
    if not readable:  # the reference reads no action of a reply it cannot parse whole (it samples again, then says DONE)
        return Read((), tuple(notes) + ("unreadable_action",))
    return Read(tuple(actions), tuple(notes))


def _parse(part: str) -> tuple[str, dict[str, Any]] | str:
    """``parse_action`` of one part: its function name and keyword arguments (a non-constant argument as None), or why
    it is not one call."""
    if "type(content" in part:
        content = _unwrap_type(part)
        part = "type(content='" + _UNESCAPED_QUOTE.sub(r"\\'", content) + "')"
    source = part.replace("\n", "\\n").lstrip()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            node = ast.parse(pyliteral.source(source), mode="eval").body
    except pyliteral.PARSE_ERRORS:
        return "not_a_call"
    if not isinstance(node, ast.Call):
        return "not_a_call"
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    kwargs = {k.arg: (k.value.value if isinstance(k.value, ast.Constant) else None) for k in node.keywords if k.arg}
    return name, kwargs


def _unwrap_type(part: str) -> str:
    """``re.sub(r"type\\(content='(.*?)'\\)", r"\\1", part)`` (each ``type(content='...')`` replaced by its content, up to
    the first ``')`` on its line), in one pass: a line that has no ``')`` after an opening has none after a later one."""
    out: list[str] = []
    pos = 0
    while (start := part.find(TYPE_OPEN, pos)) >= 0:
        body = start + len(TYPE_OPEN)
        line_end = part.find("\n", body)
        line_end = len(part) if line_end < 0 else line_end
        close = part.find("')", body, line_end)
        if close < 0:
            out.append(part[pos:line_end])
            pos = line_end
            continue
        out.append(part[pos:start] + part[body:close])
        pos = close + 2
    out.append(part[pos:])
    return "".join(out)


def _point(value: Any) -> tuple[float, float] | str:
    """A box argument's point: ``(x,y)`` or the centre of ``(x1,y1,x2,y2)``; box tokens and ``<point>x y</point>`` read
    too (the reference reads neither). A note when it is not numbers."""
    if value is None:
        return "no_point"
    if not isinstance(value, str):
        return "box_not_a_string"
    text = value.replace("<|box_start|>", "").replace("<|box_end|>", "")
    text = _POINT.sub(r"(\1,\2)", text)
    try:
        numbers = [float(n) for n in text.replace("(", "").replace(")", "").split(",")]
    except ValueError:
        return "coordinates_not_numbers"
    if not all(math.isfinite(n) for n in numbers):
        return "coordinates_not_numbers"
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    return "coordinates_not_a_point"


def _action(name: str, kwargs: dict[str, Any]) -> tuple[list[Action] | None, str, bool]:
    """The actions one call runs (``parsing_response_to_pyautogui_code``): ``(actions, note, readable)``. Not readable
    where the reference raises (an argument that is no string, a box that is no numbers, a click without a box); a
    call it writes no code for is readable and does nothing (noted)."""
    args: dict[str, str] = {}
    for key, value in kwargs.items():
        if value == "":
            continue
        if not isinstance(value, str):
            return None, f"{key.strip()}_not_a_string", False
        key = POINT_NAMES.get(key.strip(), key.strip())  # `point=` as the ui-tars package reads it (OSWorld's runner fails)
        args[key] = value.lstrip()  # `param = param.lstrip()`
    if name == "finished":
        return [Action(DONE, text=args.get("content", ""))], "", True
    if name == "wait":
        return [Action(WAIT, seconds=WAIT_SECONDS)], "", True
    if name in (CALL_USER, ERROR_ENV):
        return [Action(FAIL, text=name)], "", True
    if name in CLICKS:
        point = _point(args.get("start_box"))
        if not isinstance(point, tuple):
            return None, point, False
        return [Action(CLICKS[name], point=point)], "", True
    if name in ("drag", "select"):
        if not (args.get("start_box") and args.get("end_box")):
            return None, f"{name}_without_both_boxes_does_nothing", True
        start, end = _point(args["start_box"]), _point(args["end_box"])
        if not isinstance(start, tuple):
            return None, start, False
        if not isinstance(end, tuple):
            return None, end, False
        return [Action(DRAG, point=start, end=end)], "", True
    if name == "scroll":
        at = _point(args["start_box"]) if args.get("start_box") else None
        if isinstance(at, str):
            return None, at, False
        direction = args.get("direction", "").lower()
        if "up" in direction:
            return [Action(SCROLL, point=at, scroll=(0.0, -NOTCHES))], "", True
        if "down" in direction:
            return [Action(SCROLL, point=at, scroll=(0.0, NOTCHES))], "", True
        return None, "scroll_sideways_does_nothing", True  # the reference writes no code for left or right
    if name in ("hotkey", "press"):
        value = args.get("key", args.get(name, ""))
        value = ARROWS.get(value, value)
        keys = tuple(normalize(" " if k == "space" else k) for k in value.split())
        return ([Action(KEY, keys=keys)], "", True) if keys else (None, f"{name}_without_key_does_nothing", True)
    if name == "type":
        content = args.get("content", "")
        if not content:
            return None, "type_without_content_does_nothing", True
        enter = content.endswith("\n") or content.endswith("\\n")
        text = content.rstrip("\\n").rstrip("\n") if enter else content
        typed = [Action(TYPE, text=text, paste=True), Action(WAIT, seconds=TYPE_PAUSE, text=PAUSE)] if text else []
        return typed + ([Action(KEY, keys=("enter",))] if enter else []), "", True
    if name in ("keydown", "keyup"):
        return None, f"{name}_not_run", True  # guitest holds no key down between actions
    return None, f"unknown_action_{re.sub(r'[^a-z0-9_]', '', name.lower())[:30]}_does_nothing", True


def _call(action: Action, decimals: int) -> str:
    """``action`` as a UI-TARS call (points already in the reply's numbers)."""

    def box(point: tuple[float, float] | None) -> str:
        return f"'({fmt(point[0], decimals)},{fmt(point[1], decimals)})'" if point else "''"

    kind = action.kind
    if kind == TYPE:  # escaped as the prompt asks: \\', \\" and \\n
        return "type(content='" + action.text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "')"
    if kind == KEY:
        return f"hotkey(key={' '.join(action.keys)!r})"
    if kind == WAIT:
        return "wait()"
    if kind == DONE:
        return f"finished(content={action.text!r})"
    if kind == FAIL:
        return "call_user()"
    if kind == DRAG:
        return f"drag(start_box={box(action.point)}, end_box={box(action.end)})"
    if kind == SCROLL:
        where = f"start_box={box(action.point)}, " if action.point else ""
        return f"scroll({where}direction='{'up' if action.scroll[1] < 0 else 'down'}')"
    name = {CLICK: "click", DOUBLE_CLICK: "left_double", RIGHT_CLICK: "right_single", MOVE: "hover"}[kind]
    return f"{name}(start_box={box(action.point)})"
