"""The desktop backend: OSWorld and Windows Agent Arena machines, and guitest's own local desktop, over their server protocol.

:class:`DesktopEnv` implements :class:`~guitest.live.protocol.Environment` against one or more
machines given by URL (``--env-url=http://HOST:5000``, repeated for a pool). Per episode it leases
a free machine (:mod:`guitest.desktopenv.machine_pool`: one episode per machine at a time, across ``-n``
workers), runs the task's ``config`` steps (:mod:`guitest.desktopenv.setup`), and then per step:

- the screen through ``GET /screenshot`` (its scale against ``POST /screen_size`` maps points back);
- an action as pyautogui code through ``POST /execute``, as OSWorld's and WAA's ``PythonController``
  send it: ``["python", "-c", "import pyautogui; import time; pyautogui.FAILSAFE = False; <code>"]``;
- WAIT sleeps, DONE and FAIL end the episode without touching the machine (OSWorld's action space);
- after every action, WAIT, DONE and FAIL included, ``settle`` seconds before the next screenshot, as OSWorld's
  ``DesktopEnv.step(action, pause)`` sleeps ``pause`` (its run script's ``--sleep_after_execution``).

The waits (:func:`waits`): ``ready_after`` seconds from the end of the set-up to the first screenshot (OSWorld's
``lib_run_single.py`` sleeps 60 s after ``env.reset``), ``settle`` after each action (a number, or ``runner``: the
runner's own :attr:`~guitest.live.runners.runner.Runner.sleep_after_execution`), ``evaluate_after`` from the last
action to the evaluation (OSWorld's 20 s; or ``runner``: the runner's own ``evaluate_after``). The defaults are guitest's own; the suites that claim a reference's
numbers set the reference's (docs/live_desktops.md, "Waits"). A wait is time on the machine, not the CPU: the episodes of a
pool of machines wait side by side.

:meth:`DesktopEnv.evaluate` runs the task's evaluator (:mod:`guitest.desktopenv.evaluate`). A machine
that stops answering is taken out of the pool and the episode raises
:class:`~guitest.live.protocol.EnvFailure`, so ``--lf`` runs it again on another machine.

Machines in a known state. Before each episode the backend brings the machine into a known state where it
can, and the episode records how (``reset_info["reset"]``, and the reset observation's ``info["reset"]``):

- ``reverted``: a provider of desktop-env (``--env-provider``, :mod:`guitest.desktopenv.provider`) reverted the
  VM to its snapshot (or started it fresh), as OSWorld's ``DesktopEnv.reset`` does;
- ``reset``: a guitest desktop server reset itself (``POST /guitest/reset``: closes what earlier episodes
  opened, empties its home folder);
- ``none``: any other machine (OSWorld's or WAA's server at a fixed ``--env-url``): nothing resets it, each
  task's own ``config`` steps are all that bring it into shape, so the episode ran in an unknown state.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import concurrent.futures
import threading
import time
from typing import Any, Mapping, Sequence

from ..report_parts import Waits

from ..live.actions import CLICK, DONE, DOUBLE_CLICK, DRAG, FAIL, HOLD_KEY, KEY, MIDDLE_CLICK, MODIFIABLE, MOUSE_DOWN, MOUSE_UP, MOVE, RIGHT_CLICK, SCROLL, TRIPLE_CLICK, TYPE, WAIT, Action
from ..live.protocol import EnvFailure, Evaluation, Observation, TaskSpec
from ..printable import printable
from .client import PNG_MAGIC, MachineClient, MachineFailure, shown_url
from .evaluate import evaluate as run_evaluator
from .getters import GetterContext
from .machine_pool import LEASE_TTL, Lease, MachinePool
from .provider import ProvidedMachine, ProviderSettings, settings_from
from .setup import run_steps
from ..envs.options import seconds_option

#: Action key names (lower case) -> pyautogui's names, where they differ
KEY_ALIASES = {
    "meta": "win",
    "super": "win",
    "cmd": "win",
    "command": "win",
    "windows": "win",
    "control": "ctrl",
    "option": "alt",
    "escape": "esc",
    "return": "enter",
    "del": "delete",
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "page_up": "pageup",
    "page_down": "pagedown",
    "pgup": "pageup",
    "pgdn": "pagedown",
    "spacebar": "space",
    "caps_lock": "capslock",
    "print": "printscreen",
}
DEFAULT_WAIT = 1.0
MAX_WAIT = 60.0
#: seconds from the last action to the evaluation: OSWorld's lib_run_single.py, ``time.sleep(20) # Wait for the environment to settle``
EVALUATE_AFTER = 20.0
#: seconds from the end of the set-up to the first screenshot: guitest's own none (OSWorld's lib_run_single.py sleeps 60,
#: ``# Wait for the environment to be ready``; a suite says so with ``ready_after``)
READY_AFTER = 0.0
#: seconds after an action before the next screenshot: guitest's own (OSWorld's run scripts set their own per runner)
SETTLE = 0.3
#: ``settle: runner``, ``evaluate_after: runner``: wait as long as the runner's reference does (its
#: ``sleep_after_execution``, its ``evaluate_after``)
RUNNER = "runner"
#: the options the live flow adds for the runner driving the agent (guitest.run.live_case.LiveSetup.options)
RUNNER_NAME, RUNNER_SETTLE, RUNNER_EVALUATE_AFTER = "runner_name", "runner_settle", "runner_evaluate_after"
#: the waits a suite may leave to the runner: the option the live flow adds for each, and the runner's attribute
RUNNER_WAITS = {"settle": (RUNNER_SETTLE, "sleep_after_execution"), "evaluate_after": (RUNNER_EVALUATE_AFTER, "evaluate_after")}
#: how a machine was brought into a known state before an episode (see the module docstring)
REVERTED, RESET, NONE = "reverted", "reset", "none"

_pools: dict[tuple[str, ...], MachinePool] = {}  # by machine URLs and lease folder
_pools_lock = threading.Lock()
_ending = threading.Event()  # set by shutdown(): the waits of episodes still running end at once


def pause(seconds: float) -> None:
    """Wait ``seconds`` of the machine's time (a wait of the episode: ``ready_after``, ``settle``, a ``wait`` action,
    ``evaluate_after``); when the process shuts its machines down meanwhile (the end of the session, Ctrl-C), an
    EnvFailure at once rather than the rest of the wait."""
    ending = _ending
    if ending.wait(seconds):
        raise EnvFailure("the run is ending (interrupted): its machines are being stopped")


def shared_pool(urls: Sequence[str], **options: Any) -> MachinePool:
    """The process's one pool for these machine URLs (and lease folder, ``lease_dir``), so concurrent episodes of a
    worker share leases and taken-out machines (the other ``options`` apply when it is first made)."""
    machines = tuple(dict.fromkeys(u.strip().rstrip("/") for u in urls if u and u.strip()))
    key = (*machines, f"lease_dir={options.get('lease_dir') or ''}")
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = MachinePool(list(machines), **options)
        return pool


def waits(options: Mapping[str, Any]) -> Waits:
    """The waits of a desktop episode under ``options`` (a suite's ``env_options``, with what the live flow adds of the
    runner: ``runner_name``, ``runner_settle`` and ``runner_evaluate_after``): ``ready_after``, ``settle`` and
    ``evaluate_after`` in seconds, and ``sources``: where each came from (``env_options``, ``runner NAME``, or
    guitest's ``default``). ``settle: runner`` takes the runner's ``sleep_after_execution`` and ``evaluate_after:
    runner`` its ``evaluate_after``, guitest's default when the runner's reference sets none. EnvFailure naming an
    option that is not a number of seconds (0 or more)."""
    out: dict[str, float] = {}
    sources: dict[str, str] = {}
    for name, default in (("ready_after", READY_AFTER), ("settle", SETTLE), ("evaluate_after", EVALUATE_AFTER)):
        given = options.get(name)
        from_runner = RUNNER_WAITS.get(name)
        if from_runner is not None and given == RUNNER:
            key, attribute = from_runner
            runner = str(options.get(RUNNER_NAME) or "of this run")
            chosen = options.get(key)
            if chosen is None:
                out[name] = default
                sources[name] = f"runner {runner} sets no {attribute}: guitest's default"
            else:
                out[name] = seconds_option({name: chosen}, name, default, zero=True)
                sources[name] = f"runner {runner}'s {attribute}"
            continue
        if from_runner is not None and isinstance(given, str):
            try:
                float(given)
            except ValueError:
                raise EnvFailure(f"env_options.{name} must be a number of seconds (0 or more) or {RUNNER!r} (the runner's own {from_runner[1]}), got {given!r}") from None
        out[name] = seconds_option(options, name, default, zero=True)
        sources[name] = "env_options" if name in options else "default"
    return {"ready_after": out["ready_after"], "settle": out["settle"], "evaluate_after": out["evaluate_after"], "sources": sources}


def waits_text(record: Mapping[str, Any]) -> str:
    """The waits of :func:`waits` in words, for the run header and the summary."""
    sources = record.get("sources", {})
    parts = [
        (record["ready_after"], "after the set-up before the first screenshot", sources.get("ready_after")),
        (record["settle"], "after each action", sources.get("settle")),
        (record["evaluate_after"], "from the last action to the evaluation", sources.get("evaluate_after")),
    ]
    return ", ".join(f"{seconds:g} s {what} ({source})" for seconds, what, source in parts)


def png_size(data: bytes) -> tuple[int, int]:
    """The pixel size in a PNG's header."""
    if not data.startswith(PNG_MAGIC) or len(data) < 24:
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def pyautogui_key(name: str) -> str:
    """pyautogui's name for an Action key name (``meta`` -> ``win``, ``escape`` -> ``esc``, ``a`` -> ``a``)."""
    key = name.strip().lower()
    return KEY_ALIASES.get(key, key)


def pyautogui_code(action: Action, screen: tuple[int, int], scale: float = 1.0) -> str:
    """The pyautogui code that performs ``action`` (points in screenshot pixels, ``scale`` screenshot pixels
    per screen unit) on a screen of size ``screen``; points are clamped onto the screen. ValueError for a
    final or wait action (they run no code) and for a move or drag missing its point (a click without one clicks where
    the pointer is). ``type`` goes through :func:`typing_code`."""
    width, height = screen

    def at(point: tuple[float, float] | None, what: str) -> tuple[int, int]:
        if point is None:
            raise ValueError(f"a {action.kind} action needs a {what}")
        x = min(max(round(point[0] / scale), 0), width - 1)
        y = min(max(round(point[1] / scale), 0), height - 1)
        return x, y

    if action.space not in (None, "screen"):
        raise ValueError(f"action points must be in screenshot pixels (space 'screen'), not {action.space!r}; map them with guitest.live.actions.to_screen")
    code = _pointer_code(action, at)
    held = [pyautogui_key(k) for k in action.keys if k.strip()] if action.kind in MODIFIABLE else []
    if held:  # modifier keys held around a pointer action (a ctrl+click), as the computer-use references do it
        down = "; ".join(f"pyautogui.keyDown({k!r})" for k in held)
        up = "; ".join(f"pyautogui.keyUp({k!r})" for k in reversed(held))
        return f"{down}; {code}; {up}"
    return code


def _pointer_code(action: Action, at: Any) -> str:
    """The pyautogui code of ``action`` without held modifiers (``at`` maps a point onto the screen)."""
    kind = action.kind
    if kind in (CLICK, DOUBLE_CLICK, RIGHT_CLICK, TRIPLE_CLICK, MIDDLE_CLICK, MOUSE_DOWN, MOUSE_UP) and action.point is None:
        call = {CLICK: "click", DOUBLE_CLICK: "doubleClick", RIGHT_CLICK: "rightClick", TRIPLE_CLICK: "tripleClick", MIDDLE_CLICK: "middleClick", MOUSE_DOWN: "mouseDown", MOUSE_UP: "mouseUp"}[kind]
        return f"pyautogui.{call}()"  # where the pointer is
    if kind in (CLICK, DOUBLE_CLICK, RIGHT_CLICK, MOVE, TRIPLE_CLICK, MIDDLE_CLICK, MOUSE_DOWN, MOUSE_UP):
        x, y = at(action.point, "point")
        call = {
            CLICK: "click",
            DOUBLE_CLICK: "doubleClick",
            RIGHT_CLICK: "rightClick",
            MOVE: "moveTo",
            TRIPLE_CLICK: "tripleClick",
            MIDDLE_CLICK: "middleClick",
            MOUSE_DOWN: "mouseDown",
            MOUSE_UP: "mouseUp",
        }[kind]
        return f"pyautogui.{call}({x}, {y})"
    if kind == HOLD_KEY:
        keys = [pyautogui_key(k) for k in action.keys if k.strip()]
        if not keys:
            raise ValueError("a hold_key action needs at least one key")
        down = "; ".join(f"pyautogui.keyDown({k!r})" for k in keys)
        up = "; ".join(f"pyautogui.keyUp({k!r})" for k in reversed(keys))
        return f"{down}; time.sleep({min(max(action.seconds, 0.0), MAX_WAIT):g}); {up}"
    if kind == DRAG:
        x2, y2 = at(action.end, "end point")
        if action.point is None:  # from where the pointer is
            return f"pyautogui.dragTo({x2}, {y2}, duration=0.3, button='left')"
        x1, y1 = at(action.point, "start point")
        return f"pyautogui.moveTo({x1}, {y1}); pyautogui.dragTo({x2}, {y2}, duration=0.3, button='left')"
    if kind == SCROLL:
        dx, dy = action.scroll
        where = ""
        if action.point is not None:
            x, y = at(action.point, "point")
            where = f"pyautogui.moveTo({x}, {y}); "
        calls = []
        if round(dy):
            calls.append(f"pyautogui.scroll({-round(dy)})")  # pyautogui: positive scrolls up
        if round(dx):
            calls.append(f"pyautogui.hscroll({round(dx)})")
        return where + ("; ".join(calls) or "pass")
    if kind == TYPE:
        return typing_code(action.text, action.paste)
    if kind == KEY:
        keys = [pyautogui_key(k) for k in action.keys if k.strip()]
        if not keys:
            raise ValueError("a key action needs at least one key")
        if len(keys) == 1:
            return f"pyautogui.press({keys[0]!r})"
        return f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})"
    raise ValueError(f"a {kind} action runs no code on the machine")


def typing_code(text: str, paste: bool = False) -> str:
    """The pyautogui code that types ``text``: ``pyautogui.write`` key by key for ASCII text, as OSWorld's agents type;
    through the clipboard and ctrl+v for a paste (``paste``, as OSWorld's UI-TARS runner types everything: pyperclip,
    then ``pyautogui.hotkey('ctrl', 'v')``) and for text pyautogui has no keys for (non-ASCII: ``pyautogui.write`` drops
    it on X11). Where pyperclip finds no clipboard tool (a Linux machine without xclip or xsel), Tk holds the clipboard
    while ctrl+v pastes it; without Tk, ``xdotool type`` types it. The code starts on a line of its own: it follows the
    client's one-line prefix (:meth:`MachineClient.run_pyautogui`)."""
    if not paste and text.isascii():
        return f"pyautogui.write({text!r})"
    return f"\ntext = {text!r}\n" + _PASTE


_PASTE = """\
try:
    import pyperclip
    pyperclip.copy(text)
    pasted = pyperclip.paste() == text
except Exception:
    pasted = False
if pasted:
    pyautogui.hotkey('ctrl', 'v')
else:
    try:
        import tkinter
        owner = tkinter.Tk()
    except Exception:
        owner = None
    if owner is not None:
        owner.withdraw()
        owner.clipboard_clear()
        owner.clipboard_append(text)
        owner.update()
        pyautogui.hotkey('ctrl', 'v')
        until = time.time() + 0.5
        while time.time() < until:
            owner.update()
            time.sleep(0.02)
        owner.destroy()
    else:
        import subprocess
        subprocess.run(['xdotool', 'type', '--clearmodifiers', '--delay', '10', '--', text], check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
"""


class DesktopEnv:
    """Episodes on the machines at ``urls`` (one or more ``http://HOST:PORT``), one episode at a time per instance.

    ``settle``: seconds to wait after an action before the next screenshot (the screen has to catch up), as
    OSWorld's ``DesktopEnv.step`` sleeps its ``pause``; ``ready_after``: seconds from the end of the set-up to the
    first screenshot, as OSWorld's ``lib_run_single.py`` sleeps 60 s after ``env.reset`` (an application the set-up
    launched may still be loading); ``evaluate_after``: seconds from the episode's last action (or its reset) to the
    evaluation, as OSWorld's ``lib_run_single.py`` sleeps 20 s before ``env.evaluate()`` (an application still saving
    is not scored early);
    ``a11y``: also fetch the accessibility tree into ``Observation.text`` (slow on big trees);
    ``timeout`` / ``command_timeout``: the client's limits for ordinary requests and for commands;
    ``acquire_wait``: how long :meth:`reset` waits for a free machine; ``reset_desktop``: ask a guitest
    desktop server to clean up before each episode; ``download_cache``: where task files downloaded here
    are kept; ``pool``: a pool of one's own instead of the process's shared one; ``machines``: the pool's
    entries that are a provider's VMs (reverted before each episode), by pool key; ``lease_dir`` and ``lease_ttl``:
    lease the machines across hosts with lease files in a shared folder (:mod:`guitest.desktopenv.machine_pool`).

    After each :meth:`reset`, ``reset_info`` says how the machine was brought into shape (``reset``:
    ``reverted``, ``reset`` or ``none``, None when the reset failed before), how long the episode waited for a
    free machine (``wait_seconds``) and the set-up's notes (``setup_notes``: steps that answered an error).
    """

    name = "desktop"

    def __init__(
        self,
        urls: Sequence[str] | str,
        *,
        settle: float = SETTLE,
        evaluate_after: float = EVALUATE_AFTER,
        ready_after: float = READY_AFTER,
        a11y: bool = False,
        timeout: float = 30.0,
        command_timeout: float = 130.0,
        acquire_wait: float = 900.0,
        reset_desktop: bool = True,
        download_cache: str | None = None,
        pool: MachinePool | None = None,
        machines: dict[str, ProvidedMachine] | None = None,
        lease_dir: str | None = None,
        lease_ttl: float = LEASE_TTL,
    ) -> None:
        urls = [urls] if isinstance(urls, str) else list(urls)
        self.pool = pool or shared_pool(urls, lease_dir=lease_dir, lease_ttl=seconds_option({"lease_ttl": lease_ttl}, "lease_ttl", LEASE_TTL))
        self.machines = dict(machines or {})
        self.settle = seconds_option({"settle": settle}, "settle", SETTLE, zero=True)
        self.evaluate_after = seconds_option({"evaluate_after": evaluate_after}, "evaluate_after", EVALUATE_AFTER, zero=True)
        self.ready_after = seconds_option({"ready_after": ready_after}, "ready_after", READY_AFTER, zero=True)
        self._acted_at = 0.0  # time.monotonic() when the episode's last action (or its reset) ended
        self.a11y = a11y
        self.timeout = timeout
        self.command_timeout = command_timeout
        self.acquire_wait = acquire_wait
        self.reset_desktop = reset_desktop
        self.download_cache = download_cache or ""
        self._lease: Lease | None = None
        self._client: MachineClient | None = None
        self._task: TaskSpec | None = None
        self._work_dir: str | None = None
        self._screen: tuple[int, int] = (0, 0)
        self._shot_scale = 1.0  # screenshot pixels per screen unit, from the last screenshot
        self._last: str | None = None
        self._ended = False
        self._url: str | None = None
        self.reset_info: dict[str, Any] = {}

    # -- the protocol ----------------------------------------------------------------------------------

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        """Lease a machine, run the task's ``config`` steps and return the first screen. ``seed`` is not
        used: these tasks are the same every time (their set-up files and steps are fixed)."""
        self._end_episode()
        info: dict[str, Any] = {"reset": None, "wait_seconds": 0.0, "setup_notes": []}
        self.reset_info = info
        evaluator = task.config.get("evaluator")
        if not isinstance(evaluator, dict):
            raise EnvFailure(f"desktop task {task.name}: its config has no evaluator (an OSWorld task's config and evaluator go in TaskSpec.config)")
        asked = time.perf_counter()
        self._lease = self.pool.acquire(self.acquire_wait)
        info["wait_seconds"] = round(time.perf_counter() - asked, 3)
        machine = self.machines.get(self._lease.url)
        try:
            url = machine.prepare() if machine is not None else self._lease.url
        except EnvFailure as exc:
            self.pool.take_out(self._lease.url, str(exc)[:300])  # a VM that cannot be reverted or started serves no more
            self._end_episode()
            raise
        self._url = url
        self._client = MachineClient(url, timeout=self.timeout, command_timeout=self.command_timeout)
        self._task = task
        self._last = None
        self._ended = False
        self._work_dir = tempfile.mkdtemp(prefix="guitest-episode-")
        notes: list[str] = info["setup_notes"]
        try:
            if machine is not None:
                info["reset"] = REVERTED
            elif self.reset_desktop and self._client.reset_desktop():
                info["reset"] = RESET
            else:
                info["reset"] = NONE
            self._screen = self._client.screen_size()
            run = run_steps(
                task.config.get("config") or [],
                self._client,
                phase="config",
                cache_dir=self.download_cache or None,
                work_dir=self._work_dir,
                screen=self._screen,
            )
            notes.extend(run.notes)
            if self.ready_after > 0:  # the machine's time, not the CPU's: other machines' episodes run meanwhile
                pause(self.ready_after)
            self._acted_at = time.monotonic()
            return self._observe({"reset": info["reset"], "wait_seconds": info["wait_seconds"], **({"setup_notes": list(notes)} if notes else {})})
        except EnvFailure as exc:
            self._failed(exc)
            raise

    def step(self, action: Action) -> Observation:
        """Execute ``action`` and return the next screen; DONE and FAIL end the episode (``done``)."""
        client = self._require()
        try:
            info: dict[str, Any] = {}
            self._last = action.kind
            if action.kind in (DONE, FAIL):
                self._ended = True
                self._settle()
                return self._observe({"final": action.kind}, done=True)
            if action.kind == WAIT:
                pause(min(action.seconds or DEFAULT_WAIT, MAX_WAIT))
                self._settle()
                return self._observe({})
            try:
                code = pyautogui_code(action, self._screen, self._shot_scale)
            except ValueError as exc:
                info["action_error"] = printable(str(exc))  # a wrong action uses up its step; the episode goes on
            else:
                result = client.run_pyautogui(code)
                if result.get("returncode") not in (0, None) or result.get("status") not in ("success", ""):
                    info["action_error"] = printable((result.get("error") or result.get("output") or "")[-500:]) or f"returncode {result.get('returncode')}"
                info["code"] = code
                self._acted_at = time.monotonic()
                self._settle()
            return self._observe(info)
        except EnvFailure as exc:
            self._failed(exc)
            raise

    def evaluate(self) -> Evaluation:
        """The task's evaluator on the episode as it stands (postconfig steps first, then getters and metrics)."""
        client = self._require()
        assert self._task is not None and self._work_dir is not None
        left = self.evaluate_after - (time.monotonic() - self._acted_at)
        if left > 0:  # the time since the last action (its settle, the agent's last call) counts toward the wait
            pause(left)
        ctx = GetterContext(client, self._work_dir, self.download_cache)
        work_dir, screen = self._work_dir, self._screen

        def postconfig(steps: list[dict[str, Any]]) -> None:
            run_steps(steps, client, phase="postconfig", cache_dir=self.download_cache or None, work_dir=work_dir, screen=screen)

        try:
            return run_evaluator(self._task.config["evaluator"], ctx, last_action=self._last, postconfig=postconfig)
        except EnvFailure as exc:
            self._failed(exc)
            raise

    def release(self) -> None:
        """The episode is over and this environment goes back to its pool: the machine is free for another episode."""
        self._end_episode()

    def close(self) -> None:
        """Give the machine back to the pool and remove the episode's files. Safe to call twice."""
        self._end_episode()

    # -- internals -------------------------------------------------------------------------------------

    @property
    def machine(self) -> str | None:
        """The URL of the machine running the current episode, if any."""
        return self._url if self._lease else None

    def _settle(self) -> None:
        """Wait ``settle`` seconds after an action before the next screenshot (OSWorld's ``DesktopEnv.step`` sleeps its
        ``pause`` after every action, WAIT, DONE and FAIL included)."""
        if self.settle > 0:
            pause(self.settle)

    def _require(self) -> MachineClient:
        if self._client is None:
            raise EnvFailure("the desktop episode is over (its machine failed or it was closed): call reset() first")
        return self._client

    def _observe(self, info: dict[str, Any], done: bool = False) -> Observation:
        client = self._require()
        shot = client.screenshot()
        try:
            size = png_size(shot)
        except ValueError:
            raise MachineFailure("bad_reply", client.url, "GET /screenshot", "the PNG has no readable header") from None
        self._shot_scale = size[0] / self._screen[0] if self._screen[0] else 1.0
        text = client.accessibility() if self.a11y else None
        assert self._task is not None
        return Observation(
            screenshot=shot,
            size=size,
            instruction=self._task.instruction,
            scale=self._shot_scale,
            text=text,
            done=done or self._ended,
            info={"machine": client.url, **info},
        )

    def _failed(self, exc: EnvFailure) -> None:
        """End the episode after a failure; a machine that stopped answering leaves the pool, unless a provider
        reverts it before its next episode anyway."""
        if isinstance(exc, MachineFailure) and exc.taken_out and self._lease is not None and self._lease.url not in self.machines:
            self.pool.take_out(self._lease.url, exc.kind)
        self._end_episode()

    def _end_episode(self) -> None:
        if self._lease is not None:
            self._lease.release()
        self._lease = None
        self._client = None
        self._url = None
        if self._work_dir:
            shutil.rmtree(self._work_dir, ignore_errors=True)
        self._work_dir = None


#: the keys of ``env_options`` the desktop backend takes besides the machines (``urls``, ``local_desktop``, ``provider``)
#: and the waits (:func:`waits`: ``ready_after``, ``settle``, ``evaluate_after``)
OPTIONS = ("a11y", "timeout", "command_timeout", "acquire_wait", "reset_desktop", "download_cache", "lease_dir", "lease_ttl")
NO_MACHINE = (
    "the desktop backend needs a machine that speaks the OSWorld / Windows Agent Arena server protocol: pass "
    "--env-url=http://HOST:5000 (repeat it for a pool) or let desktop-env's providers start and revert one "
    "(--env-provider=docker|vmware|aws|...); start one with `guitest desktop up` (a local Linux desktop "
    "under Xvfb), an OSWorld VM or a Windows Agent Arena VM (its run scripts); docs/live_desktops.md"
)
_local: list[Any] = []  # the desktops this process started (local_desktop: true without --env-url)
_local_lock = threading.Lock()
_provided: dict[ProviderSettings, list[ProvidedMachine]] = {}  # this process's provider VMs, by settings


def make(options: dict[str, Any], base_dir: str) -> DesktopEnv:
    """The ``desktop`` backend's factory: the machines of ``options["urls"]`` (from ``--env-url``), or the VM of
    ``options["provider"]`` (``--env-provider``: reverted before each episode); without either, a local desktop
    this process starts once (``local_desktop: true``, the ``desktop_local`` suite), else EnvFailure saying how to
    get a machine."""
    urls = [u for u in options.get("urls") or () if u]
    kwargs: dict[str, Any] = {k: options[k] for k in OPTIONS if k in options}
    kwargs.update({k: v for k, v in waits(options).items() if k != "sources"})
    if "lease_ttl" in kwargs:
        kwargs["lease_ttl"] = seconds_option(kwargs, "lease_ttl", LEASE_TTL)
    if kwargs.get("download_cache") and not os.path.isabs(str(kwargs["download_cache"])):
        kwargs["download_cache"] = os.path.join(base_dir, str(kwargs["download_cache"]))
    if options.get("provider"):
        if urls:
            raise EnvFailure("give the desktop machines either with --env-url or with a provider (--env-provider, env_options.provider), not both")
        machines = provided_machines(settings_from(options["provider"], base_dir))
        keys = [m.key for m in machines]  # the first is leased first: a VM is made only when the ones before are busy
        pool = shared_pool(keys, spread=False, lease_dir=kwargs.get("lease_dir"), lease_ttl=kwargs.get("lease_ttl", LEASE_TTL))
        return DesktopEnv([], pool=pool, machines={m.key: m for m in machines}, **kwargs)
    if not urls and options.get("local_desktop"):
        urls = [_local_desktop()]
    if not urls:
        raise EnvFailure(NO_MACHINE)
    return DesktopEnv(urls, **kwargs)


def machines_header(urls: Sequence[str], provider: str | None) -> str:
    """The run header's line on the desktop machines: reverted by a provider, or per ``--env-url`` whether its
    server resets itself between episodes (a guitest desktop) or cannot be reset (OSWorld's, WAA's: the gate then
    refuses to pass on their episodes). Asks each machine ``GET /guitest/info`` (read only, 3 s at most)."""
    if provider:
        return f"guitest machines: desktop-env's {provider} provider reverts its VM to the snapshot before each episode (episodes record reset: reverted)"
    states = {url: _resets(url) for url in dict.fromkeys(urls)}
    cannot = [u for u, r in states.items() if r is False]
    silent = [u for u, r in states.items() if r is None]
    parts = [f"{len(states) - len(cannot) - len(silent)} of {len(states)} reset by guitest's desktop server between episodes"]
    if cannot:
        parts.append(
            f"{len(cannot)} CANNOT BE RESET ({', '.join(map(shown_url, cannot))}): their episodes run in an unknown state "
            "(reset: none) and the gate will not pass on them without --allow-unknown-state; revert VMs with --env-provider"
        )
    if silent:
        parts.append(f"{len(silent)} not answering now ({', '.join(map(shown_url, silent))})")
    return "guitest machines: " + "; ".join(parts)


def _resets(url: str) -> bool | None:
    try:
        return MachineClient(url, retries=0).resets()
    except EnvFailure:  # not a URL at all: its episodes say so, the header only that it does not answer
        return None


def provided_machines(settings: ProviderSettings) -> list[ProvidedMachine]:
    """This process's VMs of ``settings``, ``settings.machines`` of them (each started by the first episode that
    leases it, stopped by :func:`shutdown`: at the end of the session, also an interrupted one)."""
    with _local_lock:
        machines = _provided.get(settings)
        if machines is None:
            machines = _provided[settings] = [ProvidedMachine(settings, i) for i in range(settings.machines)]
        return machines


def _local_desktop() -> str:
    """The URL of this process's local desktop, started on first use (stopped by :func:`shutdown`)."""
    from ..localdesktop.xvfb import DesktopError, start_desktop

    with _local_lock:
        if not _local:
            try:
                _local.append(start_desktop())
            except DesktopError as exc:
                raise EnvFailure(f"cannot start a local desktop: {exc}") from None
        return str(_local[0].url)


def shutdown() -> None:
    """Stop the local desktops and the provider VMs this process started, after ending the waits of episodes still
    running and closing the machine pools (an episode waiting for a machine fails at once); safe to call twice."""
    global _ending
    with _pools_lock:
        ending, _ending = _ending, threading.Event()  # later episodes (a new session in this process) wait again
        pools = list(_pools.values())
        _pools.clear()
    ending.set()
    for each in pools:
        each.close()
    with _local_lock:
        desktops, _local[:] = list(_local), []
        machines = [m for each in _provided.values() for m in each]
        _provided.clear()
    for desktop in desktops:
        desktop.stop()
    if len(machines) > 1:  # a fleet's VMs stop side by side: each may take its provider's stop_timeout
        with concurrent.futures.ThreadPoolExecutor(min(len(machines), 16)) as threads:
            list(threads.map(ProvidedMachine.stop, machines))
    else:
        for machine in machines:
            machine.stop()
