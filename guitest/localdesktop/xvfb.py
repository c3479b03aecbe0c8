"""One local desktop: Xvfb, openbox, a D-Bus session, the accessibility bus, and guitest's protocol server.

:func:`start_desktop` starts them on a free display (from :99 up, or the one asked for) and returns a
:class:`LocalDesktop` whose ``url`` a :class:`~guitest.desktopenv.machine.DesktopEnv` drives; its
:meth:`~LocalDesktop.stop` ends every process the desktop started, the server's applications
included. Every process gets the desktop's marker in its environment (``GUITEST_DESKTOP_ID``), so
stopping also finds what was re-parented away (D-Bus activated services, a browser's helpers): no
orphans. The desktop's home folder is a fresh one (``HOME`` for everything it runs), so tasks never
touch the real home. A state file per display in this user's state folder (:mod:`.state`) lets ``guitest
desktop down`` stop a desktop another process started; it is trusted only after :mod:`.state`'s checks.

The desktop is its owner's alone: its server takes a request only with the desktop's secret (a random token in
the file ``token`` of its folder, mode 0600; :func:`guitest.localdesktop.state.token_for` finds it for this user's
clients), and Xvfb runs with an X authority file (``-auth``, a MIT-MAGIC-COOKIE-1 cookie, mode 0600) that every
process of the desktop gets as ``XAUTHORITY``: another local user can neither send the server commands nor
connect to the display.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field, fields
from typing import Any

from .state import (
    MARKER_VAR,
    DesktopError,
    checked_state_dir,
    inside,
    process_problem,
    read_private,
    remove_state_file,
    state_dir,
    state_files,
    write_private,
)

__all__ = ["DesktopError", "LocalDesktop", "MARKER_VAR", "load_state", "running_desktops", "scan_desktops", "start_desktop", "state_dir"]

FIRST_DISPLAY = 99
HOME_MARK = ".guitest-desktop-home"
AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
REQUIRED = {"Xvfb": "xvfb", "openbox": "openbox", "dbus-daemon": "dbus", "wmctrl": "wmctrl", "xdotool": "xdotool"}
SETUP_HINT = "install the desktop packages as root with `bash tests/setup_desktop.sh` (Debian: apt-get install xvfb openbox xdotool wmctrl x11-utils dbus-x11 at-spi2-core python3-pyatspi python3-tk mousepad xterm)"


def missing_programs() -> list[str]:
    """The Debian packages whose programs the desktop needs and this machine lacks."""
    return sorted({pkg for prog, pkg in REQUIRED.items() if shutil.which(prog) is None})


def server_python_problem(python: str = sys.executable) -> str | None:
    """Why ``python`` cannot run the protocol server (pyautogui, python-xlib and Pillow must import), or None."""
    probe = "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in ('pyautogui', 'Xlib', 'PIL', 'tkinter')) else 3)"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python} cannot run: {exc}"
    if done.returncode != 0:
        return f"{python} lacks pyautogui, python-xlib, Pillow or tkinter: `pip install pyautogui python-xlib` (tkinter: Debian's python3-tk for the system Python's venvs)"
    return None


def _lock_path(number: int) -> str:
    """The lock file an X server on display ``number`` writes its pid into."""
    return f"/tmp/.X{number}-lock"


def _display_busy(number: int) -> bool:
    lock = _lock_path(number)
    if os.path.exists(f"/tmp/.X11-unix/X{number}") and not os.path.exists(lock):
        return True
    if not os.path.exists(lock):
        return False
    pid = _lock_owner(number)
    return True if pid is None else is_alive(pid)


def _lock_owner(number: int) -> int | None:
    """The pid an X server wrote into display ``number``'s lock file (None: no lock, or not readable yet)."""
    try:
        with open(_lock_path(number)) as f:
            return int(f.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def is_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _x_ready(number: int) -> bool:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(0.5)
        sock.connect(f"/tmp/.X11-unix/X{number}")
        return True
    except OSError:
        return False
    finally:
        sock.close()


def marked_pids(marker: str) -> list[int]:
    """The processes of this user whose environment carries ``GUITEST_DESKTOP_ID=marker`` (this desktop's processes;
    root reads every process's environment, and another user's processes are never the desktop's)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    uid = os.getuid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0") and is_alive(int(entry)):
            out.append(int(entry))
    return out


@dataclass
class LocalDesktop:
    """A running desktop: its X ``display`` number, the protocol server's ``url`` and ``port``, its ``home``
    folder inside its own folder ``root``, the ``marker`` in its processes' environment, their ``pids`` by role,
    the file holding its server's secret (``token_file``) and its X authority file (``xauthority``)."""

    display: int
    url: str
    port: int
    home: str
    root: str
    marker: str
    pids: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    startup_seconds: float = 0.0
    token_file: str = ""
    xauthority: str = ""
    #: what loading its state file found and left alone (pids that are no longer the desktop's processes)
    notes: list[str] = field(default_factory=list, repr=False, compare=False)
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False, compare=False)
    _reaper: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    @property
    def state_file(self) -> str:
        return os.path.join(state_dir(), f":{self.display}.json")

    def describe(self) -> dict[str, Any]:
        """The desktop as plain builtins (its state file)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_") and f.name != "notes"}

    def stop(self, grace: float = 3.0) -> None:
        """End the server, the applications, openbox, D-Bus and Xvfb; then anything else carrying the
        desktop's marker; remove its folder and state file. Safe to call twice."""
        order = ["server", "openbox", "at-spi", "dbus", "xvfb"]
        for role in order:
            pid = self.pids.get(role)
            if pid and role != "xvfb":
                _signal_group(pid, signal.SIGTERM)
        _reap(self._procs, [self.pids[r] for r in order[:-1] if r in self.pids], grace)
        for pid in marked_pids(self.marker):
            if pid != self.pids.get("xvfb"):
                _signal_group(pid, signal.SIGTERM, group=False)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and [p for p in marked_pids(self.marker) if p != self.pids.get("xvfb")]:
            time.sleep(0.05)
        for pid in marked_pids(self.marker):
            if pid != self.pids.get("xvfb"):
                _signal_group(pid, signal.SIGKILL, group=False)
        xvfb = self.pids.get("xvfb")
        if xvfb:
            _signal_group(xvfb, signal.SIGTERM)
            _reap(self._procs, [xvfb], grace)
            if is_alive(xvfb):
                _signal_group(xvfb, signal.SIGKILL)
                _reap(self._procs, [xvfb], 1.0)
        for pid in marked_pids(self.marker):  # nothing should be left; if it is, it goes
            _signal_group(pid, signal.SIGKILL, group=False)
        self._procs.clear()
        self.pids.clear()
        if self._reaper is not None:  # nothing is left to reap: let it go
            reaper, self._reaper = self._reaper, None
            assert reaper.stdin is not None
            reaper.stdin.close()
            try:
                reaper.wait(timeout=5)
            except subprocess.TimeoutExpired:
                reaper.kill()
                reaper.wait()
        if inside(self.root, state_dir()):  # only ever a folder of the desktop's own, in this user's state folder
            shutil.rmtree(self.root, ignore_errors=True)
        remove_state_file(self.state_file, self.marker)

    def __enter__(self) -> "LocalDesktop":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(pid: int, sig: int, group: bool = True) -> None:
    try:
        if group:
            os.killpg(pid, sig)  # each component leads its own process group
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(procs: list[subprocess.Popen[bytes]], pids: list[int], grace: float) -> None:
    deadline = time.monotonic() + grace
    for proc in procs:
        if proc.pid in pids:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
    while time.monotonic() < deadline and any(is_alive(p) for p in pids):
        time.sleep(0.05)


def start_desktop(
    display: int | None = None,
    port: int | None = None,
    *,
    size: tuple[int, int] = (1920, 1080),
    depth: int = 24,
    server_python: str | None = None,
    command_timeout: float = 120.0,
    timeout: float = 30.0,
    detach: bool = False,
    reset: bool = True,
) -> LocalDesktop:
    """Start a desktop on ``display`` (the first free one from :99 when None) with its server on ``port``
    (a free one when None) and return it once the server answers. DesktopError naming what is missing
    (packages, the server's Python modules) or what failed to start; nothing is left running then.
    ``detach``: the processes outlive this one (``guitest desktop up``); else :meth:`LocalDesktop.stop`
    ends them, and a reaper (:mod:`.reaper`) does if this process dies first. ``reset`` False: the server
    has no ``/guitest/reset`` (episodes keep what earlier ones left, as on OSWorld's server)."""
    missing = missing_programs()
    if missing:
        raise DesktopError(f"the local desktop needs {', '.join(missing)}: {SETUP_HINT}")
    python = server_python or sys.executable
    problem = server_python_problem(python)
    if problem:
        raise DesktopError(f"the desktop server cannot run: {problem}")
    checked_state_dir(create=True)  # an unsafe state folder is refused before anything starts
    began = time.monotonic()
    marker = uuid.uuid4().hex
    candidates = [display] if display is not None else list(range(FIRST_DISPLAY, FIRST_DISPLAY + 100))
    last_error = ""
    for number in candidates:
        if _display_busy(number):
            last_error = f"display :{number} is in use"
            continue
        try:
            desktop = _try_start(number, port, marker, size, depth, python, command_timeout, timeout, began, reset)
        except BaseException:
            _stop_marked(marker)  # an interrupted start leaves nothing running
            raise
        if isinstance(desktop, LocalDesktop):
            if detach:
                desktop._procs.clear()  # another process stops it (by pid and marker)
            else:
                desktop._reaper = subprocess.Popen(
                    [python, "-m", "guitest.localdesktop.reaper", marker, desktop.root, desktop.state_file],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            return desktop
        last_error = desktop
        if not last_error.startswith("display busy"):
            break
    raise DesktopError(f"cannot start a local desktop: {last_error}")


def _try_start(
    number: int,
    port: int | None,
    marker: str,
    size: tuple[int, int],
    depth: int,
    python: str,
    command_timeout: float,
    timeout: float,
    began: float,
    reset: bool = True,
) -> LocalDesktop | str:
    """The started desktop, or why it did not start (``display busy ...`` when another X server won the race)."""
    desktop, runtime = _new_desktop(number, marker)
    launch = _Launch(desktop, _environment(desktop, runtime))
    try:
        info = launch.run(port, size, depth, python, command_timeout, timeout, reset)
    except OSError as exc:
        desktop.stop()
        return f"cannot run a desktop program: {exc}"
    finally:
        launch.log.close()
    if isinstance(info, str):
        return info
    desktop.port = int(info["port"])
    desktop.url = f"http://127.0.0.1:{desktop.port}"
    desktop.startup_seconds = time.monotonic() - began
    write_private(desktop.state_file, json.dumps(desktop.describe(), indent=1).encode())
    return desktop


def _new_desktop(number: int, marker: str) -> tuple[LocalDesktop, str]:
    """A desktop for display ``number``, not started yet, in a new folder of its own under the state folder (its home,
    the X authority file, the server's secret), and its runtime folder."""
    folder = checked_state_dir(create=True)
    assert folder is not None
    root = tempfile.mkdtemp(prefix=f"desktop-{number}-", dir=folder)  # mode 0700
    home = os.path.join(root, "home")
    for sub in ("Desktop", "Documents", "Downloads"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    open(os.path.join(home, HOME_MARK), "w").close()
    runtime = os.path.join(root, "runtime")  # sockets (the accessibility bus, dconf) live here, not in the home folder a reset empties
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    xauthority = os.path.join(root, "Xauthority")  # the display's cookie: Xvfb -auth, XAUTHORITY for its clients
    write_private(xauthority, xauthority_bytes(number, secrets.token_bytes(16)))
    token_file = os.path.join(root, "token")  # the server's secret: read from this file, never on a command line
    write_private(token_file, secrets.token_urlsafe(32).encode() + b"\n")
    desktop = LocalDesktop(
        display=number,
        url="",
        port=0,
        home=home,
        root=root,
        marker=marker,
        started=time.time(),
        token_file=token_file,
        xauthority=xauthority,
    )
    return desktop, runtime


def _environment(desktop: LocalDesktop, runtime: str) -> dict[str, str]:
    """The environment of every process of ``desktop``: this one's, but its display, home, runtime folder, X authority
    and marker, without another session's bus."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DBUS_", "XDG_RUNTIME", "WAYLAND"))},
        "DISPLAY": f":{desktop.display}",
        "HOME": desktop.home,
        "XDG_RUNTIME_DIR": runtime,
        "XAUTHORITY": desktop.xauthority,
        MARKER_VAR: desktop.marker,
        "LANG": os.environ.get("LANG") or "C.UTF-8",
    }
    env.pop("SESSION_MANAGER", None)
    return env


class _Launch:
    """A desktop's processes started one after the other, each waited for; what did not start stops the desktop."""

    def __init__(self, desktop: LocalDesktop, env: dict[str, str]) -> None:
        self.desktop = desktop
        self.env = env
        self.log = open(os.path.join(desktop.root, "desktop.log"), "ab")

    def spawn(self, role: str, argv: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=kw.pop("stdout", self.log), stderr=self.log, start_new_session=True, cwd=self.desktop.home, **kw)
        self.desktop._procs.append(proc)
        self.desktop.pids[role] = proc.pid
        return proc

    def failed(self, why: str) -> str:
        """Stop the desktop; ``why``."""
        self.desktop.stop()
        return why

    def run(self, port: int | None, size: tuple[int, int], depth: int, python: str, command_timeout: float, timeout: float, reset: bool) -> dict[str, Any] | str:
        """Start Xvfb, D-Bus, the accessibility bus, openbox and the server: the server's ready file once each answers,
        or why one did not start (the desktop stopped)."""
        number, w, h = self.desktop.display, *size
        xvfb = self.spawn("xvfb", ["Xvfb", f":{number}", "-screen", "0", f"{w}x{h}x{depth}", "-nolisten", "tcp", "-noreset", "-auth", self.desktop.xauthority])
        deadline = time.monotonic() + timeout
        why = self.wait_for_xvfb(xvfb, deadline, timeout)
        if why is not None:
            return why
        bus = self.spawn("dbus", ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"], stdout=subprocess.PIPE)
        address = _read_line(bus, timeout)
        if not address:
            return self.failed("dbus-daemon did not print its address")
        self.env["DBUS_SESSION_BUS_ADDRESS"] = address
        if os.path.exists(AT_SPI_LAUNCHER):
            self.spawn("at-spi", [AT_SPI_LAUNCHER, "--launch-immediately"])
        self.spawn("openbox", ["openbox", "--sm-disable"])
        ready_file = os.path.join(self.desktop.root, "server.json")
        self.spawn("server", _server_argv(self.desktop, python, port, ready_file, command_timeout, reset))
        info = self.wait_for_server(ready_file, deadline, timeout)
        if isinstance(info, str):
            return info
        while subprocess.run(["wmctrl", "-m"], env=self.env, capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                return self.failed(f"openbox did not start within {timeout:g} s")
            time.sleep(0.05)
        return info

    def wait_for_xvfb(self, xvfb: subprocess.Popen[bytes], deadline: float, timeout: float) -> str | None:
        """None once the display answers and its lock is this Xvfb's, else why not (the desktop stopped): two processes
        that found the display free at once both start an Xvfb on it, and the loser's first connection may reach the
        winner's server before the loser's Xvfb sees the lock and exits (both desktops' episodes would then share one
        screen)."""
        number = self.desktop.display
        while True:
            owner = _lock_owner(number)
            if owner == xvfb.pid and _x_ready(number):
                return None
            if owner is not None and owner != xvfb.pid and is_alive(owner):
                return self.failed(f"display busy: :{number} is held by another X server (pid {owner})")
            if xvfb.poll() is not None:
                self.desktop.stop()
                return f"display busy: Xvfb :{number} exited with {xvfb.returncode} (see the log)" if _display_busy(number) else f"Xvfb :{number} exited with {xvfb.returncode}"
            if time.monotonic() > deadline:
                return self.failed(f"Xvfb :{number} did not accept connections within {timeout:g} s")
            time.sleep(0.02)

    def wait_for_server(self, ready_file: str, deadline: float, timeout: float) -> dict[str, Any] | str:
        """The server's ready file once it wrote it whole, else why not (the desktop stopped)."""
        while True:
            if os.path.exists(ready_file):
                try:
                    info: dict[str, Any] = json.load(open(ready_file))
                    return info
                except ValueError:
                    pass  # written as we read; the next poll sees it whole
            server = self.desktop._procs[-1]
            if server.poll() is not None:
                return self.failed(f"the desktop server exited with {server.returncode}: {_log_tail(self.desktop.root)}")
            if time.monotonic() > deadline:
                return self.failed(f"the desktop server did not start within {timeout:g} s")
            time.sleep(0.02)


def _server_argv(desktop: LocalDesktop, python: str, port: int | None, ready_file: str, command_timeout: float, reset: bool) -> list[str]:
    """The protocol server's command line for ``desktop``."""
    return [
        python,
        "-m",
        "guitest.localdesktop.server",
        "--display",
        f":{desktop.display}",
        "--port",
        str(port or 0),
        "--home",
        desktop.home,
        "--ready-file",
        ready_file,
        "--command-timeout",
        str(command_timeout),
        "--token-file",
        desktop.token_file,
        *(() if reset else ("--no-reset",)),
    ]


FAMILY_LOCAL, FAMILY_WILD = 256, 65535
COOKIE_NAME = b"MIT-MAGIC-COOKIE-1"


def xauthority_bytes(display: int, cookie: bytes) -> bytes:
    """An X authority file granting the MIT-MAGIC-COOKIE-1 ``cookie`` on ``display`` (Xauthority's format: per
    entry a 16-bit family, then address, display number, scheme name and cookie, each a 16-bit length and bytes).
    Two entries: this host's local connections (what python-xlib looks up) and any address (FamilyWild, which
    libXau, behind xdotool, wmctrl and Pillow's grab, also matches)."""

    def counted(data: bytes) -> bytes:
        return struct.pack(">H", len(data)) + data

    number = str(display).encode()
    return b"".join(
        struct.pack(">H", family) + counted(address) + counted(number) + counted(COOKIE_NAME) + counted(cookie)
        for family, address in ((FAMILY_LOCAL, socket.gethostname().encode()), (FAMILY_WILD, b""))
    )


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        if not sel.select(timeout):
            return ""
        return proc.stdout.readline().decode().strip()
    finally:
        sel.close()


def _log_tail(root: str, lines: int = 5) -> str:
    try:
        with open(os.path.join(root, "desktop.log"), errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_marked(marker: str) -> None:
    for pid in marked_pids(marker):
        _signal_group(pid, signal.SIGKILL, group=False)


ROLES = ("xvfb", "dbus", "at-spi", "openbox", "server")


def load_state(display: int) -> LocalDesktop | None:
    """The desktop of this user's state file for ``display`` (started by any process of this user), or None when
    there is none. DesktopError when the state folder or the file cannot be trusted (:func:`verified`)."""
    folder = checked_state_dir()
    return None if folder is None else verified(display, os.path.join(folder, f":{display}.json"), folder)


def verified(display: int, path: str, folder: str) -> LocalDesktop | None:
    """The desktop state file ``path`` describes, once it passed the checks: a private file of this user's, its
    paths strictly inside ``folder``, its marker guitest's. Its pids are kept only while each is this user's
    process of its role for this display with the marker (:func:`guitest.localdesktop.state.process_problem`); the others
    are left alone and said in ``notes``. None when the file is gone; DesktopError naming what is wrong otherwise."""

    def refused(why: str) -> DesktopError:
        return DesktopError(f"refusing the state file {path}: {why}; nothing was stopped or removed. If no desktop :{display} of yours runs, remove the file (`rm {path}`)")

    try:
        raw = read_private(path, secret=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise refused(f"it cannot be read ({exc})") from None
    except DesktopError as exc:
        raise refused(str(exc)) from None
    try:
        data = json.loads(raw)
    except ValueError:
        raise refused("it is not JSON") from None
    problem = _state_problem(data, display, folder)
    if problem is not None:
        raise refused(problem)
    numbers = {k: data[k] for k in ("started", "startup_seconds") if isinstance(data.get(k), (int, float))}
    desktop = LocalDesktop(
        display=display,
        url=data["url"],
        port=data["port"],
        home=data["home"],
        root=data.get("root", ""),
        marker=data["marker"],
        token_file=data.get("token_file", ""),
        xauthority=data.get("xauthority", ""),
        **numbers,
    )
    for role, pid in data["pids"].items():
        if not is_alive(pid):
            continue  # gone: nothing to stop
        problem = process_problem(pid, role, display, desktop.marker)
        if problem:
            desktop.notes.append(f"pid {pid} ({role}) left alone: {problem}")
        else:
            desktop.pids[role] = pid
    return desktop


def _state_problem(data: Any, display: int, folder: str) -> str | None:
    """What makes ``data`` not the state of a desktop ``display`` of this user's (see :func:`verified`), or None."""
    if not isinstance(data, dict):
        return "it is not a JSON object"
    strings = ("url", "home", "root", "marker", "token_file", "xauthority")
    if data.get("display") != display or not all(isinstance(data.get(k, ""), str) for k in strings):
        return f"it is not the state of a desktop :{display}"
    port, pids = data.get("port"), data.get("pids")
    if not isinstance(port, int) or not 0 < port < 65536 or data.get("url") != f"http://127.0.0.1:{port}":
        return "its port and URL are not a local desktop server's"
    if not isinstance(pids, dict) or not all(r in ROLES and isinstance(p, int) and p > 0 for r, p in pids.items()):
        return f"its pids are not {{role: pid}} with roles among {', '.join(ROLES)}"
    if not re.fullmatch(r"[0-9a-f]{32}", data.get("marker", "")):
        return "its marker is not one guitest makes"
    root = data.get("root", "")
    if not inside(root, folder):
        return f"its folder {root!r} is not inside the state folder {folder}"
    if data.get("home") != os.path.join(root, "home"):
        return f"its home {data.get('home')!r} is not {os.path.join(root, 'home')}"
    for key in ("token_file", "xauthority"):
        if data.get(key) and not inside(data[key], root):
            return f"its {key} {data[key]!r} is not inside its folder {root}"
    return None


def scan_desktops() -> tuple[list[LocalDesktop], list[str]]:
    """Every desktop with a state file in this user's state folder, by display number, and why each refused state
    file was refused (:func:`verified`). DesktopError when the state folder itself cannot be trusted."""
    folder = checked_state_dir()
    desktops: list[LocalDesktop] = []
    refused: list[str] = []
    for display, path in state_files(folder) if folder else []:
        try:
            desktop = verified(display, path, folder)  # type: ignore[arg-type]
        except DesktopError as exc:
            refused.append(str(exc))
            continue
        if desktop is not None:
            desktops.append(desktop)
    return desktops, refused


def running_desktops() -> list[LocalDesktop]:
    """Every desktop with a trusted state file, by display number (:func:`scan_desktops` without the refusals)."""
    return scan_desktops()[0]
