"""Root conftest: says once when this Python cannot run guitest, gives the project's own tests pytester, and keeps
the pytest runs they start lean.

The guitest plugin itself is registered through the ``pytest11`` entry point
(pyproject.toml), so suites under ``suites/`` are collected by an installed
guitest, with or without this file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

try:
    import guitest.plugin  # noqa: F401  (what every test and suite here needs; the pytest11 entry point loads the same module)

    # guitest loads its other dependencies where it uses them (a start costs what it needs), so a Python without them
    # still imports the plugin: they are checked here too. numpy is also imported for good: pytester puts sys.modules
    # back as it was after each test that uses it, so a module first imported during such a test is imported again by
    # the next one, and numpy's C extension cannot be loaded twice in a process (guitest compare's statistics import it)
    import jsonschema  # noqa: F401
    import numpy  # noqa: F401
    import PIL.Image  # noqa: F401
except ImportError as exc:
    # A pytest from another environment (``python -m pytest`` finds guitest's source in the repository, not its
    # dependencies): without this, every test module failed to import on its own, 61 times the same traceback.
    sys.stderr.write(
        f"guitest: this Python ({sys.executable}) cannot import guitest: {exc}. It is not the environment guitest is "
        "installed in: activate that one (. .venv/bin/activate) or run its own pytest (.venv/bin/pytest); the README's "
        '"The two commands" make one\n'
    )
    raise SystemExit(4) from None  # pytest's usage error

pytest_plugins = ("pytester",)

#: plugins the pytest runs started by the tests (pytester subprocesses and their xdist workers) never use; importing
#: hypothesis's alone costs 1-2 s per process, which made a 6-case run under -n 2 take 10 s instead of 3
INNER_ADDOPTS = "-p no:hypothesispytest -p no:anyio"


@pytest.fixture(scope="session", autouse=True)
def _lean_inner_pytest() -> Iterator[None]:
    """Pass INNER_ADDOPTS to every pytest a test starts (set once this process runs tests, so it is not affected)."""
    old = os.environ.get("PYTEST_ADDOPTS")
    os.environ["PYTEST_ADDOPTS"] = f"{old} {INNER_ADDOPTS}" if old else INNER_ADDOPTS
    yield
    if old is None:
        os.environ.pop("PYTEST_ADDOPTS", None)
    else:
        os.environ["PYTEST_ADDOPTS"] = old
