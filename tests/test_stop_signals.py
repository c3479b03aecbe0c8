"""SIGTERM and SIGHUP end a run as Ctrl-C does (guitest/run/stopsignals.py): the cases that finished are in a report marked
incomplete, the cache's ledger leaves the run to resume, ``--lf`` finishes it, and the run exits 128 + the signal's
number. Before: the signal's default killed the run at once, with no report at all.

A real signal goes to a real pytest process that has two results and model calls in flight on an endpoint that never
answers them: serial, and under ``-n 2`` to the whole process group (a GitLab runner's timeout signals the job's
group, gitlab-runner helpers/process/killer_unix.go). The signal to an xdist controller alone (a container's first
process) is tests/test_machine_fleets.py's, where the workers' machines must be stopped. The test awaits files and log
lines, never a guessed time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import fakeserver
from builders import n_rows, write_suite
from guitest.run.stopsignals import StopSignals, Stopped, exit_code

TERM, HUP = signal.SIGTERM, signal.SIGHUP


@pytest.fixture
def default_handling() -> Any:
    """SIGTERM and SIGHUP handled by default during the test (as in a process started plainly), as before it afterwards."""
    before = {sig: signal.getsignal(sig) for sig in (TERM, HUP)}
    for sig in before:
        signal.signal(sig, signal.SIG_DFL)
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


def test_the_first_stop_signal_stops_the_run_and_no_later_one_cuts_its_end_short(default_handling: None) -> None:
    stop = StopSignals()
    assert stop.install() and signal.getsignal(TERM) == signal.getsignal(HUP) == stop._arrived
    with pytest.raises(Stopped, match=r"^SIGTERM: guitest stopped the run as on Ctrl-C; .* --lf to finish it$"):
        signal.raise_signal(TERM)
    signal.raise_signal(HUP)  # a second one (GitHub Actions: SIGINT, then SIGTERM) while the stop goes on: noted only
    assert stop.received == TERM and exit_code(TERM) == 143 and exit_code(HUP) == 129
    stop.restore()
    assert signal.getsignal(TERM) is signal.getsignal(HUP) is signal.SIG_DFL

    ending = StopSignals()
    ending.install()
    ending.finishing()  # the report is being written: even the first one does not interrupt it
    signal.raise_signal(HUP)
    assert ending.received == HUP
    ending.restore()


def test_a_signal_the_process_ignores_or_handles_itself_is_left_alone(default_handling: None) -> None:
    def own(signum: int, frame: Any) -> None:
        pass

    signal.signal(HUP, signal.SIG_IGN)  # nohup
    signal.signal(TERM, own)
    stop = StopSignals()
    assert not stop.install()
    assert signal.getsignal(HUP) is signal.SIG_IGN and signal.getsignal(TERM) is own
    stop.restore()
    assert signal.getsignal(HUP) is signal.SIG_IGN and signal.getsignal(TERM) is own
    # and only the main thread may take a signal over (Python's rule): elsewhere nothing changes
    signal.signal(TERM, signal.SIG_DFL)
    elsewhere: list[bool] = []
    thread = threading.Thread(target=lambda: elsewhere.append(StopSignals().install()))
    thread.start()
    thread.join()
    assert elsewhere == [False] and signal.getsignal(TERM) is signal.SIG_DFL


def test_a_stop_signal_is_passed_on_to_the_processes_named(default_handling: None) -> None:
    """An xdist controller signalled alone passes it on to its workers, and never to one that has ended."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    passed_on = subprocess.Popen(sleeper)  # SIGTERM handled by default, as the fixture set it here
    forgotten = subprocess.Popen(sleeper)
    try:
        stop = StopSignals()
        stop.pass_on_to(passed_on.pid)
        stop.pass_on_to(forgotten.pid)
        stop.forget(forgotten.pid)  # it ended: its number may be given to another process
        stop.install()
        with pytest.raises(Stopped):
            signal.raise_signal(TERM)
        stop.restore()
        assert passed_on.wait(timeout=60) == -TERM
        assert forgotten.poll() is None
    finally:
        for proc in (passed_on, forgotten):
            proc.kill()
            proc.wait()


def test_a_run_takes_the_signals_over_only_while_it_runs_guitest_cases(pytester: pytest.Pytester, default_handling: None) -> None:
    """`pytest tests/` of another project, guitest installed (a model given even), behaves as before; a suite's run
    hands them back as they were."""
    pytester.makeconftest(
        """
import signal

def pytest_runtest_logreport(report):
    if report.when == "call":
        with open("handlers.txt", "a") as f:
            print(signal.getsignal(signal.SIGTERM), file=f)
"""
    )
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    assert pytester.runpytest_inprocess("test_plain.py", "--model=oracle", "-p", "no:cacheprovider").ret == 0
    write_suite(pytester.path / "suites" / "tiny")
    assert pytester.runpytest_inprocess("suites/tiny", "--model=oracle", "-p", "no:cacheprovider").ret == 0
    seen = (pytester.path / "handlers.txt").read_text().splitlines()
    assert seen[0] == str(signal.SIG_DFL) and len(seen) == 1 + n_rows()
    assert all("StopSignals._arrived" in line for line in seen[1:]), seen
    assert signal.getsignal(TERM) is signal.getsignal(HUP) is signal.SIG_DFL


# -- a real signal to a real run -------------------------------------------------------------------------------------

# The controller's record of each result, once guitest has recorded it (a wrapper: after every implementation).
RECORDED = """
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_logreport(report):
    yield
    if report.when == "call" and not WORKER:
        with open("recorded.txt", "a") as f:
            print(report.nodeid, file=f)

WORKER = False

def pytest_configure(config):
    global WORKER
    WORKER = hasattr(config, "workerinput")
"""
# two cases answer (one a miss, one an error: --lf must run the error and the four that never finished), four hang
HANGS = {"open the file menu": [{}], "close the dialog": [{"status": 400}], "*": [{"sleep": 600}] * 4}


def command(base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "suites/tiny", "--model=openai:agent", f"--base-url={base_url}", "--retries=0", "--timeout=300", *extra]


def await_true(what: str, check: Callable[[], bool], proc: subprocess.Popen[bytes], out: Path) -> None:
    """Wait until ``check()`` holds (the run's process still alive), at most 120 s."""
    deadline = time.monotonic() + 120
    while not check():
        assert proc.poll() is None, f"the run ended before {what}: {out.read_text()}"
        assert time.monotonic() < deadline, f"no {what} within 120 s: {out.read_text()}"
        time.sleep(0.05)


def stop_a_run(pytester: pytest.Pytester, tmp_path: Path, mode: list[str], send: Callable[[subprocess.Popen[bytes]], None]) -> tuple[int, str, int]:
    """Start the tiny suite against an endpoint that answers two cases and holds the other four; once the controller
    has both results and held calls are in flight, ``send`` the signal. The exit status, the output, the port."""
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest(RECORDED)
    out = pytester.path / "out.txt"
    recorded = pytester.path / "recorded.txt"
    with fakeserver.serve(tmp_path, script=HANGS, max_seconds=600) as server, open(out, "wb") as sink:  # it never ends the held calls itself
        proc = subprocess.Popen(
            command(server.base_url, *mode),
            cwd=pytester.path,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pytester.path), os.environ.get("PYTHONPATH")]))},
            start_new_session=True,  # a group of its own, as a CI job's
            # as a CI runner starts it: a test run started in the background inherits signals ignored
            preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (TERM, HUP, signal.SIGINT)],
        )
        try:
            await_true("two results", lambda: recorded.exists() and len(recorded.read_text().splitlines()) == 2, proc, out)
            # calls held when the signal comes: every case's under -n 2 only as far as a worker blocked on a held case
            # has started the ones xdist queued on it later (guitest's lookahead), so at least two
            await_true("four requests", lambda: len(server.requests()) >= 4, proc, out)
            send(proc)
            code = proc.wait(timeout=120)  # the four calls in flight are never answered: a run that waited for them hangs here
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return code, out.read_text(), server.port


def the_run_was_kept_and_lf_finishes_it(pytester: pytest.Pytester, tmp_path: Path, code: int, out: str, port: int) -> None:
    assert code == 128 + TERM, out
    assert "Traceback" not in out and "SIGTERM: guitest stopped the run as on Ctrl-C" in out
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert not report["complete"] and report["n_results"] == 2 and len(report["missing"]) == n_rows() - 2
    assert {c["verdict"] for c in report["cases"]} == {"miss", "error"}
    with fakeserver.serve(tmp_path, port=port) as server:  # the same endpoint, answering now
        again = pytester.runpytest_subprocess(*command(server.base_url, "--lf")[3:])
        asked = len(server.requests())
    assert again.ret == 0, again.stdout.str()
    again.stdout.fnmatch_lines(["guitest cache: resume: this run resumes run * (started *; --lf)*", "run-last-failure: rerun previous 5 failures"])
    assert asked == n_rows() - 1  # the error and the four that never finished; the miss is the report's already
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert report["complete"] and report["n_results"] == n_rows() and report["run"]["merged_into_report_of"]


def test_sigterm_to_a_serial_run_keeps_its_report_and_lf_finishes_it(pytester: pytest.Pytester, tmp_path: Path) -> None:
    code, out, port = stop_a_run(pytester, tmp_path, [], lambda proc: proc.send_signal(TERM))
    the_run_was_kept_and_lf_finishes_it(pytester, tmp_path, code, out, port)


def test_sigterm_to_the_process_group_of_an_xdist_run_keeps_its_report_and_lf_finishes_it(pytester: pytest.Pytester, tmp_path: Path) -> None:
    code, out, port = stop_a_run(pytester, tmp_path, ["-n", "2"], lambda proc: os.killpg(proc.pid, TERM))
    the_run_was_kept_and_lf_finishes_it(pytester, tmp_path, code, out, port)
