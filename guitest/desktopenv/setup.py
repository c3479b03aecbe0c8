"""A task's set-up steps (OSWorld's ``config`` and the evaluator's ``postconfig``), run over the machine protocol.

Each step is ``{"type": T, "parameters": {...}}`` and does what OSWorld's ``SetupController._T_setup``
does, through the same endpoints:

================  ========================================  =========================================================
type              parameters                                what guitest does
================  ========================================  =========================================================
download          ``files: [{url, path}]``                  fetch ``url`` here (cached; ``http(s)``, ``file://`` or a
                                                            local path) and upload it to ``path`` (``/setup/upload``)
upload_file       ``files: [{local_path, path}]``           upload a local file (relative to the task file)
launch            ``command``, ``shell``                    ``/setup/launch`` (starts it, does not wait)
open              ``path``                                  ``/setup/open_file``
execute, command  ``command``, ``shell``, ``until``,        ``/setup/execute``, repeated until ``until`` holds
                  ``stdout``, ``stderr``                    (``returncode``/``stdout``/``stderr``; at most 60 s)
activate_window   ``window_name``, ``strict``, ``by_class``  ``/setup/activate_window``
close_window      ``window_name``, ``strict``, ``by_class``  ``/setup/close_window``
sleep             ``seconds``                               wait here
create_folder     ``path``                                  ``python -c os.makedirs(path)`` on the machine (WAA)
================  ========================================  =========================================================

As in OSWorld (``desktop_env/controllers/setup.py``), a failed download, upload or open fails the set-up
(an :class:`~guitest.live.protocol.EnvFailure` naming the step), while an HTTP error answer to execute,
launch, activate_window or close_window is noted and the set-up goes on (an ``execute`` with ``until``
asks again, and gives up after :data:`EXECUTE_FAILURES` error answers, as ``_execute_setup`` does). A
machine that stops answering always fails it (where OSWorld logs that too and goes on: the episode could
only fail later). ``open`` waits up to :data:`OPEN_FILE_TIMEOUT` for the answer, OSWorld's client timeout
(the server waits up to 1800 s for the file's window); no answer in that time fails the step without
taking the machine out of its pool. Steps of other types
(browser tabs through the DevTools port, Windows registry edits, ...) are not implemented:
:func:`unsupported_steps` names them, so a reader can mark such a task before it runs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..live.protocol import EnvFailure
from ..printable import printable
from .client import COMMAND_TIMEOUT, TIMEOUT, MachineClient, MachineFailure

SUPPORTED_STEPS = (
    "download",
    "upload_file",
    "launch",
    "open",
    "execute",
    "command",
    "activate_window",
    "close_window",
    "sleep",
    "create_folder",
)
UNTIL_LIMIT = 60.0
DOWNLOAD_TIMEOUT = 120.0
#: OSWorld's client timeout for ``/setup/open_file`` (controllers/setup.py ``_open_setup``: "slightly longer than
#: the server's timeout (1800s)", the time its server waits for the opened file's window)
OPEN_FILE_TIMEOUT = 1810.0
#: error answers after which an ``execute`` step with ``until`` gives up and the set-up goes on (``_execute_setup``),
#: asking again this many seconds apart
EXECUTE_FAILURES = 5
RETRY_INTERVAL = 0.3


def default_download_cache() -> str:
    """Where downloaded task files are kept between runs (``$XDG_CACHE_HOME/guitest/downloads``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "guitest", "downloads")


def unsupported_steps(steps: Sequence[Any]) -> list[str]:
    """The types of ``steps`` guitest cannot run, in order, each once."""
    out: list[str] = []
    for step in steps or ():
        kind = step.get("type") if isinstance(step, dict) else None
        if kind not in SUPPORTED_STEPS and str(kind) not in out:
            out.append(str(kind))
    return out


def fetch(url: str, cache_dir: str, name: str = "") -> str:
    """A local copy of ``url`` (``http(s)://``, ``file://`` or a local path), downloaded once into ``cache_dir``.

    EnvFailure saying what to do when it cannot be had (no network here, a missing file).
    """
    if url.startswith("file://"):
        url = urllib.request.url2pathname(url[len("file://") :])
    if "://" not in url:
        if not os.path.isfile(url):
            raise EnvFailure(f"task file {url} does not exist (a download/cloud_file path is relative to its task file)")
        return url
    os.makedirs(cache_dir, exist_ok=True)
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    path = os.path.join(cache_dir, f"{digest}_{os.path.basename(name) or os.path.basename(url.split('?')[0]) or 'file'}")
    if os.path.isfile(path):
        return path
    partial = f"{path}.{os.getpid()}.part"
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as resp, open(partial, "wb") as out:  # noqa: S310 - task URLs
            shutil.copyfileobj(resp, out)
        os.replace(partial, path)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if os.path.exists(partial):
            os.remove(partial)
        raise EnvFailure(f"cannot download {url}: {exc}. The task needs it; give this machine internet access, or put a copy at {path}") from None
    return path


@dataclass
class SetupRun:
    """What one run of steps did: ``notes`` on steps that answered with an error but do not fail the set-up."""

    notes: list[str] = field(default_factory=list)


Screen = tuple[int, int]


def run_steps(
    steps: Sequence[dict[str, Any]],
    machine: MachineClient,
    *,
    phase: str = "config",
    cache_dir: str | None = None,
    work_dir: str | None = None,
    screen: Screen | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> SetupRun:
    """Run ``steps`` in order on ``machine``; EnvFailure naming the phase, step number and type when one fails.

    ``cache_dir``: where downloads are kept (default :func:`default_download_cache`); ``work_dir``: the
    episode's folder (``execute`` steps' ``stdout``/``stderr`` files go there, for ``cache_file`` getters);
    ``screen``: the machine's screen size, for OSWorld's ``{SCREEN_WIDTH}``-style placeholders.
    """
    run = SetupRun()
    for number, step in enumerate(steps or (), 1):
        kind = step.get("type")
        params = step.get("parameters") or {}
        where = f"{phase} step {number} ({kind})"
        handler = _STEPS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            raise EnvFailure(f"{where}: guitest does not implement this set-up step (it implements {', '.join(SUPPORTED_STEPS)})")
        if not isinstance(params, dict):
            raise EnvFailure(f"{where}: parameters must be a mapping, got {type(params).__name__}")
        ctx = _Context(machine, cache_dir or default_download_cache(), work_dir, screen, sleep, run, where)
        try:
            handler(ctx, **params)
        except MachineFailure as exc:
            raise exc.within(where) from None
        except EnvFailure as exc:
            if str(exc).startswith(where):
                raise
            raise EnvFailure(f"{where}: {exc}") from None
        except TypeError as exc:
            raise EnvFailure(f"{where}: bad parameters {sorted(params)}: {exc}") from None
    return run


@dataclass
class _Context:
    machine: MachineClient
    cache_dir: str
    work_dir: str | None
    screen: Screen | None
    sleep: Callable[[float], None]
    run: SetupRun
    where: str

    def fail(self, message: str) -> EnvFailure:
        return EnvFailure(f"{self.where}: {message}")


def _download(ctx: _Context, files: list[dict[str, str]]) -> None:
    for entry in files:
        url, path = entry.get("url"), entry.get("path")
        if not url or not path:
            raise ctx.fail(f"each file needs a url and a path, got {sorted(entry)}")
        local = fetch(url, ctx.cache_dir, os.path.basename(path.replace("\\", "/")))
        with open(local, "rb") as f:
            ctx.machine.upload(path, f.read())


def _upload_file(ctx: _Context, files: list[dict[str, str]]) -> None:
    for entry in files:
        local, path = entry.get("local_path"), entry.get("path")
        if not local or not path:
            raise ctx.fail(f"each file needs a local_path and a path, got {sorted(entry)}")
        if not os.path.isfile(local):
            raise ctx.fail(f"local file {local} does not exist")
        with open(local, "rb") as f:
            ctx.machine.upload(path, f.read())


def _noted(ctx: _Context, endpoint: str, payload: dict[str, Any]) -> None:
    """A set-up call whose error answer is noted, not fatal (OSWorld logs it and goes on)."""
    reply = ctx.machine.setup_call(endpoint, payload)
    if reply.status != 200:
        ctx.run.notes.append(f"{ctx.where}: HTTP {reply.status}: {printable(reply.text()[:200])}")


def _launch(ctx: _Context, command: list[str] | str, shell: bool = False) -> None:
    if not command:
        raise ctx.fail("empty command")
    if isinstance(command, str) and not shell:
        command = command.split()  # what OSWorld does with a string and shell false
    _noted(ctx, "launch", {"command": command, "shell": shell})


def _open(ctx: _Context, path: str) -> None:
    if not path:
        raise ctx.fail("empty path")
    try:
        reply = ctx.machine.setup_call("open_file", {"path": path}, timeout=OPEN_FILE_TIMEOUT)
    except MachineFailure as exc:
        if exc.kind != TIMEOUT:
            raise
        # the server is waiting for a window that never came: the machine itself is not gone
        raise MachineFailure(COMMAND_TIMEOUT, exc.url, exc.request, f"{exc.detail} (the server waits for the opened file's window)") from None
    if reply.status != 200:
        raise ctx.fail(f"cannot open {path}: HTTP {reply.status}: {printable(reply.text()[:200])}")


def _placeholders(ctx: _Context, value: str) -> str:
    if ctx.screen:
        w, h = ctx.screen
        for name, number in (("SCREEN_WIDTH_HALF", w // 2), ("SCREEN_HEIGHT_HALF", h // 2), ("SCREEN_WIDTH", w), ("SCREEN_HEIGHT", h)):
            value = value.replace("{" + name + "}", str(number))
    return value.replace("{CLIENT_PASSWORD}", os.environ.get("GUITEST_CLIENT_PASSWORD", ""))


def _execute(
    ctx: _Context,
    command: list[str] | str,
    stdout: str = "",
    stderr: str = "",
    shell: bool = False,
    until: dict[str, Any] | None = None,
) -> None:
    if not command:
        raise ctx.fail("empty command")
    command = _placeholders(ctx, command) if isinstance(command, str) else [_placeholders(ctx, str(c)) for c in command]
    deadline = time.monotonic() + UNTIL_LIMIT
    failures = 0
    while True:
        try:
            result = ctx.machine.execute(command, shell=shell, setup=True)
        except MachineFailure as exc:
            if exc.status is None:  # no answer at all: the machine is gone
                raise
            failures += 1
            if not until or failures >= EXECUTE_FAILURES:
                ctx.run.notes.append(f"{ctx.where}: {exc.detail}; the set-up went on, as OSWorld's does")
                return
            ctx.sleep(RETRY_INTERVAL)
            continue
        for name, key in ((stdout, "output"), (stderr, "error")):
            if name and ctx.work_dir:
                with open(os.path.join(ctx.work_dir, os.path.basename(name)), "w", encoding="utf-8") as f:
                    f.write(result[key])
        if not until:
            return
        if (
            ("returncode" in until and result["returncode"] == until["returncode"])
            or ("stdout" in until and until["stdout"] in result["output"])
            or ("stderr" in until and until["stderr"] in result["error"])
        ):
            return
        if time.monotonic() > deadline:
            raise ctx.fail(f"the command did not reach {until} within {UNTIL_LIMIT:g} s (last returncode {result['returncode']})")
        ctx.sleep(RETRY_INTERVAL)


def _window(endpoint: str) -> Callable[..., None]:
    def step(ctx: _Context, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        if not window_name:
            raise ctx.fail("empty window_name")
        _noted(ctx, endpoint, {"window_name": window_name, "strict": strict, "by_class": by_class})

    return step


def _sleep(ctx: _Context, seconds: float) -> None:
    ctx.sleep(float(seconds))


def _create_folder(ctx: _Context, path: str) -> None:
    if not path:
        raise ctx.fail("empty path")
    result = ctx.machine.execute(["python", "-c", f"import os; os.makedirs(os.path.expanduser({path!r}), exist_ok=True)"], setup=True)
    if result["returncode"] not in (0, None):
        raise ctx.fail(f"cannot create {path}: {result['error'][-200:]}")


_STEPS: dict[str, Callable[..., None]] = {
    "download": _download,
    "upload_file": _upload_file,
    "launch": _launch,
    "open": _open,
    "execute": _execute,
    "command": _execute,
    "activate_window": _window("activate_window"),
    "close_window": _window("close_window"),
    "sleep": _sleep,
    "create_folder": _create_folder,
}
