"""Records what OSWorld's own show_result.py prints for every results folder the tests check it on, for
tests/test_published_runs.py and tests/test_desktop_e2e.py. Run by hand, never in CI: it writes
tests/data/osworld_reference/show_result.json.

For each folder of tests/reference/osworld_show_result_folders.py (``FOLDERS``: a published run and its damaged
variants, guitest's exports of reports, and what the MiniWoB++ and desktop runs write), written in a scratch folder,
``show_result.get_result("pyautogui", MODEL, "screenshot", ROOT)`` is run as it ships and what it printed recorded,
with the exception it ended with (``KeyError: 'libreoffice_calc'`` on a folder without the domains its Office, Daily
and Professional lines name), keyed by :func:`osworld_show_result_folders.digest` of the folder: the digest of all
that show_result.py reads (the domain folders, their task folders, each ``result.txt``'s text), so the tests look a
folder they make up by what show_result.py would read of it. One liberty: ``os.listdir`` gives show_result.py its names
sorted, where a filesystem gives them in an order of its own; the order is the printout's line order and the order
of its float sums (the last bit of a rate), so a recording made on another filesystem would differ in those alone.

Usage (show_result.py imports only ``os``; the project's environment runs it)::

    mkdir -p /tmp/osworld-3e11457 && git --git-dir=<a snapshot of mrwwk/DeskCraft> archive \\
        3e11457c9f4d0cd81f27d961b98ae65f8b6ed309 show_result.py | tar -x -C /tmp/osworld-3e11457
    PYTHONPATH=$PWD python tests/reference/record_osworld_show_result.py --osworld /tmp/osworld-3e11457 \\
        --repo mrwwk/DeskCraft --commit 3e11457c9f4d0cd81f27d961b98ae65f8b6ed309
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from reference import osworld_show_result_folders as folders  # noqa: E402


def load(root: Path) -> types.ModuleType:
    """``root``'s show_result.py as a module, its ``os.listdir`` giving names sorted."""
    spec = importlib.util.spec_from_file_location("osworld_show_result", root / "show_result.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.os = types.SimpleNamespace(**{**vars(os), "listdir": lambda path: sorted(os.listdir(path))})  # type: ignore[attr-defined]
    return module


def run(module: types.ModuleType, folder: Path) -> dict[str, Any]:
    """What ``get_result`` printed on ``folder`` (a model folder), and the exception it ended with."""
    action_space, observation, model = folder.parts[-3:]
    out = io.StringIO()
    raised = None
    with contextlib.redirect_stdout(out):
        try:
            module.get_result(action_space, model, observation, str(folder.parents[2]))
        except Exception as exc:  # the reference's own failure is part of what is recorded
            raised = f"{type(exc).__name__}: {exc}"
    return {"printed": out.getvalue(), "raised": raised}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--osworld", required=True, type=Path, help="a folder holding the OSWorld copy's show_result.py at --commit")
    parser.add_argument("--repo", required=True, help="the repository it comes from (owner/name)")
    parser.add_argument("--commit", required=True, help="its commit")
    args = parser.parse_args()
    module = load(args.osworld.resolve())
    printouts: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="osworld-show-result-") as tmp:
        for n, (name, write) in enumerate(folders.FOLDERS.items()):
            folder = write(Path(tmp) / str(n))
            key = folders.digest(folder)
            if key in printouts:
                printouts[key]["folders"].append(name)
                continue
            reads = folders.reads(folder)
            printouts[key] = {"folders": [name], "reads": reads, **run(module, folder)}
    data = (args.osworld / "show_result.py").read_bytes()
    record = {
        "repository": args.repo,
        "commit": args.commit,
        "files": {"show_result.py": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()},
        "script": "tests/reference/record_osworld_show_result.py",
        "listing": "os.listdir sorted",
        "printouts": printouts,
    }
    folders.RECORDING.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"wrote {folders.RECORDING}: {len(printouts)} printouts of {len(folders.FOLDERS)} folders", file=sys.stderr)


if __name__ == "__main__":
    main()
