"""A stuck page costs one episode: what a web task's checks and pages can do to the browser, and what it costs.

Against Debian's Chromium through Playwright, on small pages written here. The bounds come from env options
(``check_timeout``, ``command_timeout``) set small, so every wait is bounded by configuration; the assertions are on
outcomes (which error, naming what; whether the next episode on the same or another page is a success), never on
times. Before this change a success check that never settled blocked the browser thread: the call failed after 120 s
and every later call in the process waited behind it.

- In one process: a check whose Promise never settles and one that spins synchronously are errors naming the task and
  the check, and the same page then runs the next episode; a page whose click handler spins costs its own step, and
  the page beside it in the same browser goes on; a page that can only be closed is closed; a browser that does not
  answer at all (SIGSTOP) is ended, the commands queued behind the stuck one fail at once, its processes are gone and
  a new browser serves the next episode; Chromium killed mid-episode fails that episode with the browser's own error
  (not a timeout), and the pool hands the next episode a context of a new browser, not an idle one of the dead browser.
- Through pytest, serial and ``-n 2``: a web suite with a never-settling and a spinning success check and a page that
  allocates past ``page_memory_mb`` beside three good tasks; the stuck ones are errors naming the check (the bound), all
  others (those after them in a worker included) hits.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import threading
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from guitest import envs
from guitest.envs import browser
from guitest.envs.browser import launch as browser_launch, processes as browser_processes, watchdog as browser_watchdog
from guitest.envs.pool import EnvPool
from guitest.live.actions import Action
from guitest.live.baseline_policies import OraclePolicy
from guitest.live.loop import run_episode
from guitest.live.protocol import EnvFailure, TaskSpec

APP = Path(__file__).parent / "live_app"
PAGE = """<!DOCTYPE html><html><body style="margin: 0">
<button id="ok" style="position: absolute; left: 10px; top: 10px; width: 100px; height: 40px" onclick="window.pressed = true">OK</button>
<button id="spin" style="position: absolute; left: 10px; top: 80px; width: 100px; height: 40px" onclick="while (true) {}">Spin</button>
</body></html>"""
OK, SPIN = (60, 30), (60, 100)  # the buttons' centres in screenshot pixels (zoom 1)
NEVER = "new Promise(() => {})"
SPINS = "(() => { while (true) {} })()"


def _require() -> None:
    missing = pytest.fail if os.environ.get("GUITEST_REQUIRE_BROWSER") else pytest.skip
    if not os.path.isfile(browser_launch.executable()):
        missing(f"{browser_launch.executable()} not found: install Debian's chromium (bash tests/setup_browser.sh)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing("playwright is not installed (pip install 'guitest[live]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The page's folder; the tests share this process's browser (the ones that end it get a new one)."""
    _require()
    folder = tmp_path_factory.mktemp("site")
    (folder / "index.html").write_text(PAGE)
    yield folder
    envs.shutdown()


def task(name: str, success: str = "window.pressed === true", **config: object) -> TaskSpec:
    return TaskSpec(env="webapp", name=name, instruction="Press OK", config={"start": "index.html", "success": success, **config})


def pressed(env) -> bool:
    """One good episode on ``env``: reset, press OK, the success check holds."""
    env.reset(task("good"), 0)
    env.step(Action("click", point=OK, space="screen"))
    return env.evaluate().success


def browser_pid() -> int:
    """The one browser this process runs, found as an outsider would: Playwright starts Chromium as the leader of a
    process group of its own, the only group leader among this process's descendants."""
    parents = {}
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text() if entry.isdigit() else ""
        except OSError:
            continue
        if stat:
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    mine, grown = {os.getpid()}, True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= more
        grown = bool(more)
    (pid,) = [pid for pid in mine - {os.getpid()} if _leads(pid)]
    return pid


def _leads(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


@pytest.fixture
def started() -> Iterator[tuple[str, threading.Event]]:
    """A URL on a loopback server, and the event its first request sets: a page's script says it has begun."""
    hit = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hit.set()
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/started", hit
    server.shutdown()
    server.server_close()


def test_checks_that_never_finish_are_errors_naming_the_check_and_the_page_goes_on(site: Path) -> None:
    env = envs.open_env("webapp", {"root": ".", "viewport": [300, 200], "check_timeout": 1, "command_timeout": 30}, str(site))
    try:
        for name, config, part in [
            ("never", {"success": NEVER}, "success check"),
            ("spins", {"success": SPINS}, "success check"),
            ("never-score", {"success": "true", "score": NEVER}, "score expression"),
            ("setup", {"setup": "await new Promise(() => {});"}, "set-up script"),
        ]:
            if part == "set-up script":
                with pytest.raises(EnvFailure) as failed:
                    env.reset(task(name, **config), 0)
            else:
                env.reset(task(name, **config), 0)
                with pytest.raises(EnvFailure) as failed:
                    env.evaluate()
            assert f"web task {name!r}, {part}: did not finish within 1 s (env_options.check_timeout)" in str(failed.value)
            assert env.usable() and pressed(env), name  # the same page runs the next episode
        env.reset(task("done-when", done_when=SPINS), 0)
        with pytest.raises(EnvFailure, match=r"web task 'done-when', done_when check: did not finish within 1 s .*its script was stopped"):
            env.step(Action("click", point=OK, space="screen"))
        assert pressed(env)
    finally:
        env.close()


def test_a_check_is_true_by_javascripts_rules(site: Path) -> None:
    env = envs.open_env("webapp", {"root": ".", "viewport": [300, 200]}, str(site))
    try:
        for check, held in [("[]", True), ("({})", True), ("NaN", False), ("Promise.resolve(0)", False), ("document.body", True)]:
            env.reset(task("truthy", success=check), 0)
            assert env.evaluate().success is held, check
        env.reset(task("nan-score", success="true", score="NaN"), 0)
        with pytest.raises(EnvFailure, match="gave nan, not a finite number"):
            env.evaluate()
    finally:
        env.close()


def test_a_page_that_spins_costs_its_own_step_and_the_page_beside_it_goes_on(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser_watchdog, "GRACE", 1.0)
    options = {"root": ".", "viewport": [300, 200], "command_timeout": 2}
    stuck, beside = (envs.open_env("webapp", options, str(site)) for _ in range(2))
    try:
        stuck.reset(task("spin"), 0)
        with pytest.raises(EnvFailure, match=r"web task 'spin', .*a browser command took longer than 2 s \(env_options.command_timeout\): its script was stopped"):
            stuck.step(Action("click", point=SPIN, space="screen"))
        assert beside.browser.host is stuck.browser.host  # one browser, kept
        assert pressed(beside) and pressed(stuck)
        # a wait no script stops (a Promise outside any check) ends with its page closed; the browser stays
        with pytest.raises(EnvFailure, match=r"took longer than 2 s .*its script was stopped; its page was closed"):
            stuck.run_js("() => new Promise(() => {})")
        assert not stuck.usable() and beside.usable() and pressed(beside)
    finally:
        stuck.close()
        beside.close()


def test_a_browser_that_does_not_answer_is_ended_and_replaced(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser_watchdog, "GRACE", 1.0)
    envs.shutdown()  # the browser started below is this process's only one (browser_pid)
    options = {"root": ".", "viewport": [300, 200], "command_timeout": 2}
    env = envs.open_env("webapp", options, str(site))
    old = env.browser.host
    env.reset(task("good"), 0)
    os.kill(browser_pid(), signal.SIGSTOP)  # the whole browser hangs: no script to stop, no page to close
    queued: list[BaseException] = []
    started = threading.Event()

    def behind() -> None:  # a command queued behind the stuck one
        started.set()
        try:
            env.run_js("() => 1")
        except EnvFailure as exc:
            queued.append(exc)

    waiter = threading.Thread(target=behind)
    with pytest.raises(EnvFailure, match=r"took longer than 2 s .*its script was stopped; its page was closed; the browser did not answer and was ended"):
        env.browser.run(lambda page: (waiter.start(), started.wait(), page.evaluate("1"))[2])
    waiter.join(30)
    assert [str(e).startswith("the browser was ended before this command ran") for e in queued] == [True]
    old._thread.join(30)
    assert not old._thread.is_alive() and not old.alive  # its thread unwound: the processes it waited on were ended
    assert browser_processes.marked(old.marker) == []
    again = envs.open_env("webapp", options, str(site))
    try:
        assert again.browser.host is not old and pressed(again)
    finally:
        again.close()
        env.close()


def test_chromium_killed_mid_episode_fails_that_episode_and_the_next_gets_a_new_browser(site: Path, started) -> None:
    # the bounds are far away: an in-flight call that waited for one would fail as a timeout, not as the browser's error
    options = {"root": ".", "viewport": [300, 200], "check_timeout": 100, "command_timeout": 110}
    envs.shutdown()  # the browser started below is this process's only one (browser_pid)
    pool = EnvPool("webapp", options, str(site), size=2)
    idle = pool.acquire()
    busy = pool.acquire()
    assert pressed(idle)
    pool.release(idle)  # idle in the pool when the browser dies
    old = busy.browser.host
    url, hit = started
    slow = task("slow", setup=f"fetch({url!r}); await new Promise(done => setTimeout(done, 60000));")
    pid = browser_pid()
    killer = threading.Thread(target=lambda: hit.wait(60) and os.killpg(pid, signal.SIGKILL))
    killer.start()
    with pytest.raises(EnvFailure) as failed:
        busy.reset(slow, 0)
    killer.join(30)
    message = str(failed.value)
    assert "web task 'slow', set-up" in message and "closed" in message and "took longer" not in message, message
    pool.release(busy, broken=True)
    fresh = pool.acquire()  # not the idle context of the dead browser: it would fail this episode too
    try:
        assert fresh is not idle and fresh.browser.host is not old
        assert run_episode(fresh, task("press", solution=[{"click": "#ok"}]), 0, OraclePolicy(fresh), 3).success
    finally:
        pool.release(fresh)
        pool.close()


HOG = """<!DOCTYPE html><html><body style="margin: 0">
<button id="heap" style="position: absolute; left: 10px; top: 10px; width: 100px; height: 40px" onclick="heap()">Heap</button>
<button id="buffers" style="position: absolute; left: 10px; top: 80px; width: 100px; height: 40px" onclick="buffers()">Buffers</button>
<script>
// at most 1.5 GB each, so a run without a bound ends too (and fails the test) without taking the machine's memory
function heap() { window.keep = []; for (let i = 0; i < 192; i++) window.keep.push(new Array(1 << 20).fill(i + 0.5)); }
function buffers() {
  window.got = 0; window.keep = [];
  try { for (let i = 0; i < 96; i++) { const b = new ArrayBuffer(16 << 20); new Uint8Array(b).fill(1); window.keep.push(b); window.got += 16; } }
  catch (e) { window.refused = String(e); }
}
</script></body></html>"""
HEAP, BUFFERS = (60, 30), (60, 100)
BOUND_MB = 1024  # an idle renderer holds 500-650 MB of RLIMIT_DATA already: a page has about 400 MB of its own


def test_a_page_that_allocates_past_the_bound_costs_its_own_episode_and_the_next_one_works(site: Path) -> None:
    (site / "hog.html").write_text(HOG)
    options = {"root": ".", "viewport": [300, 200], "page_memory_mb": BOUND_MB, "command_timeout": 60}
    hog = task("hog", start="hog.html", success="true")
    env = envs.open_env("webapp", options, str(site))
    try:
        assert env.browser.host.memory_bound
        env.reset(hog, 0)  # ArrayBuffers (outside V8's heap): the allocation past the bound fails in the page's script
        env.step(Action("click", point=BUFFERS, space="screen"))
        got, refused = env.run_js("() => [window.got, window.refused]")
        assert 0 < got < BOUND_MB and "allocation failed" in refused, (got, refused)
        env.reset(hog, 0)  # the JavaScript heap: the renderer is ended and the step fails, naming the bound
        with pytest.raises(EnvFailure, match=rf"the page's renderer crashed \(.*\): a page that takes more than env_options.page_memory_mb \({BOUND_MB} MB\)"):
            env.step(Action("click", point=HEAP, space="screen"))
        assert not env.usable() and env.browser.host.connected()  # that page is gone, the browser is not
    finally:
        env.close()
    again = envs.open_env("webapp", options, str(site))
    try:
        assert again.browser.host is env.browser.host and pressed(again)
    finally:
        again.close()


# WebGL textures live in the GPU process, not the page's renderer: 16 MiB each, until the context is lost, 160 at most
# (2.5 GiB), so a run without the GPU process's bound ends too (and fails the test) without taking all the machine's memory
WEBGL = """<!DOCTYPE html><html><body style="margin: 0"><canvas id="c" width="64" height="64"></canvas><script>
window.made = 0; window.lost = false;
function textures() {
  const canvas = document.getElementById("c"), gl = canvas.getContext("webgl");
  canvas.addEventListener("webglcontextlost", () => { window.lost = true; });
  const data = new Uint8Array(2048 * 2048 * 4).fill(7), keep = [];
  return new Promise(done => {
    (function more() {
      if (window.lost || window.made >= 160) return done([window.made, window.lost]);
      const texture = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, 2048, 2048, 0, gl.RGBA, gl.UNSIGNED_BYTE, data);
      gl.finish();
      keep.push(texture);
      window.made++;
      setTimeout(more, 0);
    })();
  });
}
</script></body></html>"""


def gpu_limits(browser_pid: int) -> list[int]:
    """RLIMIT_DATA of each GPU process of the browser ``browser_pid`` (its process group)."""
    import resource

    found = []
    for pid in browser_processes.group(browser_pid):
        try:
            if b"--type=gpu-process" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(resource.prlimit(pid, resource.RLIMIT_DATA)[0])
        except OSError:
            continue
    return found


def test_webgl_textures_past_the_bound_cost_the_pages_gl_context_and_the_browser_goes_on(site: Path) -> None:
    # before: only the zygotes and renderers were bounded; the GPU process, started before the bound, held every page's
    # textures without one (a texture loop took it to 6.6 GB)
    (site / "gl.html").write_text(WEBGL)
    unbounded = {"root": ".", "viewport": [300, 200], "page_memory_mb": 0, "command_timeout": 60}
    env = envs.open_env("webapp", unbounded, str(site))
    try:
        env.reset(task("gl", start="gl.html", success="true"), 0)
        assert env.run_js("() => !!document.createElement('canvas').getContext('webgl')")  # the GPU process runs now
        host = env.browser.host
        assert browser_processes.limit_renderers(host.pid, BOUND_MB << 20)  # what BrowserHost does once Chromium has started
        assert gpu_limits(host.pid) == [BOUND_MB << 20]
        made, lost = env.run_js("() => textures()")
        assert lost and made < 160, (made, lost)  # the GPU process ended at the bound: the page's context is lost
        assert gpu_limits(host.pid) in ([], [BOUND_MB << 20])  # one started again is forked from a zygote: bounded too
        assert pressed(env) and host.connected()  # the browser, and the next episode, go on
    finally:
        env.close()
    bounded = envs.open_env("webapp", {**unbounded, "page_memory_mb": BOUND_MB}, str(site))  # the ordinary way: at start
    try:
        bounded.reset(task("gl", start="gl.html", success="true"), 0)
        assert bounded.run_js("() => !!document.createElement('canvas').getContext('webgl')")
        assert gpu_limits(bounded.browser.host.pid) == [BOUND_MB << 20]
    finally:
        bounded.close()


def test_page_memory_mb_is_checked() -> None:
    for bad in (-1, 100, 1.5, "2G", True):
        with pytest.raises(EnvFailure, match=rf"env_options.page_memory_mb must be a whole number of MB, 512 or more \(or 0: no bound\), got {bad!r}"):
            browser.page_memory({"page_memory_mb": bad})
    assert browser.page_memory({}) == browser_processes.PAGE_MEMORY_MB == 2048 and browser.page_memory({"page_memory_mb": 0}) == 0


# -- through pytest ----------------------------------------------------------------------------------------------------

STUCK = [
    {"id": "never-settles", "instruction": "Press the red button.", "success": NEVER, "solution": [{"click": "#red"}]},
    {"id": "spins", "instruction": "Press the red button.", "success": SPINS, "solution": [{"click": "#red"}]},
    # a page whose button takes 1.5 GB of JavaScript heap when pressed, past the suite's page_memory_mb
    {
        "id": "hog",
        "instruction": "Press the red button.",
        "success": "true",
        "solution": [{"click": "#red"}],
        "setup": "document.querySelector('#red').addEventListener('click', () => { window.keep = []; for (let i = 0; i < 192; i++) window.keep.push(new Array(1 << 20).fill(i + 0.5)); });",
    },
]
GOOD = {f"{name}-seed{seed}" for name in ("press-green", "press-blue", "write-hello") for seed in (0, 1)}


def stuck_tasks() -> list[dict]:
    """tests/live_app's tasks the oracle solves, two seeds each, with the stuck ones early: under -n 2 each worker that
    runs a stuck episode has good ones after it."""
    good = [dict(t, seeds=[0, 1]) for t in yaml.safe_load((APP / "tasks.yaml").read_text()) if t["id"] in ("press-green", "press-blue", "write-hello")]
    return good[:1] + STUCK + good[1:]


SUITE = """
name: stuck
format: webtask
data: {dir: ., base: suite, annotations: tasks.yaml}
task: live
env: webapp
env_options: {root: ., viewport: [800, 600], zoom: 1, check_timeout: 1, command_timeout: 20, page_memory_mb: 1024}
max_steps: 5
id: "{task}-seed{seed}"
tags: [task]
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_suite_with_stuck_checks_errs_on_those_and_hits_the_rest(pytester: pytest.Pytester, mode: list[str]) -> None:
    _require()
    folder = pytester.path / "suites" / "stuck"
    folder.mkdir(parents=True)
    shutil.copy(APP / "index.html", folder / "index.html")
    (folder / "suite.yaml").write_text(SUITE)
    (folder / "tasks.yaml").write_text(yaml.safe_dump(stuck_tasks()))
    # the safety net only: before, the first stuck check held the worker's browser for 120 s and every later episode too
    result = pytester.runpytest_subprocess("suites/stuck", "--model=oracle", "-p", "no:cacheprovider", *mode, timeout=300)
    assert result.ret == 1, result.stdout.str()
    cases = {c["id"]: c for c in json.loads((pytester.path / "reports" / "stuck.json").read_text())["cases"]}
    assert {i for i, c in cases.items() if c["verdict"] == "hit"} == GOOD, {i: (c["verdict"], c.get("error")) for i, c in cases.items()}
    for name in ("never-settles", "spins"):
        case = cases[f"{name}-seed0"]
        assert case["verdict"] == "error"
        assert f"web task '{name}', success check: did not finish within 1 s (env_options.check_timeout)" in case["error"], case["error"]
    hog = cases["hog-seed0"]
    assert hog["verdict"] == "error" and "the page's renderer crashed" in hog["error"], hog
    assert "env_options.page_memory_mb (1024 MB)" in hog["error"]
