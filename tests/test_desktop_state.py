"""Desktop machines in a known state: reverted through a provider, reset by guitest's server, or recorded as unknown.

A fake provider (desktop-env's ``Provider`` interface: start_emulator, get_ip_address, save_state,
revert_to_snapshot, stop_emulator) drives tests/fakemachine.py's server as its VM and records every call; the
fake machine has no ``/guitest/reset``, like OSWorld's server. Also here: the set-up's tolerance of error
answers and its open_file timeout, as desktop-env's SetupController has them; an invalid task alone; the gate.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from pathlib import Path
from typing import Callable

import pytest

from fakemachine import FakeMachine
from guitest.reporting import gate
from guitest.desktopenv import machine as desktop
from guitest.desktopenv.machine import DesktopEnv
from guitest.desktopenv.reader import read
from guitest.run.live_case import Environments, LiveSetup, run_live_case
from guitest.live.protocol import EnvFailure, TaskSpec
from guitest.models import load_model
from guitest.models.base import Settings
from guitest.desktopenv import provider, setup
from guitest.desktopenv.client import MachineClient, MachineFailure
from guitest.desktopenv.machine_pool import MachinePool
from guitest.suite import Suite

INFEASIBLE = {"func": "infeasible"}


class FakeProvider:
    """desktop-env's Provider interface over fake machines: ``machines[path]`` is the VM at ``path``; a revert empties
    its files (the snapshot's state) and, when ``moves`` names a new path, the VM comes back there (as AWS's does)."""

    def __init__(self, region: str | None, machines: dict[str, FakeMachine], calls: list[tuple], moves: dict[str, str]) -> None:
        self.region = region
        self.machines = machines
        self.calls = calls
        self.moves = moves

    def start_emulator(self, path_to_vm: str, headless: bool, os_type: str) -> None:
        self.calls.append(("start_emulator", path_to_vm, headless, os_type))

    def get_ip_address(self, path_to_vm: str) -> str:
        self.calls.append(("get_ip_address", path_to_vm))
        port = self.machines[path_to_vm].url.rsplit(":", 1)[1]
        return f"127.0.0.1:{port}:9222:8006:8080"  # the Docker provider's form: IP:server:chromium:vnc:vlc

    def save_state(self, path_to_vm: str, snapshot_name: str) -> None:
        self.calls.append(("save_state", path_to_vm, snapshot_name))

    def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> str:
        self.calls.append(("revert_to_snapshot", path_to_vm, snapshot_name))
        new = self.moves.get(path_to_vm, path_to_vm)
        self.machines[new].files.clear()
        return new

    def stop_emulator(self, path_to_vm: str) -> None:
        self.calls.append(("stop_emulator", path_to_vm))


class FakeManager:
    def __init__(self, calls: list[tuple]) -> None:
        self.calls = calls

    def delete_vm(self, path: str, region: str | None) -> None:
        self.calls.append(("delete_vm", path))

    def add_vm(self, path: str, region: str | None) -> None:
        self.calls.append(("add_vm", path))

    def occupy_vm(self, path: str, pid: int, region: str | None) -> None:
        self.calls.append(("occupy_vm", path))


WRITES_A_FILE = TaskSpec(
    "desktop",
    "t",
    "write",
    {
        "config": [{"type": "upload_file", "parameters": {"files": []}}],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_file", "path": "~/out.txt", "dest": "out.txt"},
            "expected": {"type": "rule", "rules": {"include": ["x"]}},
        },
    },
)


@pytest.mark.parametrize(("name", "first_revert"), [("fakevm", True), ("docker", False)], ids=["reverts-first", "clean-start"])
def test_a_provider_reverts_the_vm_before_each_episode(tmp_path: Path, name: str, first_revert: bool) -> None:
    calls: list[tuple] = []
    path, moved = str(tmp_path / "a.vmx"), str(tmp_path / "b.vmx")
    with FakeMachine() as vm_a, FakeMachine() as vm_b:
        machines = {path: vm_a, moved: vm_b}
        provider.register(name, lambda region: (FakeManager(calls), FakeProvider(region, machines, calls, {path: moved})))
        try:
            env = desktop.make({"provider": {"name": name, "path_to_vm": path, "snapshot_name": "clean", "headless": "true"}, "settle": 0, "evaluate_after": 0}, str(tmp_path))
            obs = env.reset(WRITES_A_FILE, seed=None)
            first = list(calls)
            start = [("start_emulator", path, True, "Ubuntu"), ("get_ip_address", path)]
            # DesktopEnv.reset: a VMware/VirtualBox VM (and one of one's own) is reverted before its first task too,
            # a Docker one starts clean from its image
            assert first == start + (
                [("revert_to_snapshot", path, "clean"), ("delete_vm", path), ("add_vm", moved), ("occupy_vm", moved), ("start_emulator", moved, True, "Ubuntu"), ("get_ip_address", moved)]
                if first_revert
                else []
            )
            on = vm_b if first_revert else vm_a
            assert obs.info["reset"] == "reverted" and env.reset_info["reset"] == "reverted" and env.machine == on.url
            on.files["~/out.txt"] = b"x"  # what the agent did
            assert env.evaluate().success
            env.release()
            env.reset(WRITES_A_FILE, seed=None)  # the next episode finds the snapshot's state, not the earlier agent's file
            assert calls[len(first)] == ("revert_to_snapshot", moved if first_revert else path, "clean")
            assert "~/out.txt" not in vm_b.files and not env.evaluate().success
            assert [p for m, p, _ in on.requests if p == "/guitest/reset"] == []  # a reverted VM needs no reset of guitest's
            env.close()
        finally:
            desktop.shutdown()
        assert calls[-1][0] == "stop_emulator"  # the end of the run stops the VM, as DesktopEnv.close does


def test_a_vm_that_cannot_be_reverted_leaves_the_pool(tmp_path: Path) -> None:
    class Broken(FakeProvider):
        def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> str:
            raise RuntimeError("vmrun: the snapshot does not exist")

    with FakeMachine() as vm:
        provider.register("brokenvm", lambda region: (None, Broken(region, {"/vm": vm}, [], {})))
        env = desktop.make({"provider": {"name": "brokenvm", "path_to_vm": "/vm", "ready_timeout": 5}}, str(tmp_path))
        try:
            with pytest.raises(EnvFailure, match=r"--env-provider=brokenvm: revert_to_snapshot\(/vm\) failed: RuntimeError: vmrun: the snapshot"):
                env.reset(WRITES_A_FILE, seed=None)
            with pytest.raises(EnvFailure, match="taken out of service"):
                env.reset(WRITES_A_FILE, seed=None)
        finally:
            desktop.shutdown()


class Stuck(FakeProvider):
    """A provider whose call named ``stuck`` does not return until the test releases it (20 s at most: then it raises,
    so a deadline that did not hold fails the test instead of hanging it)."""

    def __init__(self, stuck: str, release: threading.Event, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.stuck, self.release, self.entered = stuck, release, threading.Event()

    def _wait(self, name: str) -> None:
        if name == self.stuck:
            self.entered.set()
            if not self.release.wait(20):
                raise RuntimeError(f"{name} was never released")

    def start_emulator(self, path_to_vm: str, headless: bool, os_type: str) -> None:
        super().start_emulator(path_to_vm, headless, os_type)
        self._wait("start_emulator")

    def get_ip_address(self, path_to_vm: str) -> str:
        self._wait("get_ip_address")
        return super().get_ip_address(path_to_vm)

    def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> str:
        self._wait("revert_to_snapshot")
        return super().revert_to_snapshot(path_to_vm, snapshot_name)

    def stop_emulator(self, path_to_vm: str) -> None:
        super().stop_emulator(path_to_vm)
        self._wait("stop_emulator")


@pytest.mark.parametrize(("call", "key"), [("start_emulator", "start_timeout"), ("get_ip_address", "address_timeout"), ("revert_to_snapshot", "revert_timeout")])
def test_a_provider_call_that_hangs_costs_its_deadline_and_the_vm_leaves_the_run(tmp_path: Path, call: str, key: str) -> None:
    release = threading.Event()
    with FakeMachine() as vm:
        made = Stuck(call, release, None, {"/vm": vm}, [], {})
        provider.register("hangvm", lambda region: (None, made))
        # a VM of its own per case: the process's pool of a provider's VM keeps the VMs taken out
        path = f"/vm-{call}"
        made.machines[path] = vm
        env = desktop.make({"provider": {"name": "hangvm", "path_to_vm": path, key: "0.3"}, "settle": 0, "evaluate_after": 0}, str(tmp_path))
        try:
            with pytest.raises(EnvFailure) as failed:
                env.reset(WRITES_A_FILE, seed=None)  # a provider of one's own is reverted before its first episode too
            assert made.entered.is_set() and not release.is_set()  # the call was still running when the episode gave up
            assert str(failed.value).startswith(
                f"--env-provider=hangvm: {call}({path}) did not return within 0.3 s (--env-provider-option {key}=SECONDS); the VM leaves this run and its episodes are errors (re-run them with --lf)"
            )
            with pytest.raises(EnvFailure, match=rf"every desktop machine was taken out of service in this run \(hangvm:{path}: --env-provider=hangvm: {call}"):
                env.reset(WRITES_A_FILE, seed=None)
        finally:
            desktop.shutdown()  # not stopped: a call of the provider's is still running
            release.set()
        assert ("stop_emulator", path) not in made.calls


def test_a_stop_that_hangs_does_not_hold_up_the_end_of_the_run(tmp_path: Path) -> None:
    release = threading.Event()
    with FakeMachine() as vm:
        made = Stuck("stop_emulator", release, None, {"/vm": vm}, [], {})
        provider.register("slowstop", lambda region: (None, made))
        env = desktop.make({"provider": {"name": "slowstop", "path_to_vm": "/vm", "stop_timeout": 0.3}, "settle": 0, "evaluate_after": 0}, str(tmp_path))
        try:
            env.reset(WRITES_A_FILE, seed=None)
            env.close()
            desktop.shutdown()
            assert made.entered.is_set() and not release.is_set()  # shutdown() returned while stop_emulator still ran
        finally:
            release.set()


SLOW_PROVIDER = """
import threading

RELEASE, ENTERED = threading.Event(), threading.Event()


class Slow:
    def __init__(self, region):
        ENTERED.set()
        if not RELEASE.wait(20):  # a deadline that did not hold fails the test instead of hanging it
            raise RuntimeError("never released")
"""


def test_a_provider_whose_constructor_hangs_costs_its_deadline_and_the_vm_leaves_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before, making the provider had no deadline: the episode (and the run) waited as long as the constructor
    module = f"slowprovider_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(SLOW_PROVIDER)
    monkeypatch.syspath_prepend(str(tmp_path))
    name, path = f"{module}:Slow", f"/vm-{uuid.uuid4().hex[:8]}"
    env = desktop.make({"provider": {"name": name, "path_to_vm": path, "create_timeout": "0.3"}, "settle": 0, "evaluate_after": 0}, str(tmp_path))
    slow = __import__(module)
    try:
        with pytest.raises(EnvFailure) as failed:
            env.reset(WRITES_A_FILE, seed=None)
        assert slow.ENTERED.wait(20) and not slow.RELEASE.is_set()  # the constructor was still running when the episode gave up
        assert str(failed.value).startswith(
            f"--env-provider={name}: making the provider did not return within 0.3 s (--env-provider-option create_timeout=SECONDS); the VM leaves this run and its episodes are errors (re-run them with --lf)"
        )
        with pytest.raises(EnvFailure, match=rf"every desktop machine was taken out of service in this run \({re.escape(name)}:{path}: --env-provider={re.escape(name)}: making the provider"):
            env.reset(WRITES_A_FILE, seed=None)
    finally:
        desktop.shutdown()
        slow.RELEASE.set()


@pytest.mark.parametrize(
    ("call", "value", "said"),
    [
        ("get_ip_address", None, "None (NoneType)"),
        ("get_ip_address", 3232235777, "3232235777 (int)"),
        ("get_ip_address", "not an address!", "'not an address!' (str)"),
        ("get_ip_address", "10.0.0.7:http", "'10.0.0.7:http' (str)"),
        ("get_ip_address", "10.0.0.7:5000:70000", "'10.0.0.7:5000:70000' (str)"),
        ("get_ip_address", "", "'' (str)"),
        ("revert_to_snapshot", 42, "42 (int)"),
        ("get_ip_address", RuntimeError("no such VM\x1b[2J"), None),
    ],
)
def test_a_provider_that_raises_or_returns_garbage_is_named_in_one_message(tmp_path: Path, call: str, value: object, said: str | None) -> None:
    class Junk(FakeProvider):
        def get_ip_address(self, path_to_vm: str) -> object:
            return self.answer("get_ip_address", lambda: super(Junk, self).get_ip_address(path_to_vm))

        def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> object:
            return self.answer("revert_to_snapshot", lambda: super(Junk, self).revert_to_snapshot(path_to_vm, snapshot_name))

        def answer(self, name: str, fallback: Callable[[], object]) -> object:
            if name != call:
                return fallback()
            if isinstance(value, Exception):
                raise value
            return value

    path = f"/vm-{uuid.uuid4().hex[:8]}"  # a VM of its own per case (the process's pool keeps the VMs taken out)
    with FakeMachine() as vm:
        provider.register("junkvm", lambda region: (None, Junk(region, {path: vm}, [], {})))
        # a ready_timeout of 1 s: an address taken as it is would wait that long for a server that is not there
        env = desktop.make({"provider": {"name": "junkvm", "path_to_vm": path, "ready_timeout": 1}, "settle": 0, "evaluate_after": 0}, str(tmp_path))
        try:
            with pytest.raises(EnvFailure) as failed:
                env.reset(WRITES_A_FILE, seed=None)
        finally:
            desktop.shutdown()
    message = str(failed.value)
    if said is None:
        assert message == f"--env-provider=junkvm: get_ip_address({path}) failed: RuntimeError: no such VM\\x1b[2J"
    else:
        expected = "None or the VM's path" if call == "revert_to_snapshot" else "'IP', a host name, or 'IP:PORT:...'"
        assert message.startswith(f"--env-provider=junkvm: {call}({path}) returned {said}, expected {expected}"), message
        assert message.endswith("the VM leaves this run (fix the provider and re-run with --lf)")


def test_provider_settings_mirror_desktop_env_and_bad_ones_say_what_to_do(tmp_path: Path) -> None:
    s = provider.settings_from({"name": "vmware", "path_to_vm": "vms/Ubuntu.vmx", "screen_size": "1280x720"}, str(tmp_path))
    assert (s.path_to_vm, s.snapshot_name, s.screen_size, s.headless, s.os_type) == (str(tmp_path / "vms/Ubuntu.vmx"), None, (1280, 720), False, "Ubuntu")
    assert provider.default_snapshot(s) == "init_state"  # DesktopEnv's default snapshot_name
    assert provider.settings_from({"name": "virtualbox", "path_to_vm": "Ubuntu"}).path_to_vm == "Ubuntu"  # a VM's name, not a file
    assert provider.settings_from({"name": "aws", "path_to_vm": "i-0abc"}, str(tmp_path)).path_to_vm == "i-0abc"
    assert provider.with_command_line({"provider": {"name": "vmware", "path_to_vm": "x"}}, "docker", ["headless=true"])["provider"] == {"name": "docker", "headless": "true"}
    with pytest.raises(ValueError, match="snapshot_name, screen_size"):
        provider.parse_pairs(["snapshot=x"])
    with pytest.raises(EnvFailure, match="unknown key"):
        provider.settings_from({"name": "aws", "ami": "x"})
    assert provider.settings_from({"name": "aws", **provider.parse_pairs(["start_timeout=90", "stop_timeout=5.5"])}).stop_timeout == 5.5
    assert provider.ProviderSettings(name="aws").revert_timeout == 900.0  # boto3's instance_running waiter: 40 x 15 s, and room
    for bad in ("0", "-1", "nan", "inf", "soon", True):
        with pytest.raises(EnvFailure, match=rf"env_options.provider.start_timeout: expected a number of seconds above 0, got {bad!r}"):
            provider.settings_from({"name": "aws", "start_timeout": bad})
    with pytest.raises(EnvFailure, match=r"pip install --no-deps desktop-env==1.0.2 boto3 python-dotenv"):
        provider.create(provider.ProviderSettings(name="aws"))  # desktop-env is not installed here


def machine_env(url: str, tmp_path: Path, **kw: object) -> DesktopEnv:
    return DesktopEnv([url], settle=0, evaluate_after=0, timeout=2.0, command_timeout=2.0, pool=MachinePool([url], lock_dir=str(tmp_path), wait=1.0), **kw)


def test_a_setup_execute_answered_500_is_noted_and_the_episode_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setup, "RETRY_INTERVAL", 0.01, raising=False)
    steps = [
        {"type": "execute", "parameters": {"command": ["sh", "-c", "exit 0"]}},
        {"type": "execute", "parameters": {"command": ["wmctrl", "-l"], "until": {"returncode": 0}}},
        {"type": "launch", "parameters": {"command": ["xterm"]}},
    ]
    task = TaskSpec("desktop", "t", "do it", {"config": steps, "evaluator": INFEASIBLE})
    with FakeMachine() as m:
        m.fault("POST /setup/execute", {"status": 500, "message": "boom"}, *[{"status": 500, "message": "still"}] * 5)  # EXECUTE_FAILURES
        env = machine_env(m.url, tmp_path)
        obs = env.reset(task, seed=None)
        notes = obs.info["setup_notes"]
        assert notes == [
            "config step 1 (execute): HTTP 500: boom; the set-up went on, as OSWorld's does",
            "config step 2 (execute): HTTP 500: still; the set-up went on, as OSWorld's does",  # until: asked 5 times, then on
        ]
        assert m.paths().count("POST /setup/execute") == 1 + 5 == 1 + setup.EXECUTE_FAILURES and "POST /setup/launch" in m.paths()
        env.close()
        m.fault("POST /setup/execute", {"drop": True})  # no answer at all: the machine is gone, the set-up fails
        with pytest.raises(MachineFailure, match=r"config step 1 \(execute\)"):
            machine_env(m.url, tmp_path).reset(task, seed=None)


def test_open_file_waits_as_long_as_osworld_and_its_timeout_keeps_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = TaskSpec("desktop", "t", "x", {"config": [{"type": "open", "parameters": {"path": "~/a.txt"}}], "evaluator": INFEASIBLE})
    with FakeMachine() as m:
        m.fault("POST /setup/open_file", {"sleep": 0.6})  # the server waits for the file's window, longer than a command may take
        env = DesktopEnv([m.url], settle=0, evaluate_after=0, command_timeout=0.2, pool=MachinePool([m.url], lock_dir=str(tmp_path), wait=1.0))
        env.reset(task, seed=None)
        env.close()
        assert setup.OPEN_FILE_TIMEOUT == 1810.0  # desktop-env 1.0.2 controllers/setup.py _open_setup
        monkeypatch.setattr(setup, "OPEN_FILE_TIMEOUT", 0.2)
        m.fault("POST /setup/open_file", {"sleep": 0.6})
        with pytest.raises(MachineFailure) as info:
            env.reset(task, seed=None)
        assert info.value.kind == "command_timeout" and not info.value.taken_out and env.pool.taken_out == {}


@pytest.mark.parametrize("kind", ["osworld", "waa"])
def test_a_server_without_reset_is_asked_once_per_machine_and_never_sent_one(tmp_path: Path, kind: str) -> None:
    # OSWorld's server answers the route it lacks with 404, WAA's with 500 (its catch-all error handler): guitest asks
    # /guitest/info once per machine and sends its reset to neither. Before, it sent POST /guitest/reset and took only
    # a 404 for "no reset", so every WAA episode failed on the 500.
    task = TaskSpec("desktop", "t", "x", {"config": [], "evaluator": INFEASIBLE})
    with FakeMachine(kind=kind) as m:
        env = machine_env(m.url, tmp_path)
        resets = []
        for _ in range(3):
            resets.append(env.reset(task, seed=None).info.get("reset"))
            env.release()
        assert m.paths().count("GET /guitest/info") == 1  # each episode has a client of its own; the machine is the same
        assert "POST /guitest/reset" not in m.paths()
        assert resets == ["none"] * 3 and env.reset_info["reset"] == "none"
        assert MachineClient(m.url).resets() is False
        env.close()


def test_a_guitest_desktop_is_reset_before_each_episode(tmp_path: Path) -> None:
    task = TaskSpec("desktop", "t", "x", {"config": [], "evaluator": INFEASIBLE})
    with FakeMachine(kind="guitest") as m:
        env = machine_env(m.url, tmp_path)
        resets = []
        for _ in range(3):
            resets.append(env.reset(task, seed=None).info.get("reset"))
            env.release()
        assert m.paths().count("GET /guitest/info") == 1 and m.paths().count("POST /guitest/reset") == 3
        assert resets == ["reset"] * 3 and MachineClient(m.url).resets() is True
        m.fault("POST /guitest/reset", {"status": 500, "message": "cannot empty the home folder"})  # a reset that fails is an error, not "none"
        with pytest.raises(MachineFailure, match="POST /guitest/reset: HTTP 500: cannot empty the home folder"):
            env.reset(task, seed=None)
        env.close()


def test_an_episode_records_its_reset_and_its_wait_apart(tmp_path: Path) -> None:
    sample = next(
        iter(read_tasks(tmp_path, {"good": {"instruction": "say fail", "config": [{"type": "execute", "parameters": {"command": "x"}}], "evaluator": INFEASIBLE, "oracle": [{"kind": "fail"}]}}))
    )
    with FakeMachine() as m:
        m.fault("POST /setup/execute", {"status": 500, "message": "no such program"})
        live = LiveSetup(env="desktop", env_options={"urls": [m.url], "settle": 0, "evaluate_after": 0}, episodes_dir=str(tmp_path / "ep"), report_dir=str(tmp_path))
        envs = Environments(1)
        busy = MachinePool([m.url]).acquire()  # another episode (of another worker) holds the machine for 0.6 s
        threading.Timer(0.6, busy.release).start()
        try:
            result = run_live_case(sample, load_model("oracle", Settings()), live, envs)
        finally:
            envs.close()
    assert result["verdict"] == "hit"
    wait = result["prediction"]["wait_seconds"]
    assert result["prediction"]["reset"] == "none" and 0.5 <= wait < 5
    assert result["seconds"] == pytest.approx(result["episode"]["wall_seconds"] - wait, abs=0.01)  # the episode's time, the wait apart
    assert "config step 1 (execute): HTTP 500: no such program; the set-up went on, as OSWorld's does" in result["notes"]


def read_tasks(folder: Path, tasks: dict[str, dict]) -> list:
    for name, task in tasks.items():
        (folder / "examples" / "a").mkdir(parents=True, exist_ok=True)
        (folder / "examples" / "a" / f"{name}.json").write_text(json.dumps(task))
    suite = Suite(
        path=folder / "suite.yaml",
        name="s",
        format="osworld",
        data={"dir": ".", "base": "suite", "annotations": "examples/*/*.json", "images": "."},
        task="live",
        prompt="default",
        id_template="{app}-{task_id}",
        tags=("evaluator",),
        cross=(),
        average="micro",
    )
    return read(suite, str(folder))


def test_an_empty_evaluator_func_makes_that_task_alone_invalid(tmp_path: Path) -> None:
    samples = {
        s.id: s
        for s in read_tasks(
            tmp_path,
            {
                "empty": {"instruction": "x", "evaluator": {"func": ""}},
                "none": {"instruction": "x", "evaluator": {"func": []}},
                "good": {"instruction": "y", "evaluator": INFEASIBLE},
            },
        )
    }
    assert sorted(samples) == ["a-empty", "a-good", "a-none"] and "invalid" not in samples["a-good"].data
    message = "invalid task file: examples/a/empty.json, row 0, field 'evaluator.func': is empty ('')"
    assert samples["a-empty"].data["invalid"].startswith(message) and samples["a-empty"].notes[0].startswith(message)
    live = LiveSetup(env="desktop", env_options={}, episodes_dir=str(tmp_path / "ep"), report_dir=str(tmp_path))
    result = run_live_case(samples["a-none"], load_model("oracle", Settings()), live, Environments(1))  # never reaches a machine
    assert result["verdict"] == "error" and "field 'evaluator.func': is empty ([])" in result["error"]


def scored(reset: str, verdict: str = "hit") -> dict:
    return {"id": reset, "verdict": verdict, "prediction": {"reset": reset}}


def test_the_gate_does_not_pass_on_episodes_in_an_unknown_state_unless_told() -> None:
    report = {
        "overall": {"accuracy": 1.0},
        "breakdown": {},
        "cases": [scored("reverted"), scored("none"), scored("none", "error"), {"id": "r", "verdict": "miss", "prediction": None, "attempts": [scored("none", "miss"), scored("reset", "hit")]}],
    }
    limits = gate.thresholds({}, 0.5)
    failures, notes = gate.check(limits, report)
    assert failures == [
        "2 scored episode(s) ran on a machine in an unknown state (reset: none: nothing reverted or reset it before the episode, so what earlier "
        "episodes left there may have decided them): the gate does not pass on them; revert the machines before each episode (--env-provider) or "
        "use guitest's own desktop, or pass --allow-unknown-state to gate on them anyway"
    ]
    failures, notes = gate.check(limits, report, allow_unknown_state=True)
    assert failures == [] and notes[0].endswith("gated on anyway (--allow-unknown-state)")
    assert gate.check(gate.thresholds({}, None), report) == ([], [])  # no gate, nothing to refuse


SUITE = """\
name: fixed
format: osworld
data: {dir: ., base: suite, annotations: "examples/*/*.json"}
task: live
env: desktop
env_options: {evaluate_after: 0}
id: "{app}-{task_id}"
gate: {accuracy: 0.5}
"""
PROVIDER_CONFTEST = """\
import os
from guitest.desktopenv import provider

class VM:  # desktop-env's Provider interface; the VM is the test's fake machine
    def __init__(self, region):
        self.log = open(os.environ["FAKE_VM_LOG"], "a")
    def start_emulator(self, path_to_vm, headless, os_type):
        print("start_emulator", path_to_vm, file=self.log, flush=True)
    def get_ip_address(self, path_to_vm):
        return "127.0.0.1:" + os.environ["FAKE_VM_PORT"]
    def save_state(self, path_to_vm, snapshot_name):
        pass
    def revert_to_snapshot(self, path_to_vm, snapshot_name):
        print("revert_to_snapshot", path_to_vm, snapshot_name, file=self.log, flush=True)
        return path_to_vm
    def stop_emulator(self, path_to_vm):
        print("stop_emulator", path_to_vm, file=self.log, flush=True)

provider.register("fakevm", lambda region: (None, VM(region)))
"""


def test_the_gate_refuses_a_machine_in_an_unknown_state_and_passes_a_reverted_one(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = pytester.path / "suites" / "fixed"
    read_tasks(folder, {"say-fail": {"instruction": "Crop the photo in Photoshop.", "evaluator": INFEASIBLE, "oracle": [{"kind": "fail"}]}})
    (folder / "suite.yaml").write_text(SUITE)
    pytester.makeconftest(PROVIDER_CONFTEST)
    with FakeMachine() as m:
        monkeypatch.setenv("FAKE_VM_PORT", m.url.rsplit(":", 1)[1])
        monkeypatch.setenv("FAKE_VM_LOG", str(pytester.path / "vm.log"))
        args = ["suites/fixed", "--model=oracle", "-p", "no:cacheprovider"]
        refused = pytester.runpytest_subprocess(*args, f"--env-url={m.url}")
        allowed = pytester.runpytest_subprocess(*args, f"--env-url={m.url}", "--allow-unknown-state")
        report = json.loads((pytester.path / "reports" / "fixed.json").read_text())
        reverted = pytester.runpytest_subprocess(*args, "--env-provider=fakevm", "--env-provider-option", "path_to_vm=/vms/one", "--env-provider-option", "snapshot_name=clean")
    assert refused.ret == 10, refused.stdout.str()
    refused.stdout.fnmatch_lines(
        [
            f"guitest machines: 0 of 1 reset by guitest's desktop server between episodes; 1 CANNOT BE RESET ({m.url}):*",
            "warning: 1 scored episode(s) ran on a machine in an unknown state*",
            "GATE FAILED: 1 scored episode(s) ran on a machine in an unknown state*pass --allow-unknown-state to gate on them anyway*",
        ]
    )
    assert allowed.ret == 0, allowed.stdout.str()
    allowed.stdout.fnmatch_lines(["gate note: 1 scored episode(s) ran on a machine in an unknown state*gated on anyway (--allow-unknown-state)", "gate passed: accuracy >= 0.5000*"])
    assert [c["prediction"]["reset"] for c in report["cases"]] == ["none"]
    assert reverted.ret == 0, reverted.stdout.str()
    reverted.stdout.fnmatch_lines(["guitest machines: desktop-env's fakevm provider reverts its VM to the snapshot before each episode*", "gate passed*"])
    assert json.loads((pytester.path / "reports" / "fixed.json").read_text())["cases"][0]["prediction"]["reset"] == "reverted"
    assert (pytester.path / "vm.log").read_text().split("\n")[:4] == ["start_emulator /vms/one", "revert_to_snapshot /vms/one clean", "start_emulator /vms/one", "stop_emulator /vms/one"]


def test_the_header_names_machines_that_cannot_be_reset_and_a_bad_url_is_no_traceback() -> None:
    with FakeMachine() as m, FakeMachine(kind="waa") as waa, FakeMachine(kind="guitest") as mine:
        line = desktop.machines_header([m.url, waa.url, mine.url, "vm:port"], None)
    assert line == (
        f"guitest machines: 1 of 4 reset by guitest's desktop server between episodes; 2 CANNOT BE RESET ({m.url}, {waa.url}): their episodes run in an "
        "unknown state (reset: none) and the gate will not pass on them without --allow-unknown-state; revert VMs with --env-provider; "
        "1 not answering now (vm:port)"
    )
    with pytest.raises(EnvFailure, match=r"--env-url 'http://vm:port': expected http://HOST:PORT"):
        MachineClient("vm:port")  # a port that is not a number was a ValueError from urllib


HANGING_CONFTEST = """\
import os, time
from guitest.desktopenv import provider

class VM:  # a VM whose start hangs while $FAKE_VM_HANGS is set
    def __init__(self, region):
        pass
    def start_emulator(self, path_to_vm, headless, os_type):
        if os.environ.get("FAKE_VM_HANGS"):
            time.sleep(60)
    def get_ip_address(self, path_to_vm):
        return "127.0.0.1:" + os.environ["FAKE_VM_PORT"]
    def revert_to_snapshot(self, path_to_vm, snapshot_name):
        return path_to_vm
    def stop_emulator(self, path_to_vm):
        pass

provider.register("hangvm", lambda region: (None, VM(region)))
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_hung_provider_makes_its_episodes_errors_that_lf_runs_again(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: list[str]) -> None:
    folder = pytester.path / "suites" / "fixed"
    read_tasks(folder, {name: {"instruction": "Crop the photo in Photoshop.", "evaluator": INFEASIBLE, "oracle": [{"kind": "fail"}]} for name in ("one", "two")})
    (folder / "suite.yaml").write_text(SUITE)
    pytester.makeconftest(HANGING_CONFTEST)
    args = ["suites/fixed", "--model=oracle", *mode, "--env-provider=hangvm", "--env-provider-option", "path_to_vm=/vms/one", "--env-provider-option", "start_timeout=0.5"]
    with FakeMachine() as m:
        monkeypatch.setenv("FAKE_VM_PORT", m.url.rsplit(":", 1)[1])
        monkeypatch.setenv("FAKE_VM_HANGS", "1")
        hung = pytester.runpytest_subprocess(*args)
        monkeypatch.delenv("FAKE_VM_HANGS")
        again = pytester.runpytest_subprocess(*args, "--lf")
    assert hung.ret == 1, hung.stdout.str()
    hung.assert_outcomes(failed=2)
    hung.stdout.fnmatch_lines(["*--env-provider=hangvm: start_emulator(/vms/one) did not return within 0.5 s (--env-provider-option start_timeout=SECONDS)*"])
    assert again.ret == 0, again.stdout.str()
    again.assert_outcomes(passed=2)
