"""MiniWoB++ in the browser: the task pages the ``miniwob`` package (MIT) ships, scored by each task's own reward.

An episode, as the package's own ``reset`` does it, on a page reused across episodes of the same task:
``core.endEpisode(0); Math.seedrandom(seed); core.setDataMode('train'); core.startEpisodeReal()``, then
wait for ``WOB_TASK_READY``. The same seed gives the same utterance and DOM. The task's own timer
(10 s for most tasks; its reward decays with time and it ends the episode at -1) is switched off
right after the start (``clearTimeout(core.EP_TIMER)``, the countdown cleared, ``core.EP_TIMER`` kept
non-null so the task's ``core.endEpisode`` still records its reward): model latency must not decide
the score; the loop records wall time instead. The pointer is parked outside the task area before
each episode, so no hover state carries over.

Screen: the 160x210 CSS-pixel task area, rendered at ``zoom`` (the browser's ``device_scale_factor``,
default 3: a 480x630 screenshot) and cropped to the area; ``Observation.scale`` is the zoom, and an
action's screenshot pixels map back as CSS = pixel / zoom. The viewport is the package's window
(500x320), so pages lay out as they do there. When an episode ends, MiniWoB++ covers the page with
its START screen; the final screenshot is taken with the cover hidden (the page as the agent left it).

Reward: ``WOB_RAW_REWARD_GLOBAL`` (-1..1; partial for a few tasks) once ``WOB_DONE_GLOBAL``: the
evaluation's score. Whether it is a success is the ``success_rule`` option's (:mod:`.miniwob_rules`):
``binary`` (the default: raw == 1 as Farama's ``get_binary_reward``, raw >= a per-task threshold for the five
continuous tasks) or ``browsergym`` (raw > 0, as BrowserGym counts it). An episode the agent leaves
unfinished scores 0 and is no success under either.

Options (suite ``env_options``): ``zoom`` (3), ``html_dir`` (the package's ``html`` folder),
``serve`` (``file``: file:// URLs, the default; ``http``: a 127.0.0.1 static server), ``settle_frames``
(1 animation frame after each action, plus the end of any jQuery animation, up to 2 s),
``max_wait`` (5 s: the longest ``wait`` action), ``dom_text`` (false: when true, ``Observation.text``
lists the visible elements with their boxes in screenshot pixels), ``executable``, ``headless``, and
``success_rule`` (``binary``; a suite sets it with ``settings.success_rule`` or ``--success-rule``, which the
plugin passes here).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from ..live.actions import WAIT, Action
from ..live.protocol import EnvFailure, Evaluation, Observation, TaskSpec
from . import miniwob_rules, servers
from .browser import Area, BrowserPage, capped_wait, perform, screenshot

TASK_WIDTH, TASK_HEIGHT = 160, 210
VIEWPORT = (500, 320)  # the miniwob package's window size
PARKED = (400.0, 300.0)  # CSS pixels outside the task area, inside the viewport
INSTALL_MINIWOB = "install it with `pip install 'guitest[live]'` (or `pip install miniwob`; only its html folder is used) or set env_options.html_dir"

LOADED_JS = "typeof core !== 'undefined' && typeof genProblem === 'function' && !!document.getElementById('sync-task-cover')"
START_JS = """seed => {
  core.endEpisode(0);
  Math.seedrandom(seed);
  core.setDataMode('train');
  core.startEpisodeReal();
  clearTimeout(core.EP_TIMER);
  core.EP_TIMER = 'guitest: timer off';
  core.clearTimer();
  return WOB_TASK_READY !== false;
}"""
READY_JS = "WOB_TASK_READY !== false"
STATE_JS = """async frames => {
  for (let i = 0; i < frames; i++) await new Promise(r => requestAnimationFrame(r));
  return {
    done: !!WOB_DONE_GLOBAL,
    raw: Number(WOB_RAW_REWARD_GLOBAL),
    reason: WOB_REWARD_REASON === null || WOB_REWARD_REASON === undefined ? null : String(WOB_REWARD_REASON),
    utterance: core.getUtterance(),
    animated: !!(window.jQuery && window.jQuery(':animated').length),
  };
}"""
COVER_JS = "hidden => { const c = document.getElementById('sync-task-cover'); if (c) c.style.display = hidden ? 'none' : 'block'; }"
ANIMATED_JS = "!(window.jQuery && window.jQuery(':animated').length)"
DOM_JS = """() => {
  const out = [];
  const walk = (el, depth) => {
    if (!el || ['reward-display', 'sync-task-cover', 'click-canvas'].includes(el.id)) return;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.left >= 160 || r.top >= 210) return;
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.data.trim()).join(' ').trim();
    let tag = el.tagName.toLowerCase();
    if (el instanceof HTMLInputElement) tag += '[' + el.type + (el.type === 'checkbox' || el.type === 'radio' ? (el.checked ? ' checked' : '') : ' value=' + JSON.stringify(el.value)) + ']';
    out.push([depth, tag, own.slice(0, 80), r.left, r.top, r.width, r.height]);
    for (const c of el.children) walk(c, depth + 1);
  };
  walk(document.getElementById('wrap') || document.body, 0);
  return out;
}"""


def html_dir(options: Mapping[str, Any]) -> str:
    """The MiniWoB++ html folder (``options["html_dir"]``, else the installed package's); EnvFailure when there is none."""
    given = options.get("html_dir")
    if given:
        folder = str(given)
    else:
        try:
            import miniwob  # noqa: PLC0415 - optional dependency, imported when a MiniWoB++ task runs
        except ImportError:
            raise EnvFailure(f"MiniWoB++ tasks need the miniwob package's task pages, which are not installed: {INSTALL_MINIWOB}") from None
        folder = os.path.join(os.path.dirname(miniwob.__file__), "html")
    if not os.path.isdir(os.path.join(folder, "miniwob")):
        raise EnvFailure(f"{folder} has no miniwob/ folder of task pages; {INSTALL_MINIWOB}")
    return folder


def task_names(options: Mapping[str, Any] | None = None) -> list[str]:
    """Every MiniWoB++ task with a page under the html folder, sorted."""
    folder = os.path.join(html_dir(options or {}), "miniwob")
    return sorted(name[: -len(".html")] for name in os.listdir(folder) if name.endswith(".html"))


class MiniWobEnv:
    """A MiniWoB++ page in its own browser context (see the module docstring). Not for two episodes at once."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options = dict(options or {})
        self.zoom = float(self.options.get("zoom", 3))
        if not 0.25 <= self.zoom <= 8:
            raise EnvFailure(f"env_options.zoom must be between 0.25 and 8, got {self.zoom}")
        self.root = html_dir(self.options)
        serve = self.options.get("serve", "file")
        if serve not in ("file", "http"):
            raise EnvFailure(f"env_options.serve must be 'file' or 'http', got {serve!r}")
        self.base = servers.static(self.root) if serve == "http" else "file://" + self.root.rstrip("/") + "/"
        self.settle_frames = int(self.options.get("settle_frames", 1))
        self.max_wait = float(self.options.get("max_wait", 5.0))
        self.dom_text = bool(self.options.get("dom_text", False))
        self.success_rule = miniwob_rules.rule_option(self.options)
        self.area = Area(0, 0, TASK_WIDTH, TASK_HEIGHT, self.zoom)
        self.browser = BrowserPage(self.options, VIEWPORT, self.zoom)
        self._pointer = PARKED
        self._state: dict[str, Any] = {"done": False, "raw": 0.0, "reason": None, "utterance": ""}
        self._task: str | None = None
        self._last: Observation | None = None  # the last screen returned (a final done/fail returns it again)

    # -- Environment protocol ------------------------------------------------------------------

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        """Start an episode of MiniWoB++ task ``task.name`` with ``seed`` (None: an unseeded, random episode)."""
        name = task.name
        page_file = os.path.join(self.root, "miniwob", f"{name}.html")
        if not os.path.isfile(page_file):
            raise EnvFailure(f"no MiniWoB++ task {name!r}: {page_file} does not exist")
        url = f"{self.base}miniwob/{name}.html"
        self._task = name
        self._pointer = PARKED
        png, state, dom = self.browser.run(self._reset, url, seed)
        self._state = state
        self._last = self._observation(png, state, dom)
        return self._last

    def step(self, action: Action) -> Observation:
        """Execute ``action`` (screenshot pixels) and return the next screen (the agent's final done or fail changes
        nothing on the page: the last screen is returned as it is)."""
        if self._task is None:
            raise EnvFailure("step() before reset()")
        if action.final and self._last is not None:
            return self._last
        if action.kind == WAIT:
            capped_wait(action.seconds, self.max_wait)
        png, state, dom, notes = self.browser.run(self._step, action)
        self._state = state
        self._last = self._observation(png, state, dom, notes)
        return self._last

    def evaluate(self) -> Evaluation:
        """The task's own raw reward as the score, success as the ``success_rule`` judges it; an unfinished episode
        scores 0 and is no success."""
        return miniwob_rules.evaluation(self.success_rule, self._task or "", self._state)

    def load(self) -> float:
        """How busy the browser thread this environment shares is (EnvPool grows only while it has time to spare)."""
        return self.browser.load()

    def close(self) -> None:
        """Close this environment's browser context."""
        self.browser.close()

    # -- on the browser thread -----------------------------------------------------------------

    def _reset(self, page: Any, url: str, seed: int | None) -> tuple[bytes, dict[str, Any], list[Any] | None]:
        if page.url != url:
            page.goto(url, wait_until="load")
            page.wait_for_function(LOADED_JS, timeout=10_000)
        page.mouse.move(*PARKED)
        if not page.evaluate(START_JS, seed):
            page.wait_for_function(READY_JS, timeout=10_000)
        state = self._settled_state(page)
        return screenshot(page, self.area), state, self._dom(page)

    def _step(self, page: Any, action: Action) -> tuple[bytes, dict[str, Any], list[Any] | None, tuple[str, ...]]:
        self._pointer, notes = perform(page, action, self.area, self._pointer)
        state = self._settled_state(page)
        if state["done"]:
            page.evaluate(COVER_JS, True)
        png = screenshot(page, self.area)
        if state["done"]:
            page.evaluate(COVER_JS, False)
        return png, state, self._dom(page), notes

    def _settled_state(self, page: Any) -> dict[str, Any]:
        """The task's state once the page has painted (``settle_frames`` animation frames) and any jQuery
        animation has ended (up to 2 s: a page that animates for ever is shown as it is)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        state = page.evaluate(STATE_JS, self.settle_frames)
        if state["animated"]:
            try:
                page.wait_for_function(ANIMATED_JS, timeout=2_000)
            except PlaywrightTimeout:
                pass
            state = page.evaluate(STATE_JS, 0)
        return state

    def _dom(self, page: Any) -> list[Any] | None:
        return page.evaluate(DOM_JS) if self.dom_text else None

    def _observation(self, png: bytes, state: dict[str, Any], dom: list[Any] | None, notes: tuple[str, ...] = ()) -> Observation:
        info: dict[str, Any] = {"raw_reward": state["raw"]} if state["done"] else {}
        if notes:
            info["notes"] = list(notes)
        return Observation(
            screenshot=png,
            size=self.area.size,
            instruction=state.get("utterance") or "",
            scale=self.zoom,
            text=self._dom_lines(dom) if dom is not None else None,
            done=bool(state["done"]),
            info=info,
        )

    def _dom_lines(self, dom: list[Any]) -> str:
        z = self.zoom
        return "\n".join(
            f"{'  ' * depth}{tag}{' ' + repr(text) if text else ''} at ({x * z:.0f}, {y * z:.0f}, {(x + w) * z:.0f}, {(y + h) * z:.0f})"
            for depth, tag, text, x, y, w, h in dom
        )

    # -- for scripted baselines ----------------------------------------------------------------

    def run_js(self, expression: str, arg: Any = None) -> Any:
        """Evaluate a JavaScript function expression with ``arg`` in the task page (the oracle reads the DOM this way)."""
        return self.browser.run(lambda page: page.evaluate(expression, arg))


def make(options: Mapping[str, Any], base_dir: str) -> MiniWobEnv:
    """The ``miniwob`` backend's factory (``base_dir`` resolves a relative ``html_dir``)."""
    opts = dict(options)
    if opts.get("html_dir") and not os.path.isabs(str(opts["html_dir"])):
        opts["html_dir"] = os.path.join(base_dir, str(opts["html_dir"]))
    return MiniWobEnv(opts)
