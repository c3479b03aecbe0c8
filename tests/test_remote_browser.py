"""Web suites on a browser that is not launched here: a Chromium reached through its DevTools endpoint, a Playwright
browser server (docs/live_envs.md, "Remote browsers").

Each test starts the remote browser itself, on 127.0.0.1: Debian's Chromium with ``--remote-debugging-port``, or a
Playwright server from Playwright's own ``launchServer`` run by the Node.js Playwright's Python package ships (no
download: it launches the same Chromium by its path). The pytest runs set ``GUITEST_CHROMIUM`` to a path that does not
exist, so an episode that fell back on a local browser would fail. Few tasks and seeds: the whole subset is
bench/bench_live.py's job.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from guitest import envs
from guitest.envs import browser, servers
from guitest.envs.browser import launch as browser_launch, watchdog as browser_watchdog
from guitest.envs.pool import EnvPool
from guitest.live.baseline_policies import OraclePolicy
from guitest.live.loop import run_episode
from guitest.live.protocol import EnvFailure, TaskSpec
from guitest.plan.runconfig import ConfigError, from_values

from guitest.live.actions import Action
from test_live_browser import CHROMIUM, _require, chromium_version
from test_live_stuck import SPIN, pressed, site, task  # noqa: F401 - site: the stuck-page tests' web app, a fixture

REPO = Path(__file__).resolve().parents[1]
TASKS = ["click-button", "click-link", "enter-text"]  # the oracle solves each; one seed each
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NO_LOCAL_BROWSER = "/nonexistent/chromium"  # GUITEST_CHROMIUM in the pytest runs: only the remote browser can serve


@contextlib.contextmanager
def devtools_chromium(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A Chromium listening for DevTools on a free port of 127.0.0.1: its ``http://127.0.0.1:PORT`` and its process."""
    _require()
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    proc = subprocess.Popen(
        [CHROMIUM, *FLAGS, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1", f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                break
        else:
            pytest.fail(f"{CHROMIUM} exited ({proc.wait()}) without a DevTools endpoint")
        proc.stderr.close()
        yield f"http://127.0.0.1:{found.group(1)}", proc
    finally:
        kill(proc)


def kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@contextlib.contextmanager
def playwright_server() -> Iterator[str]:
    """A Playwright browser server (``chromium.launchServer``, Chromium by its path) on 127.0.0.1: its ws:// URL."""
    _require()
    import playwright

    driver = Path(playwright.__file__).parent / "driver"
    script = (
        "const { chromium } = require(process.argv[1]);"
        "chromium.launchServer({ executablePath: process.argv[2], host: '127.0.0.1', port: 0, args: JSON.parse(process.argv[3]) })"
        ".then(s => console.log(s.wsEndpoint()));"
    )
    proc = subprocess.Popen(
        [str(driver / "node"), "-e", script, str(driver / "package"), CHROMIUM, json.dumps(FLAGS[1:])], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("ws://127.0.0.1:"), f"no Playwright server came up ({proc.poll()})"
        yield line
    finally:
        kill(proc)  # type: ignore[arg-type]


def oracle_episode(options: dict[str, Any], name: str, seed: int = 1) -> Any:
    env = envs.open_env("miniwob", options)
    try:
        return run_episode(env, TaskSpec(env="miniwob", name=name), seed, OraclePolicy(env), 10)
    finally:
        env.close()


def test_the_oracle_succeeds_on_a_playwright_browser_server() -> None:
    with playwright_server() as ws:
        try:
            episode = oracle_episode({"browser_endpoints": [ws]}, "click-button")
        finally:
            envs.shutdown()
    assert episode.error is None and episode.success, episode


def test_a_dead_endpoint_is_taken_out_and_the_pages_go_to_the_live_one(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{servers.free_port()}"
    with devtools_chromium(tmp_path) as (live, proc):
        options = {"browser_endpoints": [dead, live], "episodes_per_endpoint": 2}
        pool = EnvPool("miniwob", options, size=8)
        assert pool.size == 4  # two endpoints, two episodes each
        try:
            episode = oracle_episode(options, "click-link")
            assert episode.error is None and episode.success, episode
            kill(proc)
            with pytest.raises(EnvFailure) as failed:
                envs.open_env("miniwob", options)
        finally:
            pool.close()
            envs.shutdown()
    said = str(failed.value)
    assert said.startswith("no browser endpoint is left") and f"{dead}: the browser at {dead} could not be reached" in said
    assert f"{live}: the browser at {live} could not be reached" in said and "--lf" in said


def test_a_page_that_spins_on_a_remote_browser_costs_its_own_step(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(browser_watchdog, "GRACE", 1.0)
    with devtools_chromium(tmp_path) as (endpoint, _):
        options = {"root": ".", "viewport": [300, 200], "command_timeout": 2, "browser_endpoints": [endpoint]}
        stuck, beside = (envs.open_env("webapp", options, str(site)) for _ in range(2))
        try:
            stuck.reset(task("spin"), 0)
            with pytest.raises(EnvFailure, match=r"took longer than 2 s \(env_options.command_timeout\): its script was stopped"):
                stuck.step(Action("click", point=SPIN, space="screen"))
            assert beside.browser.host is stuck.browser.host and stuck.browser.host.endpoint == endpoint
            assert pressed(beside) and pressed(stuck)
        finally:
            stuck.close()
            beside.close()
            envs.shutdown()


def write_suite(root: Path, tasks: list[str]) -> None:
    folder = root / "suites" / "miniwob"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "suites" / "miniwob" / "suite.yaml", folder / "suite.yaml")
    rows = [{"task": name, "family": name.split("-")[0], "seeds": [1]} for name in tasks]
    (folder / "tasks.json").write_text(json.dumps(rows))


def run(pytester: pytest.Pytester, endpoint: str, *args: str) -> tuple[Any, dict[str, Any]]:
    result = pytester.runpytest_subprocess("suites/miniwob", f"--browser-endpoint={endpoint}", "--cache=off", "-p", "no:randomly", *args)
    report = json.loads((pytester.path / "reports" / "miniwob.json").read_text())
    return result, report


def trajectories(pytester: pytest.Pytester, report: dict[str, Any]) -> dict[str, Any]:
    def digest(path: str | None) -> str:
        return hashlib.sha256((pytester.path / "reports" / path).read_bytes() if path else b"").hexdigest()

    return {c["id"]: ([(digest(s["screenshot"]), s["actions"]) for s in c["episode"]["trajectory"]], c["episode"]["score"]) for c in report["cases"]}


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_miniwob_on_a_chromium_reached_through_its_devtools_endpoint(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: list[str]) -> None:
    monkeypatch.setenv("GUITEST_CHROMIUM", NO_LOCAL_BROWSER)
    write_suite(pytester.path, TASKS)
    with devtools_chromium(tmp_path) as (endpoint, _):
        result, report = run(pytester, endpoint, "--model=oracle", *mode)
        assert result.ret == 0, result.stdout.str()[-3000:]
        assert [c["verdict"] for c in report["cases"]] == ["hit"] * len(TASKS)
        # the manifest names the browser the episodes ran on, as it said in the process that reached it
        assert report["manifest"]["software"] == {"browser": [f"chromium {chromium_version()}"]}
        assert all("software" not in case for case in report["cases"])  # the run's record, not each case's
        if mode:
            return
        # the random policy's seeded episodes, twice: the same screens, actions and scores
        random = ("--model=random", "--seed=5", "--max-steps=3")
        first = trajectories(pytester, run(pytester, endpoint, *random)[1])
        second = trajectories(pytester, run(pytester, endpoint, *random)[1])
    assert len(first) == len(TASKS) and all(steps for steps, _ in first.values())
    assert first == second


def test_killing_the_remote_browser_mid_run_makes_errors_that_lf_runs_again(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUITEST_CHROMIUM", NO_LOCAL_BROWSER)
    write_suite(pytester.path, TASKS)
    # after the first case, the remote browser is killed (its process group, named by the test)
    pytester.makeconftest("""
import os, signal
def pytest_runtest_logreport(report):
    if report.when == "call" and not os.environ.get("KILLED"):
        os.environ["KILLED"] = "1"
        os.killpg(int(os.environ["REMOTE_BROWSER_PGID"]), signal.SIGKILL)
""")
    with devtools_chromium(tmp_path) as (endpoint, proc):
        monkeypatch.setenv("REMOTE_BROWSER_PGID", str(proc.pid))
        result, report = run(pytester, endpoint, "--model=oracle")
    assert result.ret == 1, result.stdout.str()[-3000:]
    outcomes = [c["verdict"] for c in report["cases"]]  # episodes run ahead of the reports: the kill lands on the 2nd or 3rd
    assert outcomes[0] == "hit" and outcomes[-1] == "error" and set(outcomes) == {"hit", "error"}, outcomes
    errors = [c["error"] for c in report["cases"] if c["verdict"] == "error"]
    assert all(f"the browser at {endpoint} went away" in e or f"the browser at {endpoint} could not be reached" in e for e in errors), errors
    monkeypatch.setenv("KILLED", "1")  # the browser of the re-run stays up
    with devtools_chromium(tmp_path) as (again, _):
        result, report = run(pytester, again, "--model=oracle", "--lf")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([f"*{len(errors)} passed*"])
    assert [c["verdict"] for c in report["cases"]] == ["hit"] * len(TASKS)


def test_serve_file_cannot_reach_a_remote_browser_and_bad_options_say_what_to_give(tmp_path: Path) -> None:
    _require()
    with pytest.raises(EnvFailure, match="a browser on another host cannot open this host's files; use serve: http"):
        envs.open_env("miniwob", {"serve": "file", "browser_endpoints": ["http://127.0.0.1:9"]})
    with pytest.raises(EnvFailure, match=r"browser endpoint 'chromium:9222': expected http://HOST:PORT"):
        browser.endpoints({"browser_endpoints": "chromium:9222"})
    with pytest.raises(EnvFailure, match=r"episodes_per_endpoint \(--browser-episodes\) must be a whole number, 1 or more, got 0"):
        browser.capacity({"browser_endpoints": ["http://127.0.0.1:9"], "episodes_per_endpoint": 0})
    with pytest.raises(ConfigError, match=r"--browser-endpoint=ftp://farm/\?token=\*\*\*: expected http://HOST:PORT") as bad:
        from_values({"browser_endpoint": ["ws://127.0.0.1:3000/abc", "ftp://farm/?token=s3cret"]})
    assert "s3cret" not in str(bad.value)
    assert browser_launch.over_cdp("http://10.0.0.5:9222") and browser_launch.over_cdp("ws://h:9222/devtools/browser/abc")
    assert not browser_launch.over_cdp("ws://h:3000/f75c98decd")


def test_the_page_servers_listen_and_name_themselves_where_the_options_say(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>hi</p>")
    with pytest.raises(EnvFailure, match="serve_bind '0.0.0.0' listens on every interface: give serve_host"):
        servers.static(str(tmp_path), {"serve_bind": "0.0.0.0"})
    try:
        url = servers.static(str(tmp_path), {"serve_bind": "0.0.0.0", "serve_host": "guitest-runner.example"})
        assert re.fullmatch(r"http://guitest-runner\.example:\d+/", url), url
        import urllib.request

        port = url.rsplit(":", 1)[1].rstrip("/")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5) as answer:  # it listens beyond 127.0.0.1
            assert answer.read() == b"<p>hi</p>"
        assert servers.static(str(tmp_path)) != url  # the default, 127.0.0.1, is a server of its own
    finally:
        servers.shutdown()
