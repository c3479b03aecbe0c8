"""MiniWoB++ in the browser: the task pages the ``miniwob`` package (MIT) ships, scored by each task's own reward.

An episode starts on a fresh document of the task's page (as BrowserGym's reset, which loads the page
for every episode), then, as the package's own ``reset`` does it: ``core.endEpisode(0);
Math.seedrandom(seed); core.setDataMode('train'); core.startEpisodeReal()``, and wait for
``WOB_TASK_READY``. Not the page of the previous episode: ``startEpisodeReal`` rebuilds the task's DOM
but leaves what lives outside it, so an episode on a reused page began with the focus, the focus ring,
scroll offsets and pending timers the previous one left (a Submit button still focused took the next
episode's first ``enter``), and a trajectory depended on which episodes had run on the page before.
The next document is loaded when an episode ends (:meth:`MiniWobEnv.release`, which the pool calls), so
a reset of the same task mostly finds it loaded. The same seed gives the same utterance and DOM. The task's own timer
(10 s for most tasks; its reward decays with time and it ends the episode at -1) is switched off
right after the start (``clearTimeout(core.EP_TIMER)``, the countdown cleared, ``core.EP_TIMER`` kept
non-null so the task's ``core.endEpisode`` still records its reward): model latency must not decide
the score; the loop records wall time instead. The pointer is parked outside the task area before
each load, so no hover state carries over.

Screen: the 160x210 CSS-pixel task area, rendered at ``zoom`` (the browser's ``device_scale_factor``,
default 3: a 480x630 screenshot) and cropped to the area; ``Observation.scale`` is the zoom, and an
action's screenshot pixels map back as CSS = pixel / zoom. The viewport is the package's window
(500x320), so pages lay out as they do there. When an episode ends, MiniWoB++ covers the page with
its START screen; the final screenshot is taken with the cover hidden (the page as the agent left it).

Reward: ``WOB_RAW_REWARD_GLOBAL`` (-1..1; partial for a few tasks) once ``WOB_DONE_GLOBAL``: the
evaluation's score. Whether it is a success is the ``success_rule`` option's (:mod:`.rules`):
``binary`` (the default: raw == 1 as Farama's ``get_binary_reward``, raw >= a per-task threshold for the five
continuous tasks) or ``browsergym`` (raw > 0, as BrowserGym counts it). An episode the agent leaves
unfinished scores 0 and is no success under either.

Options (suite ``env_options``): ``zoom`` (3), ``html_dir`` (the package's ``html`` folder),
``serve`` (``file``: file:// URLs, the default; ``http``: a static server on 127.0.0.1, or where ``serve_bind`` and
``serve_host`` say: the default with ``browser_endpoints``, a browser on another host, :mod:`guitest.envs.browser`),
``settle_frames``
(1 animation frame after each action; then the step waits, up to 2 s, for the timeouts of at most 1 s the
page has pending and for any jQuery animation to end: see TIMERS_JS; a step that hit the 2 s is noted
``unsettled``),
``max_wait`` (5 s: the longest ``wait`` action), ``command_timeout`` (120 s: the longest one browser command may
run before the watchdog stops its page, see :mod:`guitest.envs.browser.watchdog`), ``page_memory_mb`` (2048: the memory each page's
renderer may take), ``dom_text`` (false: when true, ``Observation.text``
lists the visible elements with their boxes in screenshot pixels), ``executable``, ``headless``, and
``success_rule`` (``binary``; a suite sets it with ``settings.success_rule`` or ``--success-rule``, which the
plugin passes here).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from ..live.actions import WAIT, Action
from ..live.protocol import EnvFailure, Evaluation, Observation, TaskSpec
from ..envs import servers
from . import rules as miniwob_rules
from ..envs.browser.page import BrowserPage, OnBrowserPage
from ..envs.browser.steps import Area, capped_wait, fresh_document, perform, screenshot

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
SHORT_TIMEOUT_MS = 1000  # a setTimeout of at most this long is an effect of the action that scheduled it (see TIMERS_JS)
SETTLE_LIMIT_MS = 2000  # the longest a step waits for the page to settle; then it is shown as it is, noted "unsettled"
# On every document, before the page's own scripts: setTimeout and clearTimeout are wrapped to count the pending timeouts
# of at most SHORT_TIMEOUT_MS. Pages schedule delayed effects that way (jQuery UI's tabs activate a tab 300 ms after an
# arrow key, autocomplete searches 300 ms after typing, menus open and close on timers): a step that took its screenshot
# before they ran showed a state that depended on how fast the machine and the agent were, and the next action met
# another page (a tab active or not). The settle waits for them instead, so a step's outcome includes them on a quiet and
# on a loaded machine alike. Intervals and longer timeouts are left alone: waiting for them is the agent's part.
TIMERS_JS = (
    """(() => {
  if (window.__guitestTimers) return;
  const setT = window.setTimeout.bind(window), clearT = window.clearTimeout.bind(window), clearI = window.clearInterval.bind(window);
  const pending = new Set();
  window.setTimeout = function (handler, delay, ...args) {
    if ((Number(delay) || 0) > %d) return setT(handler, delay, ...args);  // as the browser reads it: none or NaN is 0
    const fn = typeof handler === 'function' ? handler : () => (0, eval)(String(handler));
    const id = setT(function () { pending.delete(id); return fn.apply(this, args); }, delay);
    pending.add(id);
    return id;
  };
  window.clearTimeout = function (id) { pending.delete(id); return clearT(id); };
  window.clearInterval = function (id) { pending.delete(id); return clearI(id); };
  Object.defineProperty(window, '__guitestTimers', {value: {pending: () => pending.size, setTimeout: setT}});
})();"""
    % SHORT_TIMEOUT_MS
)
# after `frames` animation frames, wait (up to `limit` ms) until no short timeout is pending, no jQuery animation runs and
# every image in use (an <img>, a CSS content or background url()) is loaded and decoded: each episode's document loads
# its images anew (email-inbox's icons were missing from a first screen at -n 0 and there at -n 2). After any wait, two
# frames: what changed under the pointer updates the hover state at the next frame, which may schedule more
STATE_JS = """async ({frames, limit}) => {
  const timers = window.__guitestTimers;
  const later = ms => new Promise(r => (timers ? timers.setTimeout : setTimeout)(r, ms));
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const decoded = window.__guitestDecoded || (window.__guitestDecoded = new Set());
  const busy = () => (timers ? timers.pending() > 0 : false) || !!(window.jQuery && window.jQuery(':animated').length);
  const loading = () => {
    const out = [];
    for (const el of document.body ? document.body.getElementsByTagName('*') : []) {
      const urls = el instanceof HTMLImageElement && !el.complete ? [el.currentSrc || el.src] : [];
      const style = getComputedStyle(el);
      for (const value of [style.content, style.backgroundImage]) for (const m of value.matchAll(/url\\("([^"]+)"\\)/g)) urls.push(m[1]);
      for (const url of urls) {
        if (!url || decoded.has(url)) continue;
        const img = new Image();
        img.src = url;
        out.push(img.decode().catch(() => {}).then(() => { decoded.add(url); }));
      }
    }
    return out;
  };
  for (let i = 0; i < frames; i++) await frame();
  const until = performance.now() + limit;
  for (;;) {
    const images = limit > 0 ? loading() : [];
    if (!(busy() || images.length) || performance.now() >= until) break;
    while (busy() && performance.now() < until) await later(5);
    await Promise.race([Promise.all(images), later(Math.max(0, until - performance.now()))]);
    await frame();
    await frame();
  }
  return {
    done: !!WOB_DONE_GLOBAL,
    raw: Number(WOB_RAW_REWARD_GLOBAL),
    reason: WOB_REWARD_REASON === null || WOB_REWARD_REASON === undefined ? null : String(WOB_REWARD_REASON),
    utterance: core.getUtterance(),
    settled: limit <= 0 || !(busy() || loading().length),
  };
}"""
COVER_JS = "hidden => { const c = document.getElementById('sync-task-cover'); if (c) c.style.display = hidden ? 'none' : 'block'; }"
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


class MiniWobEnv(OnBrowserPage):
    """A MiniWoB++ page in its own browser context (see the module docstring). Not for two episodes at once."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options = dict(options or {})
        self.zoom = float(self.options.get("zoom", 3))
        if not 0.25 <= self.zoom <= 8:
            raise EnvFailure(f"env_options.zoom must be between 0.25 and 8, got {self.zoom}")
        self.root = html_dir(self.options)
        remote = bool(self.options.get("browser_endpoints"))
        serve = self.options.get("serve", "http" if remote else "file")
        if serve not in ("file", "http"):
            raise EnvFailure(f"env_options.serve must be 'file' or 'http', got {serve!r}")
        if remote and serve == "file":
            raise EnvFailure(
                "env_options.serve 'file' with browser_endpoints: a browser on another host cannot open this host's files; "
                "use serve: http (the default with browser endpoints), with --serve-bind/--serve-host where the browser can reach it"
            )
        self.base = servers.static(self.root, self.options) if serve == "http" else "file://" + self.root.rstrip("/") + "/"
        self.settle_frames = int(self.options.get("settle_frames", 1))
        self.max_wait = float(self.options.get("max_wait", 5.0))
        self.dom_text = bool(self.options.get("dom_text", False))
        self.success_rule = miniwob_rules.rule_option(self.options)
        self.area = Area(0, 0, TASK_WIDTH, TASK_HEIGHT, self.zoom)
        self.browser = BrowserPage(self.options, VIEWPORT, self.zoom, (TIMERS_JS,))
        self._pointer = PARKED
        self._state: dict[str, Any] = {"done": False, "raw": 0.0, "reason": None, "utterance": ""}
        self._task: str | None = None
        self._preloaded: str | None = None  # the URL of a fresh document loaded (or loading) that no episode has used
        self._last: Observation | None = None  # the last screen returned (a final done/fail returns it again)

    # -- Environment protocol ------------------------------------------------------------------

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        """Start an episode of MiniWoB++ task ``task.name`` with ``seed`` (None: an unseeded, random episode)."""
        name = task.name
        page_file = os.path.join(self.root, "miniwob", f"{name}.html")
        if not os.path.isfile(page_file):
            raise EnvFailure(f"no MiniWoB++ task {name!r}: {page_file} does not exist")
        url = self._url(name)
        preloaded, self._preloaded = self._preloaded == url, None  # from here on the document is this episode's
        self._task = name
        self._pointer = PARKED
        png, state, dom = self.browser.run(self._reset, url, seed, preloaded)
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

    def release(self) -> None:
        """Between episodes (EnvPool calls it when one ends): start loading a fresh document of the task just run, so
        the next episode of that task, the usual next one here (the pool's affinity), starts without waiting for the
        load. Only the navigation's commit is waited for: the page loads in its renderer while the browser thread serves
        the other environments and the caller moves on to its next case."""
        if self._task is None or self._preloaded is not None:
            return
        url = self._url(self._task)
        self.browser.run(self._navigate, url, "commit")
        self._preloaded = url

    # -- on the browser thread -----------------------------------------------------------------

    def _url(self, name: str) -> str:
        return f"{self.base}miniwob/{name}.html"

    def _navigate(self, page: Any, url: str, wait_until: str) -> None:
        """A fresh document of ``url`` (:func:`fresh_document`), the pointer parked first: the new document never sees
        where the last one left it."""
        page.mouse.move(*PARKED)
        fresh_document(page, url, wait_until)

    def _reset(self, page: Any, url: str, seed: int | None, preloaded: bool) -> tuple[bytes, dict[str, Any], list[Any] | None]:
        if preloaded:
            page.wait_for_load_state("load", timeout=10_000)
        else:
            self._navigate(page, url, "load")
        page.wait_for_function(LOADED_JS, timeout=10_000)
        page.mouse.move(*PARKED)
        if not page.evaluate(START_JS, seed):
            page.wait_for_function(READY_JS, timeout=10_000)
        state = self._settled_state(page)
        return screenshot(page, self.area), state, self._dom(page)

    def _step(self, page: Any, action: Action) -> tuple[bytes, dict[str, Any], list[Any] | None, tuple[str, ...]]:
        self._pointer, notes = perform(page, action, self.area, self._pointer)
        state = self._settled_state(page)
        if not state["settled"]:
            notes += ("unsettled",)
        if state["done"]:
            page.evaluate(COVER_JS, True)
        png = screenshot(page, self.area)
        if state["done"]:
            page.evaluate(COVER_JS, False)
        return png, state, self._dom(page), notes

    def _settled_state(self, page: Any) -> dict[str, Any]:
        """The task's state once the page has painted (``settle_frames`` animation frames) and settled: no short
        timeout pending and no jQuery animation running (TIMERS_JS; up to SETTLE_LIMIT_MS, then ``settled`` is False)."""
        return page.evaluate(STATE_JS, {"frames": self.settle_frames, "limit": SETTLE_LIMIT_MS})

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
        return "\n".join(f"{'  ' * depth}{tag}{' ' + repr(text) if text else ''} at ({x * z:.0f}, {y * z:.0f}, {(x + w) * z:.0f}, {(y + h) * z:.0f})" for depth, tag, text, x, y, w, h in dom)

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
