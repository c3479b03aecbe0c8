"""Machine fleets: a provider's pool of VMs per process, and leases that hold across hosts (docs/live_desktops.md, "Fleets").

The cross-host lease is tested with separate processes sharing one lease folder (what hosts sharing an NFS folder do:
no lock of one process's kernel helps the other), each recording when it held which machine; a control run gives each
process a folder of its own and shows the same check catches double booking. The provider pool runs a suite through
pytest with a fake desktop-env provider (tests/test_desktop_state.py's kind) whose VMs answer on a fake machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakemachine import FakeMachine
from guitest.desktopenv import provider
from guitest.desktopenv.machine_pool import LeaseFiles, MachinePool
from guitest.live.protocol import EnvFailure

HOLDER = """
import json, sys, time
from guitest.desktopenv.machine_pool import MachinePool
lease_dir, out, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
pool = MachinePool(["http://vm-a:5000", "http://vm-b:5000"], lease_dir=lease_dir, lease_ttl=10, poll=0.005, wait=30, spread=False)
held = []
for _ in range(rounds):
    lease = pool.acquire()
    start = time.time()
    time.sleep(0.004)
    held.append([lease.url, start, time.time()])
    lease.release()
json.dump(held, open(out, "w"))
"""


def hold_in_two_processes(tmp_path: Path, folders: tuple[str, str], rounds: int = 60) -> list[list]:
    outs = [tmp_path / f"held-{i}.json" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", HOLDER, folder, str(out), str(rounds)]) for folder, out in zip(folders, outs, strict=True)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    return [json.loads(out.read_text()) for out in outs]


def overlaps(first: list[list], second: list[list]) -> int:
    """How many pairs of hold intervals, one from each process, are on one machine at once."""
    return sum(1 for a in first for b in second if a[0] == b[0] and a[1] < b[2] and b[1] < a[2])


def test_two_processes_sharing_a_lease_folder_never_hold_one_machine_at_once(tmp_path: Path) -> None:
    shared = str(tmp_path / "leases")
    first, second = hold_in_two_processes(tmp_path, (shared, shared))
    assert len(first) == len(second) == 60 and overlaps(first, second) == 0
    assert {url for url, *_ in first + second} == {"http://vm-a:5000", "http://vm-b:5000"}
    assert os.listdir(shared) == []  # every lease given back
    # the control: a folder each, as locks on each host's own disk would be, and the check sees double booking
    first, second = hold_in_two_processes(tmp_path, (str(tmp_path / "own-1"), str(tmp_path / "own-2")))
    assert overlaps(first, second) > 0


def test_a_stale_lease_is_taken_over_and_a_renewed_one_is_not(tmp_path: Path) -> None:
    folder = str(tmp_path)
    path = os.path.join(folder, "vm.lock")
    with open(path, "w") as f:
        f.write("deadbeef crashed-host 4242 http://vm:5000\n")
    os.utime(path, (time.time() - 5, time.time() - 5))  # its holder stopped renewing 5 s ago
    holder, other = LeaseFiles(folder, ttl=0.6), LeaseFiles(folder, ttl=0.6)
    assert holder.take(path, "http://vm:5000")  # the stale one moved aside
    time.sleep(1.5)  # more than twice the time to live: the holder's renewals keep it
    assert not other.take(path, "http://vm:5000")
    holder.give_back(path)
    assert other.take(path, "http://vm:5000") and not holder.take(path, "http://vm:5000")
    holder.give_back(path)  # not the holder's any more: other's lease stays
    assert os.path.exists(path)
    other.give_back(path)
    assert sorted(os.listdir(folder)) == []


def test_a_lease_folder_that_cannot_be_made_says_so(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(EnvFailure, match=r"cannot use the lease folder .*file/leases: .*--lease-dir must be a folder every host of the run can write"):
        MachinePool(["http://vm:5000"], lease_dir=str(tmp_path / "file" / "leases"))


def test_a_provider_pool_needs_the_manager_for_several_vms() -> None:
    with pytest.raises(EnvFailure, match=r"machines=3 with path_to_vm: one VM path is one machine"):
        provider.settings_from({"name": "docker", "path_to_vm": "/vms/a.qcow2", "machines": "3"})
    with pytest.raises(EnvFailure, match=r"provider.machines \(--env-provider-option machines=N\) must be a whole number, 1 or more, got '0'"):
        provider.settings_from({"name": "docker", "machines": "0"})
    assert provider.settings_from({"name": "docker", "machines": "4"}).machines == 4


SUITE = """\
name: fleet
format: osworld
data: {dir: ., base: suite, annotations: "examples/*/*.json"}
task: live
env: desktop
env_options: {evaluate_after: 0, settle: 0, ready_after: READY}
id: "{app}-{task_id}"
"""
FLEET_CONFTEST = """\
import itertools, os
from guitest.desktopenv import provider

LOG = os.environ["FAKE_VM_LOG"]
made = itertools.count()

def log(*words):
    with open(LOG, "a") as f:
        print(os.getpid(), *words, file=f, flush=True)

class Manager:  # desktop-env's VMManager: allocates a VM per get_vm_path
    def get_vm_path(self, os_type, region, screen_size):
        path = f"/vms/{os.getpid()}-{next(made)}"
        log("get_vm_path", path)
        return path

class VM:  # desktop-env's Provider; every VM answers on the test's fake machine
    def start_emulator(self, path_to_vm, headless, os_type):
        log("start_emulator", path_to_vm)
    def get_ip_address(self, path_to_vm):
        return "127.0.0.1:" + os.environ["FAKE_VM_PORT"]
    def revert_to_snapshot(self, path_to_vm, snapshot_name):
        log("revert_to_snapshot", path_to_vm)
        return path_to_vm
    def stop_emulator(self, path_to_vm):
        log("stop_emulator", path_to_vm)

provider.register("fleetvm", lambda region: (Manager(), VM()))
"""


def fleet_suite(root: Path, tasks: int, ready: float) -> None:
    folder = root / "suites" / "fleet"
    (folder / "examples" / "a").mkdir(parents=True)
    (folder / "suite.yaml").write_text(SUITE.replace("READY", str(ready)))
    for i in range(tasks):
        task = {"instruction": f"Task {i}: say it cannot be done.", "evaluator": {"func": "infeasible"}, "oracle": [{"kind": "fail"}]}
        (folder / "examples" / "a" / f"t{i}.json").write_text(json.dumps(task))
    (root / "conftest.py").write_text(FLEET_CONFTEST)


def vm_log(root: Path) -> list[list[str]]:
    return [line.split() for line in (root / "vm.log").read_text().splitlines()]


def wait_for_starts(folder: Path, proc: subprocess.Popen[str], n: int, within: float) -> None:
    """Wait until the fake machine's log in ``folder`` shows ``n`` distinct VMs started (the run has reached its
    episodes); a run that does not get there within ``within`` seconds is killed and the test fails with its output."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        log = vm_log(folder) if (folder / "vm.log").exists() else []
        if len({path for _, call, path in log if call == "start_emulator"}) == n:
            return
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"the pool did not start {n} VMs: {proc.communicate()}")


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_provider_pool_makes_up_to_its_cap_reverts_between_episodes_and_stops_them_all(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: list[str]) -> None:
    fleet_suite(pytester.path, tasks=6, ready=0.3)
    with FakeMachine() as m:
        monkeypatch.setenv("FAKE_VM_PORT", m.url.rsplit(":", 1)[1])
        monkeypatch.setenv("FAKE_VM_LOG", str(pytester.path / "vm.log"))
        result = pytester.runpytest_subprocess("suites/fleet", "--model=oracle", "--concurrency=4", "--env-provider=fleetvm", "--env-provider-option", "machines=2", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()[-3000:]
    log = vm_log(pytester.path)
    made: dict[str, set[str]] = {}
    for pid, call, path in log:
        if call == "get_vm_path":
            made.setdefault(pid, set()).add(path)
    assert made and all(len(paths) == 2 for paths in made.values()), made  # 4 episodes at once, a cap of 2: two VMs each
    started = {path for _, call, path in log if call == "start_emulator"}
    stopped = [path for _, call, path in log if call == "stop_emulator"]
    assert started == set().union(*made.values()) and sorted(stopped) == sorted(started)  # every VM stopped once
    reverts = sum(1 for _, call, _ in log if call == "revert_to_snapshot")
    assert reverts == 6  # a provider of one's own is reverted before each episode, its VMs' first ones too (as VMware)
    report = json.loads((pytester.path / "reports" / "fleet.json").read_text())
    assert [c["prediction"]["reset"] for c in report["cases"]] == ["reverted"] * 6


def test_ctrl_c_stops_every_vm_the_pool_made(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    fleet_suite(pytester.path, tasks=4, ready=30)  # each episode waits 30 s before its first screenshot: interrupted there
    with FakeMachine() as m:
        monkeypatch.setenv("FAKE_VM_PORT", m.url.rsplit(":", 1)[1])
        monkeypatch.setenv("FAKE_VM_LOG", str(pytester.path / "vm.log"))
        proc = pytester.popen(
            [sys.executable, "-m", "pytest", "suites/fleet", "--model=oracle", "--concurrency=4", "--env-provider=fleetvm", "--env-provider-option", "machines=3", "-p", "no:cacheprovider"],
            stdin=subprocess.DEVNULL,
            # Ctrl-C as a terminal delivers it: a test run started in the background by a shell without job control
            # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler in the child
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        wait_for_starts(pytester.path, proc, 3, within=60)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, (out, err)
    log = vm_log(pytester.path)
    started = {path for _, call, path in log if call == "start_emulator"}
    stopped = sorted(path for _, call, path in log if call == "stop_emulator")
    assert len(started) == 3 and stopped == sorted(started)  # each VM the pool made stopped once


def test_sigterm_to_an_xdist_controller_alone_stops_every_vm_its_workers_made(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal to the controller alone (kill PID; a container runtime signalling its main process): it passes SIGTERM on
    to its workers, which close their pools. Before: the controller died at once, and its workers, started with SIGINT
    ignored as a background job is, could not interrupt themselves when it was gone (execnet sends itself SIGINT,
    then exits): no VM was stopped and no report written."""
    fleet_suite(pytester.path, tasks=4, ready=30)  # each episode waits 30 s before its first screenshot: stopped there
    with FakeMachine() as m:
        monkeypatch.setenv("FAKE_VM_PORT", m.url.rsplit(":", 1)[1])
        monkeypatch.setenv("FAKE_VM_LOG", str(pytester.path / "vm.log"))
        proc = pytester.popen(
            [sys.executable, "-m", "pytest", "suites/fleet", "--model=oracle", "--concurrency=4", "--env-provider=fleetvm", "--env-provider-option", "machines=4", "-p", "no:cacheprovider", "-n", "2"],
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_DFL)),
        )
        wait_for_starts(pytester.path, proc, 4, within=120)  # every episode has its VM: 4 started, over the two workers
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, (out, err)
    log = vm_log(pytester.path)
    started = {path for _, call, path in log if call == "start_emulator"}
    stopped = sorted(path for _, call, path in log if call == "stop_emulator")
    assert len(started) == 4 and stopped == sorted(started)  # each VM the workers made stopped once
    report = json.loads((pytester.path / "reports" / "fleet.json").read_text())
    assert not report["complete"] and report["n_selected"] == 4
