"""A real local desktop: Xvfb + openbox + guitest's protocol server, driven through the desktop backend.

Needs the Debian packages of tests/setup_desktop.sh and pyautogui + python-xlib in this Python; skipped
with the reason when they are missing, unless GUITEST_REQUIRE_DESKTOP=1 (CI), which makes that a failure.
About 40-60 s on a quiet 2-core machine.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image

from builders import REPO
from guitest.desktopenv import commands as cli
from guitest.localdesktop.xvfb import LocalDesktop, marked_pids, missing_programs, server_python_problem, start_desktop
from guitest.desktopenv.machine import DesktopEnv
from guitest.desktopenv.reader import read
from guitest.live.actions import Action
from guitest.live.protocol import EnvFailure
from guitest.desktopenv.client import MachineClient, MachineFailure
from guitest.desktopenv.machine_pool import MachinePool
from guitest.desktopenv.task import oracle_actions, task_spec
from guitest.suite import Suite

LOCAL = REPO / "suites" / "desktop_local"
#: the suite's own wait before an evaluation (suite.yaml env_options.evaluate_after), as `pytest suites/desktop_local` runs
EVALUATE_AFTER = yaml.safe_load((LOCAL / "suite.yaml").read_text())["env_options"]["evaluate_after"]


def _skip_or_fail() -> None:
    missing = missing_programs()
    problem = f"the desktop packages are missing: {', '.join(missing)} (bash tests/setup_desktop.sh)" if missing else server_python_problem()
    if problem:
        if os.environ.get("GUITEST_REQUIRE_DESKTOP"):
            pytest.fail(f"GUITEST_REQUIRE_DESKTOP is set but {problem}", pytrace=False)
        pytest.skip(f"{problem}; set GUITEST_REQUIRE_DESKTOP=1 to fail instead of skip", allow_module_level=True)


_skip_or_fail()


@pytest.fixture(scope="module")
def desktop():
    with start_desktop(command_timeout=4.0) as d:
        yield d


@pytest.fixture(scope="module")
def tasks() -> dict[str, object]:
    suite = Suite(
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
    return {s.id: s for s in read(suite, str(LOCAL))}


def env_on(tmp_path: Path, *urls: str) -> DesktopEnv:
    return DesktopEnv(list(urls), evaluate_after=EVALUATE_AFTER, pool=MachinePool(list(urls), lock_dir=str(tmp_path / "leases"), wait=60))


def run_oracle(env: DesktopEnv, sample) -> object:
    obs = env.reset(task_spec(sample.data), seed=0)
    assert obs.size == (1920, 1080) and obs.scale == 1.0
    for action in oracle_actions(sample.data):
        obs = env.step(action)
        assert "action_error" not in obs.info, obs.info
    assert obs.done
    return env.evaluate()


@pytest.mark.parametrize("task_id", ["mousepad-new-note", "settings-dark-mode-font", "terminal-rename-file", "notes-save-as", "chromium-pick-green"])
def test_the_oracle_solves_local_tasks(desktop: LocalDesktop, tasks, tmp_path: Path, task_id: str) -> None:
    env = env_on(tmp_path, desktop.url)
    try:
        verdict = run_oracle(env, tasks[task_id])
    finally:
        env.close()
    assert (verdict.success, verdict.score, verdict.decided_by) == (True, 1.0, "environment"), verdict.reason


@pytest.mark.parametrize("task_id", ["mousepad-new-note", "settings-font-too-big"])
def test_doing_nothing_scores_zero(desktop: LocalDesktop, tasks, tmp_path: Path, task_id: str) -> None:
    env = env_on(tmp_path, desktop.url)
    try:
        env.reset(task_spec(tasks[task_id].data), seed=0)
        assert env.step(Action("done")).done
        verdict = env.evaluate()
    finally:
        env.close()
    assert (verdict.success, verdict.score) == (False, 0.0), verdict.reason


def test_text_pyautogui_has_no_keys_for_arrives_typed_and_pasted(desktop: LocalDesktop, tasks, tmp_path: Path) -> None:
    """pyautogui.write drops on X11 every character it has no key for (OSWorld's Qwen and pyautogui agents lose them so);
    guitest types such text, and a paste (OSWorld's UI-TARS runner types through the clipboard), through the clipboard,
    or through xdotool where no clipboard tool answers (this desktop has neither xclip nor xsel)."""
    env = env_on(tmp_path, desktop.url)
    try:
        env.reset(task_spec(tasks["mousepad-new-note"].data), seed=0)
        steps = [Action("type", text="Grüße aus 東京"), Action("key", keys=("enter",)), Action("type", text="naïve ☃ ok", paste=True), Action("key", keys=("ctrl", "s")), Action("wait", seconds=0.5)]
        for action in steps:
            obs = env.step(action)
            assert "action_error" not in obs.info, obs.info
    finally:
        env.close()
    assert Path(desktop.home, "Documents", "hello.txt").read_text(encoding="utf-8").rstrip("\n") == "Grüße aus 東京\nnaïve ☃ ok"


def dark_fraction(png: bytes, x: int, y: int) -> float:
    box = Image.open(io.BytesIO(png)).convert("L").crop((x - 2, y - 2, x + 14, y + 18))
    pixels = box.tobytes()
    return sum(p < 20 for p in pixels) / len(pixels)


def test_the_server_speaks_the_protocol(desktop: LocalDesktop) -> None:
    c = MachineClient(desktop.url)
    assert c.resets() is True and c.reset_desktop()
    assert c.platform() == "Linux" and c.screen_size() == (1920, 1080)
    c.run_pyautogui("pyautogui.moveTo(600, 600)")
    with_cursor = c.screenshot()
    c.run_pyautogui("pyautogui.moveTo(1500, 900)")
    assert dark_fraction(c.screenshot(), 600, 600) == 1.0  # the empty root window is black
    assert dark_fraction(with_cursor, 600, 600) < 0.9  # the cursor is drawn in where the pointer is
    c.upload("~/Documents/in/x.bin", b"\x00\x01\xfe")
    assert c.get_file("~/Documents/in/x.bin") == b"\x00\x01\xfe"
    assert c.get_file("~/Documents/none") is None
    assert c.desktop_path() == os.path.join(desktop.home, "Desktop")
    assert c.list_directory("~/Documents")["children"][0]["name"] == "in"
    result = c.execute(["python", "-c", "import os, sys; print(os.environ['HOME']); sys.exit(3)"])
    assert (result["output"].strip(), result["returncode"]) == (desktop.home, 3)
    warm = c.run_pyautogui("print(pyautogui.position()); raise SystemExit(2)")
    assert (warm["output"].strip(), warm["returncode"]) == ("Point(x=1500, y=900)", 2)
    errors = c.run_pyautogui("pyautogui.press(undefined_name)")
    assert errors["returncode"] == 1 and "NameError" in errors["error"]
    assert c.setup_call("activate_window", {"window_name": "no such window"}).status == 404


def test_commands_that_hang_are_killed_and_the_desktop_goes_on(desktop: LocalDesktop) -> None:
    c = MachineClient(desktop.url)
    failures: dict[str, MachineFailure] = {}

    def hang(name: str, command: list[str]) -> None:
        try:
            c.execute(command)
        except MachineFailure as exc:
            failures[name] = exc

    threads = [threading.Thread(target=hang, args=a) for a in (("warm", ["python", "-c", "import pyautogui; import time; time.sleep(60)"]), ("plain", ["sleep", "60"]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert {k: f.kind for k, f in failures.items()} == {"warm": "command_timeout", "plain": "command_timeout"}
    assert not failures["warm"].taken_out
    assert c.run_pyautogui("print('alive')")["output"] == "alive\n"


def test_the_accessibility_tree(desktop: LocalDesktop) -> None:
    if not Path("/usr/bin/python3").exists() or os.system("/usr/bin/python3 -c 'import pyatspi' 2>/dev/null") != 0:
        if os.environ.get("GUITEST_REQUIRE_DESKTOP"):
            pytest.fail("GUITEST_REQUIRE_DESKTOP is set but the system Python has no pyatspi (python3-pyatspi)", pytrace=False)
        pytest.skip("the system Python has no pyatspi (Debian: python3-pyatspi)")
    c = MachineClient(desktop.url)
    c.reset_desktop()
    c.setup_call("launch", {"command": ["mousepad", "~/Documents/tree.txt"], "shell": False})
    c.execute(["wmctrl", "-l"])
    deadline = time.monotonic() + 20
    tree = ""
    while time.monotonic() < deadline and 'name="mousepad"' not in tree:
        tree = c.accessibility() or ""
        time.sleep(0.3)
    assert tree.startswith("<desktop-frame") and '<application name="mousepad"' in tree
    assert re.search(r'<frame name="[^"]*tree.txt - Mousepad"[^>]*cp:screencoord="\(\d+, \d+\)"', tree)


def test_two_desktops_run_episodes_at_once(desktop: LocalDesktop, tasks, tmp_path: Path) -> None:
    with start_desktop() as second:
        assert second.display != desktop.display and second.url != desktop.url
        pool = MachinePool([desktop.url, second.url], lock_dir=str(tmp_path / "leases"), wait=60)
        envs = [DesktopEnv([desktop.url, second.url], evaluate_after=EVALUATE_AFTER, pool=pool) for _ in range(2)]
        results: dict[int, object] = {}
        machines: dict[int, str] = {}

        def episode(i: int, task_id: str) -> None:
            sample = tasks[task_id]
            envs[i].reset(task_spec(sample.data), seed=0)
            machines[i] = envs[i].machine
            for action in oracle_actions(sample.data):
                envs[i].step(action)
            results[i] = envs[i].evaluate()
            envs[i].close()

        threads = [threading.Thread(target=episode, args=(i, t)) for i, t in enumerate(["settings-display-name", "terminal-make-folder"])]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(machines.values()) == sorted([desktop.url, second.url])  # one episode per machine
        assert all(r.success for r in results.values()), results


def test_a_start_that_loses_the_race_for_a_display_moves_on(desktop: LocalDesktop) -> None:
    # what two workers see when both found the display free at once: this start's Xvfb loses to the running one,
    # whose server may already answer this start's first connection; it must not take that display for its own
    import uuid

    from guitest.localdesktop import xvfb

    marker = uuid.uuid4().hex
    lost = xvfb._try_start(desktop.display, None, marker, (1920, 1080), 24, sys.executable, 4.0, 10.0, time.monotonic())
    assert isinstance(lost, str) and lost.startswith("display busy"), lost
    assert marked_pids(marker) == []  # nothing of the lost start is left running
    assert MachineClient(desktop.url).screenshot()[:8] == b"\x89PNG\r\n\x1a\n"  # the desktop holding the display is unharmed


def test_desktops_started_at_once_get_displays_of_their_own() -> None:
    started: list[LocalDesktop] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            started.append(start_desktop())
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not errors and len(started) == 2, errors
        assert started[0].display != started[1].display
    finally:
        for d in started:
            d.stop()


def test_a_desktop_that_dies_mid_episode_is_an_env_failure_without_orphans(tasks, tmp_path: Path) -> None:
    doomed = start_desktop()
    try:
        env = env_on(tmp_path, doomed.url)
        env.reset(task_spec(tasks["mousepad-new-note"].data), seed=0)
        env.step(Action("type", text="half"))
        assert len(marked_pids(doomed.marker)) > 5  # X, bus, window manager, server, mousepad, ...
        server = next(p for p in doomed._procs if p.pid == doomed.pids["server"])
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)  # gone, not dying: its port refuses connections now
        with pytest.raises(EnvFailure) as info:
            env.step(Action("key", keys=("ctrl", "s")))
        assert info.value.kind == "unreachable" and doomed.url in str(info.value)
        assert doomed.url in env.pool.taken_out
        with pytest.raises(EnvFailure, match="every desktop machine was taken out"):
            env.reset(task_spec(tasks["mousepad-new-note"].data), seed=0)
    finally:
        doomed.stop()
    assert marked_pids(doomed.marker) == []
    assert not os.path.exists(doomed.root) and not os.path.exists(f"/tmp/.X{doomed.display}-lock")


KILLED_STARTER = """
import json, os
from guitest.localdesktop.xvfb import start_desktop
d = start_desktop()
print(json.dumps({"marker": d.marker, "root": d.root, "state": d.state_file}), flush=True)
os.kill(os.getpid(), 9)
"""


def test_a_desktop_whose_starter_is_killed_is_reaped() -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_STARTER], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    info = json.loads(done.stdout)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (marked_pids(info["marker"]) or os.path.exists(info["root"])):
        time.sleep(0.1)
    assert marked_pids(info["marker"]) == []
    assert not os.path.exists(info["root"]) and not os.path.exists(info["state"])


def test_guitest_desktop_up_status_down(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["up", "--no-reset"]) == 0  # a stand-in for OSWorld's server, which has no reset
    up = capsys.readouterr().out
    display = int(re.search(r"desktop :(\d+) up", up).group(1))
    url = re.search(r"--env-url=(http://127\.0\.0\.1:\d+)", up).group(1)
    token_file = re.search(r"its secret .* is in (\S+), readable by you only", up).group(1)
    assert Path(token_file).read_text().strip() not in up  # where the secret is, never the secret
    assert re.search(rf"DISPLAY=:{display} XAUTHORITY=\S+/Xauthority", up)
    try:
        client = MachineClient(url)
        assert client.probe() and client.resets() is False and not client.reset_desktop()
        assert client.request("POST", "/guitest/reset").status == 404
        assert cli.main(["status"]) == 0
        assert f":{display}  {url}  answers  reset OFF (--no-reset)" in capsys.readouterr().out
    finally:
        assert cli.main(["down", "--display", str(display)]) == 0
    assert f"desktop :{display} stopped" in capsys.readouterr().out
    assert not MachineClient(url, retries=0).probe()
    assert cli.main(["down", "--display", str(display)]) == 1
    assert "no desktop" in capsys.readouterr().err
