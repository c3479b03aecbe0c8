#!/usr/bin/env bash
# Test setup: the Debian packages of guitest's local desktop (guitest desktop up, tests/test_desktop_real.py,
# suites/desktop_local): an X server (Xvfb), a window manager (openbox), window tools (xdotool, wmctrl,
# xwininfo), a D-Bus session and the accessibility bus with its Python binding for the system Python,
# Tk for pyautogui (its MouseInfo imports tkinter) and the suite's Tk apps, a text editor (Mousepad),
# a terminal (xterm) and xdg-open. Chromium comes from tests/setup_browser.sh. About 120 MB.
# Needs root and Debian's package index; does nothing when everything is there.
set -euo pipefail
PACKAGES="xvfb openbox xdotool wmctrl x11-utils dbus-x11 at-spi2-core python3-pyatspi python3-tk mousepad xterm xdg-utils"
missing=""
for cmd in Xvfb openbox xdotool wmctrl xwininfo dbus-daemon mousepad xterm xdg-open; do
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $cmd"
done
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "import pyatspi, tkinter" >/dev/null 2>&1; then
    missing="$missing pyatspi/tkinter"
fi
if [ -z "$missing" ]; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "setup_desktop: missing:$missing; install them with: sudo apt-get install -y --no-install-recommends $PACKAGES" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
command -v Xvfb openbox mousepad
