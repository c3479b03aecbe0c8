"""The step prompt of a live task, per action convention: plain functions returning text.

Each step sends the instruction, the textual history of earlier actions (``history``: one line per
earlier step, as :attr:`guitest.live.loop.Decision.text` gives it) and the current screenshot (sent
by the caller beside this text). :func:`step_prompt` picks the convention's prompt; each returns a
:class:`StepPrompt` (an optional system message and the user message).

Sources:

- ``guitest``: guitest's own (:mod:`guitest.live.parsers.guitest` documents the syntax).
- ``uitars``: the computer-use prompt of the UI-TARS-1.5 model card and README
  (huggingface.co/ByteDance-Seed/UI-TARS-1.5-7B; bytedance/UI-TARS ``README.md``, ``codes/ui_tars/prompt.py``),
  the ``start_box='<|box_start|>(x1,y1)<|box_end|>'`` form with ``call_user()``. UI-TARS sends earlier
  steps as earlier turns; here they are one text block (the caller may send turns instead).
- ``computer_use``: Qwen's ``computer_use`` function (QwenLM Qwen2.5-VL and Qwen3-VL cookbooks
  ``computer_use.ipynb``, ``cookbooks/utils/agent_function_call.py``) in the Nous/Hermes function-call
  system prompt that Qwen's chat template writes (qwen_agent ``NousFnCallPrompt``). The screen size
  it states is the image sent for Qwen2.5-VL (absolute coordinates) and 1000x1000 for Qwen3-VL
  (its cookbook passes ``display_width_px=1000``: coordinates on the 0..1000 grid).
- ``pyautogui``: after OSWorld's screenshot-in, code-out system prompt (xlang-ai/OSWorld
  ``mm_agents/prompts.py``, ``SYS_PROMPT_IN_SCREENSHOT_OUT_CODE``): one pyautogui call per step,
  coordinates in pixels of the screenshot, ``WAIT``/``DONE``/``FAIL`` as bare words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

#: at most this many earlier steps are listed (the most recent ones); older ones are counted
MAX_HISTORY = 30


@dataclass(frozen=True)
class StepPrompt:
    """One step's prompt: an optional system message and the user message (the screenshot goes with the user message)."""

    system: str | None
    user: str


def history_block(history: Sequence[str], limit: int = MAX_HISTORY) -> str:
    """Earlier actions as numbered lines (``Step 3: click(0.4, 0.3)``), the most recent ``limit`` of them; ``None yet`` for none."""
    if not history:
        return "None yet."
    start = max(0, len(history) - limit)
    lines = [f"({start} earlier steps not shown)"] if start else []
    lines += [f"Step {i + 1}: {text}" for i, text in enumerate(history) if i >= start]
    return "\n".join(lines)


GUITEST_ACTIONS = """\
click(x, y)                 left click at a point
double_click(x, y)
right_click(x, y)
move(x, y)                  move the pointer there (hover)
drag(x1, y1, x2, y2)        press at the first point, release at the second
scroll(x, y, "down", 3)     turn the wheel 3 notches at a point ("up", "down", "left", "right")
type("text")                type into the focused element; "\\n" presses Enter
key("ctrl+a")               press a key or a combination joined by +
wait(1)                     wait 1 second for the page to change
done()                      the task is complete
fail("reason")              the task cannot be done"""


def guitest_prompt(instruction: str, history: Sequence[str], screen_size: tuple[int, int]) -> StepPrompt:
    """guitest's default step prompt: the task, the earlier actions, the action list, normalized coordinates."""
    w, h = screen_size
    user = (
        "You operate a graphical user interface, one action per step, to complete a task.\n"
        f"Task: {instruction}\n\n"
        f"The screenshot shows the screen now ({w}x{h} pixels). Give every point as fractions of the "
        "screenshot's width and height: x and y between 0 and 1, (0, 0) the top-left corner.\n\n"
        f"Your earlier actions:\n{history_block(history)}\n\n"
        f"Actions:\n{GUITEST_ACTIONS}\n\n"
        "Think briefly, then end your reply with exactly one line of the form:\nAction: <one action from the list>"
    )
    return StepPrompt(None, user)


UITARS_COMPUTER_USE = """\
You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')
right_single(start_box='<|box_start|>(x1,y1)<|box_end|>')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
hotkey(key='')
type(content='') #If you want to submit your input, use "\\n" at the end of `content`.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the content in normal python string format.
call_user() # Submit the task and call the user when the task is unsolvable, or when you need the user's help.

## Note
- Use {language} in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.

## User Instruction
{instruction}
"""


def uitars_prompt(instruction: str, history: Sequence[str], language: str = "English") -> StepPrompt:
    """UI-TARS-1.5's computer-use prompt with the instruction, and the earlier actions as text after it."""
    user = UITARS_COMPUTER_USE.replace("{language}", language).replace("{instruction}", instruction)
    if history:
        user += f"\n## Action History\n{history_block(history)}\n"
    return StepPrompt(None, user)


def _computer_use_function(screen_size: tuple[int, int], version: str) -> dict[str, object]:
    w, h = screen_size
    actions = [
        ("key", "Performs key down presses on the arguments passed in order, then performs key releases in reverse order."),
        ("type", "Type a string of text on the keyboard."),
        ("mouse_move", "Move the cursor to a specified (x, y) pixel coordinate on the screen."),
        ("left_click", "Click the left mouse button at a specified (x, y) pixel coordinate on the screen."),
        ("left_click_drag", "Click and drag the cursor to a specified (x, y) pixel coordinate on the screen."),
        ("right_click", "Click the right mouse button at a specified (x, y) pixel coordinate on the screen."),
        ("middle_click", "Click the middle mouse button at a specified (x, y) pixel coordinate on the screen."),
        ("double_click", "Double-click the left mouse button at a specified (x, y) pixel coordinate on the screen."),
    ]
    if version == "qwen3":
        actions.append(("triple_click", "Triple-click the left mouse button at a specified (x, y) pixel coordinate on the screen."))
    actions.append(("scroll", "Performs a scroll of the mouse scroll wheel."))
    if version == "qwen3":
        actions.append(("hscroll", "Performs a horizontal scroll."))
    actions += [("wait", "Wait specified seconds for the change to happen."), ("terminate", "Terminate the current task and report its completion status.")]
    if version == "qwen3":
        actions.append(("answer", "Answer a question."))
    description = (
        "Use a mouse and keyboard to interact with a computer, and take screenshots.\n"
        "* This is an interface to a desktop GUI. You do not have access to a terminal or applications menu. You must click on desktop icons to start applications.\n"
        "* Some applications may take time to start or process actions, so you may need to wait and take successive screenshots to see the results of your actions.\n"
        f"* The screen's resolution is {w}x{h}.\n"
        "* Whenever you intend to move the cursor to click on an element like an icon, you should consult a screenshot to determine the coordinates of the element before moving the cursor.\n"
        "* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of the element. Don't click boxes on their edges."
    )
    return {
        "name": "computer_use",
        "description": description,
        "parameters": {
            "properties": {
                "action": {
                    "description": "The action to perform. The available actions are:\n" + "\n".join(f"* `{n}`: {d}" for n, d in actions),
                    "enum": [n for n, _ in actions],
                    "type": "string",
                },
                "keys": {"description": "Required only by `action=key`.", "type": "array"},
                "text": {"description": "Required only by `action=type`" + (" and `action=answer`." if version == "qwen3" else "."), "type": "string"},
                "coordinate": {"description": "(x, y): The x (pixels from the left edge) and y (pixels from the top edge) coordinates to move the mouse to.", "type": "array"},
                "pixels": {"description": "The amount of scrolling to perform. Positive values scroll up, negative values scroll down. Required only by `action=scroll`" + (" and `action=hscroll`." if version == "qwen3" else "."), "type": "number"},
                "time": {"description": "The seconds to wait. Required only by `action=wait`.", "type": "number"},
                "status": {"description": "The status of the task. Required only by `action=terminate`.", "type": "string", "enum": ["success", "failure"]},
            },
            "required": ["action"],
            "type": "object",
        },
    }


def computer_use_system(screen_size: tuple[int, int], version: str = "qwen2.5") -> str:
    """Qwen's system message declaring the ``computer_use`` function; ``screen_size`` is the image sent
    (Qwen2.5-VL) and is ignored for ``version="qwen3"``, which states 1000x1000."""
    if version not in ("qwen2.5", "qwen3"):
        raise ValueError(f"unknown computer_use version {version!r}; expected qwen2.5 or qwen3")
    size = (1000, 1000) if version == "qwen3" else screen_size
    tool = json.dumps({"type": "function", "function": _computer_use_function(size, version)}, ensure_ascii=False)
    return (
        "You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        f"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tool}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def computer_use_prompt(instruction: str, history: Sequence[str], screen_size: tuple[int, int], version: str = "qwen2.5") -> StepPrompt:
    """The ``computer_use`` system message and a user message with the task and the earlier actions."""
    user = f"The user query: {instruction}\nTask progress (You have done the following operation on the current device):\n{history_block(history)}"
    return StepPrompt(computer_use_system(screen_size, version), user)


PYAUTOGUI_SYSTEM = """\
You are an agent that performs computer tasks by controlling the mouse and keyboard with Python's `pyautogui`.
At each step you get a screenshot of the screen ({width}x{height} pixels) and answer with the next action as pyautogui code,
with coordinates {units}, chosen from what you see (do not call `pyautogui.locateCenterOnScreen` or
`pyautogui.screenshot()`). Nothing is shared between steps: each answer is complete code.
Put the code in a code block:
```python
# your code here
```
Instead of code you may answer one of three special words, in a code block of its own:
```WAIT``` when you need to wait for the screen to change;
```FAIL``` when the task cannot be done (try hard before you say so);
```DONE``` when the task is complete.
First reflect briefly on the screenshot and the earlier actions, then give the code or the special word."""


def pyautogui_prompt(instruction: str, history: Sequence[str], screen_size: tuple[int, int], normalized: bool = False) -> StepPrompt:
    """OSWorld's screenshot-in, code-out system prompt (screen size stated; coordinates in its pixels, or as
    fractions 0..1 when ``normalized``, as Aguvis writes them) and the task with the earlier actions.
    Only the last action of a reply is executed (guitest executes one action per step)."""
    w, h = screen_size
    units = "as fractions of the screenshot's width and height (0 to 1)" if normalized else "in pixels of that screenshot"
    system = PYAUTOGUI_SYSTEM.replace("{width}", str(w)).replace("{height}", str(h)).replace("{units}", units)
    user = f"You are asked to complete the following task: {instruction}\n\nEarlier actions:\n{history_block(history)}\n\nGive the next action (one pyautogui call)."
    return StepPrompt(system, user)


def step_prompt(
    convention: str,
    instruction: str,
    history: Sequence[str],
    screen_size: tuple[int, int],
    *,
    version: str = "qwen2.5",
    language: str = "English",
    normalized: bool = False,
) -> StepPrompt:
    """The step prompt of ``convention`` (``guitest``, ``uitars``, ``computer_use``, ``pyautogui``); ``screen_size``
    is the size of the image sent; ``version`` picks Qwen2.5-VL's or Qwen3-VL's ``computer_use``, ``language``
    UI-TARS's thought language, ``normalized`` pyautogui's coordinates. ValueError for an unknown convention."""
    if convention == "guitest":
        return guitest_prompt(instruction, history, screen_size)
    if convention == "uitars":
        return uitars_prompt(instruction, history, language)
    if convention == "computer_use":
        return computer_use_prompt(instruction, history, screen_size, version)
    if convention == "pyautogui":
        return pyautogui_prompt(instruction, history, screen_size, normalized)
    raise ValueError(f"unknown action convention {convention!r}; known: guitest, uitars, computer_use, pyautogui")
