"""The local desktop is its owner's alone, tried as another local user would (issue 25, items 1 and 2).

The tests run as root (here and in CI); ``nobody`` plays the other local user (``setpriv --reuid=nobody``). Before:
``nobody`` ran ``id`` through the desktop server and got ``uid=0(root)``, connected to the display with xdpyinfo and
moved the pointer with xdotool; and a state file planted in the state folder made ``guitest desktop down --all``
signal processes and remove a folder of the planter's choosing. Now the server answers 401/403 without the
desktop's secret, the secret and the display's cookie are files only the owner reads, the display refuses clients
without the cookie, and ``down`` acts only on state files and processes that are this user's desktop's.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from guitest.desktopenv import commands as cli
from guitest.localdesktop.xvfb import DesktopError, start_desktop
from guitest.desktopenv.client import MachineClient

AS_ROOT = pytest.mark.skipif(os.getuid() != 0, reason="playing another local user (nobody) needs root, as in CI")
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
SYSTEM_PYTHON = "/usr/bin/python3"  # nobody cannot run the test's own Python (a root-only folder)


def as_nobody(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NOBODY, *argv], cwd="/", env={"PATH": "/usr/bin:/bin", **(env or {})}, capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def desktop() -> Iterator[object]:
    from test_desktop_real import _skip_or_fail  # noqa: F401 - importing it skips (or fails, GUITEST_REQUIRE_DESKTOP) without the packages

    with start_desktop(command_timeout=4.0) as d:
        yield d


EXECUTE_ID = """
import sys, urllib.error, urllib.request
headers = {"Content-Type": "application/json", **({"Authorization": sys.argv[2]} if len(sys.argv) > 2 else {})}
request = urllib.request.Request(sys.argv[1] + "/execute", data=b'{"command": ["id"], "shell": false}', headers=headers, method="POST")
try:
    with urllib.request.urlopen(request, timeout=10) as reply:
        print(reply.status, reply.read().decode())
except urllib.error.HTTPError as refused:
    print(refused.code, refused.read().decode())
"""


@AS_ROOT
def test_another_user_cannot_run_commands_through_the_desktop(desktop) -> None:
    without = as_nobody(SYSTEM_PYTHON, "-c", EXECUTE_ID, desktop.url)
    guessed = as_nobody(SYSTEM_PYTHON, "-c", EXECUTE_ID, desktop.url, "Bearer guessed")
    assert without.stdout.startswith("401 ") and guessed.stdout.startswith("403 "), (without, guessed)
    assert "uid=" not in without.stdout + guessed.stdout
    assert desktop.token_file in without.stdout and "GUITEST_DESKTOP_TOKEN" in without.stdout  # the refusal says where the secret is
    assert MachineClient(desktop.url).execute(["id"])["output"].startswith("uid=0(root)")  # the owner's client finds it itself


@AS_ROOT
def test_another_user_can_neither_read_the_secrets_nor_use_the_display(desktop) -> None:
    xauthority = os.path.join(desktop.root, "Xauthority")
    display = {"DISPLAY": f":{desktop.display}", "XAUTHORITY": xauthority}
    probe, moved = as_nobody("xdpyinfo", env=display), as_nobody("xdotool", "mousemove", "5", "5", env=display)
    assert probe.returncode != 0 and moved.returncode != 0, (probe, moved)
    # the display checks the cookie, not only the file's mode: its owner gets in with the cookie and not without it
    owner = {"PATH": os.environ["PATH"], "DISPLAY": f":{desktop.display}", "HOME": "/nonexistent"}
    assert subprocess.run(["xdpyinfo"], env=owner, capture_output=True, timeout=30).returncode != 0
    assert subprocess.run(["xdpyinfo"], env={**owner, "XAUTHORITY": xauthority}, capture_output=True, timeout=30).returncode == 0
    assert desktop.xauthority == xauthority
    assert as_nobody("cat", desktop.token_file).returncode != 0 and as_nobody("cat", xauthority).returncode != 0


def test_the_secret_is_in_private_files_only(desktop) -> None:
    token = Path(desktop.token_file).read_text().strip()
    assert len(token) >= 40
    for path in (desktop.token_file, desktop.xauthority, desktop.state_file):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    for folder in (desktop.root, os.path.dirname(desktop.root)):  # its own folder, inside the state folder
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700, folder
    for entry in filter(str.isdigit, os.listdir("/proc")):  # no process list shows it, no environment holds it
        for name in ("cmdline", "environ"):
            try:
                data = Path(f"/proc/{entry}/{name}").read_bytes()
            except OSError:
                continue
            assert token.encode() not in data, (entry, name)


# -- the state folder -----------------------------------------------------------------------------------------------


@pytest.fixture
def tmp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system's temporary folder, as guitest sees it (tempfile.gettempdir()): a fresh one of the test's."""
    base = tmp_path / "tmp"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    return base


@pytest.fixture
def victims() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start processes a planted state file points at (each leading its own process group, as a desktop's do)."""
    started: list[subprocess.Popen[bytes]] = []
    scripts = tempfile.mkdtemp(dir="/tmp")  # where nobody can read the mimics' scripts (not the test's own folders)
    os.chmod(scripts, 0o755)

    def start(argv: list[str], *, marker: str | None = None, nobody: bool = False) -> subprocess.Popen[bytes]:
        env = {"PATH": os.environ["PATH"], **({"GUITEST_DESKTOP_ID": marker} if marker else {})}
        name = argv[0].encode()
        if argv[0] == "Xvfb":  # a mimic whose own command line is `Xvfb :N`: a script named :N, run under that name
            Path(scripts, argv[1]).write_text("import time\ntime.sleep(120)\n")
            os.chmod(Path(scripts, argv[1]), 0o644)
            argv = ["bash", "-c", f"exec -a Xvfb {SYSTEM_PYTHON} {argv[1]}"]
        proc = subprocess.Popen([*(NOBODY if nobody else []), *argv], env=env, cwd=scripts, start_new_session=True)
        started.append(proc)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")[0] != name and time.monotonic() < deadline:
            time.sleep(0.01)  # until it runs as itself, not yet as setpriv or bash
        assert proc.poll() is None and time.monotonic() < deadline, f"{argv} did not start"
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()
    subprocess.run(["rm", "-rf", scripts], check=False)


def plant(folder: Path, display: int, root: Path, pids: dict[str, int], marker: str) -> Path:
    """A state file as an older guitest wrote them (the fields it reads), pointing where the planter likes."""
    path = folder / f":{display}.json"
    path.write_text(
        json.dumps(
            {
                "display": display,
                "url": "http://127.0.0.1:9",
                "port": 9,
                "home": str(root / "home"),
                "root": str(root),
                "marker": marker,
                "pids": pids,
                "started": 0.0,
                "startup_seconds": 0.0,
            }
        )
    )
    return path


def running(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


@AS_ROOT
def test_a_planted_state_file_stops_nothing_and_removes_nothing_of_others(tmp_root: Path, victims, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_root / f"guitest-desktops-{os.getuid()}"
    folder.mkdir(mode=0o755)  # as an older guitest made it: this user's own, narrowed to 0700 when used
    outside = tmp_root / "precious"
    (outside / "home").mkdir(parents=True)
    marker = uuid.uuid4().hex
    sleeper = victims(["sleep", "120"], marker=marker)
    theirs = victims(["Xvfb", ":7"], marker=marker, nobody=True)
    planted = plant(folder, 7, outside, {"server": sleeper.pid, "xvfb": theirs.pid}, marker)
    # a state file whose paths are the desktop's own, but whose pids are someone else's processes
    inner = folder / "desktop-8-planted"
    (inner / "home").mkdir(parents=True)
    fake_server = victims([SYSTEM_PYTHON, "-c", "import time; time.sleep(120)", "-m", "guitest.localdesktop.server", "--display", ":8"])
    other_marker = uuid.uuid4().hex
    pids = {"xvfb": victims(["Xvfb", ":8"], marker=other_marker, nobody=True).pid, "server": fake_server.pid, "openbox": sleeper.pid}
    plant(folder, 8, inner, pids, other_marker)

    status = cli.main(["down", "--all"])
    assert all(running(p) for p in (sleeper, theirs, fake_server)) and (outside / "home").is_dir()
    out, err = capsys.readouterr()
    assert status == 1
    assert f"refusing the state file {planted}: its folder '{outside}' is not inside the state folder {folder}" in err
    assert "nothing was stopped or removed" in err and f"rm {planted}" in err
    assert f"pid {pids['xvfb']} (xvfb) left alone: it runs as nobody (uid 65534), not as you" in out
    assert f"pid {fake_server.pid} (server) left alone: it does not carry the desktop's marker" in out
    assert f"pid {sleeper.pid} (openbox) left alone: its command line is 'sleep 120', not openbox" in out
    assert "desktop :8 stopped" in out
    assert planted.exists()  # the refused file is left for its owner to look at
    assert not inner.exists() and not (folder / ":8.json").exists()  # the desktop's own folder (inside) and state file go
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    assert cli.main(["status"]) == 0 and f"refusing the state file {planted}" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["writable by others", "another user's", "a symbolic link"])
def test_a_state_folder_that_is_not_yours_alone_is_refused(tmp_root: Path, victims, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_root / f"guitest-desktops-{os.getuid()}"
    if how == "a symbolic link":
        target = tmp_root / "elsewhere"
        target.mkdir(mode=0o700)
        folder.symlink_to(target)
    else:
        target = folder
        folder.mkdir(mode=0o700)
        if how == "writable by others":
            os.chmod(folder, 0o777)
        elif os.getuid() != 0:
            pytest.skip("giving the folder to another user needs root, as in CI")
        else:
            os.chown(folder, 65534, 65534)
    marker = uuid.uuid4().hex
    sleeper = victims(["sleep", "120"], marker=marker)
    (target / "desktop-7-x" / "home").mkdir(parents=True)
    plant(target, 7, target / "desktop-7-x", {"server": sleeper.pid}, marker)

    status = cli.main(["down", "--all"])
    assert running(sleeper) and (target / "desktop-7-x" / "home").is_dir()
    err = capsys.readouterr().err
    assert status == 1
    why = {"writable by others": "group or others may write in it (owner", "another user's": "it belongs to nobody (uid 65534), not to you", "a symbolic link": "it is a symbolic link (owner"}[how]
    assert f"refusing the desktop state folder {folder}: {why}" in err, err
    assert "rm -rf" in err and "TMPDIR" in err
    if os.environ.get("GUITEST_REQUIRE_DESKTOP") or not subprocess.run(["which", "Xvfb"], capture_output=True).returncode:
        with pytest.raises(DesktopError, match="refusing the desktop state folder"):
            start_desktop().stop()  # nor does a desktop start there (stopped at once if it did)


# -- whose rights: a desktop started by root runs its commands as root, or as the user --user names ------------------


@pytest.fixture(scope="module")
def readable_python(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment in which ``nobody`` runs guitest's desktop: the system Python with a copy of guitest and the
    server's modules where nobody may read them (the test's own Python lives in a folder only root may read)."""
    import importlib.util
    import shutil
    import sys

    version = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True).stdout.strip()
    if version != str(sys.version_info[:2]):  # the copied Pillow is built for this Python's version
        pytest.skip(f"{SYSTEM_PYTHON} is Python {version}, this is {sys.version_info[:2]}: the server's modules cannot be lent to it")
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    shutil.copytree(Path(__file__).parent.parent / "guitest", folder / "guitest", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyautogui", "pymsgbox", "pytweening", "pyscreeze", "pygetwindow", "mouseinfo", "pyrect", "Xlib", "PIL", "pyperclip", "six"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        source = Path(spec.origin)
        if source.name == "__init__.py":
            shutil.copytree(source.parent, folder / source.parent.name, ignore=shutil.ignore_patterns("__pycache__"))
            libs = source.parent.parent / f"{name.lower()}.libs"  # Pillow's bundled libraries
            if name == "PIL" and (source.parent.parent / "pillow.libs").is_dir():
                shutil.copytree(source.parent.parent / "pillow.libs", folder / "pillow.libs")
            elif libs.is_dir():
                shutil.copytree(libs, folder / libs.name)
        else:
            shutil.copy(source, folder / source.name)
    subprocess.run(["chmod", "-R", "a+rX", str(folder)], check=True)
    yield {"PYTHONPATH": str(folder)}
    shutil.rmtree(folder, ignore_errors=True)


@AS_ROOT
def test_up_says_a_desktop_started_as_root_runs_commands_as_root(capsys: pytest.CaptureFixture[str]) -> None:
    from test_desktop_real import _skip_or_fail  # noqa: F401 - skips (or fails, GUITEST_REQUIRE_DESKTOP) without the packages

    assert cli.main(["up", "--command-timeout", "5"]) == 0
    out = capsys.readouterr().out
    display = int(out.split("desktop :", 1)[1].split()[0])
    try:
        assert cli.AS_ROOT in out and "guitest desktop up --user NAME" in cli.AS_ROOT
    finally:
        assert cli.main(["down", "--display", str(display)]) == 0


@AS_ROOT
def test_up_user_runs_the_desktop_and_every_command_sent_to_it_as_that_user(readable_python: dict[str, str], monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    from test_desktop_real import _skip_or_fail  # noqa: F401

    monkeypatch.setenv("PYTHONPATH", readable_python["PYTHONPATH"])  # KEPT: what nobody's guitest is found by
    assert cli.main(["up", "--user", "nobody", "--python", SYSTEM_PYTHON, "--command-timeout", "5"]) == 0, capfd.readouterr()
    out = capfd.readouterr().out
    url = out.split(" up in ", 1)[1].split(": ", 1)[1].split()[0]
    display = out.split("desktop :", 1)[1].split()[0]
    try:
        assert "it runs as nobody (uid 65534): every command sent to it runs with nobody's rights" in out and cli.AS_ROOT not in out
        assert "/tmp/guitest-desktops-65534/" in out  # nobody's own state folder, secret and cookie
        # root's client finds nobody's secret itself, and what the desktop runs, runs as nobody: before, /execute answered uid 0
        assert MachineClient(url).execute(["id"])["output"].startswith("uid=65534(nobody)")
        listed = subprocess.run(["ps", "-eo", "user:20,args"], capture_output=True, text=True).stdout.splitlines()
        owners = {line.split()[0] for line in listed if f"Xvfb :{display} " in line or f"--display :{display} " in line}
        assert owners == {"nobody"}, listed
    finally:
        assert cli.main(["down", "--user", "nobody", "--python", SYSTEM_PYTHON, "--all"]) == 0
    assert "stopped" in capfd.readouterr().out


def test_user_is_refused_with_what_to_do(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["up", "--python", "/usr/bin/python3"]) == 1
    assert "--python goes with --user" in capsys.readouterr().err
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert cli.main(["up", "--user", "no-such-user-xq"]) == 1
    assert "--user no-such-user-xq: there is no such user (make one, e.g. useradd --create-home no-such-user-xq)" in capsys.readouterr().err
    assert cli.main(["up", "--user", "root"]) == 1 and "that is root (uid 0); name an unprivileged user" in capsys.readouterr().err
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert cli.main(["status", "--user", "nobody"]) == 1
    assert "only root can start a desktop as another user; run guitest desktop as nobody yourself" in capsys.readouterr().err


@AS_ROOT
def test_nobody_cannot_run_a_python_in_a_folder_of_roots_and_is_told_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    private = tmp_path / "root-only"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    assert cli.main(["up", "--user", "nobody", "--python", str(private / "python")]) == 1
    err = capsys.readouterr().err
    assert f"--user nobody: nobody cannot run guitest with {private / 'python'} (" in err and "Permission denied" in err, err
    assert "or name such a Python with --python" in err


@AS_ROOT
def test_root_trusts_another_users_state_folder_only_when_it_is_that_users_alone(tmp_path: Path) -> None:
    from guitest.localdesktop import state

    good, planted, wide = (tmp_path / f"guitest-desktops-{uid}" for uid in (65534, 4242, 4343))
    for folder in (good, planted, wide):
        folder.mkdir(mode=0o700)
    os.chown(good, 65534, 65534)
    os.chown(wide, 4343, 4343)
    os.chmod(wide, 0o777)
    assert state.users_state_dirs(str(tmp_path)) == [(str(good), 65534)]  # planted: root's, named for another uid
