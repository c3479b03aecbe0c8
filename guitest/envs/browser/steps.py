"""What a step does on a page, on the browser thread (inside a function :meth:`guitest.envs.browser.page.BrowserPage.run`
runs): an action performed (:func:`perform`), a fresh document loaded, the page's paint let settle, a screenshot of the
part of the page the agent sees (:class:`Area`) taken; and a step's wait, in the caller's thread (:func:`capped_wait`).
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Any

from ...live.actions import CLICK, DOUBLE_CLICK, DRAG, HOLD_KEY, KEY, MIDDLE_CLICK, MODIFIABLE, MOUSE_DOWN, MOUSE_UP, MOVE, RIGHT_CLICK, SCROLL, TRIPLE_CLICK, TYPE, Action
from ...live.keys import NAMED

NOTCH_PIXELS = 50  # CSS pixels per wheel notch (MiniWoB++'s own DEFAULT_SCROLL_AMOUNT)
PLAYWRIGHT_KEYS = {
    "ctrl": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "meta": "Meta",
    "enter": "Enter",
    "tab": "Tab",
    "escape": "Escape",
    "backspace": "Backspace",
    "delete": "Delete",
    "space": "Space",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "insert": "Insert",
    "capslock": "CapsLock",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}


@dataclass(frozen=True)
class Area:
    """The part of the page a screenshot shows, in CSS pixels, and the zoom (screenshot pixels per CSS pixel)."""

    x: float
    y: float
    width: float
    height: float
    scale: float

    @property
    def size(self) -> tuple[int, int]:
        """The screenshot's pixel size."""
        return (round(self.width * self.scale), round(self.height * self.scale))

    def to_css(self, point: tuple[float, float]) -> tuple[float, float] | None:
        """A screenshot pixel as a CSS pixel of the page; None when it lies outside the screenshot."""
        x, y = point
        w, h = self.size
        if not (0 <= x <= w and 0 <= y <= h):
            return None
        return (self.x + x / self.scale, self.y + y / self.scale)


SCROLL_JS = "() => [window.scrollX, window.scrollY]"


def screenshot(page: Any, area: Area) -> bytes:
    """A PNG of ``area`` (viewport CSS pixels) at its zoom, on the browser thread, caret hidden (:data:`guitest.envs.browser.page.HIDE_CARET_JS`).

    Taken with the DevTools protocol's ``Page.captureScreenshot`` (the clip moved by the page's scroll offset, as
    Playwright does) with ``optimizeForSpeed`` (faster PNG compression: the same pixels, lossless, larger files):
    Playwright's own ``page.screenshot`` adds a caret style, a fonts wait and round trips per shot, and with the
    slower compression MiniWoB++'s scripted episodes ran at 3.5-4.0 per second in two processes against 4.2-4.6
    (docs/bench.md). A page without a CDP session falls back to Playwright's."""
    cdp = getattr(page, "_guitest_cdp", None)
    if cdp is None:
        return page.screenshot(clip={"x": area.x, "y": area.y, "width": area.width, "height": area.height}, type="png", animations="allow", caret="hide")
    sx, sy = page.evaluate(SCROLL_JS)
    clip = {"x": area.x + sx, "y": area.y + sy, "width": area.width, "height": area.height, "scale": area.scale}
    return base64.b64decode(cdp.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": False, "optimizeForSpeed": True})["data"])


def perform(page: Any, action: Action, area: Area, pointer: tuple[float, float]) -> tuple[tuple[float, float], tuple[str, ...]]:
    """Execute ``action`` (points in screenshot pixels of ``area``) on the page (on the browser thread).

    Returns the pointer's new position (CSS pixels) and notes: ``outside_screen`` (a point outside the
    screenshot: nothing is done, an agent cannot see there), ``unknown_key``, ``hold_key_pressed_at_once`` (a
    ``hold_key`` is pressed and released: the browser thread serves every page of the worker, so it never sleeps
    with a key down). A pointer action's ``keys`` are held down around it. ``wait``, ``done`` and ``fail`` do
    nothing here."""
    point = area.to_css(action.point) if action.point is not None else pointer
    end = area.to_css(action.end) if action.end is not None else None
    if point is None or (action.end is not None and end is None):
        return pointer, ("outside_screen",)
    keyboard = page.keyboard
    held = [PLAYWRIGHT_KEYS.get(k, k) for k in action.keys] if action.kind in MODIFIABLE else []
    pressed = 0
    try:
        for key in held:
            if key not in PLAYWRIGHT_KEYS.values() and len(key) != 1:
                return pointer, ("unknown_key",)
            keyboard.down(key)
            pressed += 1
        return _perform(page, action, point, end, pointer)
    finally:
        for key in reversed(held[:pressed]):
            keyboard.up(key)


def _perform(page: Any, action: Action, point: tuple[float, float], end: tuple[float, float] | None, pointer: tuple[float, float]) -> tuple[tuple[float, float], tuple[str, ...]]:
    """:func:`perform` once the held keys are down."""
    mouse, keyboard = page.mouse, page.keyboard
    kind = action.kind
    notes: tuple[str, ...] = ()
    if kind == CLICK:
        mouse.click(*point)
    elif kind == DOUBLE_CLICK:
        mouse.dblclick(*point)
    elif kind == RIGHT_CLICK:
        mouse.click(*point, button="right")
    elif kind == TRIPLE_CLICK:
        mouse.click(*point, click_count=3)
    elif kind == MIDDLE_CLICK:
        mouse.click(*point, button="middle")
    elif kind == MOUSE_DOWN:
        mouse.move(*point)
        mouse.down()
    elif kind == MOUSE_UP:
        mouse.move(*point)
        mouse.up()
    elif kind == MOVE:
        mouse.move(*point)
    elif kind == DRAG and end is not None:
        mouse.move(*point)
        mouse.down()
        mouse.move(*end, steps=8)
        mouse.up()
        point = end
    elif kind == SCROLL:
        mouse.move(*point)
        mouse.wheel(action.scroll[0] * NOTCH_PIXELS, action.scroll[1] * NOTCH_PIXELS)
    elif kind == TYPE:  # any text arrives, non-ASCII too; a paste as one input event, without key events
        keyboard.insert_text(action.text) if action.paste else keyboard.type(action.text)
    elif kind in (KEY, HOLD_KEY):
        names = [PLAYWRIGHT_KEYS.get(k, k) for k in action.keys]
        if not names or any(k not in NAMED and len(k) != 1 for k in action.keys):
            return pointer, ("unknown_key",)
        keyboard.press("+".join(names))
        notes = ("hold_key_pressed_at_once",) if kind == HOLD_KEY else ()
    # the pointer moved again where it is: what the action changed under it (a cover shown, a menu closed) updates the
    # hover state now, with this input event, not at a later frame the step may or may not have waited for (a menu's
    # mouseleave timer then started before or after the settle looked, by the machine's speed)
    mouse.move(*point)
    return point, notes


def fresh_document(page: Any, url: str, wait_until: str = "load") -> None:
    """Load ``url`` as a new document that nothing of the page's earlier documents reaches, as a new context's first
    one (on the browser thread): through ``about:blank``. Straight from one page of a site to another (or the same) at
    a zoom of 2 or more, the new document's screens came out with other bytes in most tries when the old document had
    a change not yet painted (text a shade darker: its anti-aliasing, not the layout), so the same screen of the same
    episode differed by what had run before; two animation frames before leaving, hiding the old document, or the
    switches --disable-partial-raster, PaintHolding and RenderDocument did not help (docs/live_miniwob.md, Determinism)."""
    page.goto("about:blank", wait_until="commit")
    page.goto(url, wait_until=wait_until)


def settle(page: Any, frames: int = 2) -> None:
    """Let the page paint what the last action changed: wait for ``frames`` animation frames (on the browser thread)."""
    if frames > 0:
        page.evaluate(
            "n => new Promise(done => { const tick = k => k <= 0 ? done() : requestAnimationFrame(() => tick(k - 1)); tick(n); })",
            frames,
        )


def capped_wait(seconds: float, limit: float) -> float:
    """Sleep ``seconds`` (at most ``limit``) in the caller's thread; returns the time slept."""
    slept = max(0.0, min(seconds, limit))
    if slept:
        time.sleep(slept)
    return slept
