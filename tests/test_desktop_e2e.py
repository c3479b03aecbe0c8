"""Live desktop tasks end to end: pytest runs suites/desktop_local on real local desktops (Xvfb, openbox, guitest's
server of the OSWorld / WAA protocol), the agent being a loopback OpenAI-compatible server that plays each task's
scripted solution in a model family's own action syntax.

Four tasks of the suite (a browser click, an editor save, a terminal command, an infeasible task), so the runs stay
short: the scripted policy completes all four in pyautogui syntax; in UI-TARS syntax all but the terminal command,
which its runner types by pasting with ctrl+v as OSWorld's does (its call_user waits three times before it fails, as
OSWorld's runner has it); in Qwen computer_use syntax all but the infeasible task, whose terminate(status="failure")
OSWorld's Qwen agents read as DONE (serial and -n 2, one desktop per worker); a policy that says done at once scores 0, twice, on a desktop without a reset where the
oracle solved the tasks before; a desktop that dies mid-episode makes the case an error, and --lf against a new
desktop completes the report.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time

import pytest

import fakeserver
from builders import REPO
from test_published_runs import lines, show_result
from test_desktop_real import _skip_or_fail, env_on, run_oracle

_skip_or_fail()

from guitest.localdesktop.xvfb import start_desktop  # noqa: E402
from guitest.desktopenv.reader import read  # noqa: E402
from guitest.published.runs import osworld_action  # noqa: E402
from guitest.suite import Suite  # noqa: E402

LOCAL = REPO / "suites" / "desktop_local"
LOCAL_SUITE = Suite(
    path=LOCAL / "suite.yaml",
    name="desktop_local",
    format="osworld",
    data={"dir": ".", "base": "suite", "annotations": "examples/*/*.json", "images": "."},
    task="live",
    prompt="default",
    id_template="{app}-{task_id}",
    tags=("app",),
    cross=(),
    average="micro",
)
TASKS = ["chromium/pick-green", "mousepad/new-note", "terminal/make-folder", "os/photoshop-crop"]
SELECT = "pick-green or new-note or make-folder or photoshop-crop"
SCREEN = (1920, 1080)
# (model name, convention the fake server answers in, coordinate space, extra options)
FAMILIES = {
    "pyautogui": ("agent", "pyautogui", "normalized", ["--model-profile=aguvis"]),
    "ui-tars": ("ui-tars-1.5-7b", "uitars", "pixel_sent", []),
    "qwen3": ("qwen3-vl-8b", "computer_use", "grid999", []),
}


def policy(convention: str, space: str, only: list[str] = TASKS) -> dict:
    """Each task's scripted solution (its oracle, screen pixels) as replies the fake server gives, step by step.

    In UI-TARS syntax a ``wait()`` is the reference's 5 s (the oracle's own is 0.3 to 0.5 s), so its policy keeps the
    oracle's wait on the first task only: the suite's evaluate_after gives the others their moment, and the one kept
    runs the reference's wait on the desktop."""
    script = {}
    for n, name in enumerate(only):
        task = json.loads((LOCAL / "examples" / f"{name}.json").read_text())
        steps = []
        for action in task["oracle"]:
            if convention == "uitars" and action["kind"] == "wait" and n:
                continue
            act = {k: v for k, v in action.items() if k in ("kind", "text", "keys")}
            if "point" in action:
                act["point"] = [action["point"][0] / SCREEN[0], action["point"][1] / SCREEN[1]]
            # OSWorld's UI-TARS runner waits on the first three call_user of an episode and fails on the fourth
            repeat = 4 if convention == "uitars" and act["kind"] == "fail" else 1
            steps += [{"act": act, "convention": convention, "space": space}] * repeat
        script[task["instruction"]] = steps
    return script


def suite(pytester: pytest.Pytester) -> None:
    shutil.copytree(LOCAL, pytester.path / "suites" / "desktop_local")


def args(server: fakeserver.Server, model: str, *extra: str) -> list[str]:
    return ["suites/desktop_local", "-k", SELECT, f"--model=openai:{model}", f"--base-url={server.base_url}", "--retries=1", "--retry-backoff=0.01", "--timeout=20", *extra]


def report(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "desktop_local.json").read_text())


# UI-TARS's episodes wait the reference's 5 s per wait() and call_user(): two desktops (-n 2) wait side by side
@pytest.mark.parametrize(("family", "mode"), [("pyautogui", []), ("ui-tars", ["-n", "2"]), ("qwen3", ["-n", "2"])], ids=["pyautogui", "ui-tars-xdist", "qwen3-xdist"])
def test_a_scripted_policy_completes_the_local_tasks(pytester: pytest.Pytester, tmp_path, family: str, mode: list[str]) -> None:
    suite(pytester)
    model, convention, space, extra = FAMILIES[family]
    with fakeserver.serve(tmp_path, script=policy(convention, space)) as server:
        result = pytester.runpytest_subprocess(*args(server, model, *extra, *mode, "--osworld-results=osworld"))
    assert result.ret == 0, result.stdout.str()
    data = report(pytester)
    # the same episodes in OSWorld's results layout: OSWorld's own show_result.py reads each domain's mean score as the
    # report's (these four domains lack the ones its Office/Daily/Professional lines name, so it stops after the domains;
    # its printout recorded for the result.txt values these runs write: tests/reference/osworld_show_result_folders.py)
    printed = show_result(pytester.path / "osworld", model=f"openai_{model}")
    domains = {m[1]: (int(m[2]), float(m[3]), float(m[4])) for m in re.finditer(r"Domain: (\S+) Runned: (\d+) Success Rate: (\S+) % Sum: (\S+)", printed)}
    assert set(domains) == set(data["breakdown"]["app"]), printed
    for domain, (n, rate, _) in domains.items():
        assert n == 1 and rate / 100 == pytest.approx(data["breakdown"]["app"][domain]["mean_score"], abs=1e-6)
    runned, total = sum(n for n, _, _ in domains.values()), sum(s for _, _, s in domains.values())
    assert total / runned == pytest.approx(data["overall"]["mean_score"], abs=1e-6)  # the mean of every result.txt: the mean score
    # a line per action that ran, its screenshot beside it, its code the code the machine reported running
    exported = pytester.path / "osworld" / "pyautogui" / "screenshot" / f"openai_{model}"
    codes = 0
    for case in data["cases"]:
        episode, (app, task) = case["episode"], case["id"].split("-", 1)
        ran = [s["actions"][: s.get("executed", len(s["actions"]))] for s in episode["trajectory"]]
        ours = lines(exported / app / task / "traj.jsonl")
        assert len(ours) == sum(map(len, ran)) and all((exported / app / task / line["screenshot_file"]).is_file() for line in ours if line["screenshot_file"])
        screen = (round(episode["screen_size"][0] / episode["scale"]), round(episode["screen_size"][1] / episode["scale"]))
        for step, actions in zip(episode["trajectory"], ran, strict=True):
            if (step.get("info") or {}).get("code"):
                assert osworld_action(actions[-1], screen, episode["scale"]) == step["info"]["code"], step
                codes += 1
    assert codes >= 3, codes  # a click, a type, a key at least
    hits = {c["id"] for c in data["cases"] if c["verdict"] == "hit"}
    expected = {"chromium-pick-green", "mousepad-new-note", "os-photoshop-crop", "terminal-make-folder"}
    if family == "ui-tars":  # its runner types by pasting with ctrl+v, as OSWorld's does, which a terminal does not take
        expected.discard("terminal-make-folder")
    if family == "qwen3":  # terminate(status="failure") is DONE, as OSWorld's Qwen agents read it: never the FAIL it wants
        expected.discard("os-photoshop-crop")
    assert data["n_results"] == 4 and hits == expected, [(c["id"], c["prediction"]) for c in data["cases"]]
    if family == "ui-tars":
        crop = next(c for c in data["cases"] if c["id"] == "os-photoshop-crop")
        assert crop["steps"] == 4 and [n for s in crop["episode"]["trajectory"] for n in s["notes"] if n.startswith("call_user")] == [
            "call_user_waits:1/3",
            "call_user_waits:2/3",
            "call_user_waits:3/3",
            "call_user_fails",
        ]


def test_a_policy_that_does_nothing_scores_zero_twice_on_a_desktop_nothing_resets(pytester: pytest.Pytester, tmp_path) -> None:
    """A desktop without a reset keeps what episodes leave, as OSWorld's server does. After the oracle solved two tasks
    there (a saved file, a made folder), an agent that does nothing scores 0 on them, run after run: each task sets up
    its own preconditions."""
    suite(pytester)
    copied = pytester.path / "suites" / "desktop_local" / "suite.yaml"  # nothing done, nothing to settle before the evaluation
    copied.write_text(copied.read_text().replace("evaluate_after: 2 ", "evaluate_after: 0 "))
    assert "evaluate_after: 0 " in copied.read_text()
    with start_desktop(reset=False) as desktop:
        env = env_on(tmp_path / "leases", desktop.url)
        try:
            samples = {s.id: s for s in read(LOCAL_SUITE, str(LOCAL))}
            for name in ("mousepad-new-note", "terminal-make-folder"):
                assert run_oracle(env, samples[name]).success
                env.release()
        finally:
            env.close()
        with fakeserver.serve(tmp_path, script={"*": [{"act": {"kind": "done"}, "convention": "guitest"}] * 10}) as server:
            for _ in range(2):
                result = pytester.runpytest_subprocess(*args(server, "agent", f"--env-url={desktop.url}", "-k", "new-note or make-folder"))
                assert result.ret == 0, result.stdout.str()
                data = report(pytester)
                assert data["n_results"] == 2 and data["overall"]["hit"] == 0, [(c["id"], c["prediction"]) for c in data["cases"]]
                assert all(c["steps"] == 1 and c["prediction"]["end"] == "done" and c["prediction"]["reset"] == "none" for c in data["cases"])


def test_a_desktop_that_dies_mid_episode_is_an_error_that_lf_completes(pytester: pytest.Pytester, tmp_path) -> None:
    suite(pytester)
    slow = policy("guitest", "normalized", ["mousepad/new-note"])
    (steps,) = slow.values()
    steps[1] = {**steps[1], "hold": "killed"}  # the second step's reply waits until the desktop is killed
    first_desktop = start_desktop()
    try:
        with fakeserver.serve(tmp_path, script=slow) as server:
            command = [sys.executable, "-m", "pytest", *args(server, "agent", f"--env-url={first_desktop.url}", "-k", "new-note")]
            process = pytester.popen(command, stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + 120
            while len(server.requests()) < 2 and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
            first_desktop.stop()
            server.release("killed")
            out, _ = process.communicate(timeout=120)
            port = server.port
    finally:
        first_desktop.stop()
    assert process.returncode == 1, out.decode(errors="replace")
    (case,) = report(pytester)["cases"]
    assert case["verdict"] == "error" and "environment failed" in case["error"]
    with start_desktop() as second, fakeserver.serve(tmp_path, script=policy("guitest", "normalized", ["mousepad/new-note"]), port=port) as server:
        again = pytester.runpytest_subprocess(*args(server, "agent", f"--env-url={second.url}", "-k", "new-note", "--lf"))
    assert again.ret == 0, again.stdout.str()
    merged = report(pytester)
    assert merged["complete"] and merged["overall"]["error"] == 0 and merged["overall"]["hit"] == 1
