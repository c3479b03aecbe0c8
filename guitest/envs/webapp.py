"""Your own web app as a live environment: a start URL, an optional set-up script, a success check in the page.

Where the app comes from (suite ``env_options``, one of):

- ``root``: a folder served by guitest on 127.0.0.1 (the app's static files; relative to the suite folder);
- ``server``: ``{command: [...], cwd: ".", ready_path: "/", timeout: 20}``, a server the suite starts
  on 127.0.0.1 (``{port}`` in the command becomes a free port and ``{host}`` the address to listen on; started once
  per process, stopped at the end of the session);
- ``base_url``: an app already running (``http://127.0.0.1:8000/``).

A task (:class:`~guitest.live.protocol.TaskSpec` ``config``, from the suite's task file):
``start`` (a path under the app's base URL or an absolute URL; ``{seed}`` in it becomes the episode's
seed), ``setup`` (optional JavaScript run after the page loads, as the body of ``async (seed) => {...}``),
``success`` (a JavaScript expression over the DOM or the app's state, evaluated in the page when the
episode ends; truthy = success; it may be a Promise), ``score`` (optional expression giving the raw
score, default 1 or 0), ``done_when`` (optional expression: when truthy after a step, the episode ends).

Each episode starts clean: cookies cleared, the start URL loaded as a fresh document (through
``about:blank``: :func:`~guitest.envs.browser.steps.fresh_document`), and when the app left anything in
``localStorage``/``sessionStorage`` it is cleared and the page loaded again. The screenshot is the
viewport (``viewport``, default 1024x768 CSS pixels) at ``zoom`` (default 1).
Options also: ``settle_frames`` (2), ``max_wait`` (5 s), ``check_timeout`` (10 s: the longest the set-up script or
one check may run; past it the episode is an environment error naming the task and the check, see :func:`_bounded_js`),
``command_timeout`` (120 s: the longest one browser command may run, see :mod:`.browser`), ``page_memory_mb`` (2048: the
memory each page's renderer may take, see :mod:`.browser`), ``executable``, ``headless``; ``browser_endpoints`` and
``episodes_per_endpoint`` (browsers on other hosts, :mod:`.browser`), with ``serve_bind`` and ``serve_host`` (where
``root`` and ``server`` listen, and the name the remote browser reaches them by, :func:`.servers.address`).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Mapping
from urllib.parse import urljoin

from ..live.actions import WAIT, Action
from ..live.protocol import EnvFailure, Evaluation, Observation, TaskSpec
from . import servers
from .options import seconds_option
from .browser.page import BrowserPage, OnBrowserPage
from .browser.steps import Area, capped_wait, fresh_document, perform, screenshot, settle
from .browser.watchdog import Overran

DEFAULT_VIEWPORT = (1024, 768)
DEFAULT_CHECK_TIMEOUT = 10.0  # seconds the set-up script or one check may run (env_options.check_timeout)
# the watchdog stops a check's script this much after its own timer would have ended it: a Promise that never settles
# is ended by the timer in the page (the page stays as it is), a synchronous loop, which no timer can interrupt, by the
# watchdog (DevTools Runtime.terminateExecution: the page stays usable too)
CHECK_MARGIN = 1.0
STORAGE_JS = "() => { const n = localStorage.length + sessionStorage.length; localStorage.clear(); sessionStorage.clear(); return n; }"
TIMED_OUT = "guitest: the check did not finish in time"  # the message of the timer's rejection in the page


def _bounded_js(inner: str, truthy: bool = False) -> str:
    """A JavaScript function of ``{arg, ms}`` that awaits ``inner`` (an expression, a Promise or not, over ``arg``) raced
    against a timer of ``ms`` milliseconds, which rejects with TIMED_OUT. ``truthy``: return JavaScript's truthiness of
    the value (``[]`` and ``{}`` hold, ``NaN`` does not), not the value."""
    value = "!!value" if truthy else "value"
    return f"""async ({{arg, ms}}) => {{
  let timer;
  const late = new Promise((_, reject) => {{ timer = setTimeout(() => reject(new Error({TIMED_OUT!r})), ms); }});
  try {{
    const value = await Promise.race([{inner}, late]);
    return {value};
  }} finally {{
    clearTimeout(timer);
  }}
}}"""


def _expression(source: str, truthy: bool = False) -> str:
    """A check of the task file (``success``, ``score``, ``done_when``) as a bounded function (:func:`_bounded_js`)."""
    return _bounded_js(f"(async () => ({source}\n))()", truthy)


def _setup(source: str) -> str:
    """The task's set-up script, the body of ``async (seed) => {...}``, as a bounded function whose ``arg`` is the seed."""
    return _bounded_js(f"(async (seed) => {{ {source}\n}})(arg)")


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # a URL scheme: anything but http(s) is refused


class WebAppEnv(OnBrowserPage):
    """A page of your web app in its own browser context (see the module docstring). Not for two episodes at once."""

    def __init__(self, options: Mapping[str, Any] | None = None, base_dir: str = ".") -> None:
        self.options = dict(options or {})
        self.base_url = _base_url(self.options, base_dir)
        viewport = self.options.get("viewport", DEFAULT_VIEWPORT)
        if not (isinstance(viewport, (list, tuple)) and len(viewport) == 2 and all(isinstance(v, int) and v > 0 for v in viewport)):
            raise EnvFailure(f"env_options.viewport must be [width, height] in CSS pixels, got {viewport!r}")
        self.zoom = float(self.options.get("zoom", 1))
        self.area = Area(0, 0, viewport[0], viewport[1], self.zoom)
        self.settle_frames = int(self.options.get("settle_frames", 2))
        self.max_wait = float(self.options.get("max_wait", 5.0))
        self.check_timeout = seconds_option(self.options, "check_timeout", DEFAULT_CHECK_TIMEOUT)
        self.browser = BrowserPage(self.options, (viewport[0], viewport[1]), self.zoom)
        self._pointer = (0.0, 0.0)
        self._task: TaskSpec | None = None
        self._part = "page"  # what the browser thread is doing for this environment now (named when it fails)
        self._last: Observation | None = None  # the last screen returned (a final done/fail returns it again)

    def start_url(self, task: TaskSpec, seed: int | None) -> str:
        """The URL an episode of ``task`` opens: ``start`` under the base URL, ``{seed}`` filled in."""
        start = str(task.config.get("start", "/")).replace("{seed}", "" if seed is None else str(seed))
        if start.startswith(("http://", "https://")):
            return start
        if _SCHEME.match(start):  # file:///etc/passwd was loaded and screenshotted; javascript:, data: alike
            raise EnvFailure(f"web task {task.name!r}: start {start!r} is not a path or an http(s) URL; serve local pages from env_options.root (inside the suite folder)")
        return urljoin(self.base_url, start.lstrip("/"))

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        """Open the task's start page clean, run its set-up script, and return the first screen."""
        if "success" not in task.config:
            raise EnvFailure(f"web task {task.name!r} has no success check (config.success)")
        self._task = task
        self._pointer = (0.0, 0.0)
        url = self.start_url(task, seed)
        png = self._run(self._reset, url, task.config.get("setup"), seed)
        self._last = Observation(png, self.area.size, task.instruction, scale=self.zoom)
        return self._last

    def step(self, action: Action) -> Observation:
        """Execute ``action`` (screenshot pixels) and return the next screen; ``done`` when ``done_when`` holds. The
        agent's final done or fail changes nothing on the page: the last screen is returned as it is."""
        task = self._require_task()
        if action.final and self._last is not None:
            return self._last
        if action.kind == WAIT:
            capped_wait(action.seconds, self.max_wait)
        png, done, notes = self._run(self._step, action, task.config.get("done_when"))
        self._last = Observation(png, self.area.size, task.instruction, scale=self.zoom, done=done, info={"notes": list(notes)} if notes else {})
        return self._last

    def evaluate(self) -> Evaluation:
        """The task's success check (and score expression) evaluated in the page now."""
        task = self._require_task()
        success, score = self._run(self._evaluate, task.config["success"], task.config.get("score"))
        return Evaluation(success, score, f"success check {'held' if success else 'did not hold'}: {task.config['success']}")

    def run_js(self, expression: str, arg: Any = None) -> Any:
        """Evaluate a JavaScript function expression with ``arg`` in the page (the oracle reads the DOM this way)."""
        return self.browser.run(lambda page: page.evaluate(expression, arg))

    def _require_task(self) -> TaskSpec:
        if self._task is None:
            raise EnvFailure("step() or evaluate() before reset()")
        return self._task

    def _run(self, fn: Any, *args: Any) -> Any:
        self._part = "page"
        try:
            return self.browser.run(fn, *args)
        except EnvFailure as exc:
            name = self._task.name if self._task else "?"
            raise EnvFailure(f"web task {name!r}, {self._part}: {exc}") from None

    # -- on the browser thread -----------------------------------------------------------------

    def _check(self, page: Any, part: str, function: str, arg: Any) -> Any:
        """Evaluate a function of the task file (:func:`_expression`, :func:`_setup`) within ``check_timeout``: a Promise
        that never settles is ended by its timer in the page, a synchronous loop by the watchdog; either is an
        EnvFailure that says so (and :meth:`_run` names the task and ``part``)."""
        self._part = part
        limit = f"did not finish within {self.check_timeout:g} s (env_options.check_timeout)"
        try:
            with self.browser.bounded(self.check_timeout + CHECK_MARGIN):
                return page.evaluate(function, {"arg": arg, "ms": self.check_timeout * 1000})
        except Overran as exc:
            raise EnvFailure(f"{limit}; {'; '.join(exc.steps)}") from None
        except Exception as exc:
            if TIMED_OUT in str(exc):
                raise EnvFailure(limit) from None
            raise

    def _reset(self, page: Any, url: str, setup: str | None, seed: int | None) -> bytes:
        self._part = "start page"
        page.context.clear_cookies()
        fresh_document(page, url)
        if page.evaluate(STORAGE_JS):
            fresh_document(page, url)
        page.mouse.move(0, 0)
        if setup:
            self._check(page, "set-up script", _setup(setup), seed)
        self._part = "first screen"
        settle(page, self.settle_frames)
        return screenshot(page, self.area)

    def _step(self, page: Any, action: Action, done_when: str | None) -> tuple[bytes, bool, tuple[str, ...]]:
        self._part = "action"
        self._pointer, notes = perform(page, action, self.area, self._pointer)
        try:
            page.wait_for_load_state("load", timeout=10_000)  # a click that navigates
        except Exception:  # noqa: BLE001 - a page still loading is shown as it is
            pass
        settle(page, self.settle_frames)
        done = bool(self._check(page, "done_when check", _expression(done_when, truthy=True), None)) if done_when else False
        self._part = "screen"
        return screenshot(page, self.area), done, notes

    def _evaluate(self, page: Any, success: str, score: str | None) -> tuple[bool, float]:
        ok = bool(self._check(page, "success check", _expression(success, truthy=True), None))
        if score is None:
            return ok, 1.0 if ok else 0.0
        value = self._check(page, "score expression", _expression(score), None)
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise EnvFailure(f"the score expression {score!r} gave {value!r}, not a finite number")
        return ok, number


def _base_url(options: Mapping[str, Any], base_dir: str) -> str:
    """The app's base URL from ``root``, ``server`` or ``base_url`` (exactly one of them)."""
    given = [k for k in ("root", "server", "base_url") if options.get(k)]
    if len(given) != 1:
        raise EnvFailure(f"env_options of a webapp suite need exactly one of root, server, base_url; got {given or 'none'}")
    if "root" in given:
        root = os.path.realpath(os.path.join(base_dir, str(options["root"])))
        if os.path.commonpath([root, os.path.realpath(base_dir)]) != os.path.realpath(base_dir):
            raise EnvFailure(f"env_options.root {options['root']!r} is outside the suite folder {base_dir}: guitest serves only the suite's own files")
        return servers.static(root, options)
    if "base_url" in given:
        url = str(options["base_url"])
        if not url.startswith(("http://", "https://")):
            raise EnvFailure(f"env_options.base_url {url!r} is not an http(s) URL")
        return url if url.endswith("/") else url + "/"
    server = options["server"]
    if not isinstance(server, Mapping) or not isinstance(server.get("command"), list) or not server["command"]:
        raise EnvFailure("env_options.server needs command: a list of program and arguments, e.g. [python3, server.py, --port, '{port}']")
    return servers.command(
        [str(a) for a in server["command"]],
        os.path.join(base_dir, str(server.get("cwd", "."))),
        str(server.get("ready_path", "/")),
        float(server.get("timeout", 20)),
        options,
    )


def make(options: Mapping[str, Any], base_dir: str) -> WebAppEnv:
    """The ``webapp`` backend's factory."""
    return WebAppEnv(options, base_dir)
