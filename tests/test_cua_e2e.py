"""``pytest suites/miniwob --model=anthropic:...`` and ``--model=openai-cua:...`` end to end: a real Chromium runs three
MiniWoB++ tasks (one seed), the real ``anthropic`` and ``openai`` clients talk to the loopback fake of both APIs
(tests/fakecua.py, a process of its own), which plays scripted tool calls that solve the tasks.

Where to click comes from the oracle baseline, run here in-process on the same (task, seed) episodes first (its
actions in screenshot pixels): the fake server answers with those points as fractions of the display the request
declares, so a wrong mapping between declared display and screenshot misses and the task fails (one run's screenshots, at MiniWoB++'s zoom 8, are larger than
Anthropic's limits, so they go scaled down and its coordinates come back scaled up). Replies with
several tool calls run all of them in one step. A rate limit and an overload are retried; a refusal is an error
that ``--lf`` completes; no file or output of a run holds the API key. Serial and ``-n 2``; the two tool versions of
each provider split between them; the refusal and ``--lf`` in one of the four runs (the same for both providers:
tests/test_cua.py has each provider's refusal as an error).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fakecua
import fakeserver

REPO = Path(__file__).resolve().parents[1]
TASKS = ("click-test", "enter-text", "login-user")
SEED = 0
KEY = "sk-e2e-secret-Hy63Rt"
# the serial runs also write a JUnit file and a DEBUG log (where the clients log their requests): no key there either
LOGS = ["--junitxml=junit.xml", "--log-file=run.log", "--log-file-level=DEBUG"]
VARIANTS = {  # id: (spec, extra options, pytest mode, MiniWoB++ zoom)
    "anthropic-20250124-serial": ("anthropic:claude-sonnet-4-5-20250929", LOGS, [], 3),
    # at zoom 8 the screenshot is 1280x1680, over Anthropic's limits: sent scaled down, coordinates scaled back
    "anthropic-20251124-xdist": ("anthropic:claude-opus-4-6", [], ["-n", "2"], 8),
    "openai-preview-serial": ("openai-cua:computer-use-preview", LOGS, [], 3),
    "openai-ga-xdist": ("openai-cua:gpt-5.4", [], ["-n", "2"], 3),
}


def _require() -> None:
    from guitest.envs.browser.launch import executable

    missing = pytest.fail if os.environ.get("GUITEST_REQUIRE_BROWSER") else pytest.skip
    if not os.path.isfile(executable()):
        missing(f"{executable()} not found: install Debian's chromium (bash tests/setup_browser.sh)")
    for module in ("playwright", "miniwob"):
        try:
            __import__(module)
        except ImportError:
            missing(f"{module} is not installed (pip install 'guitest[live]')")


#: solves each task's seed-0 episode with the oracle at a zoom, in a process of its own: a worker that has run Playwright
#: on guitest's browser thread and shut it down can hang in a later test's sync_playwright() in its main thread
#: (test_html_report's browser fixture did, twice, after this module in the same xdist worker)
SOLVE = """
import json, sys
from guitest import envs
from guitest.live.baseline_policies import OraclePolicy
from guitest.live.loop import run_episode
from guitest.live.protocol import TaskSpec
zoom, seed, tasks = json.loads(sys.argv[1])
env = envs.open_env("miniwob", {"zoom": zoom})
out = {}
try:
    for name in tasks:
        episode = run_episode(env, TaskSpec("miniwob", name), seed, OraclePolicy(env), 15)
        assert episode.success, name
        out[name] = {"instruction": episode.instruction, "size": episode.screen_size, "actions": [a for s in episode.steps for a in s.actions]}
finally:
    env.close()
    envs.shutdown()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def oracle() -> Any:
    """``solutions(zoom)``: the oracle's solution of each task's seed-0 episode at that zoom: its instruction, screen
    size and actions (screen pixels); each zoom solved once for the module."""
    _require()
    solved: dict[int, dict[str, dict[str, Any]]] = {}

    def solutions(zoom: int) -> dict[str, dict[str, Any]]:
        if zoom not in solved:
            run = subprocess.run([sys.executable, "-c", SOLVE, json.dumps([zoom, SEED, list(TASKS)])], capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, run.stderr[-3000:]
            solved[zoom] = json.loads(run.stdout.strip().splitlines()[-1])
        return solved[zoom]

    return solutions


def _frac(action: dict[str, Any], size: tuple[int, int]) -> list[float]:
    x, y = action["point"]
    return [(x + 0.5) / size[0], (y + 0.5) / size[1]]  # the pixel's middle: the fake floors it back onto the display


def anthropic_call(action: dict[str, Any], size: tuple[int, int]) -> dict[str, Any]:
    if action["kind"] == "click":
        return {"action": "left_click", "coordinate": {"frac": _frac(action, size)}}
    assert action["kind"] == "type", action
    return {"action": "type", "text": action["text"]}


def openai_action(action: dict[str, Any], size: tuple[int, int]) -> dict[str, Any]:
    if action["kind"] == "click":
        return {"type": "click", "button": "left", "at": _frac(action, size)}
    assert action["kind"] == "type", action
    return {"type": "type", "text": action["text"]}


def script(variant: str, solutions: dict[str, dict[str, Any]], refuse: bool) -> dict[str, list[dict[str, Any]]]:
    """Each task's replies in the variant's wire shape: click-test looks first (a screenshot; a zoom too where the tool
    has one), then clicks; enter-text clicks and types in one reply, then submits; login-user does all five in one
    reply (OpenAI's preview: one action per reply, as that model answers). click-test meets a 429 and an overload first;
    with ``refuse``, enter-text's first reply is a refusal."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, solution in solutions.items():
        size, actions = solution["size"], solution["actions"]
        groups = {"click-test": [[], actions], "enter-text": [actions[:2], actions[2:]], "login-user": [actions]}[name]
        entries: list[dict[str, Any]] = []
        if name == "click-test":
            entries += [{"status": 429, "retry_after": 0}, {"status": 529 if variant.startswith("anthropic") else 503}]
        if name == "enter-text" and refuse:
            entries.append({"refusal": "I would rather not type that."})
        for group in groups:
            if variant.startswith("anthropic"):
                calls = [anthropic_call(a, size) for a in group] or [{"action": "screenshot"}]
                if not group and "20251124" in variant:
                    calls.append({"action": "zoom", "region": [0, 0, 240, 160]})
                entries.append({"calls": calls, "text": f"I see the page; my key is {KEY}." if name == "click-test" else ""})
            elif "preview" in variant:
                entries += [{"calls": [{"action": openai_action(a, size)}]} for a in group] or [{"calls": [{"action": {"type": "screenshot"}}]}]
            else:
                checks = [{"id": "sc_1", "code": "malicious_instructions", "message": "the page asks for a password"}] if name == "login-user" else []
                entries.append({"calls": [{"actions": [openai_action(a, size) for a in group] or [{"type": "screenshot"}], "pending_safety_checks": checks}]})
        out[solution["instruction"]] = entries
    return out


def suite(pytester: pytest.Pytester, zoom: int) -> None:
    folder = pytester.path / "suites" / "miniwob"
    folder.mkdir(parents=True)
    text = (REPO / "suites" / "miniwob" / "suite.yaml").read_text()
    assert "\n  zoom: 3 " in text
    (folder / "suite.yaml").write_text(text.replace("\n  zoom: 3 ", f"\n  zoom: {zoom} "))
    rows = [{"task": name, "family": name.split("-")[0], "seeds": [SEED]} for name in TASKS]
    (folder / "tasks.json").write_text(json.dumps(rows))


def _leaks(root: Path, text: str) -> list[str]:
    found = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    return found + (["output"] if KEY in text else [])


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_computer_use_agents_solve_miniwob_against_the_loopback_apis(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, oracle: Any, variant: str) -> None:
    if variant.startswith("anthropic"):
        try:
            import anthropic  # noqa: F401
        except ImportError:
            (pytest.fail if os.environ.get("GUITEST_REQUIRE_ANTHROPIC") else pytest.skip)("the anthropic package is not installed (pip install 'guitest[anthropic]')")
    spec, extra, mode, zoom = VARIANTS[variant]
    solutions = oracle(zoom)
    refuse = variant == "anthropic-20250124-serial"  # the refusal and --lf once: what follows a refusal is the same for both
    suite(pytester, zoom)
    monkeypatch.setenv("ANTHROPIC_API_KEY" if variant.startswith("anthropic") else "OPENAI_API_KEY", KEY)
    outputs = []
    # the server ends itself after max_seconds: long enough for the two runs on a loaded machine
    with fakeserver.serve(tmp_path, script=script(variant, solutions, refuse=refuse), program=fakecua.__file__, max_seconds=900) as server:
        base = server.url if variant.startswith("anthropic") else server.base_url
        args = ["suites/miniwob", f"--model={spec}", f"--base-url={base}", "--retries=2", "--retry-backoff=0.01", "--timeout=20", *extra, *mode]
        result = pytester.runpytest_subprocess(*args)
        outputs.append(result.stdout.str() + result.stderr.str())
        if refuse:  # the refusal made enter-text an error; --lf runs it alone and it completes
            assert result.ret == 1, outputs[-1]
            (refused,) = [c for c in report(pytester)["cases"] if c["verdict"] == "error"]
            assert refused["id"] == f"enter-text-seed{SEED}" and "refused" in refused["error"] and "I would rather not type that." in refused["error"]
            result = pytester.runpytest_subprocess(*args, "--lf")
            outputs.append(result.stdout.str() + result.stderr.str())
        requests = server.requests()
    assert result.ret == 0, outputs[-1]
    data = report(pytester)
    assert data["complete"] and {c["id"]: c["verdict"] for c in data["cases"]} == {f"{name}-seed{SEED}": "hit" for name in TASKS}
    runner = data["suite"]["runner"]  # the report names the provider's tool loop as the runner, not a prompt runner
    assert runner["name"] == ("anthropic-computer-use" if variant.startswith("anthropic") else "openai-computer-use") and runner["chosen"] == "the API's own tool loop"
    assert not [r for r in requests if r.get("error")], [r["error"] for r in requests if r.get("error")]
    width, height = solutions["click-test"]["size"]
    # 480x630 is within every limit: sent as it is; 1280x1680 goes as the computer-use page's get_scale_factor says
    scale = min(1.0, 1568 / max(width, height), (1_150_000 / (width * height)) ** 0.5)
    assert all(r["display"] == [int(width * scale), int(height * scale)] for r in requests)
    assert (zoom == 8) == (int(width * scale) != width)
    episodes = {c["id"].rsplit("-seed", 1)[0]: c["episode"]["trajectory"] for c in data["cases"]}
    kinds = {name: [[a["kind"] for a in step["actions"]] for step in steps] for name, steps in episodes.items()}
    if "preview" in variant:
        assert kinds["login-user"] == [["click"], ["type"], ["click"], ["type"], ["click"]]
    else:  # several tool calls of one reply run in order, in one step
        assert kinds["login-user"] == [["click", "type", "click", "type", "click"]]
        assert kinds["enter-text"] == [["click", "type"], ["click"]]
    assert kinds["click-test"][0] == ["wait"] and kinds["click-test"][-1] == ["click"]  # the screenshot first
    tried = [r for r in requests if r["key"] == solutions["click-test"]["instruction"]]
    assert [r["kind"] for r in tried][:3] == ["status", "status", "calls"]  # 429 and overload retried, the same request each time
    if variant.startswith("anthropic"):
        assert {r["beta"] for r in requests} == {"computer-use-2025-01-24" if "20250124" in variant else "computer-use-2025-11-24"}
        answered = [r for r in requests if r["key"] == solutions["enter-text"]["instruction"] and r["results"]]
        assert [len(r["results"]) for r in answered] == [2]  # both tool_use blocks of the first reply answered, in order
    if variant == "openai-ga-xdist":  # the check was acknowledged (the default policy) and the call ran; the step says so
        assert "safety_check:malicious_instructions" in episodes["login-user"][0]["notes"]
    if extra == LOGS:
        assert (pytester.path / "run.log").stat().st_size > 0 and (pytester.path / "junit.xml").is_file()
    assert _leaks(pytester.path, "".join(outputs)) == []
    check_usage(variant, data, requests, refuse, outputs[-1])


def tokens_sent(record: dict[str, Any], anthropic: bool) -> dict[str, int]:
    """The usage the fake server logged as sent, in guitest's terms, converted here by the APIs' documented meanings:
    Anthropic's input_tokens leave out the cache's reads and writes, the Responses API's include its cached tokens."""
    sent = record["usage"]
    if anthropic:
        read, write = sent["cache_read_input_tokens"], sent["cache_creation_input_tokens"]
        return {"input_tokens": sent["input_tokens"] + read + write, "output_tokens": sent["output_tokens"], "cache_read_tokens": read, "cache_write_tokens": write}
    return {
        "input_tokens": sent["input_tokens"],
        "output_tokens": sent["output_tokens"],
        "cache_read_tokens": sent["input_tokens_details"]["cached_tokens"],
        "reasoning_tokens": sent["output_tokens_details"]["reasoning_tokens"],
    }


def check_usage(variant: str, data: dict[str, Any], requests: list[dict[str, Any]], refuse: bool, output: str) -> None:
    """Every step records the tokens its reply's call used, each episode and the run their sums, as the server sent them."""
    anthropic = variant.startswith("anthropic")
    sent = [tokens_sent(r, anthropic) for r in requests if r.get("usage")]
    steps = [s for c in data["cases"] for s in c["episode"]["trajectory"]]
    assert all(s.get("usage") in sent for s in steps), [s.get("usage") for s in steps]
    for case in data["cases"]:  # an episode's calls: its steps' tokens (a refused call, paid, is in the case but no step)
        kinds = case["usage"].keys() & {"input_tokens", "output_tokens"}
        paid = [s["usage"] for s in case["episode"]["trajectory"] if not s.get("cached")]
        assert {k: sum(u[k] for u in paid) for k in kinds} == {k: case["usage"][k] for k in kinds} or refuse
    if refuse:  # the report folds the --lf run (the refused episode again, paid) into the first run's two episodes
        assert data["run"]["usage"]["paid"]["calls"] >= 1 and data["usage"]["paid"]["calls"] > data["run"]["usage"]["paid"]["calls"]
        return
    everything = {k: sum(s[k] for s in sent) for k in sent[0]}
    assert {k: data["usage"]["all"][k] for k in everything} == everything and data["usage"]["all"]["calls"] == len(sent)
    assert data["run"]["usage"]["paid"] == data["usage"]["paid"] and data["run"]["usage"]["cached"] == {}
    priced = data["run"]["price"]["source"] != "none"  # genai-prices knows some of these models, by name (a loopback URL)
    assert ("cost" in data["usage"]["all"]) == priced and (not priced or data["run"]["price"]["source"].startswith("genai-prices"))
    assert data["usage"]["tokens_per_episode"] == round((everything["input_tokens"] + everything["output_tokens"]) / len(TASKS), 1)
    assert "cost: " in output and f"{everything['input_tokens'] + everything['output_tokens']:,} tokens" in output
    per_episode = (everything["input_tokens"] + everything["output_tokens"]) / len(TASKS)
    assert f"; {per_episode:,.0f} tokens per episode, {per_episode:,.0f} per success" in output  # every episode a success


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "reports" / "miniwob.json").read_text())
