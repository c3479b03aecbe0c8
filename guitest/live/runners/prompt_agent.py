"""pyautogui code replies: OSWorld's screenshot-in, code-out ``PromptAgent``, and Aguvis.

Reference (``prompt-agent``): xlang-ai/OSWorld ``mm_agents/agent.py`` (``PromptAgent.predict``, ``parse_actions``,
``parse_code_from_string``) with ``mm_agents/prompts.py`` (``SYS_PROMPT_IN_SCREENSHOT_OUT_CODE``), the settings of
``runners/run_multienv.py`` (observation ``screenshot``, action space ``pyautogui``, ``max_trajectory_length`` 3) and
``desktop_env/desktop_env.py`` (``DesktopEnv.step``: the code of each block runs as Python; ``WAIT``, ``DONE``,
``FAIL`` are special); read in a fork copy (mrwwk/DeskCraft), the upstream repository not being reachable here.

What a step sends: the system prompt with the task; for each of the last 3 earlier steps a user turn (``Given the
screenshot as below. What's the next step that you will do to help with the task?`` and its screenshot, as taken)
and the reply as an assistant turn; then the same user turn with the current screenshot.

What a reply does (``parse_code_from_string``): the reply is cut at every ``;`` and put together again line by line;
a reply that is only ``WAIT``, ``DONE`` or ``FAIL`` is that; else each code block (```` ```python ... ``` ````) is
one action, and a block that is one of the three words, or ends in a line that is, gives that word after its code.
The words in prose do nothing. Each block runs as Python on the machine; guitest does not run Python: it reads the
block's statements in order, each ``pyautogui`` call with literal arguments becoming actions (``press('tab',
presses=3)`` three key presses, ``typewrite(['a', 'enter'])`` two, ``moveTo`` then ``dragTo`` one drag,
``time.sleep(s)`` a wait, ``for _ in range(3):`` its body three times) and imports skipped; a statement it cannot
read is noted and skipped, and a block that is not Python runs nothing, as on the machine: the block is read after
the controller's one-line prefix (``PythonController.pkgs_prefix``), so a block whose first statement is compound
runs nothing. Coordinates are pixels of the screenshot sent (as taken), cut to whole pixels as pyautogui cuts them.

``aguvis``: guitest's own pyautogui prompt (the same reading) with coordinates as fractions of the screenshot, the
way Aguvis writes them; it follows no reference runner.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

from ...answers import pyliteral
from ...exchange import Prompt, SentImage, conversation
from ..actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, KEY, MIDDLE_CLICK, MOVE, RIGHT_CLICK, SCROLL, TRIPLE_CLICK, TYPE, WAIT, Action
from ..keys import normalize
from .runner import ASSISTANT, USER, Past, Read, Runner, merge_drags, recent, whole_pixels, window
from .calls import MAX_REPLY, fmt, number, quote
from .guitest import history_block, screenshots_then

SYSTEM = """You are an agent which follow my instruction and perform desktop computer tasks as instructed.
You have good knowledge of computer and good internet connection and assume your code will run on a computer for controlling the mouse and keyboard.
For each step, you will get an observation of an image, which is the screenshot of the computer screen and you will predict the action of the computer based on the image.

You are required to use `pyautogui` to perform the action grounded to the observation, but DONOT use the `pyautogui.locateCenterOnScreen` function to locate the element you want to operate with since we have no image of the element you want to operate with. DONOT USE `pyautogui.screenshot()` to make screenshot.
Return one line or multiple lines of python code to perform the action each time, be time efficient. When predicting multiple lines of code, make some small sleep like `time.sleep(0.5);` interval so that the machine could take; Each time you need to predict a complete code, no variables or function can be shared from history
You need to to specify the coordinates of by yourself based on your observation of current observation, but you should be careful to ensure that the coordinates are correct.
You ONLY need to return the code inside a code block, like this:
```python
# your code here
```
Specially, it is also allowed to return the following special code:
When you think you have to wait for some time, return ```WAIT```;
When you think the task can not be done, return ```FAIL```, don't easily say ```FAIL```, try your best to do the task;
When you think the task is done, return ```DONE```.

My computer's password is '{CLIENT_PASSWORD}', feel free to use it when you need sudo rights.
First give the current screenshot and previous things we did a short reflection, then RETURN ME THE CODE OR SPECIAL CODE I ASKED FOR. NEVER EVER RETURN ME ANYTHING ELSE."""
ASK = "Given the screenshot as below. What's the next step that you will do to help with the task?"
PASSWORD = "password"  # PromptAgent's default client_password

AGUVIS_SYSTEM = """\
You are an agent that performs computer tasks by controlling the mouse and keyboard with Python's `pyautogui`.
At each step you get a screenshot of the screen ({width}x{height} pixels) and answer with the next action as pyautogui code,
with coordinates as fractions of the screenshot's width and height (0 to 1), chosen from what you see (do not call
`pyautogui.locateCenterOnScreen` or `pyautogui.screenshot()`). Nothing is shared between steps: each answer is complete code.
Put the code in a code block:
```python
# your code here
```
Instead of code you may answer one of three special words, in a code block of its own:
```WAIT``` when you need to wait for the screen to change;
```FAIL``` when the task cannot be done (try hard before you say so);
```DONE``` when the task is complete.
First reflect briefly on the screenshot and the earlier actions, then give the code or the special word."""

SPECIAL = {"WAIT": WAIT, "DONE": DONE, "FAIL": FAIL}
WAIT_SECONDS = 1.0
MAX_ACTIONS = 200  # a loop unrolled to more actions than this is not run
_CODE = re.compile(r"```(?:\w+\s+)?(.*?)```", re.DOTALL)
CLICKS = {"click": CLICK, "leftClick": CLICK, "doubleClick": DOUBLE_CLICK, "rightClick": RIGHT_CLICK, "middleClick": MIDDLE_CLICK, "tripleClick": TRIPLE_CLICK, "moveTo": MOVE}
RENDERED = {CLICK: "click", DOUBLE_CLICK: "doubleClick", RIGHT_CLICK: "rightClick", MIDDLE_CLICK: "middleClick", TRIPLE_CLICK: "tripleClick", MOVE: "moveTo"}
#: what OSWorld's controller puts before the code on the same line (``PythonController.pkgs_prefix``): a block whose
#: first statement is compound (``for``, ``if``, ``with``) is then no Python, and nothing of it runs
PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
#: pyautogui calls that guitest cannot perform: relative moves, held buttons and keys
NOT_RUN = frozenset({"moveRel", "move", "drag", "dragRel", "mouseDown", "mouseUp", "keyDown", "keyUp", "hold"})


@dataclass(frozen=True)
class PromptAgentRunner(Runner):
    """OSWorld's ``PromptAgent`` (see the module docstring)."""

    def sizes(self, screen: tuple[int, int], model: Any) -> tuple[int, int]:
        return screen

    def resizes(self) -> bool:
        return True

    def prompt(self, instruction: str, past: Sequence[Past], sent: SentImage, images: int) -> Prompt:
        system = SYSTEM.replace("{CLIENT_PASSWORD}", PASSWORD) + f"\nYou are asked to complete the following task: {instruction}"
        shown = window(past, images)  # `self.observations[-self.max_trajectory_length:]` once there are more
        turns: list[tuple[str, tuple[str | int, ...]]] = []
        for index, step in enumerate(shown):
            turns.append((USER, (ASK, index)))
            turns.append((ASSISTANT, ((step.reply or "").strip() if step.reply else "No valid action",)))  # a blank reply is sent blank
        turns.append((USER, (ASK, len(shown))))
        return conversation(system, turns, (*(p.image for p in shown), sent))

    def read(self, text: str) -> Read:
        return read(text)

    def render(self, actions: Sequence[Action], decimals: int | None = None) -> str:
        return render(actions, 1 if decimals is None else decimals)

    def to_screen(self, action: Action, space: str, sent: tuple[int, int], screen: tuple[int, int]) -> Action:
        """Pixels of the screenshot, a fraction cut off as pyautogui cuts it (``int(x)`` in ``_mouseMoveDrag``)."""
        return whole_pixels(super().to_screen(action, space, sent, screen))


@dataclass(frozen=True)
class AguvisRunner(Runner):
    """guitest's pyautogui prompt with normalized coordinates (see the module docstring)."""

    def prompt(self, instruction: str, past: Sequence[Past], sent: SentImage, images: int) -> Prompt:
        w, h = sent.size
        system = AGUVIS_SYSTEM.replace("{width}", str(w)).replace("{height}", str(h))
        user = f"You are asked to complete the following task: {instruction}\n\nEarlier actions:\n{history_block([p.line for p in past])}\n\nGive the next action as pyautogui code."
        return screenshots_then(user, recent(past, images), sent, system)

    def read(self, text: str) -> Read:
        return read(text)

    def render(self, actions: Sequence[Action], decimals: int | None = None) -> str:
        return render(actions, 4 if decimals is None else decimals)


PROMPT_AGENT = PromptAgentRunner(
    name="prompt-agent",
    source="xlang-ai/OSWorld mm_agents/agent.py (PromptAgent, screenshot / pyautogui) with mm_agents/prompts.py, runners/run_multienv.py and desktop_env/desktop_env.py",
    convention="pyautogui",
    space="pixel_sent",
    history_images=3,
    reference={"temperature": 1.0, "top_p": 0.9, "max_tokens": 1500, "max_trajectory_length": 3, "image_detail": "high"},
    sleep_after_execution=0.0,  # runners/run_multienv.py
    evaluate_after=20.0,  # lib_run_single.run_single_example: time.sleep(20) before env.evaluate
)
AGUVIS = AguvisRunner(
    name="aguvis",
    source="guitest's own pyautogui prompt with normalized coordinates (Aguvis's convention); no reference runner",
    convention="pyautogui",
    space="normalized",
)


def read(text: str) -> Read:
    """The actions of a pyautogui reply in order (see the module docstring); never raises."""
    from ...answers.region import strip_think

    joined = "\n".join(part.strip() for part in strip_think(text[-MAX_REPLY:]).split(";") if part.strip())
    if joined.strip() in SPECIAL:
        return Read((_special(joined.strip()),))
    codes: list[str] = []
    for match in _CODE.findall(joined):
        match = match.strip()
        lines = match.split("\n")
        if match in SPECIAL:
            codes.append(match)
        elif lines[-1] in SPECIAL:
            if len(lines) > 1:
                codes.append("\n".join(lines[:-1]))
            codes.append(lines[-1])
        else:
            codes.append(match)
    actions: list[Action] = []
    notes: list[str] = []
    for number_, code in enumerate(codes, 1):
        if code in SPECIAL:
            actions.append(_special(code))
            continue
        found, said = run(code)
        actions.extend(found)
        notes += [f"code {number_}: {n}" if len(codes) > 1 else n for n in said]
    if not codes:
        notes.append("no_action")
    return Read(tuple(merge_drags(actions)), tuple(notes))


def _special(word: str) -> Action:
    return Action(SPECIAL[word], seconds=WAIT_SECONDS if word == "WAIT" else 0.0)


def run(code: str) -> tuple[list[Action], list[str]]:
    """What running a code block would do: the actions of its statements in order, and notes on the statements not read
    (``line 3: for_not_run``); nothing and ``not_python`` for a block that does not compile."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(pyliteral.source(PREFIX + code))  # the code as the machine runs it
    except pyliteral.PARSE_ERRORS:
        return [], ["not_python"]
    tree.body = tree.body[3:]  # the prefix's own statements
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "pyautogui" for alias in node.names}
    actions: list[Action] = []
    notes: list[str] = []
    _statements(tree.body, imported, actions, notes)
    return actions, notes


def _statements(body: list[ast.stmt], imported: set[str], actions: list[Action], notes: list[str]) -> None:
    """The actions of ``body``'s statements, in order (a ``for _ in range(N)`` loop over readable statements unrolled)."""
    for statement in body:
        if isinstance(statement, (ast.Import, ast.ImportFrom, ast.Pass)) or _setting(statement):
            continue
        times = _repeats(statement)
        if times is not None:
            inner: list[Action] = []
            _statements(statement.body, imported, inner, notes)  # type: ignore[attr-defined]
            if len(inner) * times > MAX_ACTIONS:
                notes.append(f"line {statement.lineno}: loop_too_long_not_run")
                continue
            actions.extend(inner * times)
            continue
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            notes.append(f"line {statement.lineno}: {type(statement).__name__.lower()}_not_run")
            continue
        call = statement.value
        name = _dotted(call.func)
        if name == "time.sleep":
            seconds = number(_value(call.args[0])) if call.args else None
            if seconds is not None and seconds >= 0:
                actions.append(Action(WAIT, seconds=seconds))
            continue
        function = name[len("pyautogui.") :] if name.startswith("pyautogui.") else name if name in imported else None
        if function is None:
            notes.append(f"line {statement.lineno}: {re.sub(r'[^A-Za-z0-9_.]', '', name)[:40] or 'call'}_not_run")
            continue
        args = tuple(_value(a) for a in call.args)
        kwargs = {k.arg: _value(k.value) for k in call.keywords if k.arg}
        found, note = pyautogui_call(function, args, kwargs)
        actions.extend(found)
        if note:
            notes.append(f"line {statement.lineno}: {note}")


def _repeats(statement: ast.stmt) -> int | None:
    """N for ``for <name> in range(N):`` whose body never reads the name (and has no ``else``); None otherwise."""
    if not (isinstance(statement, ast.For) and isinstance(statement.target, ast.Name) and not statement.orelse):
        return None
    it = statement.iter
    if not (isinstance(it, ast.Call) and _dotted(it.func) == "range" and len(it.args) == 1 and not it.keywords):
        return None
    count = _value(it.args[0])
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return None
    used = any(isinstance(n, ast.Name) and n.id == statement.target.id for s in statement.body for n in ast.walk(s))
    return None if used else count


def _setting(statement: ast.stmt) -> bool:
    """``pyautogui.FAILSAFE = False`` and the like: configuration, no action."""
    return isinstance(statement, ast.Assign) and all(isinstance(t, ast.Attribute) and _dotted(t.value) == "pyautogui" for t in statement.targets)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


class _Unread:
    """An argument that is not a literal (a name, an expression): the machine would compute it, guitest cannot."""


def _value(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _Unread()


def _xy(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[float, float] | None, bool]:
    """A call's point (``x, y`` positional or named, or one ``(x, y)`` pair) and whether it is readable (no coordinates
    at all is readable: the pointer)."""
    xs = args[0] if args else kwargs.get("x")
    ys = args[1] if len(args) > 1 else kwargs.get("y")
    if isinstance(xs, (list, tuple)) and len(xs) == 2 and ys is None:
        xs, ys = xs
    if xs is None and ys is None:
        return None, True
    x, y = number(xs), number(ys)
    if x is None or y is None:
        return None, False
    return (x, y), True


def pyautogui_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Action], str]:
    """The actions one pyautogui call performs, in order, and a note (why it performs none, or how it was read)."""
    if name in CLICKS:
        point, ok = _xy(args, kwargs)
        if not ok:
            return [], "coordinates_not_numbers"
        kind, note = CLICKS[name], ""
        if name == "click":
            clicks = number(args[2] if len(args) > 2 else kwargs.get("clicks", 1)) or 1
            button = args[4] if len(args) > 4 else kwargs.get("button", "left")
            if button in ("right", "secondary"):
                kind = RIGHT_CLICK
            elif button == "middle":
                kind = MIDDLE_CLICK
            elif clicks >= 2:
                kind, note = (DOUBLE_CLICK, "") if clicks == 2 else (TRIPLE_CLICK, "more_than_three_clicks_as_three" if clicks > 3 else "")
        if kind == MOVE and point is None:
            return [], "move_without_point"
        return [Action(kind, point=point)], note
    if name == "dragTo":
        point, ok = _xy(args, kwargs)
        return ([Action(DRAG, end=point)], "") if ok and point is not None else ([], "coordinates_not_numbers")
    if name in ("write", "typewrite"):
        value = args[0] if args else kwargs.get("message")
        if isinstance(value, str):
            return ([Action(TYPE, text=value)], "") if value else ([], "no_text")
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value):
            return [Action(KEY, keys=(normalize(v),)) for v in value], ""  # a list is pressed key by key
        return [], "no_text"
    if name == "press":
        value = args[0] if args else kwargs.get("keys")
        pressed = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
        presses = number(args[1] if len(args) > 1 else kwargs.get("presses", 1))
        if not pressed or not all(isinstance(k, str) and k for k in pressed) or presses is None:
            return [], "no_key"
        if presses * len(pressed) > MAX_ACTIONS:  # press('tab', presses=1e12) would build 10**12 actions: like a loop too long, not run
            return [], "presses_too_many_not_run"
        return [Action(KEY, keys=(normalize(k),)) for _ in range(max(int(presses), 0)) for k in pressed], ""
    if name == "hotkey":
        flat = [k for a in args for k in (a if isinstance(a, (list, tuple)) else [a])]
        keys = tuple(normalize(k) for k in flat if isinstance(k, str) and k)
        return ([Action(KEY, keys=keys)], "") if keys and len(keys) == len(flat) else ([], "no_key")
    if name in ("scroll", "vscroll", "hscroll"):
        amount = number(args[0] if args else kwargs.get("clicks"))
        if amount is None:
            return [], "no_amount"
        x = number(args[1] if len(args) > 1 else kwargs.get("x"))
        y = number(args[2] if len(args) > 2 else kwargs.get("y"))
        point = (x, y) if x is not None and y is not None else None
        return [Action(SCROLL, point=point, scroll=(amount, 0.0) if name == "hscroll" else (0.0, -amount))], ""
    return [], f"{name}_not_run" if name in NOT_RUN else f"{re.sub(r'[^A-Za-z0-9_]', '', name)[:30]}_not_run"


def render(actions: Sequence[Action], decimals: int = 4) -> str:
    """OSWorld-style code for ``actions``, one block (``DONE``, ``FAIL``, ``WAIT`` as blocks of their own; points already
    in the reply's numbers)."""

    def xy(point: tuple[float, float] | None) -> str:
        return f"x={fmt(point[0], decimals)}, y={fmt(point[1], decimals)}" if point else ""

    blocks: list[str] = []
    code: list[str] = []
    for action in actions:
        kind = action.kind
        if kind in (DONE, FAIL, WAIT):
            if code:
                blocks.append("\n".join(code))
                code = []
            blocks.append(kind.upper())
        elif kind in RENDERED:
            code.append(f"pyautogui.{RENDERED[kind]}({xy(action.point)})")
        elif kind == DRAG:
            code += ([f"pyautogui.moveTo({xy(action.point)})"] if action.point else []) + [f"pyautogui.dragTo({xy(action.end)})"]
        elif kind == SCROLL:
            dx, dy = action.scroll
            where = f", {xy(action.point)}" if action.point else ""
            code.append(f"pyautogui.hscroll({fmt(dx, 2)}{where})" if dx and not dy else f"pyautogui.scroll({fmt(-dy, 2)}{where})")
        elif kind == TYPE:
            code.append(f"pyautogui.write({quote(action.text)})")
        elif len(action.keys) == 1:
            code.append(f"pyautogui.press({quote(action.keys[0])})")
        else:
            code.append("pyautogui.hotkey(" + ", ".join(quote(k) for k in action.keys) + ")")
    if code:
        blocks.append("\n".join(code))
    return "\n".join(f"```python\n{b}\n```" if b not in SPECIAL else f"```{b}```" for b in blocks)
