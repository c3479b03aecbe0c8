"""pyautogui calls (Aguvis, OS-Atlas action mode, ...): ``pyautogui.click(x=0.3, y=0.5)``, ``pyautogui.click(0.3, 0.5)``."""

from __future__ import annotations

import re

from . import NUM, Found, from_numbers

CALL = re.compile(
    rf"pyautogui\.(?:click|doubleClick|rightClick|tripleClick|moveTo|leftClick)\(\s*(?:x\s*=\s*)?({NUM})\s*,\s*(?:y\s*=\s*)?({NUM})",
    re.IGNORECASE,
)


def find(region: str) -> list[Found]:
    return [f for m in CALL.finditer(region) if (f := from_numbers([float(m.group(1)), float(m.group(2))])) is not None]
