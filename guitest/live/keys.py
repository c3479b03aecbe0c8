"""Key names: one spelling for every model convention (``ctrl``, ``enter``, ``pagedown``, ``a``).

Models write keys as pyautogui does (``'ctrl'``, ``'return'``, ``'pgdn'``), as xdotool does
(``Control_L``, ``Return``), as the DOM does (``Control``, ``ArrowDown``) or as prose
(``Ctrl+C``, ``cmd``). :func:`normalize` turns each into the lower-case name that
:class:`~guitest.live.actions.Action` carries; :func:`combo` splits a combination written
with ``+``, ``-`` or spaces. Unknown names are kept as written, lower-cased (the backend
decides whether it can press them).
"""

from __future__ import annotations

import re

MODIFIERS = ("ctrl", "shift", "alt", "meta")

ALIASES = {
    "control": "ctrl",
    "control_l": "ctrl",
    "control_r": "ctrl",
    "ctrlleft": "ctrl",
    "ctrlright": "ctrl",
    "lctrl": "ctrl",
    "rctrl": "ctrl",
    "shift_l": "shift",
    "shift_r": "shift",
    "shiftleft": "shift",
    "shiftright": "shift",
    "alt_l": "alt",
    "alt_r": "alt",
    "altleft": "alt",
    "altright": "alt",
    "option": "alt",
    "opt": "alt",
    "cmd": "meta",
    "command": "meta",
    "win": "meta",
    "windows": "meta",
    "super": "meta",
    "super_l": "meta",
    "winleft": "meta",
    "winright": "meta",
    "meta_l": "meta",
    "return": "enter",
    "kp_enter": "enter",
    "numpadenter": "enter",
    "esc": "escape",
    "del": "delete",
    "back": "backspace",
    "bksp": "backspace",
    "spacebar": "space",
    " ": "space",
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "page_up": "pageup",
    "pgup": "pageup",
    "prior": "pageup",
    "page_down": "pagedown",
    "pgdn": "pagedown",
    "next": "pagedown",
    "ins": "insert",
}


def normalize(name: str) -> str:
    """One key's canonical name: lower case, aliases resolved (``Return`` -> ``enter``); a single character is kept as is."""
    if len(name) == 1:
        return ALIASES.get(name, name)
    key = name.strip().lower().replace(" ", "")
    if key.startswith("<") and key.endswith(">") and len(key) > 2:  # <Enter>, as WebDriver and some prompts write keys
        key = key[1:-1]
    return ALIASES.get(key, key)


_SPLIT = re.compile(r"\s*\+\s*|\s+")


def combo(text: str) -> tuple[str, ...]:
    """A key combination as canonical names: ``ctrl+c``, ``Ctrl C``, ``ctrl-shift-t``; ``+`` alone is the plus key."""
    text = text.strip()
    if not text:
        return ()
    if len(text) == 1:
        return (normalize(text),)
    parts = [p for p in _SPLIT.split(text) if p]
    if len(parts) == 1 and "-" in text.strip("-") and all(_is_key_word(p) for p in text.split("-")):
        parts = text.split("-")
    return tuple(normalize(p) for p in parts)


def _is_key_word(part: str) -> bool:
    return bool(part) and (len(part) == 1 or normalize(part) in MODIFIERS or normalize(part) in NAMED)


#: canonical names of the named (non-character) keys guitest's backends know
NAMED = frozenset(
    {"enter", "tab", "escape", "backspace", "delete", "space", "up", "down", "left", "right", "home", "end", "pageup", "pagedown", "insert", "capslock"}
    | {f"f{i}" for i in range(1, 13)}
    | set(MODIFIERS)
)
