"""An episode's trajectory is a function of the task, the seed and the replies alone (issue 22, section 3).

A seeded random policy (the same replies for the same task, seed and step) runs MiniWoB++ episodes that
differed, before each episode got a fresh document, between a page of their own and a page an earlier
episode of the same task had used: that episode's click on Submit left the button focused, and the
next episode's first key (``enter``, ``space``) pressed it. Every step's screenshot digest, action and
reward must be the same whether the episode runs on a new environment, after another episode on a
reused one, in a pool of several environments side by side, or through pytest with ``-n 2``. And the
screen a step returns is the page at rest (what the page scheduled just after the action has
happened, a scroll has landed), the screen a slower agent or a busier machine would see.
Needs the browser (tests/test_live_browser.py's requirements).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from guitest import envs
from guitest.envs.browser.steps import screenshot
from guitest.envs.pool import EnvPool
from guitest.live.actions import Action
from guitest.live.baseline_policies import OraclePolicy, RandomPolicy
from guitest.live.loop import Episode, run_episode
from guitest.live.protocol import TaskSpec

from test_live_browser import _require

REPO = Path(__file__).resolve().parents[1]
SEED = 3  # --seed of the random policy
STEPS = 4  # the differences seen were at step 1 or 2; fewer steps keep the test cheap
# (task, episode seed): the random policy's first action is a key that presses a focused button (enter, space)
EPISODES = [("click-checkboxes", 0), ("click-option", 3)]
BEFORE = 1  # the seed of the oracle's episode that runs first on the reused page (it ends with a click on Submit)

Trajectory = tuple[Any, ...]


def trajectory(episode: Episode) -> Trajectory:
    """What must not depend on how the episode was run: per step the screenshot digest, the action and the reward;
    then how it ended, its score and the final screen."""
    assert episode.error is None, episode.error
    steps = tuple((hashlib.sha256(s.png or b"").hexdigest(), json.dumps(s.actions, sort_keys=True), s.info.get("raw_reward")) for s in episode.steps)
    return steps, episode.end, episode.score, hashlib.sha256(episode.final_png or b"").hexdigest()


def run(env: Any, name: str, seed: int) -> Trajectory:
    return trajectory(run_episode(env, TaskSpec("miniwob", name), seed, RandomPolicy(SEED), STEPS))


@pytest.fixture(scope="module")
def fresh() -> Iterator[dict[tuple[str, int], Trajectory]]:
    """The reference: each episode on a new environment (a browser context of its own, nothing run in it before)."""
    _require()
    out = {}
    for name, seed in EPISODES:
        env = envs.open_env("miniwob", {"zoom": 3})
        try:
            out[(name, seed)] = run(env, name, seed)
        finally:
            env.close()
    yield out
    envs.shutdown()


def pooled(pool: EnvPool, name: str, seed: int) -> Trajectory:
    """The oracle's episode of ``name`` (seed BEFORE), then the random policy's of ``seed``, each as the plugin runs an
    episode: an environment leased with the task as affinity (the one the oracle used, when it is free), released after."""
    env = pool.acquire(affinity=name)
    try:
        assert run_episode(env, TaskSpec("miniwob", name), BEFORE, OraclePolicy(env), 15).success
    finally:
        pool.release(env, affinity=name)
    env = pool.acquire(affinity=name)
    try:
        return run(env, name, seed)
    finally:
        pool.release(env, affinity=name)


def test_an_episode_after_others_on_a_reused_page_is_the_episode_on_a_fresh_one(fresh: dict[tuple[str, int], Trajectory]) -> None:
    pool = EnvPool("miniwob", {"zoom": 3}, size=1)
    try:
        reused = {(name, seed): pooled(pool, name, seed) for name, seed in EPISODES}
    finally:
        pool.close()
    differ = [key for key in EPISODES if reused[key] != fresh[key]]
    assert not differ, f"differ between a fresh and a reused page: {differ}"


def test_episodes_side_by_side_in_a_pool_of_several_environments_are_the_same(fresh: dict[tuple[str, int], Trajectory]) -> None:
    pool = EnvPool("miniwob", {"zoom": 3}, size=2)
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as threads:
            futures = {key: threads.submit(pooled, pool, *key) for key in EPISODES}
            side_by_side = {key: f.result() for key, f in futures.items()}
    finally:
        pool.close()
    differ = [key for key in EPISODES if side_by_side[key] != fresh[key]]
    assert not differ, f"differ between a fresh page and a pool of 2 run side by side: {differ}"


def test_pytest_with_two_workers_gives_the_in_process_trajectories(pytester: pytest.Pytester, fresh: dict[tuple[str, int], Trajectory]) -> None:
    folder = pytester.path / "suites" / "miniwob"
    folder.mkdir(parents=True)
    shutil.copy(REPO / "suites" / "miniwob" / "suite.yaml", folder / "suite.yaml")
    tasks = sorted({name for name, _ in EPISODES})
    rows = [{"task": name, "family": name.split("-")[0], "seeds": sorted(s for n, s in EPISODES if n == name)} for name in tasks]
    (folder / "tasks.json").write_text(json.dumps(rows))
    result = pytester.runpytest_subprocess("suites/miniwob", "--model=random", f"--seed={SEED}", f"--max-steps={STEPS}", "-n", "2", "--concurrency=8", "--cache=off")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]  # 1: the random policy misses, which is not what is checked
    report = pytester.path / "reports"
    cases = {c["id"]: c["episode"] for c in json.loads((report / "miniwob.json").read_text())["cases"]}
    assert len(cases) == len(EPISODES)

    def digest(path: str | None) -> str:
        return hashlib.sha256((report / path).read_bytes() if path else b"").hexdigest()

    differ = []
    for name, seed in EPISODES:
        episode = cases[f"{name}-seed{seed}"]
        steps = tuple((digest(s["screenshot"]), json.dumps(s["actions"], sort_keys=True), (s.get("info") or {}).get("raw_reward")) for s in episode["trajectory"])
        if (steps, episode["end"], episode["score"], digest(episode["final_screenshot"])) != fresh[(name, seed)]:
            differ.append((name, seed))
    assert not differ, f"differ between pytest -n 2 and an in-process episode on a fresh page: {differ}"


def _tab_then_arrow(env: Any) -> Any:
    # jQuery UI's tabs activate a tab 300 ms after an arrow key moved the focus to it
    env.reset(TaskSpec("miniwob", "click-tab-2"), 0)
    x, y = env.run_js("() => { const r = document.querySelector('.ui-tabs-anchor').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }")
    env.step(Action("click", point=(x * env.zoom, y * env.zoom), space="screen"))
    return env.step(Action("key", keys=("down",)))


def _arrow_scroll(env: Any) -> Any:
    # an arrow key scrolls the calendar: with Chromium's smooth scrolling it was still on its way when the step returned
    env.reset(TaskSpec("miniwob", "daily-calendar"), 1)
    env.step(Action("click", point=(240.0, 450.0), space="screen"))
    return env.step(Action("key", keys=("down",)))


@pytest.mark.parametrize("act", [_tab_then_arrow, _arrow_scroll], ids=["tabs", "arrow_scroll"])
def test_the_screen_a_step_returns_is_the_page_at_rest(act: Any) -> None:
    # the screen after the action is the screen a slower agent, or a busier machine, would find after waiting
    _require()
    env = envs.open_env("miniwob", {"zoom": 3})
    try:
        shown = act(env).screenshot
        time.sleep(0.5)
        later = env.browser.run(lambda page: screenshot(page, env.area))
        assert hashlib.sha256(shown).hexdigest() == hashlib.sha256(later).hexdigest()
    finally:
        env.close()
