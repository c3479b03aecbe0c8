"""The machine protocol client, the machine pool and the desktop backend against a fake machine server.

The fake (tests/fakemachine.py) answers the endpoint shapes OSWorld's and WAA's servers answer, and
misbehaves on demand: HTTP 500, a dropped connection, a request that takes too long.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import types
from pathlib import Path
from typing import Any

import pytest

from fakemachine import FakeMachine
from test_deadlines import dripping  # noqa: F401 - the fixture: a loopback server dripping a valid answer
from guitest.desktopenv import machine as machine_module
from guitest.desktopenv.machine import DesktopEnv, pyautogui_code, pyautogui_key
from guitest.live.actions import Action
from guitest.live.protocol import EnvFailure, TaskSpec
from guitest.desktopenv.client import PYAUTOGUI_PREFIX, MachineClient, MachineFailure, shown_url
from guitest.desktopenv.machine_pool import MachinePool


@pytest.fixture
def machine():
    with FakeMachine(screen=(1280, 720)) as m:
        yield m


def client(url: str, **kw) -> MachineClient:
    return MachineClient(url, **{"timeout": 2.0, "command_timeout": 2.0, "backoff": 0.01, **kw})


def test_endpoint_shapes(machine: FakeMachine) -> None:
    c = client(machine.url)
    assert c.screenshot() == machine.shot
    assert c.screen_size() == (1280, 720)
    machine.outputs["python -c " + PYAUTOGUI_PREFIX + "pyautogui.click(3, 4)"] = "clicked"
    assert c.run_pyautogui("pyautogui.click(3, 4)")["output"] == "clicked"
    c.upload("C:\\Users\\Docker\\a b.txt", b"\x00bytes\xff")
    assert c.get_file("C:\\Users\\Docker\\a b.txt") == b"\x00bytes\xff"
    assert c.get_file("C:\\missing.txt") is None
    assert c.desktop_path() == "C:\\Users\\Docker\\Desktop"
    assert c.accessibility("uia") == "<desktop/>"
    assert c.setup_call("launch", {"command": ["notepad"], "shell": False}).status == 200
    assert c.platform() == "Windows"
    sent = {f"{m} {p}": d for m, p, d in machine.requests}
    # what OSWorld's PythonController sends for an action, field by field
    assert sent["POST /execute"] == {"command": ["python", "-c", "import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(3, 4)"], "shell": False}
    assert sent["POST /setup/upload"]["file_path"] == b"C:\\Users\\Docker\\a b.txt"
    assert sent["POST /file"] == {"file_path": "C:\\missing.txt"}
    assert sent["POST /setup/launch"] == {"command": ["notepad"], "shell": False}
    assert ("GET", "/accessibility", None) in machine.requests  # the WAA backend rides in the query string


def test_a_500_is_a_server_error_and_the_machine_stays(machine: FakeMachine) -> None:
    machine.fault("POST /execute", {"status": 500, "message": "pyautogui is not installed"})
    with pytest.raises(MachineFailure) as info:
        client(machine.url).run_pyautogui("pyautogui.press('a')")
    assert info.value.kind == "server_error" and not info.value.taken_out
    assert "HTTP 500: pyautogui is not installed" in str(info.value) and machine.url in str(info.value)
    assert machine.paths().count("POST /execute") == 1  # an action is never sent twice


def test_a_timed_out_command_is_named_and_the_machine_stays(machine: FakeMachine) -> None:
    machine.fault("POST /execute", {"status": 500, "message": "Command '['python']' timed out after 120 seconds"})
    with pytest.raises(MachineFailure) as info:
        client(machine.url).execute(["python", "-c", "while True: pass"])
    assert info.value.kind == "command_timeout" and not info.value.taken_out


def test_a_screenshot_is_retried_after_a_500_and_a_dropped_connection(machine: FakeMachine) -> None:
    machine.fault("GET /screenshot", {"status": 500}, {"drop": True})
    assert client(machine.url).screenshot() == machine.shot
    assert machine.paths().count("GET /screenshot") == 3


def test_a_dropped_execute_is_not_repeated_and_takes_the_machine_out(machine: FakeMachine) -> None:
    machine.fault("POST /execute", {"drop": True})
    with pytest.raises(MachineFailure) as info:
        client(machine.url).run_pyautogui("pyautogui.click(1, 1)")
    assert info.value.kind == "dropped" and info.value.taken_out
    assert "closed before an answer" in str(info.value)
    assert machine.paths().count("POST /execute") == 1


def test_no_answer_within_the_timeout(machine: FakeMachine) -> None:
    machine.fault("POST /execute", {"sleep": 30})
    began = time.monotonic()
    with pytest.raises(MachineFailure) as info:
        client(machine.url, command_timeout=0.5).execute(["sleep", "10"])
    assert info.value.kind == "timeout" and info.value.taken_out
    assert time.monotonic() - began < 20  # it gave up, never waiting for the answer (30 s)
    assert "no answer within 0.5 s" in str(info.value)


def test_an_unreachable_machine_says_how_to_start_one() -> None:
    with FakeMachine() as m:
        url = m.url
    with pytest.raises(MachineFailure) as info:
        client(url, retries=1).screenshot()
    assert info.value.kind == "unreachable" and info.value.taken_out
    assert "guitest desktop up" in str(info.value) and "cannot connect" in str(info.value)


def test_bad_replies_are_named(machine: FakeMachine) -> None:
    machine.shot = b"GIF89a..."
    with pytest.raises(MachineFailure, match="not a PNG") as info:
        client(machine.url).screenshot()
    assert info.value.kind == "bad_reply"
    with pytest.raises(EnvFailure, match="expected http://HOST:PORT"):
        MachineClient("ftp://host:5000")


def test_credentials_never_show_in_messages() -> None:
    assert shown_url("http://ada:s3cret@vm.example:5000/") == "http://vm.example:5000"
    with pytest.raises(MachineFailure) as info:
        client("http://ada:s3cret@127.0.0.1:9/", retries=0).platform()
    assert "s3cret" not in str(info.value)


# -- the pool ------------------------------------------------------------------------------------------


def test_one_episode_per_machine_and_a_taken_out_machine_is_skipped(tmp_path: Path) -> None:
    pool = MachinePool(["http://a:5000", "http://b:5000/"], lock_dir=str(tmp_path), wait=0.3, poll=0.05)
    first, second = pool.acquire(), pool.acquire()
    assert {first.url, second.url} == {"http://a:5000", "http://b:5000"}
    with pytest.raises(EnvFailure, match="no desktop machine became free within 0.3 s"):
        pool.acquire()
    pool.take_out(first.url, "dropped")
    first.release()
    first.release()  # twice is harmless
    with pytest.raises(EnvFailure, match="all busy"):
        pool.acquire()  # only b is in service, and it is leased
    second.release()
    assert pool.acquire().url == second.url
    pool.take_out(second.url, "timeout")
    with pytest.raises(EnvFailure, match="every desktop machine was taken out"):
        pool.acquire()


def _hold_lease(lock_dir: str, url: str, ready, done) -> None:
    lease = MachinePool([url], lock_dir=lock_dir).acquire()
    ready.set()
    done.wait(10)
    lease.release()


def test_leases_hold_across_processes(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready, done = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lease, args=(str(tmp_path), "http://a:5000", ready, done))
    proc.start()
    try:
        assert ready.wait(30)
        pool = MachinePool(["http://a:5000"], lock_dir=str(tmp_path), wait=0.3, poll=0.05)
        with pytest.raises(EnvFailure, match="all busy"):
            pool.acquire()
        done.set()
        proc.join(10)
        assert pool.acquire(wait=5).url == "http://a:5000"
    finally:
        done.set()
        proc.join(10)


def test_a_pool_needs_a_machine() -> None:
    with pytest.raises(EnvFailure, match="--env-url=http://HOST:5000"):
        MachinePool(["", " "])


# -- actions as pyautogui code --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action, code",
    [
        (Action("click", point=(200.4, 100.6), space="screen"), "pyautogui.click(100, 50)"),
        (Action("double_click", point=(10, 10)), "pyautogui.doubleClick(5, 5)"),
        (Action("right_click", point=(10, 10)), "pyautogui.rightClick(5, 5)"),
        (Action("move", point=(-50, 5000)), "pyautogui.moveTo(0, 719)"),
        (Action("drag", point=(0, 0), end=(20, 40)), "pyautogui.moveTo(0, 0); pyautogui.dragTo(10, 20, duration=0.3, button='left')"),
        (Action("scroll", scroll=(0, 3)), "pyautogui.scroll(-3)"),
        (Action("scroll", point=(100, 100), scroll=(-2, -1)), "pyautogui.moveTo(50, 50); pyautogui.scroll(1); pyautogui.hscroll(-2)"),
        (Action("type", text='it\'s "done"\n'), "pyautogui.write('it\\'s \"done\"\\n')"),
        (Action("key", keys=("Enter",)), "pyautogui.press('enter')"),
        (Action("key", keys=("ctrl", "shift", "Escape")), "pyautogui.hotkey('ctrl', 'shift', 'esc')"),
        # the computer-use APIs' actions: where the pointer is, the other buttons, modifiers held, a key held
        (Action("click"), "pyautogui.click()"),
        (Action("triple_click", point=(10, 10)), "pyautogui.tripleClick(5, 5)"),
        (Action("middle_click"), "pyautogui.middleClick()"),
        (Action("mouse_down", point=(10, 10)), "pyautogui.mouseDown(5, 5)"),
        (Action("mouse_up"), "pyautogui.mouseUp()"),
        (Action("click", point=(10, 10), keys=("ctrl", "shift")), "pyautogui.keyDown('ctrl'); pyautogui.keyDown('shift'); pyautogui.click(5, 5); pyautogui.keyUp('shift'); pyautogui.keyUp('ctrl')"),
        (Action("scroll", scroll=(0, 2), keys=("meta",)), "pyautogui.keyDown('win'); pyautogui.scroll(-2); pyautogui.keyUp('win')"),
        (Action("hold_key", keys=("shift", "a"), seconds=1.5), "pyautogui.keyDown('shift'); pyautogui.keyDown('a'); time.sleep(1.5); pyautogui.keyUp('a'); pyautogui.keyUp('shift')"),
    ],
)
def test_actions_become_pyautogui_code(action: Action, code: str) -> None:
    # screenshot at twice the screen's size (HiDPI): points are halved, and clamped onto the 1280x720 screen
    assert pyautogui_code(action, (1280, 720), scale=2.0) == code


def test_key_names_and_bad_actions() -> None:
    assert [pyautogui_key(k) for k in ("meta", "ArrowUp", "a", "F5")] == ["win", "up", "a", "f5"]
    for bad in (Action("move"), Action("drag"), Action("key"), Action("hold_key", seconds=1), Action("done"), Action("click", point=(1, 1), space="grid1000")):
        with pytest.raises(ValueError):
            pyautogui_code(bad, (100, 100))
    # a click, or a drag, without a start acts where the pointer is, as pyautogui.click() does in OSWorld's agents' code
    assert pyautogui_code(Action("click"), (100, 100)) == "pyautogui.click()"
    assert pyautogui_code(Action("drag", end=(5, 6), space="screen"), (100, 100)) == "pyautogui.dragTo(5, 6, duration=0.3, button='left')"


def test_typing_goes_key_by_key_for_ascii_and_through_the_clipboard_otherwise() -> None:
    assert pyautogui_code(Action("type", text="it's ok"), (100, 100)) == 'pyautogui.write("it\'s ok")'
    for action in (Action("type", text="grüße 東京"), Action("type", text="plain", paste=True)):
        code = pyautogui_code(action, (100, 100))
        assert code.startswith(f"\ntext = {action.text!r}\n") and "pyperclip.copy(text)" in code and "pyautogui.hotkey('ctrl', 'v')" in code
        compile("import pyautogui; import time; pyautogui.FAILSAFE = False; " + code, "<code>", "exec")  # what the client sends


# -- the backend ---------------------------------------------------------------------------------------

TASK = TaskSpec(
    env="desktop",
    name="notepad/draft",
    instruction="Save a draft.",
    config={
        "config": [
            {"type": "launch", "parameters": {"command": ["notepad"]}},
            {"type": "activate_window", "parameters": {"window_name": "Notepad"}},
            {"type": "execute", "parameters": {"command": ["python", "-c", "print(1)"], "until": {"returncode": 0}}},
        ],
        "evaluator": {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "C:\\draft.txt", "dest": "draft.txt"},
            "expected": {"type": "vm_file", "path": "C:\\gold.txt", "dest": "gold.txt"},
            "postconfig": [{"type": "sleep", "parameters": {"seconds": 0}}],
        },
    },
)


def env_for(*urls: str, tmp_path: Path, **options: Any) -> DesktopEnv:
    options = {"settle": 0, "evaluate_after": 0, "timeout": 2.0, "command_timeout": 2.0, **options}
    return DesktopEnv(list(urls), pool=MachinePool(list(urls), lock_dir=str(tmp_path), wait=1.0), **options)


def test_an_episode_runs_setup_actions_and_the_evaluator(tmp_path: Path) -> None:
    with FakeMachine(screen=(1280, 720), shot=(2560, 1440)) as m:
        env = env_for(m.url, tmp_path=tmp_path)
        obs = env.reset(TASK, seed=0)
        assert (obs.size, obs.scale, obs.instruction, obs.done) == ((2560, 1440), 2.0, "Save a draft.", False)
        assert m.paths()[:6] == ["GET /guitest/info", "POST /screen_size", "POST /setup/launch", "POST /setup/activate_window", "POST /setup/execute", "GET /screenshot"]
        env.step(Action("click", point=(1000, 500), space="screen"))
        assert m.requests[-2][2]["command"][2] == PYAUTOGUI_PREFIX + "pyautogui.click(500, 250)"
        before = len(m.requests)
        final = env.step(Action("done"))
        assert final.done and m.paths()[before:] == ["GET /screenshot"]  # DONE runs nothing on the machine
        m.files.update({"C:\\draft.txt": b"draft", "C:\\gold.txt": b"draft"})
        verdict = env.evaluate()
        assert verdict.success and verdict.score == 1.0 and verdict.decided_by == "environment"
        m.files["C:\\draft.txt"] = b"other"
        assert env.evaluate().score == 0.0
        env.close()
        env.close()


def test_the_evaluation_waits_evaluate_after_seconds_from_the_last_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # OSWorld's lib_run_single.py sleeps 20 s between the agent's last action and env.evaluate(); the time the episode
    # has already spent since (the settle, the agent's last model call) counts toward it. A fake clock: no real wait.
    clock, slept = [1000.0], []
    fake_time = types.SimpleNamespace(monotonic=lambda: clock[0], sleep=lambda s: slept.append(round(s, 6)), perf_counter=time.perf_counter, time=time.time)
    monkeypatch.setattr(machine_module, "time", fake_time)  # the backend's clock only: the fake machine keeps the real one
    monkeypatch.setattr(machine_module, "pause", fake_time.sleep)
    with FakeMachine() as m:
        env = env_for(m.url, tmp_path=tmp_path, evaluate_after=machine_module.EVALUATE_AFTER)
        env.reset(TASK, seed=0)
        clock[0] += 3.0
        env.step(Action("click", point=(10, 10), space="screen"))  # the last action ends at 1003
        clock[0] += 5.0
        env.step(Action("done"))
        m.files.update({"C:\\draft.txt": b"draft", "C:\\gold.txt": b"draft"})
        slept.clear()
        assert env.evaluate().success
        assert slept[0] == 15.0  # 20 s after the click, 5 s of which had passed
        clock[0] += 30.0
        slept.clear()
        env.evaluate()
        assert 15.0 not in slept and not any(s > 0.5 for s in slept)  # long past: no wait
        env.close()
    with pytest.raises(EnvFailure, match=r"env_options.evaluate_after must be a number of seconds \(0 or more\), got 'soon'"):
        env_for("http://127.0.0.1:9", tmp_path=tmp_path, evaluate_after="soon")
    with pytest.raises(EnvFailure, match=r"env_options.evaluate_after must be a number of seconds \(0 or more\), got -1"):
        env_for("http://127.0.0.1:9", tmp_path=tmp_path, evaluate_after=-1)


def test_a_machine_that_stops_answering_is_an_env_failure_and_leaves_the_pool(tmp_path: Path) -> None:
    with FakeMachine() as first, FakeMachine() as second:
        env = env_for(first.url, second.url, tmp_path=tmp_path)
        env.pool._start = 0  # begin with the first machine
        env.reset(TASK, seed=None)
        assert env.machine == first.url
        first.fault("POST /execute", {"drop": True})
        with pytest.raises(EnvFailure) as info:
            env.step(Action("key", keys=("a",)))
        assert info.value.kind == "dropped"
        assert first.url in env.pool.taken_out
        with pytest.raises(EnvFailure, match="call reset"):
            env.step(Action("key", keys=("a",)))
        env.reset(TASK, seed=None)  # --lf: the episode again, on the machine still in service
        assert env.machine == second.url
        env.close()


def test_a_failed_setup_step_names_the_step_and_frees_the_machine(tmp_path: Path) -> None:
    task = TaskSpec("desktop", "x", "y", {"config": [{"type": "open", "parameters": {"path": "C:\\none.docx"}}], "evaluator": {"func": "infeasible"}})
    with FakeMachine() as m:
        m.fault("POST /setup/open_file", {"status": 404, "message": "File not found"})
        env = env_for(m.url, tmp_path=tmp_path)
        with pytest.raises(EnvFailure, match=r"config step 1 \(open\): cannot open C:\\none.docx: HTTP 404"):
            env.reset(task, seed=None)
        env.reset(task, seed=None)  # the lease was given back
        env.step(Action("fail"))
        assert env.evaluate().success  # infeasible, answered FAIL
        env.close()


def test_unsupported_setup_steps_and_tasks_without_an_evaluator(tmp_path: Path) -> None:
    with FakeMachine() as m:
        env = env_for(m.url, tmp_path=tmp_path)
        with pytest.raises(EnvFailure, match="has no evaluator"):
            env.reset(TaskSpec("desktop", "x", "y", {}), seed=None)
        task = TaskSpec("desktop", "x", "y", {"config": [{"type": "chrome_open_tabs", "parameters": {}}], "evaluator": {"func": "infeasible"}})
        with pytest.raises(EnvFailure, match=r"config step 1 \(chrome_open_tabs\): guitest does not implement"):
            env.reset(task, seed=None)
        env.close()


def test_download_steps_fetch_here_and_upload(tmp_path: Path) -> None:
    source = tmp_path / "input.txt"
    source.write_text("payload")
    task = TaskSpec(
        "desktop",
        "x",
        "y",
        {
            "config": [
                {"type": "download", "parameters": {"files": [{"url": source.as_uri(), "path": "~/in.txt"}]}},
                {"type": "upload_file", "parameters": {"files": [{"local_path": str(source), "path": "~/again.txt"}]}},
            ],
            "evaluator": {"func": "infeasible"},
        },
    )
    with FakeMachine() as m:
        env = env_for(m.url, tmp_path=tmp_path / "locks")
        env.download_cache = str(tmp_path / "cache")
        env.reset(task, seed=None)
        assert m.files == {"~/in.txt": b"payload", "~/again.txt": b"payload"}
        missing = TaskSpec("desktop", "x", "y", {"config": [{"type": "download", "parameters": {"files": [{"url": "http://127.0.0.1:9/x.bin", "path": "~/x"}]}}], "evaluator": {"func": "infeasible"}})
        with pytest.raises(EnvFailure, match=r"config step 1 \(download\).*cannot download http://127.0.0.1:9/x.bin") as info:
            env.reset(missing, seed=None)
        assert "put a copy at" in str(info.value)
        env.close()


def test_the_fake_records_json_exactly(machine: FakeMachine) -> None:
    client(machine.url).execute("ls -la ~", shell=True)
    assert machine.requests[-1][2] == {"command": "ls -la ~", "shell": True}


HOSTILE = "\x1b]0;x\x07\x1b[2J"  # retitles the terminal, then clears it
SHOWN = "\\x1b]0;x\\x07\\x1b[2J"


def test_machine_text_in_errors_has_its_control_characters_escaped(machine: FakeMachine) -> None:
    machine.fault("POST /execute", {"status": 500, "message": f"boom {HOSTILE}"})
    machine.fault("GET /screenshot", {"status": 400, "body": f"raw {HOSTILE}".encode()})
    failures = []
    for call in (lambda c: c.execute(["ls"]), lambda c: c.screenshot()):
        with pytest.raises(MachineFailure) as info:
            call(client(machine.url, retries=0))
        failures.append(info.value)
    for failure, said in zip(failures, ("boom", "raw"), strict=True):
        assert "\x1b" not in str(failure) and "\x07" not in str(failure) and "\x1b" not in failure.detail
        assert f"{said} {SHOWN}" in str(failure)


def test_a_machine_dripping_its_answer_ends_at_the_deadline(dripping: str) -> None:  # noqa: F811 - the fixture imported above
    # each piece comes well within the timeout of one read; the whole answer (1.2 s) does not come within 0.5 s
    url = dripping.removesuffix("/v1")
    with pytest.raises(MachineFailure) as info:
        client(url, timeout=0.5, retries=0).platform()
    assert info.value.kind == "timeout" and "no answer within 0.5 s" in str(info.value)
    assert json.loads(client(url, timeout=5.0).platform())["model"] == "m"  # the same answer is whole and valid


def test_a_token_goes_only_where_it_belongs(machine: FakeMachine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUITEST_DESKTOP_TOKEN", raising=False)
    client(machine.url).platform()  # OSWorld's and WAA's servers take no token, and get none
    monkeypatch.setenv("GUITEST_DESKTOP_TOKEN", "s3cret")
    client(machine.url).platform()  # a loopback URL: it may be a guitest desktop of another user's
    client(machine.url, token="given").platform()
    assert machine.authorizations == [None, "Bearer s3cret", "Bearer given"]
    assert MachineClient("http://192.0.2.1:5000")._auth is None  # never to a machine elsewhere (an OSWorld VM)
    with FakeMachine() as other:
        other.fault("GET /platform", {"status": 401, "message": "this guitest desktop takes requests only with its secret"})
        with pytest.raises(MachineFailure) as info:
            client(other.url.replace("127.0.0.1", "localhost"), token="wrong", retries=0).platform()
    assert "GUITEST_DESKTOP_TOKEN" in str(info.value) and "wrong" not in str(info.value)
