"""Live tasks in a real Chromium (Debian's, through Playwright's executable_path): MiniWoB++ and the example web app.

Needs ``/usr/bin/chromium`` (tests/setup_browser.sh), ``playwright`` and ``miniwob`` (the ``live``
extra). Without them the tests are skipped with the reason, or fail when GUITEST_REQUIRE_BROWSER is
set (tox sets it). A few tasks and seeds only: the whole oracle subset over every seed is
bench/bench_live.py's job.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
from PIL import Image

from guitest import envs
from guitest.formats import webtask
from guitest.live.actions import Action
from guitest.live.baseline_policies import OraclePolicy, RandomPolicy, oracle_reason
from guitest.live import runners
from guitest.live.loop import Decision, StepInput, run_episode
from guitest.live.protocol import EnvFailure, TaskSpec
from guitest.miniwob.env import MiniWobEnv
from guitest.suite import Suite

REPO = Path(__file__).resolve().parents[1]
WEBAPP = REPO / "suites" / "my_webapp"
CHROMIUM = os.environ.get("GUITEST_CHROMIUM", "/usr/bin/chromium")


def chromium_version() -> str:
    """The version the Chromium binary prints (``chromium --version``), asked of the binary, not of Playwright."""
    printed = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=60).stdout
    found = re.search(r"Chromium (\d+(?:\.\d+)+)", printed)
    assert found, printed
    return found.group(1)


def _require() -> None:
    missing = pytest.fail if os.environ.get("GUITEST_REQUIRE_BROWSER") else pytest.skip
    if not os.path.isfile(CHROMIUM):
        missing(f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium, or bash tests/setup_browser.sh)")
    for module, hint in (("playwright", "pip install playwright (no 'playwright install' needed)"), ("miniwob", "pip install miniwob")):
        try:
            __import__(module)
        except ImportError:
            missing(f"the {module} package is not installed ({hint}; both come with the live extra)")


@pytest.fixture(scope="module")
def mw() -> Iterator[MiniWobEnv]:
    _require()
    env = envs.open_env("miniwob", {"zoom": 3})
    yield env  # type: ignore[misc]
    env.close()
    envs.shutdown()


def task(name: str) -> TaskSpec:
    return TaskSpec(env="miniwob", name=name)


def rgb(png: bytes, x: int, y: int) -> tuple[int, int, int]:
    return Image.open(io.BytesIO(png)).convert("RGB").getpixel((x, y))  # type: ignore[return-value]


def test_reset_is_determined_by_the_seed(mw) -> None:
    first = mw.reset(task("click-checkboxes"), 3)
    other = mw.reset(task("click-checkboxes"), 4)
    again = mw.reset(task("click-checkboxes"), 3)
    assert first.instruction == again.instruction and first.instruction.startswith("Select ")
    assert first.screenshot == again.screenshot  # the same pixels, byte for byte
    assert (other.instruction, other.screenshot) != (first.instruction, first.screenshot)


def test_the_screen_is_the_task_area_at_zoom_3(mw) -> None:
    obs = mw.reset(task("click-test"), 0)
    assert obs.size == (480, 630) and obs.scale == 3.0
    assert Image.open(io.BytesIO(obs.screenshot)).size == (480, 630)
    assert rgb(obs.screenshot, 10, 10) == (255, 255, 0)  # the yellow instruction bar (CSS 0..50 px high)
    assert rgb(obs.screenshot, 470, 620) == (255, 255, 255)  # the white task area, not the grey page beside it
    assert obs.text is None
    mw.dom_text = True
    try:
        listed = mw.reset(task("click-test"), 0).text
    finally:
        mw.dom_text = False
    left, top, width, height = mw.run_js("() => { const r = document.getElementById('subbtn').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    assert f"button 'Click Me!' at ({left * 3:.0f}, {top * 3:.0f}, {(left + width) * 3:.0f}, {(top + height) * 3:.0f})" in listed


SHOW_CARET = "() => { document.adoptedStyleSheets = document.adoptedStyleSheets.filter(s => s !== window.__guitestHideCaret); }"


def test_the_screenshot_has_playwrights_pixels_is_stable_and_shows_no_caret(mw) -> None:
    from guitest.envs.browser.steps import screenshot

    mw.reset(task("enter-text"), 2)

    def shots(page):
        page.focus("#tt")  # the text field has the focus: its caret blinks
        page.keyboard.type("hello")
        page.evaluate("() => { document.body.style.height = '3000px'; window.scrollTo(0, 7); }")  # clip moved with the scroll
        area = mw.area
        clip = {"x": area.x, "y": area.y, "width": area.width, "height": area.height}
        ours = [screenshot(page, area) for _ in range(3)]
        playwright = page.screenshot(clip=clip, type="png", animations="allow", caret="hide")
        page.evaluate(SHOW_CARET)
        shown = []
        for _ in range(12):  # over more than one blink (about a second)
            shown.append(page.screenshot(clip=clip, type="png", animations="allow", caret="initial"))
            time.sleep(0.1)
        return ours, playwright, shown

    assert getattr(mw.browser.page, "_guitest_cdp", None) is not None  # the DevTools path is the one measured
    ours, playwright, shown = mw.browser.run(shots)
    assert ours[0] == ours[1] == ours[2]  # the same screen gives the same bytes (the per-step cache keys on them)

    def pixels(png: bytes) -> bytes:
        return Image.open(io.BytesIO(png)).convert("RGB").tobytes()

    assert pixels(ours[0]) == pixels(playwright)  # lossless, the same pixels as Playwright's own screenshot
    assert any(pixels(s) != pixels(playwright) for s in shown)  # the caret blinks into some of these: it was hidden
    mw.reset(task("enter-text"), 2)  # a fresh document: the page is as the other tests expect


def test_clicks_are_mapped_back_from_screenshot_pixels(mw) -> None:
    mw.reset(task("click-test"), 1)
    left, top, width, height = mw.run_js("() => { const r = document.getElementById('subbtn').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    centre = ((left + width / 2) * 3, (top + height / 2) * 3)
    # the same numbers read as CSS pixels would miss (the button is not near the top-left third of itself)
    assert not (left <= centre[0] / 9 <= left + width and top <= centre[1] / 9 <= top + height)
    obs = mw.step(Action("click", point=centre, space="screen"))
    assert obs.done and obs.info == {"raw_reward": 1}
    evaluation = mw.evaluate()
    assert evaluation.success and evaluation.score == 1.0
    # the final screenshot shows the page as left, not MiniWoB++'s START cover
    assert rgb(obs.screenshot, 10, 10) == (255, 255, 0)


def test_a_wrong_click_reads_the_negative_reward(mw) -> None:
    mw.reset(task("click-test-2"), 0)
    left, top, width, height = mw.run_js("() => { const r = document.getElementById('subbtn2').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    obs = mw.step(Action("click", point=((left + width / 2) * 3, (top + height / 2) * 3), space="screen"))
    assert obs.done
    evaluation = mw.evaluate()
    assert not evaluation.success and evaluation.score == -1.0


def test_outside_the_screenshot_nothing_happens(mw) -> None:
    mw.reset(task("click-test"), 0)
    obs = mw.step(Action("click", point=(600, 100), space="screen"))
    assert obs.info["notes"] == ["outside_screen"] and not obs.done
    assert mw.evaluate().reason.startswith("the episode did not finish")


def test_the_task_timer_is_off(mw) -> None:
    # The task's own timer shortened to 300 ms on every document of a context of its own (each episode gets a fresh
    # document): started by hand it ends the episode at -1 ("timed out") ...
    env = envs.open_env("miniwob", {"zoom": 3})
    try:
        env.browser.run(lambda page: page.context.add_init_script("document.addEventListener('DOMContentLoaded', () => { core.EPISODE_MAX_TIME = 300; })"))
        env.reset(task("click-test"), 0)
        env.run_js("() => core.startEpisodeReal()")
        time.sleep(0.7)
        assert env.run_js("() => [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]") == [True, -1]
        # ... started by reset() it never fires.
        env.reset(task("click-test"), 0)
        time.sleep(0.7)
        assert env.run_js("() => [WOB_DONE_GLOBAL, core.EPISODE_MAX_TIME]") == [False, 300]
    finally:
        env.close()


@pytest.mark.parametrize("runner", ["guitest", "uitars15", "qwen3vl", "aguvis"])
def test_the_oracle_solves_its_tasks_in_every_convention(mw, runner: str) -> None:
    policy = OraclePolicy(mw, runners.get(runner))
    for name, seed in (("enter-text", 0), ("click-checkboxes", 1), ("click-tab-2", 4)):
        episode = run_episode(mw, task(name), seed, policy, 15)
        assert episode.success, (name, seed, episode.end, [s.text for s in episode.steps])
        assert episode.end == "env_done" and all(s.actions for s in episode.steps)
    assert oracle_reason(task("book-flight")) is not None and oracle_reason(task("enter-text")) is None


def click_css(mw, x: float, y: float):
    return mw.step(Action("click", point=(x * 3, y * 3), space="screen"))


def submit(mw):
    left, top, width, height = mw.run_js("() => { const r = document.getElementById('subbtn').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    return click_css(mw, left + width / 2, top + height / 2)


def test_circle_center_succeeds_under_the_default_rule(mw) -> None:
    # whole-pixel clicks cannot reach raw 1 there (guitest/miniwob/rules.py): the oracle puts the page's dot on
    # the centre, the best there is ...
    assert mw.success_rule == "binary"
    episode = run_episode(mw, task("circle-center"), 0, OraclePolicy(mw), 15)
    assert episode.success and episode.end == "env_done" and len(episode.steps) == 2, [s.text for s in episode.steps]
    assert round(episode.score, 4) == 0.9717  # r = 25 at seed 0: 1 - 0.71/25
    # ... and a pointer on the drawn centre, which the page scores 2 px off, succeeds too
    mw.reset(task("circle-center"), 0)
    left, top, cx, cy = mw.run_js(
        "() => { const s = document.querySelector('#area svg').getBoundingClientRect(); const c = document.querySelector('#area .black-circle'); return [s.left, s.top, +c.getAttribute('cx'), +c.getAttribute('cy')]; }"
    )
    click_css(mw, left + cx + 0.5, top + cy + 0.5)
    assert submit(mw).done
    evaluation = mw.evaluate()
    assert evaluation.success and round(evaluation.score, 4) == 0.9151 and "circle-center's threshold" in evaluation.reason


def test_the_oracle_solves_the_other_continuous_tasks(mw) -> None:
    # bisect-angle seed 1's best dot lies under the Submit button's corner; the colour picker opens over Submit
    policy = OraclePolicy(mw)
    for name, seed, lowest in (("bisect-angle", 1, 0.99), ("find-midpoint", 1, 0.97), ("use-colorwheel", 0, 1.0), ("use-colorwheel-2", 0, 1.0)):
        episode = run_episode(mw, task(name), seed, policy, 15)
        assert episode.success and episode.score >= lowest, (name, seed, episode.score, [s.text for s in episode.steps])


def test_a_box_left_unticked_is_a_success_under_browsergym_only(mw) -> None:
    for seed in range(5):  # a seed with 3 or more boxes, one of them wanted
        obs = mw.reset(task("click-checkboxes"), seed)
        boxes = mw.run_js(
            "() => Array.from(document.querySelectorAll('#area label')).map(l => { const r = l.querySelector('input').getBoundingClientRect(); return [l.textContent.trim(), r.left + r.width / 2, r.top + r.height / 2]; })"
        )
        wanted = obs.instruction[len("Select ") : -len(" and click Submit.")].split(", ")
        if len(boxes) >= 3 and wanted != ["nothing"]:
            break
    for name, x, y in boxes:
        if name in wanted[1:]:  # the first wanted box stays unticked
            click_css(mw, x, y)
    assert submit(mw).done
    binary = mw.evaluate()
    mw.success_rule = "browsergym"
    try:
        browsergym = mw.evaluate()
    finally:
        mw.success_rule = "binary"
    assert binary.score == browsergym.score == (len(boxes) - 2) / len(boxes) > 0
    assert not binary.success and browsergym.success


def test_garbage_replies_run_out_the_budget(mw) -> None:
    class Garbage:
        def act(self, step: StepInput) -> Decision:
            return Decision(reply="hmm", notes=("no_action",))

    episode = run_episode(mw, task("click-button"), 0, Garbage(), 3)
    assert episode.end == "budget" and not episode.success and len(episode.steps) == 3
    assert episode.evaluation is not None and episode.evaluation.score == 0.0


def test_random_policy_is_reproducible(mw) -> None:
    runs = [run_episode(mw, task("click-button"), 2, RandomPolicy(seed=5), 4) for _ in range(2)]
    assert [s.text for s in runs[0].steps] == [s.text for s in runs[1].steps]
    assert runs[0].score == runs[1].score


def test_two_episodes_at_once_in_two_contexts(mw) -> None:
    second = envs.open_env("miniwob", {"zoom": 3, "serve": "http"})  # the second over a 127.0.0.1 server, the first over file://
    assert second.base.startswith("http://127.0.0.1:") and mw.base.startswith("file://")
    results: dict[str, bool] = {}

    def run(env, name: str) -> None:
        results[name] = run_episode(env, task(name), 1, OraclePolicy(env), 15).success

    threads = [threading.Thread(target=run, args=(mw, "login-user")), threading.Thread(target=run, args=(second, "enter-password"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    second.close()
    assert results == {"login-user": True, "enter-password": True}


def test_the_browser_thread_says_how_busy_it_is(mw) -> None:
    """The gauge the pool grows by: near 1 while commands follow each other, near 0 once they stop."""
    until = time.monotonic() + 1.2
    while time.monotonic() < until:
        mw.run_js("() => 1")
    busy = mw.load()
    time.sleep(1.1)
    assert busy > 0.7 and mw.load() < 0.1


def test_the_environment_says_which_browser_it_runs_on(mw) -> None:
    """What the run's manifest records of a browser suite (guitest compare names a change): the browser's name and
    version, as the binary itself prints them, read from the browser already started (none started for it)."""
    assert mw.software() == {"browser": [f"chromium {chromium_version()}"]}


def test_unknown_task_is_an_environment_failure(mw) -> None:
    with pytest.raises(EnvFailure, match="no MiniWoB\\+\\+ task 'no-such-task'"):
        mw.reset(task("no-such-task"), 0)


# -- the example web app --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def web_samples():
    suite = Suite(
        path=WEBAPP / "suite.yaml",
        name="my_webapp",
        format="webtask",
        data={"dir": ".", "base": "suite", "images": ".", "annotations": "tasks.yaml"},
        task="live",
        prompt="default",
        id_template="{task}-seed{seed}",
        tags=("task", "family"),
        cross=(),
        average="micro",
    )
    return webtask.read(suite, str(WEBAPP))


@pytest.fixture(scope="module")
def web() -> Iterator[envs.webapp.WebAppEnv]:
    _require()
    env = envs.open_env("webapp", {"root": "app", "viewport": [800, 600]}, str(WEBAPP))
    yield env  # type: ignore[misc]
    env.close()
    envs.shutdown()


def test_the_example_web_suite_oracle_succeeds_and_doing_nothing_does_not(web, web_samples) -> None:
    done = Decision("Action: done()", (Action("done"),))

    class SaysDone:
        def act(self, step: StepInput) -> Decision:
            return done

    policy = OraclePolicy(web, runners.get("qwen25vl"))
    for sample in [s for s in web_samples if s.data["seed"] == 1]:
        spec = TaskSpec.from_dict(sample.data["task"])
        solved = run_episode(web, spec, 1, policy, 10)
        assert solved.success, (spec.name, solved.end, solved.error, [s.text for s in solved.steps])
        idle = run_episode(web, spec, 1, SaysDone(), 10)
        assert idle.end == "done" and not idle.success, spec.name  # no success check holds on the untouched app
    rename = next(TaskSpec.from_dict(s.data["task"]) for s in web_samples if s.id == "rename-seed0")
    assert run_episode(web, rename, 0, SaysDone(), 2).score == 0.5  # partial credit: the dialog is closed, the name unchanged


def test_each_web_episode_starts_clean_and_seeded(web, web_samples) -> None:
    spec = next(TaskSpec.from_dict(s.data["task"]) for s in web_samples if s.id == "delete-todo-seed0")
    assert run_episode(web, spec, 0, OraclePolicy(web), 10).success
    web.reset(spec, 0)
    titles = web.run_js("() => app.todos.map(t => t.title)")
    assert "Call the bank" in titles  # the deleted item is back: storage was cleared
    web.reset(spec, 2)
    assert web.run_js("() => app.todos.map(t => t.title)") != titles  # another seed, another start


def test_done_when_ends_the_episode(web, web_samples) -> None:
    spec = next(TaskSpec.from_dict(s.data["task"]) for s in web_samples if s.id == "show-done-seed0")
    episode = run_episode(web, spec, 0, OraclePolicy(web, runners.get("uitars15")), 10)
    assert episode.end == "env_done" and episode.success and len(episode.steps) == 1


def test_a_broken_success_check_is_an_environment_error_naming_the_task(web) -> None:
    spec = TaskSpec(env="webapp", name="broken", instruction="x", config={"start": "index.html", "success": "app.no.such.thing"})
    web.reset(spec, 0)
    with pytest.raises(EnvFailure, match="web task 'broken', success check"):
        web.evaluate()


def test_a_suite_server_command(tmp_path: Path) -> None:
    _require()
    (tmp_path / "index.html").write_text("<button id='b' onclick='window.pressed = true'>Press</button>")
    env = envs.open_env("webapp", {"server": {"command": [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1"], "cwd": "."}, "viewport": [300, 200]}, str(tmp_path))
    spec = TaskSpec(env="webapp", name="press", instruction="Press the button", config={"start": "index.html", "success": "window.pressed === true", "solution": [{"click": "#b"}]})
    try:
        episode = run_episode(env, spec, 0, OraclePolicy(env, runners.get("prompt-agent")), 3)
    finally:
        env.close()
        envs.shutdown()
    assert episode.success and episode.end == "done" and episode.screen_size == (300, 200)


def test_the_caret_is_hidden_on_a_page_whose_policy_forbids_inline_styles(tmp_path: Path) -> None:
    """A web app with a strict Content-Security-Policy (no inline style or script) still gets a caret-free screen."""
    _require()
    from guitest.envs.browser.steps import screenshot

    (tmp_path / "index.html").write_text(
        "<!DOCTYPE html><html><head><meta http-equiv='Content-Security-Policy' content=\"default-src 'self'\">"
        "<link rel='stylesheet' href='app.css'><script src='app.js' defer></script></head>"
        "<body><input id='box' value='text'></body></html>"
    )
    (tmp_path / "app.css").write_text("body { margin: 0; background: #fff; } #box { font: 40px sans-serif; width: 280px; }")
    (tmp_path / "app.js").write_text("document.getElementById('box').focus(); window.ready = true;")
    env = envs.open_env("webapp", {"root": ".", "viewport": [300, 120]}, str(tmp_path))
    spec = TaskSpec(env="webapp", name="type", instruction="Type", config={"start": "index.html", "success": "true"})

    def over_a_second(page) -> list[bytes]:  # more than one blink of the caret
        taken = []
        for _ in range(12):
            taken.append(screenshot(page, env.area))
            time.sleep(0.1)
        return taken

    def shots(page):
        page.wait_for_selector("#box:focus")
        caret = page.evaluate("getComputedStyle(document.getElementById('box')).caretColor")
        hidden = over_a_second(page)
        page.evaluate(SHOW_CARET)
        return caret, hidden, over_a_second(page)

    try:
        env.reset(spec, 0)
        assert env.run_js("() => window.ready") is True  # the page's own script ran under its policy
        caret, hidden, shown = env.browser.run(shots)
    finally:
        env.close()
        envs.shutdown()
    assert caret == "rgba(0, 0, 0, 0)"
    assert len(set(hidden)) == 1  # the focused field shows no blinking caret
    assert len(set(shown)) > 1  # without the sheet it blinks: the check above can see a caret


def test_a_crashed_browser_is_replaced(tmp_path: Path) -> None:
    _require()
    from guitest.envs import browser

    old = browser.host({})
    old.call(lambda: old.browser.close())  # as if the browser process died
    env = envs.open_env("miniwob", {"zoom": 1})
    try:
        assert env.browser.host is not old and not old.alive
        assert env.reset(task("click-test"), 0).size == (160, 210)
    finally:
        env.close()
        envs.shutdown()
