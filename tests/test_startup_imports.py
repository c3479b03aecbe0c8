"""A grounding run loads no live, desktop or browser module: not at start-up, not in an xdist worker, not for its
report (their imports are lazy; bench/bench_startup.py measures what that saves)."""

from __future__ import annotations

import json

import pytest

from builders import write_suite

LIVE = ("guitest.live", "guitest.envs", "guitest.desktopenv", "guitest.localdesktop", "guitest.miniwob.env", "guitest.miniwob.oracle", "playwright")
CONFTEST = f"""
import json, os, sys

def pytest_sessionfinish(session):
    loaded = sorted(m for m in sys.modules if m.startswith({LIVE!r}))
    with open(os.path.join({{root!r}}, "loaded-%d.json" % os.getpid()), "w") as f:
        json.dump(loaded, f)
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_grounding_run_imports_no_live_module(pytester: pytest.Pytester, mode: list[str]) -> None:
    write_suite(pytester.path / "suites" / "tiny")
    pytester.makeconftest(CONFTEST.replace("{root!r}", repr(str(pytester.path))))
    result = pytester.runpytest_subprocess("suites/tiny", "--model=oracle", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    seen = {path.name: json.loads(path.read_text()) for path in pytester.path.glob("loaded-*.json")}
    assert len(seen) == (3 if mode else 1)  # the controller and each worker
    assert all(loaded == [] for loaded in seen.values()), seen
