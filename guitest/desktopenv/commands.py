"""``guitest desktop up | down | status``: a local Linux desktop for live desktop tasks, from the command line.

``up`` starts a desktop (:func:`guitest.localdesktop.xvfb.start_desktop`) that keeps running after the
command returns and prints the URL to pass as ``--env-url``, where its secret is (the path of its token
file, never the secret itself) and its X authority file; ``down`` stops one (or all) by the state file
``up`` wrote, once :mod:`.state`'s checks passed; ``status`` lists them and whether their server answers.

The desktop runs every command it is sent with the rights of the user who started it: a model that types a shell
command into its terminal runs it as that user. Run as root, ``up`` says so, and ``--user NAME`` runs the whole
command (and so the desktop) as NAME instead (:func:`as_user`); ``down --user NAME`` and ``status --user NAME`` act
on NAME's desktops.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Sequence

from .client import MachineClient
from ..localdesktop.state import TOKEN_VAR
from ..localdesktop.xvfb import DesktopError, LocalDesktop, load_state, scan_desktops, start_desktop

#: what ``up`` says when it runs as root without ``--user``
AS_ROOT = (
    "  this desktop runs every command it is sent as root: a model that types a shell command into its terminal runs it "
    "as root. Start it as an unprivileged user instead: guitest desktop up --user NAME (docs/live_local_desktop.md, 'Whose rights')"
)
#: the environment variables a command run as another user keeps (the rest are this user's, not NAME's)
KEPT = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "GUITEST_CHROMIUM")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``desktop`` sub-commands and their options, on ``parser``."""
    sub = parser.add_subparsers(dest="desktop_command", required=True)
    up = sub.add_parser("up", help="start a desktop (Xvfb 1920x1080, openbox, the protocol server on 127.0.0.1)")
    up.add_argument("--display", type=int, help="X display number (default: the first free one from 99)")
    up.add_argument("--port", type=int, help="server port on 127.0.0.1 (default: a free one)")
    up.add_argument("--command-timeout", type=float, default=120.0, help="seconds a command sent to the desktop may run (default 120)")
    up.add_argument(
        "--no-reset",
        action="store_true",
        help="no /guitest/reset between episodes: the desktop keeps what each episode leaves, as OSWorld's server does (episodes on it record reset: none)",
    )
    down = sub.add_parser("down", help="stop a desktop and everything it started")
    which = down.add_mutually_exclusive_group()
    which.add_argument("--display", type=int, help="the display to stop (default: the only one running)")
    which.add_argument("--all", action="store_true", help="stop every desktop of this user")
    status = sub.add_parser("status", help="list the running desktops and whether their servers answer")
    for each in (up, down, status):
        each.add_argument(
            "--user",
            metavar="NAME",
            help="(as root) run as the user NAME: the desktop, and every command a model types into it, gets NAME's rights, not root's",
        )
        each.add_argument("--python", metavar="PATH", help="with --user: the Python NAME runs guitest with (default: this one; NAME must be able to run it)")


def as_user(name: str, argv: Sequence[str], python: str | None = None) -> int:
    """Run ``guitest desktop ARGV`` as the user ``name`` (this process must be root), with a fresh environment (only
    :data:`KEPT` carried over; ``HOME``, ``USER``, ``LOGNAME`` NAME's; no ``TMPDIR``, so NAME's desktops are in NAME's
    state folder under ``/tmp``), in ``/``; its exit status. DesktopError when this is not root, NAME is no user or
    root, or NAME cannot run guitest with ``python`` (checked as NAME first)."""
    import pwd

    if os.geteuid() != 0:
        raise DesktopError(f"--user {name}: only root can start a desktop as another user; run guitest desktop as {name} yourself (e.g. su - {name})")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise DesktopError(f"--user {name}: there is no such user (make one, e.g. useradd --create-home {name})") from None
    if entry.pw_uid == 0:
        raise DesktopError(f"--user {name}: that is root (uid 0); name an unprivileged user")
    python = python or sys.executable
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    env.update(HOME=entry.pw_dir, USER=name, LOGNAME=name)
    groups = os.getgrouplist(name, entry.pw_gid)

    def run_as(command: list[str], capture: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, user=entry.pw_uid, group=entry.pw_gid, extra_groups=groups, env=env, cwd="/", text=True, capture_output=capture)

    try:  # the desktop's own modules are checked by `up` itself, as NAME (what is missing, and how to install it)
        checked = run_as([python, "-c", "import guitest.desktopenv.commands"], capture=True)
    except OSError as exc:
        checked = subprocess.CompletedProcess([python], 1, "", str(exc))
    if checked.returncode != 0:
        said = (checked.stderr.strip().splitlines() or ["no message"])[-1]
        raise DesktopError(
            f"--user {name}: {name} cannot run guitest with {python} ({said}). Install it where "
            f"{name} can read them (e.g. python3 -m venv /opt/guitest && /opt/guitest/bin/pip install guitest pyautogui python-xlib) and "
            "run that guitest, or name such a Python with --python"
        )
    code = run_as([python, "-m", "guitest.desktopenv.commands", *argv]).returncode
    if code == 0 and argv[:1] == ["up"]:
        print(
            f"  it runs as {name} (uid {entry.pw_uid}): every command sent to it runs with {name}'s rights; guitest run by root finds its secret too; stop it with: guitest desktop down --user {name}"
        )
    return code


def _up(args: argparse.Namespace) -> int:
    desktop = start_desktop(args.display, args.port, command_timeout=args.command_timeout, detach=True, reset=not args.no_reset)
    print(f"desktop :{desktop.display} up in {desktop.startup_seconds:.1f} s: {desktop.url}" + (" (its reset is off: --no-reset)" if args.no_reset else ""))
    print(f"  run live desktop tasks with --env-url={desktop.url}; stop it with: guitest desktop down --display {desktop.display}")
    print(
        f"  its secret (every request carries it: Authorization: Bearer <secret>) is in {desktop.token_file}, readable by you "
        f'only; guitest run by you finds it itself; another client reads it from that file (e.g. {TOKEN_VAR}="$(cat {desktop.token_file})")'
    )
    print(f"  its display takes only clients with its cookie: DISPLAY=:{desktop.display} XAUTHORITY={desktop.xauthority}")
    if os.geteuid() == 0:
        print(AS_ROOT)
    return 0


def _down(args: argparse.Namespace) -> int:
    desktops: list[LocalDesktop]
    refused: list[str] = []
    if args.display is not None:
        found = load_state(args.display)  # a state file that fails the checks is a DesktopError: nothing is stopped
        if found is None:
            print(f"guitest desktop: no desktop :{args.display} is running (no state file)", file=sys.stderr)
            return 1
        desktops = [found]
    else:
        desktops, refused = scan_desktops()
        for why in refused:
            print(f"guitest desktop: {why}", file=sys.stderr)
        if not args.all and len(desktops) > 1:
            shown = ", ".join(f":{d.display}" for d in desktops)
            print(f"guitest desktop: {len(desktops)} desktops are running ({shown}); say which with --display N, or --all", file=sys.stderr)
            return 1
    if not desktops:
        print("guitest desktop: no desktop is running")
        return 1 if refused else 0
    for desktop in desktops:
        for note in desktop.notes:
            print(f"desktop :{desktop.display}: {note}")
        desktop.stop()
        print(f"desktop :{desktop.display} stopped")
    return 1 if refused else 0


def _status(args: argparse.Namespace) -> int:
    desktops, refused = scan_desktops()
    for why in refused:
        print(f"guitest desktop: {why}", file=sys.stderr)
    if not desktops:
        print("no guitest desktop is running (start one with: guitest desktop up)")
        return 0
    for desktop in desktops:
        client = MachineClient(desktop.url, retries=0)
        answers = client.probe()
        reset = "" if not answers else "  reset on" if client.resets() else "  reset OFF (--no-reset)"
        print(f":{desktop.display}  {desktop.url}  {'answers' if answers else 'DOES NOT ANSWER'}{reset}  home {desktop.home}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``guitest desktop ARGS``; the exit status (2 for bad arguments, 1 when a desktop cannot start)."""
    parser = argparse.ArgumentParser(prog="guitest desktop", description="a local Linux desktop for live desktop tasks")
    add_arguments(parser)
    args = parser.parse_args(list(argv) if argv is not None else None)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Run the parsed ``desktop`` sub-command (for ``guitest/cli.py``'s sub-parser); with ``--user``, as that user."""
    try:
        if args.user:
            return as_user(args.user, _argv(args), args.python)
        if args.python:
            raise DesktopError("--python goes with --user (without it, the desktop's server runs with this Python)")
        return {"up": _up, "down": _down, "status": _status}[args.desktop_command](args)
    except DesktopError as exc:
        print(f"guitest desktop: {exc}", file=sys.stderr)
        return 1


def _argv(args: argparse.Namespace) -> list[str]:
    """The sub-command and its options as given, without ``--user`` and ``--python`` (what NAME runs)."""
    argv = [args.desktop_command]
    for option in ("display", "port", "command_timeout"):
        if getattr(args, option, None) is not None and not (option == "command_timeout" and args.command_timeout == 120.0):
            argv += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    argv += [flag for flag, on in (("--no-reset", getattr(args, "no_reset", False)), ("--all", getattr(args, "all", False))) if on]
    return argv


if __name__ == "__main__":
    sys.exit(main())
