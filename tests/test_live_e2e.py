"""Live tasks end to end: pytest runs a web app's tasks in a real Chromium, step by step, against a loopback
OpenAI-compatible server that plays a known policy in each model family's own action syntax.

The page (tests/live_app/index.html) has fixed element positions, so the policy is a script of steps per task:
it is right on three tasks and clicks the wrong button on the fourth, so success must be exactly 3 of 4, whatever
the convention. Also: an endpoint failing mid-episode makes the case an error that --lf completes; replies with no
action use up the budget with every step recorded; the report's EQA equals one computed here from its cases;
per-step caching makes a second run of a deterministic episode free.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import urllib.parse
from fractions import Fraction
from pathlib import Path

import pytest

import fakeserver
from pages import data_root, viewer_data

pytestmark = pytest.mark.usefixtures("browser")

APP = Path(__file__).parent / "live_app"
# element centres as fractions of the 800x600 screenshot
GREEN, BLUE, BOX = (0.7, 0.2167), (0.45, 0.6333), (0.3125, 0.7833)
TEXT = "grüße 東京"  # typed through every runner: non-ASCII text must arrive
STEPS = {
    "Press the green button": [{"kind": "click", "point": GREEN}, {"kind": "done"}],
    "Press the blue button": [{"kind": "click", "point": BLUE}, {"kind": "done"}],
    "Press the red button": [{"kind": "click", "point": GREEN}, {"kind": "done"}],  # the policy is wrong here
    f"Write {TEXT} in the box": [{"kind": "click", "point": BOX}, {"kind": "type", "text": TEXT}, {"kind": "key", "keys": ["enter"]}, {"kind": "done"}],
}
RIGHT = {"press-green-seed0", "press-blue-seed0", "write-hello-seed0"}
# runner -> (model name, convention the fake server answers in, coordinate space, extra options, whether its runner runs
# a done said after other actions: OSWorld's UI-TARS runner makes finished() the step's only action)
FAMILIES = {
    "guitest": ("agent", "guitest", "normalized", [], True),
    "uitars15": ("ui-tars-1.5-7b", "uitars", "pixel_sent", [], False),
    "uitars15-qwen2vl": ("ui-tars-7b", "uitars", "grid1000", [], False),
    "qwen25vl": ("qwen2.5-vl-7b", "computer_use", "pixel_sent", [], True),
    "qwen3vl": ("qwen3-vl-8b", "computer_use", "grid999", [], True),
    "prompt-agent": ("gpt-4o", "pyautogui", "pixel_sent", [], True),
    "aguvis": ("agent", "pyautogui", "normalized", ["--model-profile=aguvis"], True),
}


@pytest.fixture
def browser() -> None:
    """Chromium and Playwright, or a skip naming what is missing (a failure under tox, which installs both)."""
    from guitest.envs.browser.launch import executable

    missing = pytest.fail if os.environ.get("GUITEST_REQUIRE_BROWSER") else pytest.skip
    if not os.path.isfile(executable()):
        missing(f"{executable()} not found: install Debian's chromium (bash tests/setup_browser.sh)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing("playwright is not installed (pip install 'guitest[live]')")


def script(convention: str, space: str, steps: dict = STEPS) -> dict:
    """One action per reply, step after step."""
    return {key: [{"act": act, "convention": convention, "space": space} for act in acts] for key, acts in steps.items()}


def replies(acts: list[dict], done_after_actions: bool) -> list[list[dict]]:
    """A task's actions as replies with several actions each: all in one reply, or (for a runner where a done ends the
    step alone) the done in a reply of its own."""
    if done_after_actions or acts[-1]["kind"] != "done":
        return [acts]
    return [acts[:-1], acts[-1:]]


def suite(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "suites" / "live_app"
    shutil.copytree(APP, folder)
    (folder / "live_suite.yaml").rename(folder / "suite.yaml")


def run(pytester: pytest.Pytester, server: fakeserver.Server, model: str, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites/live_app", f"--model=openai:{model}", f"--base-url={server.base_url}", "--retries=1", "--retry-backoff=0.01", "--timeout=10", *extra)


def report(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "live_app.json").read_text())


def eqa_here(cases: list[dict], t_max: int) -> float:
    """MMBench-GUI's EQA, written out again from its definition (arXiv:2507.19478, section 3.5) over the report's cases."""
    rows = sorted((c for c in cases if c["verdict"] != "error"), key=lambda c: c["id"])
    n = len(rows)
    points = [(Fraction(0), Fraction(0))]
    steps = hits = 0
    for c in rows:
        steps += c["steps"]
        hits += c["success"]
        points.append((Fraction(steps, n * t_max), Fraction(hits, n)))
    return round(float(sum(max(s for u, s in points if u <= Fraction(i, 100)) for i in range(101)) / 101), 6)


@pytest.mark.parametrize(
    ("runner", "mode"),
    [(r, ["-n", "2"] if i % 2 else []) for i, r in enumerate(FAMILIES)],
    ids=[f"{r}-{'xdist' if i % 2 else 'serial'}" for i, r in enumerate(FAMILIES)],
)
def test_every_action_of_each_reply_runs_in_every_runner(pytester: pytest.Pytester, tmp_path, runner: str, mode: list[str]) -> None:
    """Each runner's replies carry several actions (click, type, Enter and done in one reply; a done in a reply of its own
    where the runner makes it the step's only action), written as that family writes several: every action runs, in
    order, in one step, the budget counting replies. Success is exactly 3 of 4, the policy being wrong on one task."""
    suite(pytester)
    model, convention, space, extra, together = FAMILIES[runner]
    plan = {key: [{"act": reply, "convention": convention, "space": space} for reply in replies(acts, together)] for key, acts in STEPS.items()}
    with fakeserver.serve(tmp_path, script=plan) as server:
        result = run(pytester, server, model, *extra, *mode)
        asked = len(server.requests())
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"runner: {runner} (*"])
    if not mode:  # the header names it too (with -n 2 the workers collect, not the terminal's process)
        result.stdout.fnmatch_lines([f"guitest runner: {runner} (*"])
    data = report(pytester)
    assert data["suite"]["runner"]["name"] == runner
    hits = {c["id"] for c in data["cases"] if c["verdict"] == "hit"}
    assert hits == RIGHT, [(c["id"], c["verdict"], c["episode"]["trajectory"]) for c in data["cases"]]
    per_case = 1 if together else 2
    assert {c["id"]: c["steps"] for c in data["cases"]} == {c["id"]: per_case for c in data["cases"]} and asked == 4 * per_case
    write = next(c for c in data["cases"] if c["id"] == "write-hello-seed0")
    first = write["episode"]["trajectory"][0]
    kinds = [a["kind"] for a in first["actions"]]
    typing = ["type", "wait"] if runner.startswith("uitars") else ["type"]  # UI-TARS: OSWorld's 0.5 s pause after typing
    assert kinds == (["click", *typing, "key", "done"] if together else ["click", *typing, "key"]) and "executed" not in first
    typed = first["actions"][1]
    assert typed["text"] == TEXT and typed.get("paste", False) == runner.startswith("uitars")  # UI-TARS pastes, as its runner types
    metrics = data["task_metrics"]
    assert metrics["success"]["overall"]["successes"] == 3 and metrics["eqa"] == eqa_here(data["cases"], 6)
    for case in data["cases"]:  # the evidence: a trajectory file and a screenshot per step, beside the report
        trajectory = json.loads((pytester.path / "reports" / case["trajectory"]).read_text())[0]
        assert trajectory["labels"]["score"] == (1.0 if case["id"] in RIGHT else 0.0)
        assert len(trajectory["steps"]) == case["steps"]
        for step in case["episode"]["trajectory"]:
            assert (pytester.path / "reports" / step["screenshot"]).is_file()
    # the HTML report's viewer shows each episode: every step's screenshot (its file) and the final screen; the latest
    # page shows the run folder's data, the run folder's page the same data (one copy)
    for page in (pytester.path / "reports" / "live_app.html", *(pytester.path / "reports" / "runs" / "live_app").glob("*/live_app.html")):
        _, details = viewer_data(page)
        assert len(details) == 4 and all(len(d["episodes"]) == 1 for d in details)
        sources = [s["src"] for d in details for s in d["episodes"][0]["steps"]] + [d["episodes"][0]["final"]["src"] for d in details]
        assert len(sources) == sum(c["steps"] + 1 for c in data["cases"])
        assert all((data_root(page) / urllib.parse.unquote(src)).is_file() for src in sources), page


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_endpoint_failing_mid_episode_is_an_error_that_lf_completes(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    suite(pytester)
    broken = script("guitest", "normalized")
    broken[f"Write {TEXT} in the box"] = broken[f"Write {TEXT} in the box"][:1] + [{"status": 500}, {"status": 500}]
    with fakeserver.serve(tmp_path, script=broken) as server:
        first = run(pytester, server, "agent", "--cache=off", *mode)
        port = server.port
    assert first.ret == 1
    data = report(pytester)
    (failed,) = [c for c in data["cases"] if c["verdict"] == "error"]
    assert failed["id"] == "write-hello-seed0" and "step 2" in failed["error"] and "HTTP 500" in failed["error"]
    with fakeserver.serve(tmp_path, script=script("guitest", "normalized"), port=port) as server:  # the endpoint is back
        again = run(pytester, server, "agent", "--cache=off", "--lf", *mode)
        assert len(server.requests()) == 4  # only the errored episode, from its start
    assert again.ret == 0, again.stdout.str()
    merged = report(pytester)
    assert merged["complete"] and merged["overall"]["error"] == 0
    assert {c["id"] for c in merged["cases"] if c["verdict"] == "hit"} == RIGHT


def test_a_dead_endpoint_is_said_once_and_starts_no_more_environments(pytester: pytest.Pytester) -> None:
    # before: every episode was listed under FAILURES, with no summary, and each started its page first
    suite(pytester)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    result = pytester.runpytest_subprocess("suites/live_app", "--model=openai:agent", f"--base-url=http://127.0.0.1:{dead}/v1", "--retries=0", "--concurrency=1")
    out = result.stdout.str()
    assert result.ret == 1
    cases = report(pytester)["cases"]
    assert all(c["verdict"] == "error" for c in cases)
    opened = [c for c in cases if c.get("episode")]
    # the episode that found the endpoint dead, and at most the one started beside it (the lookahead runs a case
    # ahead); the others never opened their page
    assert 1 <= len(opened) <= 2
    not_asked = [c for c in cases if "not asked" in c["error"]]
    assert len(not_asked) >= 2 and f"{len(not_asked)} case(s) were not asked" in out and "guitest: endpoint unreachable" in out
    listed = [line for line in out.splitlines() if line.startswith("FAILED ")]
    assert len(listed) == 4 - len(not_asked)  # the not-asked ones are said once above, not listed one by one


def test_replies_without_an_action_use_up_the_budget_with_every_step_recorded(pytester: pytest.Pytester, tmp_path) -> None:
    suite(pytester)
    with fakeserver.serve(tmp_path, script={"*": [{"content": "I am not sure what to do here."}] * 40}) as server:
        result = run(pytester, server, "agent", "-k", "green or blue")
        assert len(server.requests()) == 2 * 6
    assert result.ret == 0, result.stdout.str()
    for case in report(pytester)["cases"]:
        assert case["verdict"] == "miss" and case["steps"] == 6 and case["prediction"]["end"] == "budget"
        assert len(case["episode"]["trajectory"]) == 6 and all("unreadable_action" in s["notes"] for s in case["episode"]["trajectory"])
        assert all(s["reply"] == "I am not sure what to do here." for s in case["episode"]["trajectory"])


def test_a_looping_agent_stops_at_its_token_cap_and_is_scored_as_it_stands(pytester: pytest.Pytester, tmp_path) -> None:
    suite(pytester)
    looping = {"content": "I am not sure what to do here.", "usage": {"prompt_tokens": 700, "completion_tokens": 50, "total_tokens": 750}}
    with fakeserver.serve(tmp_path, script={"*": [looping] * 40}) as server:
        result = run(pytester, server, "agent", "-k", "green or blue", "--max-episode-tokens=2000")
        assert len(server.requests()) == 2 * 3  # 750, 1500, 2250 tokens: no fourth step
    assert result.ret == 0, result.stdout.str()
    for case in report(pytester)["cases"]:
        assert case["verdict"] == "miss" and case["steps"] == 3 and case["prediction"]["end"] == "token_cap"
        assert [s["usage"] for s in case["episode"]["trajectory"]] == [{"input_tokens": 700, "output_tokens": 50}] * 3
        assert case["usage"]["input_tokens"] == 2100 and case["usage"]["output_tokens"] == 150 and case["usage"]["calls"] == 3


def test_a_budget_stops_an_episode_mid_way_and_lf_replays_it_from_the_cache(pytester: pytest.Pytester, tmp_path) -> None:
    suite(pytester)
    with fakeserver.serve(tmp_path, script=script("guitest", "normalized")) as server:
        stopped = run(pytester, server, "agent", "-k", "write", "--max-total-tokens=2500")
        before = server.requests()
        partial = report(pytester)
        finished = run(pytester, server, "agent", "-k", "write", "--lf")
        after = server.requests()[len(before) :]
    assert stopped.ret == 13, stopped.stdout.str()
    # the call that reached 2,500 tokens (as the server counted them) was the episode's last: it took no further step
    spent = [r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in before]
    assert sum(spent[:-1]) < 2500 <= sum(spent) and len(before) < 4
    assert partial["missing"] == ["write-hello-seed0"] and partial["run"]["budget"]["cases_not_asked"] == 1
    # the stop is at once: no failure for the case, one line for it, with what the run spent
    assert "error: not asked" not in stopped.stdout.str() and partial["run"]["budget"]["spent"]["tokens"] == sum(spent)
    stopped.stdout.fnmatch_lines([f"*BUDGET REACHED: --max-total-tokens=2500 reached: {sum(spent):,} tokens spent*: 1 case(s) not asked, missing from the report (exit status 13)*"])
    assert finished.ret == 0, finished.stdout.str()
    (case,) = report(pytester)["cases"]
    # resumed: the steps asked before came back from the response cache (at no cost now), the rest were asked
    assert case["verdict"] == "hit" and case["steps"] == 4 and len(before) + len(after) == 4
    assert case["cached_usage"]["calls"] == len(before) and case["usage"]["calls"] == len(after)
    assert [s.get("cached", False) for s in case["episode"]["trajectory"]] == [True] * len(before) + [False] * len(after)


def test_a_deterministic_episode_runs_again_from_the_cache_step_by_step(pytester: pytest.Pytester, tmp_path) -> None:
    suite(pytester)
    with fakeserver.serve(tmp_path, script=script("guitest", "normalized")) as server:
        first = run(pytester, server, "agent", "--cache=on")
        assert first.ret == 0 and len(server.requests()) == 10
        again = run(pytester, server, "agent", "--cache=on")
        assert again.ret == 0, again.stdout.str()
        assert len(server.requests()) == 10  # every step of every episode answered from the cache
    data = report(pytester)
    assert {c["id"] for c in data["cases"] if c["verdict"] == "hit"} == RIGHT
    assert all(c["cached"] is True for c in data["cases"])
    again.stdout.fnmatch_lines(["*4 of 4 case(s) answered from the response cache*"])


def test_a_slow_agent_gets_episodes_side_by_side(pytester: pytest.Pytester, tmp_path) -> None:
    """The pool makes a browser context per concurrent episode while the browser thread has time to spare: with an
    agent that takes a second to answer, the four tasks' episodes wait on the model together, not one after another."""
    suite(pytester)
    with fakeserver.serve(tmp_path, script=script("guitest", "normalized"), latency=1.0) as server:
        result = run(pytester, server, "agent", "--cache=off")
        in_flight = [r["in_flight"] for r in server.requests()]
    assert result.ret == 0, result.stdout.str()
    assert len(in_flight) == 10 and max(in_flight) >= 3, in_flight
    assert {c["id"] for c in report(pytester)["cases"] if c["verdict"] == "hit"} == RIGHT
