"""The state folder of this user's local desktops, the files in it only this user may read, and the checks that a
process a state file names is this user's desktop.

``/tmp/guitest-desktops-<uid>`` (under :func:`tempfile.gettempdir`, so ``TMPDIR`` moves it) holds, per desktop,
its state file ``:N.json`` (what ``guitest desktop down`` stops) and its own folder ``desktop-N-XXXXXXXX/``
(home, runtime sockets, log, the server's secret ``token``, the X authority ``Xauthority``). The folder's name is
predictable and ``/tmp`` is shared, so it is trusted only when it is this user's own: a real folder (not a symbolic
link, checked with :func:`os.lstat`), owned by this uid, writable by nobody else. guitest makes it with mode 0700
and refuses any other (:func:`checked_state_dir`); a state file's paths must lie strictly inside it and its pids
must be processes of this uid with the desktop's marker and command line (:func:`process_problem`) before
anything is signalled or removed. Files in it are written with mode 0600 (:func:`write_private`) and read only
when this uid owns them and nobody else can write them, nor read the secret ones (:func:`read_private`).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import uuid

from ..errors import GuitestError

MARKER_VAR = "GUITEST_DESKTOP_ID"
TOKEN_VAR = "GUITEST_DESKTOP_TOKEN"
#: the hosts a guitest desktop server can be reached at (it binds 127.0.0.1 only): its secret goes nowhere else
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_PRIVATE = 1 << 20
#: a desktop's processes by role: the program (the basename of its argv[0]) each must be
PROGRAMS = {"xvfb": "Xvfb", "dbus": "dbus-daemon", "at-spi": "at-spi-bus-launcher", "openbox": "openbox"}
SERVER_MODULE = "guitest.localdesktop.server"


class DesktopError(GuitestError):
    """The local desktop cannot start or stop; the message says what is missing or what failed."""


def state_dir() -> str:
    """The path of this user's desktop state folder (unchecked: :func:`checked_state_dir` before using it)."""
    return os.path.join(tempfile.gettempdir(), f"guitest-desktops-{os.getuid()}")


def checked_state_dir(create: bool = False) -> str | None:
    """This user's state folder once it is safe to trust (made with mode 0700 when ``create``; None when it does
    not exist and ``create`` is False). DesktopError saying what is wrong and what to do when it is a symbolic
    link, not a folder, another user's, or writable by group or others. A folder of this user's with a wider
    mode (an older guitest made it 0755) is narrowed to 0700."""
    path = state_dir()
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise DesktopError(f"cannot make the desktop state folder {path}: {exc}") from None
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DesktopError(f"cannot read the desktop state folder {path}: {exc}") from None
    problem = folder_problem(info)
    if problem:
        raise DesktopError(
            f"refusing the desktop state folder {path}: {problem} (owner {_user(info.st_uid)}, mode {stat.S_IMODE(info.st_mode):04o}); "
            "another user could plant state files there that make guitest stop their processes or remove their folders. "
            f"Look at what is in it, remove it as its owner or root (`rm -rf {path}`) and let guitest make it again, "
            "or set TMPDIR to a folder of your own"
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def folder_problem(info: os.stat_result, owner: int | None = None) -> str | None:
    """Why a folder with :func:`os.lstat` result ``info`` cannot be the state folder of the user ``owner`` (default: this
    user), or None."""
    owner = os.getuid() if owner is None else owner
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != owner:
        return f"it belongs to {_user(info.st_uid)}, not to {'you' if owner == os.getuid() else 'its user'} ({_user(owner)})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "group or others may write in it"
    return None


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` lies strictly inside ``folder`` (both resolved: symbolic links and ``..`` cannot lead out)."""
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real != base and os.path.commonpath([real, base]) == base


def write_private(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by this user only (mode 0600): a new file, never through a symbolic
    link, moved into place whole."""
    tmp = f"{path}.{uuid.uuid4().hex[:8]}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def read_private(path: str, secret: bool = True, owner: int | None = None) -> bytes:
    """The bytes of ``path`` when it is a regular file of the user ``owner`` (default: this user) that nobody else may
    write (nor read, for a ``secret``), not followed through a symbolic link; DesktopError otherwise, OSError when it
    cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != (os.getuid() if owner is None else owner) or info.st_mode & (0o077 if secret else 0o022):
            raise DesktopError(f"{path} is not a private file of yours (owner {_user(info.st_uid)}, mode {stat.S_IMODE(info.st_mode):04o})")
        return f.read(MAX_PRIVATE)


def remove_state_file(path: str, marker: str) -> None:
    """Remove the state file ``path`` if it is the desktop with ``marker``'s: a start that lost the race for a
    display, or a reaper coming late, must not remove the state file of the desktop that holds the display now."""
    try:
        data = json.loads(read_private(path, secret=False))
    except (OSError, ValueError, DesktopError):
        return
    if isinstance(data, dict) and data.get("marker") == marker:
        try:
            os.remove(path)
        except OSError:
            pass


def state_files(folder: str) -> list[tuple[int, str]]:
    """The ``(display, path)`` of each state file ``:N.json`` in ``folder``, by display number."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted((int(n[1:-5]), os.path.join(folder, n)) for n in names if n.startswith(":") and n.endswith(".json") and n[1:-5].isdigit())


def token_for(host: str, port: int) -> str | None:
    """The secret of this user's guitest desktop serving ``http://host:port``: read from its token file, found
    through its state file in the (checked) state folder; None when ``host`` is not a loopback address, the
    folder is missing or unsafe, or no desktop of this user serves that port. Root also finds the desktop of
    another user (``guitest desktop up --user NAME``): in that user's state folder under ``/tmp``, checked as that
    user's own (root may read any file; nothing of root's goes to the desktop)."""
    if host not in LOOPBACK:
        return None
    try:
        folder = checked_state_dir()
    except DesktopError:
        folder = None
    folders = [(folder, os.getuid())] if folder else []
    if os.getuid() == 0:
        folders += users_state_dirs()
    for each, owner in folders:
        token = _token_in(each, owner, port)
        if token is not None:
            return token
    return None


def users_state_dirs(parent: str = "/tmp") -> list[tuple[str, int]]:
    """The state folders of users other than this one in ``parent``, with their uid, each trusted only when it is
    its user's alone (:func:`folder_problem`)."""
    found = []
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    for name in sorted(names):
        number = name[len("guitest-desktops-") :]
        if not name.startswith("guitest-desktops-") or not number.isdigit() or int(number) == os.getuid():
            continue
        path = os.path.join(parent, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if folder_problem(info, int(number)) is None:
            found.append((path, int(number)))
    return found


def _token_in(folder: str, owner: int, port: int) -> str | None:
    """The secret of the desktop serving ``port`` whose state file is in ``folder`` (the user ``owner``'s)."""
    for _, path in state_files(folder):
        try:
            data = json.loads(read_private(path, secret=False, owner=owner))
        except (OSError, ValueError, DesktopError):
            continue
        if not isinstance(data, dict) or data.get("port") != port:
            continue
        token_file = data.get("token_file")
        if not isinstance(token_file, str) or not inside(token_file, folder):
            continue
        try:
            return read_private(token_file, owner=owner).decode("utf-8").strip() or None
        except (OSError, UnicodeDecodeError, DesktopError):
            return None
    return None


def process_owner(pid: int) -> int | None:
    """The uid process ``pid`` runs as, None when there is no such process."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def command_line(pid: int) -> list[str]:
    """Process ``pid``'s own argv (from ``/proc/PID/cmdline``; empty when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return []


def has_marker(pid: int, marker: str) -> bool:
    """Whether process ``pid``'s environment carries ``GUITEST_DESKTOP_ID=marker``."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f"{MARKER_VAR}={marker}".encode() in f.read().split(b"\0")
    except OSError:
        return False


def process_problem(pid: int, role: str, display: int, marker: str) -> str | None:
    """Why live process ``pid`` is not the ``role`` process of this user's desktop ``:display`` with ``marker``
    (its owner, its marker, its own command line: Xvfb ``:display``, guitest's server for ``--display :display``,
    the role's program), or None when it is."""
    owner = process_owner(pid)
    if owner != os.getuid():
        return f"it runs as {_user(owner) if owner is not None else 'nobody known'}, not as you"
    argv = command_line(pid)
    shown = " ".join(argv)[:120] or "(unreadable)"
    if role == "server":
        at = argv.index("--display") if "--display" in argv else -1
        ok = SERVER_MODULE in argv and 0 <= at < len(argv) - 1 and argv[at + 1] == f":{display}"
        wanted = f"guitest's desktop server for :{display}"
    elif role in PROGRAMS:
        ok = bool(argv) and os.path.basename(argv[0]) == PROGRAMS[role] and (role != "xvfb" or argv[1:2] == [f":{display}"])
        wanted = f"{PROGRAMS[role]}" + (f" :{display}" if role == "xvfb" else "")
    else:
        return f"{role!r} is not a role of a desktop's processes"
    if not ok:
        return f"its command line is {shown!r}, not {wanted}"
    if not has_marker(pid, marker):
        return "it does not carry the desktop's marker"
    return None
