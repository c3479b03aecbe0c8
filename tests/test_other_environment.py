"""A pytest from another environment, started in the repository: one line saying so, not a traceback per test module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_a_pytest_that_cannot_import_guitest_says_so_once(tmp_path: Path) -> None:
    """Before: ``python -m pytest`` from an environment without Pillow ended in 61 collection errors, each the same
    ModuleNotFoundError traceback. Here an environment without guitest installed (no entry points) and without PIL."""
    site = tmp_path / "site" / "PIL"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'PIL'\", name='PIL')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env |= {"PYTHONPATH": str(tmp_path / "site"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    for args in ([], ["suites/demo", "--model=ocr"]):
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 4, done.stdout + done.stderr
        assert done.stdout == "" and done.stderr.splitlines() == [
            f"guitest: this Python ({sys.executable}) cannot import guitest: No module named 'PIL'. It is not the environment guitest is "
            'installed in: activate that one (. .venv/bin/activate) or run its own pytest (.venv/bin/pytest); the README\'s "The two commands" make one'
        ]
