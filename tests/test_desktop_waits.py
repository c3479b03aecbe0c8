"""A desktop episode waits where the reference harness waits, and the suites that claim its numbers say so.

The reference values come from running each harness's own code (a scratch script, not in the project, ran it with the
VMs, agents and heavy imports faked and ``time.sleep`` recorded):

- OSWorld (xlang-ai/OSWorld, read in the fork mrwwk/DeskCraft at 3e11457): ``lib_run_single.run_single_example`` with an
  agent replying a click and WAIT, then DONE, made ``env.reset``, ``sleep(60)``, ``env._get_obs``, ``env.step(action,
  args.sleep_after_execution)`` per action, ``sleep(20)``, ``env.evaluate``; ``DesktopEnv.step(action, pause)`` slept
  ``pause`` once after code, DONE and FAIL and twice for WAIT; ``config().sleep_after_execution`` of
  ``runners/run_multienv_uitars15_v1.py`` is 3.0, of ``run_multienv_qwen25vl.py``, ``run_multienv_qwen3vl.py``,
  ``run_multienv.py`` (the PromptAgent), ``run_multienv_claude.py`` and ``run_multienv_openaicua.py`` 0.0. Every one of
  those scripts but the last plays its episodes with ``run_single_example``: with ``run_multienv_claude.py``'s own
  ``config()`` it slept [60, 0.0, 0.0, 20] for a click then DONE. ``run_multienv_openaicua.py`` plays them with
  ``run_single_example_openaicua``, whose agent executes its actions itself: ``OpenAICUAAgent.step`` (the real one,
  ``mm_agents/openai_cua_agent.py``) calls ``env.step(action)`` without a pause, so ``DesktopEnv.step``'s default 2
  applies whatever the script's ``--sleep_after_execution``; for two clicks that loop slept [60, 2, 2] and evaluated
  at once (no 20 s wait).
- Windows Agent Arena (microsoft/WindowsAgentArena at a194956, read in the fork PaulJiangMS/WindowsAgentArena,
  ``src/win-arena-container/client/``): ``run.py``'s ``config().sleep_after_execution`` is 3 (one script for every
  agent); ``DesktopEnv.reset`` slept 5 before the set-up and 5 after it, before the first observation;
  ``lib_run_single.run_single_example`` sleeps nothing else (no wait before ``env.evaluate``).

Also here: ``pytest suites/osworld`` and ``pytest suites/waa`` (their suite files as shipped) against fake machines of
each server's kind (tests/fakemachine.py; WAA's answers every route it lacks with HTTP 500), the backend's clock
replaced by a conftest that records each wait instead of sleeping it: the waits each suite makes, the header and the
report saying them, no errors against WAA's server, and two machines' waits side by side, not one after the other.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import types
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import REPO
from fakemachine import FakeMachine
from guitest.desktopenv.machine_pool import MachinePool
from guitest.desktopenv import machine as machine_module
from guitest.desktopenv.machine import DesktopEnv, waits
from guitest.live import runners
from guitest.live.actions import Action
from guitest.run.live_case import LiveSetup
from guitest.live.protocol import EnvFailure, TaskSpec

#: each runner's reference run script's sleep_after_execution (OSWorld's config(), run as the module docstring says)
OSWORLD_SLEEP_AFTER_EXECUTION = {"uitars15": 3.0, "uitars15-qwen2vl": 3.0, "qwen25vl": 0.0, "qwen3vl": 0.0, "prompt-agent": 0.0}
#: the same for OSWorld's runs of the computer-use APIs, with their wait before the evaluation (module docstring)
OSWORLD_COMPUTER_USE = {"anthropic:claude-sonnet-4-5": (0.0, 20.0), "openai-cua:computer-use-preview": (2.0, 0.0)}
OSWORLD_READY, OSWORLD_EVALUATE = 60.0, 20.0
WAA_READY, WAA_SETTLE, WAA_EVALUATE = 5.0, 3.0, 0.0


def suite_options(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "suites" / name / "suite.yaml").read_text())["env_options"])


def test_each_runner_waits_after_an_action_as_its_reference_run_script() -> None:
    for name, seconds in OSWORLD_SLEEP_AFTER_EXECUTION.items():
        assert runners.get(name).sleep_after_execution == seconds, name
    assert runners.get("guitest").sleep_after_execution is None and runners.get("aguvis").sleep_after_execution is None  # no reference run script
    osworld = LiveSetup(env="desktop", env_options=suite_options("osworld"))
    for name, seconds in OSWORLD_SLEEP_AFTER_EXECUTION.items():
        got = waits(osworld.options(runners.get(name)))
        assert (got["ready_after"], got["settle"], got["evaluate_after"]) == (OSWORLD_READY, seconds, OSWORLD_EVALUATE), name
        assert got["sources"] == {"ready_after": "env_options", "settle": f"runner {name}'s sleep_after_execution", "evaluate_after": f"runner {name}'s evaluate_after"}
    own = waits(osworld.options(runners.get("guitest")))
    assert own["settle"] == machine_module.SETTLE == 0.3 and own["sources"]["settle"] == "runner guitest sets no sleep_after_execution: guitest's default"
    assert own["evaluate_after"] == machine_module.EVALUATE_AFTER == OSWORLD_EVALUATE and own["sources"]["evaluate_after"] == "runner guitest sets no evaluate_after: guitest's default"


def test_a_computer_use_api_waits_as_osworlds_run_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    if not os.environ.get("GUITEST_REQUIRE_ANTHROPIC"):  # a run that requires it fails below without it
        pytest.importorskip("anthropic")
    from guitest.models import load_model
    from guitest.models.base import Settings

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-Wait01")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-test-Wait02")
    osworld = LiveSetup(env="desktop", env_options=suite_options("osworld"))
    for spec, (settle, evaluate_after) in OSWORLD_COMPUTER_USE.items():
        loop, _ = runners.for_model(load_model(spec, Settings()), None)
        got = waits(osworld.options(loop))
        assert (got["ready_after"], got["settle"], got["evaluate_after"]) == (OSWORLD_READY, settle, evaluate_after), spec
        assert got["sources"] == {"ready_after": "env_options", "settle": f"runner {loop.name}'s sleep_after_execution", "evaluate_after": f"runner {loop.name}'s evaluate_after"}


def test_the_waa_suite_waits_as_waas_harness_and_desktop_local_as_guitest() -> None:
    for runner in ("uitars15", "qwen3vl", "guitest"):  # WAA's one run script waits the same for every agent
        got = waits(LiveSetup(env="desktop", env_options=suite_options("waa")).options(runners.get(runner)))
        assert (got["ready_after"], got["settle"], got["evaluate_after"]) == (WAA_READY, WAA_SETTLE, WAA_EVALUATE)
    local = waits(suite_options("desktop_local"))
    assert (local["ready_after"], local["settle"], local["evaluate_after"]) == (0.0, 0.3, 2.0)  # guitest is the reference here
    assert waits({}) == {"ready_after": 0.0, "settle": 0.3, "evaluate_after": 20.0, "sources": dict.fromkeys(("ready_after", "settle", "evaluate_after"), "default")}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"settle": "soon"}, r"env_options.settle must be a number of seconds \(0 or more\) or 'runner' \(the runner's own sleep_after_execution\), got 'soon'"),
        ({"settle": -0.5}, r"env_options.settle must be a number of seconds \(0 or more\), got -0.5"),
        ({"evaluate_after": "later"}, r"env_options.evaluate_after must be a number of seconds \(0 or more\) or 'runner' \(the runner's own evaluate_after\), got 'later'"),
        ({"ready_after": "runner"}, r"env_options.ready_after must be a number of seconds \(0 or more\), got 'runner'"),
        ({"ready_after": True}, r"env_options.ready_after must be a number of seconds \(0 or more\), got True"),
        ({"ready_after": "nan"}, r"env_options.ready_after must be a number of seconds \(0 or more\), got 'nan'"),
    ],
)
def test_a_bad_wait_says_what_to_give(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvFailure, match=message):
        machine_module.make({"urls": ["http://127.0.0.1:9"], **options}, str(tmp_path))


TASK = TaskSpec(
    "desktop",
    "notepad/draft",
    "Save a draft.",
    {
        "config": [{"type": "launch", "parameters": {"command": ["notepad"]}}],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_file_exists_in_vm_folder", "folder_name": "C:\\Users\\Docker\\Documents", "file_name": "draft.txt"},
            "expected": {"type": "rule", "rules": {"expected": 1.0}},
        },
    },
)


def test_an_episode_waits_where_osworlds_harness_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake clock that each wait moves on: the waits are recorded with the machine request they came after.
    clock, slept = [1000.0], []
    with FakeMachine() as m:

        def sleep(seconds: float) -> None:
            slept.append((round(seconds, 6), m.paths()[-1]))
            clock[0] += seconds

        monkeypatch.setattr(machine_module, "time", types.SimpleNamespace(monotonic=lambda: clock[0], sleep=sleep, perf_counter=lambda: clock[0]))
        monkeypatch.setattr(machine_module, "pause", sleep)
        env = DesktopEnv([m.url], ready_after=OSWORLD_READY, settle=3.0, evaluate_after=OSWORLD_EVALUATE, pool=MachinePool([m.url], lock_dir=str(tmp_path), wait=1.0))
        env.reset(TASK, seed=None)
        assert slept == [(60.0, "POST /setup/launch")] and m.paths()[-1] == "GET /screenshot"  # after the set-up, before the first screenshot
        for action in (Action("click", point=(10, 10), space="screen"), Action("wait", seconds=1.0), Action("done")):
            env.step(action)
        # 3 s after the click's code ran, the wait's own 1 s and 3 s more (OSWorld's WAIT sleeps its pause twice), 3 s after DONE
        assert slept[1:] == [(3.0, "POST /execute"), (1.0, "GET /screenshot"), (3.0, "GET /screenshot"), (3.0, "GET /screenshot")]
        m.files["C:\\Users\\Docker\\Documents\\draft.txt"] = b"draft"
        del slept[:]
        assert env.evaluate().success
        assert slept == [(20.0 - 3.0 - 1.0 - 3.0 - 3.0, "GET /screenshot")]  # 20 s from the last action: what passed since counts
        env.close()


CONFTEST = """\
import json, os, threading, time
from guitest.desktopenv import machine

_LOG = os.environ["WAITS_LOG"]
_READY = float(os.environ["READY_SECONDS"])
_BARRIER = threading.Barrier(int(os.environ["READY_TOGETHER"]), timeout=20) if os.environ.get("READY_TOGETHER") else None
_LOCK = threading.Lock()


def _sleep(seconds):
    begun = time.monotonic()
    if _BARRIER is not None and seconds == _READY:
        _BARRIER.wait()  # the episodes' ready waits meet here; episodes that waited one after the other never would
    with _LOCK, open(_LOG, "a") as f:
        f.write(json.dumps({"seconds": seconds, "begun": begun, "ended": time.monotonic(), "pid": os.getpid()}) + "\\n")


machine.pause = _sleep
"""


def write_tasks(folder: Path, tasks: dict[tuple[str, str], dict[str, Any]]) -> None:
    """A task list and its task files, as OSWorld and WAA lay them out (test_all.json, examples/<app>/<id>.json)."""
    listed: dict[str, list[str]] = {}
    for (app, task_id), task in tasks.items():
        (folder / "examples" / app).mkdir(parents=True, exist_ok=True)
        (folder / "examples" / app / f"{task_id}.json").write_text(json.dumps({"id": task_id, "snapshot": app, "source": "guitest test", "trajectory": "trajectories/", "related_apps": [app], **task}))
        listed.setdefault(app, []).append(task_id)
    (folder / "test_all.json").write_text(json.dumps(listed))


# Two tasks in WAA's shape (Windows paths, WAA's getters), each with guitest's scripted solution (oracle).
WAA_TASKS = {
    ("notepad", "7e1b2a3c-draft-WOS"): {
        "instruction": "Please open Notepad, type 'draft' and save it as draft.txt in Documents.",
        "config": [{"type": "launch", "parameters": {"command": ["notepad"]}}, {"type": "sleep", "parameters": {"seconds": 0}}],
        "evaluator": {
            "postconfig": [{"type": "activate_window", "parameters": {"window_name": "Notepad", "strict": True}}],
            "func": "exact_match",
            "result": {"type": "vm_file_exists_in_vm_folder", "folder_name": "C:\\Users\\Docker\\Documents", "file_name": "draft.txt"},
            "expected": {"type": "rule", "rules": {"expected": 1.0}},
        },
        "oracle": [{"kind": "type", "text": "draft"}, {"kind": "key", "keys": ["ctrl", "s"]}, {"kind": "done"}],
    },
    ("settings", "0d2f7b61-photoshop-WOS"): {
        "instruction": "Install Photoshop from the Settings app.",
        "config": [],
        "evaluator": {"func": "infeasible"},
        "oracle": [{"kind": "fail"}],
    },
}
OSWORLD_TASKS = {
    ("os", "5ea617a3-terminal"): {
        "instruction": "Open a terminal and make a folder named done in the home folder.",
        "config": [{"type": "execute", "parameters": {"command": ["true"]}}],
        "evaluator": {"func": "check_include_exclude", "result": {"type": "vm_command_line", "command": "ls ~"}, "expected": {"type": "rule", "rules": {"include": ["done"]}}},
        "oracle": [{"kind": "key", "keys": ["ctrl", "alt", "t"]}, {"kind": "type", "text": "mkdir ~/done\n"}, {"kind": "done"}],
    },
}


def logged(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, suite: str, data: str, tasks: dict, machines: list[FakeMachine], ready: float, *extra: str, together: int = 0
) -> tuple[pytest.RunResult, dict[str, Any], list[dict[str, Any]]]:
    """``pytest suites/<suite>`` with the suite file as shipped, the tasks under a data root, the machines by --env-url."""
    shutil.copytree(REPO / "suites" / suite, pytester.path / "suites" / suite)
    write_tasks(pytester.path / "data" / data, tasks)
    pytester.makeconftest(CONFTEST)
    log = pytester.path / "waits.jsonl"
    monkeypatch.setenv("WAITS_LOG", str(log))
    monkeypatch.setenv("READY_SECONDS", str(ready))
    if together:
        monkeypatch.setenv("READY_TOGETHER", str(together))
    urls = [f"--env-url={m.url}" for m in machines]
    result = pytester.runpytest_subprocess(f"suites/{suite}", "--model=oracle", f"--data-root={pytester.path / 'data'}", *urls, "-p", "no:cacheprovider", *extra)
    report_path = pytester.path / "reports" / f"{suite}.json"
    return result, json.loads(report_path.read_text()) if report_path.exists() else {}, logged(log)


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_suites_waa_runs_against_waa_servers_and_waits_as_waa(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: list[str]) -> None:
    # Before, every episode failed on WAA's answer to POST /guitest/reset (HTTP 500, not 404). Serially the two episodes
    # run side by side on the two machines: their ready waits must meet (a barrier), which episodes run one after the
    # other never do; the recorded intervals overlap.
    with FakeMachine(kind="waa") as first, FakeMachine(kind="waa") as second:
        for m in (first, second):
            m.files["C:\\Users\\Docker\\Documents\\draft.txt"] = b"draft"  # what the agent's ctrl+s would have saved
        result, report, slept = run_suite(pytester, monkeypatch, "waa", "windows_agent_arena", WAA_TASKS, [first, second], WAA_READY, *mode, together=0 if mode else 2)
        paths = first.paths() + second.paths()
    assert result.ret == 0, result.stdout.str()
    assert sorted(c["verdict"] for c in report["cases"]) == ["hit", "hit"] and report["overall"]["error"] == 0
    assert [c["prediction"]["reset"] for c in report["cases"]] == ["none", "none"]
    assert "POST /guitest/reset" not in paths and paths.count("GET /guitest/info") >= 2  # each machine asked what it has, in each process
    said = "5 s after the set-up before the first screenshot (env_options), 3 s after each action (env_options), 0 s from the last action to the evaluation (env_options)"
    header = [] if mode else [f"guitest waits (waa): {said}"]  # the header's collection lines are a serial run's (xdist's controller collects nothing)
    result.stdout.fnmatch_lines(["guitest machines: 0 of 2 reset by guitest's desktop server between episodes; 2 CANNOT BE RESET (*", *header, f"waits: {said}"])
    assert report["suite"]["waits"] == {
        "ready_after": WAA_READY,
        "settle": WAA_SETTLE,
        "evaluate_after": WAA_EVALUATE,
        "sources": dict.fromkeys(("ready_after", "settle", "evaluate_after"), "env_options"),
    }
    # per episode 5 s before its first screenshot, 3 s after each of its actions (3 and 1), and no wait before the evaluation
    assert sorted(s["seconds"] for s in slept) == [WAA_SETTLE] * 4 + [WAA_READY] * 2
    if not mode:
        ready = [s for s in slept if s["seconds"] == WAA_READY]
        assert max(s["begun"] for s in ready) < min(s["ended"] for s in ready)  # the two machines' waits overlapped


@pytest.mark.parametrize(("runner", "mode"), [("uitars15", []), ("qwen25vl", ["-n", "2"])], ids=["uitars15-serial", "qwen25vl-xdist"])
def test_suites_osworld_waits_as_osworlds_runner_of_the_model(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, runner: str, mode: list[str]) -> None:
    settle = OSWORLD_SLEEP_AFTER_EXECUTION[runner]
    with FakeMachine() as m:
        m.outputs["ls ~"] = "Desktop\ndone\n"
        began = time.monotonic()
        result, report, slept = run_suite(pytester, monkeypatch, "osworld", "osworld", OSWORLD_TASKS, [m], OSWORLD_READY, f"--runner={runner}", *mode)
        passed = time.monotonic() - began  # more than passed between the last action and the evaluation, however busy the machine
    assert result.ret == 0, result.stdout.str()
    assert [c["verdict"] for c in report["cases"]] == ["hit"]
    said = (
        f"60 s after the set-up before the first screenshot (env_options), {settle:g} s after each action (runner {runner}'s sleep_after_execution), "
        f"20 s from the last action to the evaluation (runner {runner}'s evaluate_after)"
    )
    result.stdout.fnmatch_lines([*([] if mode else [f"guitest waits (osworld): {said}"]), f"waits: {said}"])  # the header (serial), the summary
    assert report["suite"]["waits"]["settle"] == settle and report["suite"]["waits"]["sources"]["settle"] == f"runner {runner}'s sleep_after_execution"
    seconds = [s["seconds"] for s in slept]
    assert seconds[0] == OSWORLD_READY and seconds[1:-1] == ([settle] * 3 if settle else [])  # three actions: key, type, done
    # the clock does not move in these waits: the evaluation waits its 20 s less what passed since the last action
    assert OSWORLD_EVALUATE - passed < seconds[-1] <= OSWORLD_EVALUATE
