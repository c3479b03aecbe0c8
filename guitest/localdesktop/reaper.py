"""Ends a desktop's processes when the process that started it dies without stopping it (killed, crashed).

``python -m guitest.localdesktop.reaper MARKER ROOT STATE_FILE`` waits until its standard input closes
(the starting process holds the only write end, so that happens when it exits, one way or another),
then sends SIGTERM, and a second later SIGKILL, to every process carrying the desktop's marker, and
removes the desktop's folder and state file. A desktop stopped the normal way has nothing left by
then, and the reaper just exits.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time

from .state import remove_state_file
from .xvfb import HOME_MARK, marked_pids


def reap(marker: str, grace: float = 1.0) -> int:
    """Signal the marker's processes (TERM, then KILL after ``grace`` seconds); how many there were."""
    pids = marked_pids(marker)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and marked_pids(marker):
            time.sleep(0.05)
        pids = marked_pids(marker)
    return len(pids)


def main(argv: list[str]) -> int:
    """Wait for standard input to close, then reap the desktop: ``argv`` is its marker, folder and state file."""
    marker, root, state_file = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C to the terminal is the starter's to handle
    while sys.stdin.buffer.read(65536):
        pass
    reap(marker)
    if os.path.isfile(os.path.join(root, "home", HOME_MARK)):  # only a folder a desktop made
        shutil.rmtree(root, ignore_errors=True)
    remove_state_file(state_file, marker)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
