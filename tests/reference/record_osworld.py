"""Records what OSWorld's own agents send and do, for tests/test_osworld_reference.py. Run by hand, never in CI.

The tests compare guitest's runners against this recording (tests/data/osworld_reference/), so CI needs neither
OSWorld nor a network. What is recorded, all by running OSWorld's own code:

- ``messages``: the messages each agent's ``predict`` sends at every step of a few episodes (7 steps, 12 steps, and
  a window other than the default), only the model call faked (it returns the episode's next reply). Each
  screenshot is a solid colour of its own; an image in a message is written as the step whose screenshot it is.
- ``replies``: what each reply of the reply tables does on OSWorld's machine: the agent's ``predict`` turns it into
  actions, ``lib_run_single.run_single_example`` plays them (its loop, its stop on done) through
  ``DesktopEnv.step`` (its ``<`` fix), the controller's ``execute_python_command`` (its one-line prefix) and the
  server's own ``/execute`` route (desktop_env/server/main.py, served on loopback), which runs ``python -c`` with a
  pyautogui whose platform layer records instead of moving the pointer (the rest of pyautogui 0.9.54 runs as it
  is, on an Xvfb display for its X11 key map). For UI-TARS the ``ui-tars`` 0.5.1 package's parser is run on the
  same replies too.

Usage (a scratch venv, not the project's)::

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install pyautogui==0.9.54 pyperclip pillow numpy openai backoff requests httpx flask lxml \
        loguru gymnasium python-dotenv wrapt_timeout_decorator ui-tars==0.5.1
    git --git-dir=<a snapshot of an OSWorld copy> worktree add --detach /tmp/osworld <commit>
    Xvfb :77 -screen 0 1920x1080x24 &
    DISPLAY=:77 /tmp/refvenv/bin/python tests/reference/record_osworld.py --osworld /tmp/osworld \\
        --repo mrwwk/DeskCraft --commit ba3cee3f58f35f5c2dc5f818eca7a0cb3ae48c13

Modules the agents import but these paths never use (dashscope, google.*, groq, tiktoken, pyatspi, pyxcursor, the VM
providers, the evaluators, the set-up controller) are stood in for by empty modules.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import importlib
import io
import json
import os
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "osworld_reference"
SCREEN = (1920, 1080)
START = (1, 1)  # where the recording pointer starts: a point at START, never moved to, is "where the pointer is"

# -- the machine: a pyautogui whose platform layer records ---------------------------------------------------------

SITECUSTOMIZE = (
    """
import json, os, sys, time, types
_path = os.environ.get("OSWORLD_RECORD")
if _path:
    def _log(*event):
        with open(_path, "a") as f:
            f.write(json.dumps(event) + "\\n")
    def _sleep(seconds):  # the code's own sleeps are recorded; pyautogui's pauses are skipped
        if sys._getframe(1).f_code.co_filename == "<string>":
            _log("sleep", seconds)
    time.sleep = _sleep
    clip = types.ModuleType("pyperclip")
    clip._text = ""
    def _copy(text):
        clip._text = text
        _log("copy", text)
    clip.copy = _copy
    clip.paste = lambda: clip._text
    sys.modules["pyperclip"] = clip
    import pyautogui
    from pyautogui import _pyautogui_x11 as x11
    _pointer = os.environ["OSWORLD_POINTER"]  # the pointer stays where it was between two commands, as on a machine
    _pos = json.load(open(_pointer)) if os.path.exists(_pointer) else [START_X, START_Y]
    _log("at", *_pos)
    x11._position = lambda: tuple(_pos)
    x11._size = lambda: (SCREEN_W, SCREEN_H)
    def _go(x, y):  # X11's _click, _mouseDown, _mouseUp and _vscroll move the pointer to their point first
        if x is not None and y is not None:
            _pos[:] = [x, y]
            with open(_pointer, "w") as f:
                json.dump(_pos, f)
    def _moveTo(x, y):
        _go(x, y)
        _log("move", x, y)
    def _act(kind):
        def act(x, y, button):
            _go(x, y)
            _log(kind, x, y, button)
        return act
    def _wheel(kind):
        def wheel(clicks, x=None, y=None):
            _go(x, y)
            _log(kind, clicks, x, y)
        return wheel
    x11._moveTo = _moveTo
    x11._click = _act("click")
    x11._mouseDown = _act("down")
    x11._mouseUp = _act("up")
    x11._scroll = _wheel("scroll")
    x11._vscroll = _wheel("scroll")
    x11._hscroll = _wheel("hscroll")
    def _key(kind):
        def press(key):
            mapped = key in x11.keyboardMapping and x11.keyboardMapping[key] is not None
            _log(kind if mapped else "ignored", key)
        return press
    x11._keyDown = _key("keydown")
    x11._keyUp = _key("keyup")
""".replace("START_X", str(START[0]))
    .replace("START_Y", str(START[1]))
    .replace("SCREEN_W", str(SCREEN[0]))
    .replace("SCREEN_H", str(SCREEN[1]))
)

#: pyautogui's names that press the same X key, written one way
ALIASES = {"\n": "enter", "\r": "enter", "return": "enter", "\t": "tab", "escape": "esc", "control": "ctrl", "ctrlleft": "ctrl", "shiftleft": "shift", "altleft": "alt"}
BUTTONS = {"left": ("click", "double_click", "triple_click"), "right": ("right_click",) * 3, "middle": ("middle_click",) * 3}


def key_name(key: str) -> str:
    key = key.lower() if len(key) > 1 else key
    return ALIASES.get(key, key)


def events(trace: list[list[Any]]) -> list[str]:
    """One action's recorded platform calls as the tests' events (tests/test_osworld_reference.py's ``machine``)."""
    out: list[str] = []
    typed: list[str] = []
    held: list[str] = []
    combo: list[str] = []
    pos = list(START)
    moved = False
    pending: tuple[int, int] | None = None
    down: tuple[int, int] | None = None
    clip = ""

    def at(x: int, y: int) -> str:
        return "" if (x, y) == START and not moved else f"{x},{y}"

    def flush_type() -> None:
        if typed:
            out.append(f"type({''.join(typed)!r})")
            typed.clear()

    def flush_move() -> None:
        nonlocal pending
        if pending is not None:
            out.append(f"move({pending[0]},{pending[1]})")
            pending = None

    i = 0
    while i < len(trace):
        event = trace[i]
        kind = event[0]
        if kind not in ("keydown", "keyup", "ignored"):
            flush_type()
        if kind == "at":  # where the pointer is when the command starts
            pos[:] = [event[1], event[2]]
            moved = tuple(pos) != START
        elif kind == "move":  # a pointer path (pyautogui's tweened moves) counts by where it ends
            x, y = event[1], event[2]
            if (x, y) != tuple(pos):
                moved = True
                if down is None:
                    pending = (x, y)
            pos[:] = [x, y]
        elif kind == "click":
            x, y, button = event[1], event[2], event[3]
            n = 1
            while i + 1 < len(trace) and trace[i + 1] == event and n < 3:
                n += 1
                i += 1
            if pending == (x, y):
                pending = None
            flush_move()
            out.append(f"{BUTTONS.get(button, ('click_' + str(button),) * 3)[n - 1]}({at(x, y)})")
            pos[:] = [x, y]
        elif kind in ("scroll", "hscroll"):
            x, y = (event[2], event[3]) if event[2] is not None else tuple(pos)
            if pending == (x, y):
                pending = None
            flush_move()
            where = at(x, y)
            out.append(f"{kind}({event[1]}" + (f" at {where})" if where else ")"))
            pos[:] = [x, y]
        elif kind == "down":
            flush_move()
            down = (event[1], event[2])
        elif kind == "up":
            end = tuple(pos)
            if down is not None and end != down:
                out.append(f"drag_to({end[0]},{end[1]})")
            else:
                out.append(f"mouse_down_up({at(*end)})")
            down = None
        elif kind == "keydown":
            flush_move()
            held.append(event[1])
            combo.append(event[1])
        elif kind == "keyup":
            if event[1] in held:
                held.remove(event[1])
            if not held and combo:
                names = [key_name(k) for k in combo]
                if len(names) == 1 and len(combo[0]) == 1 and combo[0] not in "\n\r\t":
                    typed.append(combo[0])
                elif names == ["ctrl", "v"] and clip:
                    flush_type()
                    out.append(f"paste({clip!r})")
                    clip = ""
                else:
                    flush_type()
                    out.append("key(" + "+".join(names) + ")")
                combo.clear()
        elif kind == "ignored":
            pass  # pyautogui has no X key for it: nothing is pressed
        elif kind == "copy":
            flush_move()
            clip = event[1]
        elif kind == "sleep":
            flush_move()
            out.append("WAIT")
        i += 1
    flush_type()
    flush_move()
    if clip:
        out.append(f"copy({clip!r})")
    return out


# -- OSWorld's code, imported with stand-ins for what these paths never use -----------------------------------------


class _Stub(types.ModuleType):
    """A module these paths import but never use: any name in it is a class."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (Exception,), {"__init__": lambda self, *a, **k: None})


STUBS = [
    "dashscope",
    "google",
    "google.generativeai",
    "google.api_core",
    "google.api_core.exceptions",
    "groq",
    "tiktoken",
    "pyatspi",
    "pyxcursor",
    "desktop_env.providers",
    "desktop_env.evaluators",
    "desktop_env.evaluators.metrics",
    "desktop_env.evaluators.getters",
    "desktop_env.controllers.setup",
    "anthropic",
    "anthropic.types",
    "anthropic.types.beta",
    "mm_agents.accessibility_tree_wrap.heuristic_retrieve",
]


MODULES = [
    "mm_agents.agent",
    "mm_agents.qwen25vl_agent",
    "mm_agents.qwen3vl_agent",
    "mm_agents.uitars15_v1",
    "desktop_env.desktop_env",
    "desktop_env.controllers.python",
    "desktop_env.server.main",
    "lib_run_single",
    "mm_agents.anthropic.utils",
    "mm_agents.anthropic.main",
]


def load_osworld(root: Path, names: list[str] = MODULES) -> dict[str, Any]:
    """OSWorld's modules ``names`` from the checkout ``root``."""
    sys.path.insert(0, str(root))
    for name in STUBS:
        sys.modules[name] = _Stub(name)
    sys.modules["desktop_env.providers"].create_vm_manager_and_provider = lambda *a, **k: (None, None)  # type: ignore[attr-defined]
    os.environ.setdefault("DOUBAO_API_URL", "http://127.0.0.1:9")
    os.environ.setdefault("DOUBAO_API_KEY", "unused")
    mods = {name: importlib.import_module(name) for name in names}
    if "mm_agents.agent" not in mods:
        return mods
    for name in ("mm_agents.agent", "mm_agents.qwen25vl_agent", "mm_agents.qwen3vl_agent"):
        import logging

        mods[name].logger = logging.getLogger("osworld")
    return mods


class Machine:
    """The server's own Flask app on loopback, its ``/execute`` running ``python -c`` with the recording pyautogui."""

    def __init__(self, mods: dict[str, Any]) -> None:
        import logging

        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)

        self.dir = Path(tempfile.mkdtemp(prefix="osworld-machine-"))
        (self.dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
        self.record = self.dir / "record.jsonl"
        self.pointer = self.dir / "pointer.json"
        os.environ["OSWORLD_RECORD"] = str(self.record)
        os.environ["OSWORLD_POINTER"] = str(self.pointer)
        os.environ["PYTHONPATH"] = str(self.dir)
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]  # the server runs `python`
        self.server = make_server("127.0.0.1", 0, mods["desktop_env.server.main"].app, threaded=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.controller = mods["desktop_env.controllers.python"].PythonController("127.0.0.1", server_port=self.server.server_port)
        self.errors: list[str] = []

    def run(self, code: str) -> list[str]:
        """What ``code`` does, sent as the controller sends it: the events, then the error it ended with, if any."""
        self.record.write_text("")
        return self.said(self.controller.execute_python_command(code))

    def said(self, result: Any) -> list[str]:
        """The events recorded since the record was cleared, and ``error(Type)`` when the code failed."""
        done = events([json.loads(line) for line in self.record.read_text().splitlines()])
        if result and result.get("returncode"):
            last = [ln for ln in result.get("error", "").splitlines() if ln.strip()][-1:]
            done.append(f"error({last[0].split(':')[0] if last else 'error'})")
        return done


def png(step: int) -> bytes:
    """Step ``step``'s screenshot: a solid colour of its own."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", SCREEN, colour(step)).save(buffer, format="PNG")
    return buffer.getvalue()


def colour(step: int) -> tuple[int, int, int]:
    return (40 + 13 * step) % 256, (200 - 17 * step) % 256, (90 + 29 * step) % 256


def which_step(data: str) -> int:
    return seen_image(data)[0]


def seen_image(data: str) -> tuple[int, list[int]]:
    """The step whose screenshot ``data`` (base64, or a data URL) is, and the size it is sent at."""
    from PIL import Image

    raw = data.split(",", 1)[1] if data.startswith("data:") else data
    image = Image.open(io.BytesIO(base64.b64decode(raw)))
    pixel = image.convert("RGB").getpixel((3, 3))
    for step in range(64):
        if all(abs(a - b) <= 2 for a, b in zip(colour(step), pixel, strict=True)):
            return step, list(image.size)
    raise ValueError(f"an image of no step: {pixel}")


class Texts:
    """Each text once: messages refer to texts by number, so the long system prompts are stored once."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.items)
            self.items.append(text)
        return self.index[text]


def layout(messages: list[dict[str, Any]], texts: Texts) -> list[list[Any]]:
    """Messages as ``[role, part, ...]``: a text part as its number in ``texts``, an image as ``{"image": step, "size":
    [w, h]}`` (the step whose screenshot it is, the size it is sent at)."""
    out = []
    for message in messages:
        content = message["content"]
        parts: list[Any] = []
        for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if part["type"] == "text":
                parts.append(texts(part["text"]))
            elif part["type"] == "image_url":
                step, size = seen_image(part["image_url"]["url"])
                parts.append({"image": step, "size": size})
            else:
                raise ValueError(part)
        out.append([message["role"], *parts])
    return out


# -- the agents, each made as its runner script makes it -------------------------------------------------------------


class Said:
    """The faked model: the episode's replies in turn, and every request's messages."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.asked: list[list[dict[str, Any]]] = []
        self.seen: list[int] = []  # the screenshot each step was given (a step whose reply ran nothing leaves it as it was)
        self.step = 0

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.asked.append(json.loads(json.dumps(messages)))
        reply = self.replies[min(self.step, len(self.replies) - 1)]
        return reply


def agent(mods: dict[str, Any], runner: str, said: Said, budget: int, history: int | None) -> Any:
    """OSWorld's agent for ``runner``, built with its runner script's arguments, its model call answered by ``said``."""
    if runner == "prompt-agent":  # run_multienv.py
        a = mods["mm_agents.agent"].PromptAgent(
            model="gpt-4o",
            max_tokens=1500,
            top_p=0.9,
            temperature=1.0,
            action_space="pyautogui",
            observation_type="screenshot",
            max_trajectory_length=3 if history is None else history,
            client_password="password",
        )
        a.call_llm = lambda payload: said(payload["messages"])
    elif runner in ("qwen25vl", "qwen3vl"):  # run_multienv_qwen25vl.py, run_multienv_qwen3vl.py
        if runner == "qwen25vl":
            a = mods["mm_agents.qwen25vl_agent"].Qwen25VLAgent(model="qwen2.5-vl", max_tokens=1500, top_p=0.9, temperature=1.0, action_space="pyautogui", add_thought_prefix=False)
        else:
            a = mods["mm_agents.qwen3vl_agent"].Qwen3VLAgent(
                model="qwen3-vl", max_tokens=32768, top_p=0.9, temperature=0.0, action_space="pyautogui", coordinate_type="relative", add_thought_prefix=False, api_backend="openai"
            )
        if history is not None:
            a.history_n = history
        a.call_llm = lambda payload, model=None: said(payload["messages"])
    else:  # run_multienv_uitars15_v1.py's runtime_conf
        qwen2 = runner == "uitars15-qwen2vl"
        conf = {
            "infer_mode": "qwen2vl_user" if qwen2 else "qwen25vl_normal",
            "prompt_style": "qwen2vl_user" if qwen2 else "qwen25vl_normal",
            "input_swap": True,
            "language": "Chinese",
            "history_n": 5 if history is None else history,
            "max_pixels": 16384 * 28 * 28,
            "min_pixels": 100 * 28 * 28,
            "callusr_tolerance": 3,
            "temperature": 0.0,
            "top_k": -1,
            "top_p": 0.9,
            "max_tokens": 1000,
        }
        if qwen2:
            conf["max_pixels"], conf["min_pixels"] = 2116800, 3136  # the runner script's qwen2vl settings
        a = mods["mm_agents.uitars15_v1"].UITARSAgent(
            model="ui-tars", action_space="pyautogui", observation_type="screenshot", max_trajectory_length=budget, model_type="qwen2vl" if qwen2 else "qwen25vl", runtime_conf=conf
        )

        class Completions:
            def create(self, messages: list[dict[str, Any]], **_: Any) -> Any:
                text = said(messages)
                return types.SimpleNamespace(choices=[types.SimpleNamespace(message=types.SimpleNamespace(content=text))])

        a.vlm = types.SimpleNamespace(chat=types.SimpleNamespace(completions=Completions()))
    return a


class Env:
    """Stands for DesktopEnv around the real ``DesktopEnv.step``: observations are the step's screenshot."""

    def __init__(self, mods: dict[str, Any], machine: Machine, said: Said) -> None:
        desktop = mods["desktop_env.desktop_env"].DesktopEnv
        self.desktop = desktop.__new__(desktop)
        self.desktop.__dict__.update(_step_no=0, _traj_no=0, action_history=[], is_environment_used=False, action_space="pyautogui", controller=machine.controller)
        self.desktop._get_obs = self._get_obs
        self.controller = types.SimpleNamespace(start_recording=lambda: None, end_recording=lambda path: None)
        self.vm_ip = "127.0.0.1"
        self.machine = machine
        self.said = said
        self.steps: list[list[str]] = []
        self.result: Any = None

    def _get_obs(self) -> dict[str, Any]:
        return {"screenshot": png(self.said.step), "accessibility_tree": None, "terminal": None, "instruction": None}

    def reset(self, task_config: Any = None) -> dict[str, Any]:
        return self._get_obs()

    def step(self, action: Any, pause: float = 2) -> Any:
        """``DesktopEnv.step`` itself (pause 0); the step's events are what the machine recorded."""
        self.machine.record.write_text("")
        self.result = None
        obs, reward, done, info = self.desktop.step(action, 0)
        special = isinstance(action, str) and action in ("WAIT", "FAIL", "DONE")
        self.steps[-1].extend([action] if special else self.machine.said(self.result))
        return obs, reward, done, info

    def evaluate(self) -> float:
        return 0.0


def play(mods: dict[str, Any], machine: Machine, runner: str, replies: list[str], budget: int, history: int | None = None) -> tuple[Said, list[list[str]], str]:
    """One episode of ``replies`` through ``lib_run_single.run_single_example`` (its sleeps skipped; ``budget``: the
    agent's step budget where it has one); the requests, what each step did on the machine, and the exception that
    ended the reference's loop (empty if none)."""
    machine.pointer.unlink(missing_ok=True)  # each episode starts with the pointer where no action put it
    said = Said(replies)
    a = agent(mods, runner, said, budget, history)
    env = Env(mods, machine, said)
    inner_predict = a.predict

    def predict(instruction: str, obs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        env.steps.append([])
        said.seen.append(which_step(base64.b64encode(obs["screenshot"]).decode()))
        try:
            response, actions = inner_predict(instruction, obs, *args, **kwargs)
        finally:
            said.step += 1
        if response == "client error" or str(response).startswith("Parsing action error"):
            env.steps[-1].append("client_error")
        return response, actions

    a.predict = predict
    reset = a.reset
    # this copy's lib_run_single calls agent.reset(logger, vm_ip=...), which PromptAgent.reset and Qwen25VLAgent.reset
    # do not take (a TypeError before the first step): the harness passes the logger alone
    a.reset = lambda *args, **kwargs: reset(*args[:1])
    machine_execute = machine.controller.execute_python_command

    def execute(command: str) -> Any:
        env.result = machine_execute(command)
        return env.result

    machine.controller.execute_python_command = execute
    sleep = time.sleep
    time.sleep = lambda s: None  # type: ignore[assignment]
    crash = ""
    try:
        with tempfile.TemporaryDirectory() as out:
            args = types.SimpleNamespace(sleep_after_execution=0.0, result_dir=out, action_space="pyautogui", observation_type="screenshot", model="m")
            mods["lib_run_single"].log_task_completion = lambda *a, **k: None
            with contextlib.redirect_stdout(io.StringIO()):  # the agents print every reply
                mods["lib_run_single"].run_single_example(a, env, {"id": "t"}, len(replies), "Open the settings", args, out, [])
    except Exception as error:  # the reference's own loop stops here; guitest goes on (a departure the docs name)
        crash = type(error).__name__
        if not env.steps:
            raise
        env.steps[-1].append(f"crash({crash})")
    finally:
        time.sleep = sleep
        machine.controller.execute_python_command = machine_execute
    return said, env.steps, crash


def ui_tars_package(mods: dict[str, Any], machine: Machine, reply: str) -> list[str]:
    """What the ``ui-tars`` 0.5.1 package's parser makes of a UI-TARS-1.5 reply (its README's call, the screenshot as
    the model saw it), run on the same machine."""
    from ui_tars.action_parser import parse_action_to_structure_output, parsing_response_to_pyautogui_code

    try:
        parsed = parse_action_to_structure_output(reply, 1000, SCREEN[1], SCREEN[0], "qwen25vl")
        code = parsing_response_to_pyautogui_code(parsed, SCREEN[1], SCREEN[0], True, scale_factor=1)  # qwen25vl: points already 0..1
    except Exception as error:
        return [f"crash({type(error).__name__})"]
    if code.strip() in ("DONE", "WAIT", "FAIL"):
        return [code.strip()]
    return machine.run(mods["desktop_env.desktop_env"]._fix_pyautogui_less_than_bug(code))


def record_claude(args: argparse.Namespace, mods: dict[str, Any]) -> None:
    """claude_screenshots.json: :func:`truncation` for this copy, beside the copies recorded before (one entry each)."""
    path = OUT / "claude_screenshots.json"
    copies = [c for c in (json.loads(path.read_text())["copies"] if path.exists() else []) if c["repository"] != args.repo]
    files = {
        f: hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        for f in ("mm_agents/anthropic/main.py", "mm_agents/anthropic/utils.py", "run_multienv_claude.py")
        if (data := (args.osworld.resolve() / f).read_bytes())
    }
    runner = (args.osworld.resolve() / "run_multienv_claude.py").read_text()
    call = runner[runner.index("AnthropicAgent(") :].split(")", 1)[0]
    copies.append({"repository": args.repo, "commit": args.commit, "files": files, "runner_passes_provider": "provider=" in call.replace("provider_name=", ""), **truncation(mods)})
    header = {"script": "tests/reference/record_osworld.py", "note": "run_multienv_claude.py builds AnthropicAgent with provider_name (the VM provider) only"}
    path.write_text(json.dumps({**header, "copies": sorted(copies, key=lambda c: c["repository"])}) + "\n")


def truncation(mods: dict[str, Any], steps: int = 60) -> dict[str, Any]:
    """Which tool-result screenshots Claude's requests hold at each step of an episode: ``AnthropicAgent``'s messages
    grow by one tool result with its screenshot a step, and ``_maybe_filter_to_n_most_recent_images`` (utils.py)
    filters them in place before each request, with ``only_n_most_recent_images`` and the
    ``image_truncation_threshold`` of each provider branch of ``AnthropicAgent.predict`` (main.py); the defaults
    are read from the agent's own signature."""
    import inspect

    agent = mods["mm_agents.anthropic.main"].AnthropicAgent
    defaults = {name: param.default for name, param in inspect.signature(agent.__init__).parameters.items()}
    source = inspect.getsource(agent.predict)
    thresholds = {"bedrock": 10, "anthropic": 20}
    assert "image_truncation_threshold = 10" in source and "image_truncation_threshold = 20" in source  # as the two branches say
    out: dict[str, Any] = {"default_provider": str(getattr(defaults["provider"], "value", defaults["provider"])), "only_n_most_recent_images": defaults["only_n_most_recent_images"], "steps": {}}
    for provider, threshold in thresholds.items():
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "image", "source": {"data": "first"}}, {"type": "text", "text": "task"}]}]
        kept = []
        for step in range(1, steps + 1):
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{step}", "name": "computer", "input": {}}]})
            messages.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{step}", "content": [{"type": "text", "text": "Success"}, {"type": "image", "source": {"data": step}}]}]}
            )
            mods["mm_agents.anthropic.utils"]._maybe_filter_to_n_most_recent_images(messages, out["only_n_most_recent_images"], min_removal_threshold=threshold)
            kept.append([part["source"]["data"] for m in messages for block in m["content"] if block.get("type") == "tool_result" for part in block["content"] if part.get("type") == "image"])
        out["steps"][provider] = {"image_truncation_threshold": threshold, "kept": kept}
    return out


# -- what is recorded ------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--osworld", required=True, type=Path, help="a checkout of an OSWorld copy at --commit")
    parser.add_argument("--repo", required=True, help="the repository it was checked out from (owner/name)")
    parser.add_argument("--commit", required=True, help="the commit checked out")
    parser.add_argument("--only", default="", help="record only the rows whose name starts with this")
    parser.add_argument("--claude-only", action="store_true", help="record only claude_screenshots.json")
    args = parser.parse_args()
    os.chdir(tempfile.mkdtemp(prefix="osworld-run-"))  # qwen3vl_agent.py writes ./draft/message_cache/ at every step
    if args.claude_only:  # only the Claude agent's files: a copy whose other agents differ can be read too
        record_claude(args, load_osworld(args.osworld.resolve(), ["mm_agents.anthropic.utils", "mm_agents.anthropic.main"]))
        return
    mods = load_osworld(args.osworld.resolve())
    machine = Machine(mods)
    sys.path.insert(0, str(HERE))
    from osworld_cases import EPISODES, ROWS

    files = {f: hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() for f in FILES if (data := (args.osworld.resolve() / f).read_bytes())}
    header = {
        "repository": args.repo,
        "commit": args.commit,
        "files": files,
        "script": "tests/reference/record_osworld.py",
        "pyautogui": importlib.import_module("pyautogui").__version__,
        "ui_tars": _version("ui-tars"),
        "screen": list(SCREEN),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    record_claude(args, mods)
    if args.claude_only:
        return
    texts = Texts()
    episodes = []
    for name, runner, replies, history in EPISODES:
        said, steps, crash = play(mods, machine, runner, replies, len(replies), history)
        assert not crash, (name, crash)
        messages = [layout(m, texts) for m in said.asked]
        if runner.startswith("uitars"):  # the size the model sees: the smart_resize its parser computes (the server's processor makes it)
            conf = agent(mods, runner, Said(["x"]), 1, history).runtime_conf
            for part in (p for step in messages for m in step for p in m[1:] if isinstance(p, dict)):
                h, w = mods["mm_agents.uitars15_v1"].smart_resize(part["size"][1], part["size"][0], factor=28, min_pixels=conf["min_pixels"], max_pixels=conf["max_pixels"])
                part["model_sees"] = [w, h]
        episodes.append({"name": name, "runner": runner, "history": history, "replies": replies, "seen": said.seen, "messages": messages})
        print(f"episode {name}: {len(said.asked)} steps", file=sys.stderr)
    rows = []
    for row in ROWS:
        if not row["name"].startswith(args.only):
            continue
        said, steps, crash = play(mods, machine, row["runner"], row["replies"], row.get("budget", 15))
        record = {**row, "reference": steps}
        if row["runner"] == "uitars15":
            machine.pointer.unlink(missing_ok=True)
            record["ui_tars_package"] = [ui_tars_package(mods, machine, r) for r in row["replies"]]
        rows.append(record)
        print(f"row {row['name']}: {steps}", file=sys.stderr)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "messages.json").write_text(json.dumps({**header, "texts": texts.items, "episodes": episodes}, ensure_ascii=False, indent=0) + "\n")
    (OUT / "replies.json").write_text(json.dumps({**header, "rows": rows}, ensure_ascii=False, indent=1) + "\n")


FILES = [
    "mm_agents/agent.py",
    "mm_agents/prompts.py",
    "mm_agents/qwen25vl_agent.py",
    "mm_agents/qwen3vl_agent.py",
    "mm_agents/uitars15_v1.py",
    "mm_agents/utils/qwen_vl_utils.py",
    "lib_run_single.py",
    "desktop_env/desktop_env.py",
    "desktop_env/controllers/python.py",
    "desktop_env/server/main.py",
]


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
