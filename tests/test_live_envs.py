"""Environment backends without a browser: the registry and entry points, the pool, local servers, install messages."""

from __future__ import annotations

import sys
import threading
import time
import urllib.request
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import guitest.envs as envs
from guitest import registry
from guitest.envs import servers
from guitest.envs.pool import EnvPool
from guitest.live.actions import Action
from guitest.live.protocol import EnvFailure, Evaluation, Observation, TaskSpec


class TinyEnv:
    instances: list["TinyEnv"] = []

    def __init__(self, options: dict, base_dir: str) -> None:
        self.options, self.base_dir, self.closed = options, base_dir, False
        TinyEnv.instances.append(self)

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        return Observation(b"png", (1, 1), task.instruction)

    def step(self, action: Action) -> Observation:
        return Observation(b"png", (1, 1), "")

    def evaluate(self) -> Evaluation:
        return Evaluation(True, 1.0)

    def close(self) -> None:
        self.closed = True


def tiny_factory(options: dict, base_dir: str) -> TinyEnv:
    return TinyEnv(options, base_dir)


def test_register_a_backend_and_open_it() -> None:
    envs.register("tiny-test", tiny_factory)
    env = envs.open_env("tiny-test", {"level": 2}, "/suites/x")
    assert isinstance(env, TinyEnv) and env.options == {"level": 2} and env.base_dir == "/suites/x"
    assert "tiny-test" in envs.names() and {"miniwob", "webapp"} <= set(envs.names())


def test_entry_point_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    good = EntryPoint("from-plugin", f"{__name__}:tiny_factory", envs.ENTRY_POINT_GROUP)
    broken = EntryPoint("broken-plugin", "no_such_module_here:make", envs.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [good, broken] if group == envs.ENTRY_POINT_GROUP else [])
    assert isinstance(envs.open_env("from-plugin"), TinyEnv)
    assert {"from-plugin", "broken-plugin"} <= set(envs.names())
    with pytest.raises(EnvFailure, match="broken-plugin.*cannot load entry point 'no_such_module_here:make'"):
        envs.open_env("broken-plugin")


def test_unknown_backend_and_a_factory_returning_something_else() -> None:
    with pytest.raises(EnvFailure, match=r"unknown environment backend 'nope'; known: .*miniwob.*guitest.envs.register"):
        envs.open_env("nope")
    envs.register("not-an-env", lambda options, base_dir: object())
    with pytest.raises(EnvFailure, match="lacks reset/step/evaluate/close"):
        envs.open_env("not-an-env")


def test_pool_bounds_reuses_and_replaces() -> None:
    made: list[TinyEnv] = []

    def make() -> TinyEnv:
        made.append(TinyEnv({}, "."))
        return made[-1]

    pool = EnvPool("tiny", size=2, make=make)
    a, b = pool.acquire(), pool.acquire()
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(pool.acquire()))
    waiter.start()
    time.sleep(0.2)
    assert got == [] and len(made) == 2  # the third waits: at most two exist
    pool.release(a)
    waiter.join(timeout=5)
    assert got == [a]  # reused, not remade
    pool.release(b, broken=True)
    assert b.closed
    c = pool.acquire()
    assert c is made[2] and len(made) == 3  # the broken one was replaced
    pool.release(c)
    with pytest.raises(EnvFailure), pool.lease() as leased:
        assert leased is c
        raise EnvFailure("page crashed")
    assert c.closed  # an episode whose environment failed does not hand it on
    with pool.lease() as fresh:
        assert fresh is made[3]
    pool.release(got[0])  # type: ignore[arg-type]
    pool.close()
    assert a.closed and made[3].closed
    with pytest.raises(EnvFailure, match="closed"):
        pool.acquire()


def test_pool_hands_an_episode_the_environment_that_ran_its_task_last() -> None:
    pool = EnvPool("tiny", size=3, make=lambda: TinyEnv({}, "."))
    a, b, c = pool.acquire(), pool.acquire(), pool.acquire()
    pool.release(a, affinity="click-button")
    pool.release(b, affinity="enter-text")
    pool.release(c, affinity="click-link")
    assert pool.acquire(affinity="enter-text") is b  # not the last released (c): b has enter-text's page loaded
    assert pool.acquire(affinity="unseen-task") is c  # no match: the most recently released one
    pool.release(b, affinity="enter-text")
    assert pool.acquire(affinity="click-button") is a
    pool.close()


class GaugedEnv(TinyEnv):
    """A TinyEnv whose backend reports how busy it is (as the browser backends' shared thread does)."""

    busy = 0.0

    def load(self) -> float:
        return GaugedEnv.busy


def _acquire_in_thread(pool: EnvPool, affinity: str | None = None) -> tuple[threading.Thread, list[object]]:
    got: list[object] = []
    thread = threading.Thread(target=lambda: got.append(pool.acquire(affinity=affinity)), daemon=True)
    thread.start()
    return thread, got


def test_pool_grows_to_its_size_while_the_backend_has_time_to_spare() -> None:
    GaugedEnv.busy = 0.1  # a slow agent: the backend mostly waits on the model
    pool = EnvPool("gauged", size=4, make=lambda: GaugedEnv({}, "."))
    started = [_acquire_in_thread(pool) for _ in range(4)]
    for thread, _ in started:
        thread.join(timeout=10)
    leased = [got[0] for _, got in started]
    assert len({id(e) for e in leased}) == 4  # four at once, each its own
    pool.close()


def test_pool_does_not_grow_while_the_backend_is_busy() -> None:
    GaugedEnv.busy = 0.95  # a fast agent: the shared thread is the bottleneck, a new context only adds work
    made: list[GaugedEnv] = []

    def make() -> GaugedEnv:
        made.append(GaugedEnv({}, "."))
        return made[-1]

    pool = EnvPool("gauged", size=4, make=make)
    first = pool.acquire()
    thread, got = _acquire_in_thread(pool)
    time.sleep(0.6)  # more than two chances to grow
    assert got == [] and len(made) == 1
    pool.release(first)
    thread.join(timeout=5)
    assert got == [first]
    GaugedEnv.busy = 0.1
    second = pool.acquire()  # time to spare again: it grows
    assert second is not first and len(made) == 2
    pool.close()


def test_a_busy_backend_keeps_a_task_on_the_environment_that_has_its_page() -> None:
    GaugedEnv.busy = 0.1
    pool = EnvPool("gauged", size=3, make=lambda: GaugedEnv({}, "."))
    a = pool.acquire(affinity="click-button")
    b = pool.acquire(affinity="enter-text")
    pool.release(b, affinity="enter-text")
    GaugedEnv.busy = 0.95
    thread, got = _acquire_in_thread(pool, "click-button")
    time.sleep(0.4)
    assert got == []  # b is idle, but loading click-button there would take the busy thread's time: it waits for a
    pool.release(a, affinity="click-button")
    thread.join(timeout=5)
    assert got == [a]
    GaugedEnv.busy = 0.1  # with time to spare nobody waits: the idle environment loads the page
    assert pool.acquire(affinity="click-button") is b
    pool.close()


def test_pool_make_failure_frees_its_slot() -> None:
    calls = []

    def make() -> TinyEnv:
        calls.append(1)
        if len(calls) == 1:
            raise EnvFailure("no browser")
        return TinyEnv({}, ".")

    pool = EnvPool("tiny", size=1, make=make)
    with pytest.raises(EnvFailure):
        pool.acquire()
    assert isinstance(pool.acquire(), TinyEnv)
    with pytest.raises(ValueError):
        EnvPool("tiny", size=0, make=make)


def test_pool_replaces_an_idle_environment_that_is_no_longer_usable() -> None:
    """A browser environment whose page crashed or whose browser was killed while it sat idle says so in usable(): the
    pool closes it rather than hand it to an episode that would fail at reset (with the lock released, and the slot
    freed for a new one, also when its size is 1)."""

    class Fragile(TinyEnv):
        ok = True

        def usable(self) -> bool:
            return self.ok

    pool = EnvPool("tiny", size=1, make=lambda: Fragile({}, "."))
    first = pool.acquire(affinity="a")
    pool.release(first, affinity="a")
    assert pool.acquire(affinity="a") is first  # usable: reused
    pool.release(first, affinity="a")
    first.ok = False  # its browser went away while it was idle
    second = pool.acquire(affinity="a")
    assert second is not first and first.closed and not second.closed


def test_static_server_serves_a_folder_on_loopback(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>hello</p>")
    url = servers.static(str(tmp_path))
    assert url.startswith("http://127.0.0.1:") and servers.static(str(tmp_path)) == url
    with urllib.request.urlopen(url + "index.html", timeout=5) as reply:
        assert reply.read() == b"<p>hello</p>" and reply.headers["Cache-Control"] == "no-store"
    with pytest.raises(EnvFailure, match="no such folder"):
        servers.static(str(tmp_path / "missing"))


def test_command_server_starts_answers_and_stops(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("served by a command")
    argv = [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1"]
    url = servers.command(argv, str(tmp_path), ready_path="/page.html", timeout=20)
    assert url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(url + "page.html", timeout=5) as reply:
        assert reply.read() == b"served by a command"
    assert servers.command(argv, str(tmp_path)) == url  # started once per process
    servers.shutdown()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "page.html", timeout=2)


def test_command_server_that_exits_names_its_log(tmp_path: Path) -> None:
    with pytest.raises(EnvFailure, match=r"exited with status 3 before answering; its output is in .*guitest-server-.*\.log") as info:
        servers.command([sys.executable, "-c", "print('bad config'); raise SystemExit(3)"], str(tmp_path), timeout=10)
    log = str(info.value).rsplit("its output is in ", 1)[1]
    assert Path(log).read_text().strip() == "bad config"
    with pytest.raises(EnvFailure, match="cannot start"):
        servers.command(["/no/such/program"], str(tmp_path))


def test_missing_browser_says_how_to_install_it() -> None:
    pytest.importorskip("playwright")
    from guitest.envs.browser.host import BrowserHost

    with pytest.raises(EnvFailure, match=r"no Chromium at /no/such/chromium: install Debian's Chromium with `apt-get install chromium`"):
        BrowserHost("/no/such/chromium")


def test_missing_playwright_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from guitest.envs.browser.host import BrowserHost

    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    with pytest.raises(EnvFailure, match=r"need Playwright, which is not installed: install it with `pip install 'guitest\[live\]'`"):
        BrowserHost("/usr/bin/chromium")


def test_missing_miniwob_pages_say_how_to_install_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from guitest.miniwob.env import html_dir

    monkeypatch.setitem(sys.modules, "miniwob", None)
    with pytest.raises(EnvFailure, match=r"pip install 'guitest\[live\]'"):
        html_dir({})
    with pytest.raises(EnvFailure, match="has no miniwob/ folder"):
        html_dir({"html_dir": str(tmp_path)})


def test_webapp_options_are_checked_before_a_browser_starts(tmp_path: Path) -> None:
    from guitest.envs.webapp import WebAppEnv

    with pytest.raises(EnvFailure, match="exactly one of root, server, base_url; got none"):
        WebAppEnv({}, str(tmp_path))
    with pytest.raises(EnvFailure, match="exactly one of root, server, base_url; got \\['root', 'base_url'\\]"):
        WebAppEnv({"root": ".", "base_url": "http://127.0.0.1:1/"}, str(tmp_path))
    with pytest.raises(EnvFailure, match="server needs command"):
        WebAppEnv({"server": {"cwd": "."}}, str(tmp_path))
    with pytest.raises(EnvFailure, match="viewport must be"):
        WebAppEnv({"base_url": "http://127.0.0.1:1", "viewport": [0, 10]}, str(tmp_path))
    for name in ("check_timeout", "command_timeout"):
        for bad in (0, -1, "soon", True, float("nan"), float("inf"), None):
            with pytest.raises(EnvFailure, match=f"env_options.{name} must be a number of seconds above 0, got"):
                WebAppEnv({"base_url": "http://127.0.0.1:1", name: bad}, str(tmp_path))
