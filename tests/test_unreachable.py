"""An endpoint that never answers: said once, the cases stop retrying, and --lf completes the report later."""

from __future__ import annotations

import json
import socket

import pytest

import fakeserver
from builders import n_rows, write_suite

MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(pytester: pytest.Pytester, port: int, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites/tiny", "--model=openai:agent", f"--base-url=http://127.0.0.1:{port}/v1", "--retries=3", "--retry-backoff=0.05", "--timeout=5", *extra)


@MODES
def test_an_unreachable_endpoint_is_said_once_and_lf_completes_the_report(pytester: pytest.Pytester, tmp_path, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    port = free_port()
    down = run(pytester, port, *mode)
    assert down.ret == 1
    out = down.stdout.str()
    assert out.count("guitest: endpoint unreachable") == 1
    down.stdout.fnmatch_lines(
        [
            f"*http://127.0.0.1:{port}/v1 is unreachable*",
            "*case(s) were not asked and are errors: start the endpoint*re-run them with --lf*",
        ]
    )
    # the cases that were not asked are not listed one by one (pytest's FAILURES section and short summary)
    assert out.index("guitest: endpoint unreachable") < out.index("guitest: tiny")
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert report["overall"]["error"] == n_rows()
    not_asked = report["run"]["unreachable"]["cases_not_asked"]
    assert 1 <= not_asked <= n_rows()
    assert sum("not asked:" in c["error"] for c in report["cases"]) == not_asked
    listed = out.count("FAILED suites/tiny/suite.yaml::")
    assert listed == n_rows() - not_asked
    assert len(out.splitlines()) < 60 + 4 * listed
    # the endpoint comes up on that port: --lf asks the errored cases and the report is whole again
    with fakeserver.serve(tmp_path, port=port) as server:
        again = run(pytester, port, "--lf", *mode)
        assert len(server.requests()) == n_rows()
    assert again.ret == 0, again.stdout.str()
    merged = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert merged["overall"]["error"] == 0 and merged["complete"] and "unreachable" not in merged["run"]


@MODES
def test_with_x_an_unreachable_endpoint_is_one_message(pytester: pytest.Pytester, mode: list[str]) -> None:
    """Before: the endpoint's section, then INCOMPLETE (47 cases without a result, "re-run them with --lf", which would
    run only the one that failed) and GATE FAILED ("no scored case"): three messages for one cause."""
    write_suite(pytester.path / "suites" / "tiny", "gate:\n  accuracy: 0.5\n")
    down = run(pytester, free_port(), "-x", "--concurrency=1", *mode)
    assert down.ret in (1, 2)  # xdist reports a stop after -x as interrupted
    out = down.stdout.str()
    assert out.count("guitest: endpoint ") == 1 and "INCOMPLETE" not in out and "GATE FAILED" not in out, out
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert report["missing"] and report["gate"]["failures"]  # still in the report, said once in the terminal
    # the first case may have tried and failed (listed as pytest's failure) or been turned away (not asked)
    not_asked = report["run"].get("unreachable", {}).get("cases_not_asked", 0)
    asked = f"{not_asked} case(s) were not asked and are errors, and " if not_asked else ""
    down.stdout.fnmatch_lines([f"{asked}{len(report['missing'])} were not run (the run stopped early): start the endpoint (or check --base-url), then run the same command again."])
