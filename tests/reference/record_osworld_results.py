"""Records what OSWorld's own code writes in, and reads from, its results layout, for tests/test_published_runs.py.
Run by hand, never in CI: it writes tests/data/osworld_reference/results_layout.json.

What is recorded, all by running OSWorld's own code:

- ``lib_run_single``: the task folder ``lib_run_single.run_single_example`` writes for a two-step episode (a reply of
  two pyautogui actions, then ``DONE``) played through the real ``DesktopEnv.step`` (its machine a controller that
  runs nothing, the screenshots solid PNGs, every sleep skipped): its files, each ``traj.jsonl`` line as written (the
  fields in their order) and ``result.txt``.
- ``monitor``: what the OSWorld monitor's reading functions (``monitor/main.py``: ``get_task_status_with_config``, the
  task page's, and ``get_task_status_brief_with_config``, the list's, with ``get_model_args`` and the module's settings,
  taken out of the file by ``ast`` and run without its Flask app) return for each task folder of that run
  (``osworld``), and of the run tests/reference/osworld_results_case.py's report is when guitest writes it
  (``guitest``, with the digest of the folder read, :func:`osworld_results_case.digest`, so the test knows the
  recording is of the folder it writes). An exception is recorded as ``{"raised": "Type: message"}``.

Usage (a scratch venv, not the project's: guitest's own dependencies, and what these OSWorld files import)::

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install requests wrapt_timeout_decorator gymnasium pyyaml jsonschema pillow openai numpy \\
        pytest pytest-xdist genai-prices
    mkdir /tmp/osworld && git --git-dir=<a snapshot of an OSWorld copy> archive <commit> desktop_env lib_run_single.py \\
        lib_results_logger.py monitor | tar -x -C /tmp/osworld
    PYTHONPATH=$PWD /tmp/refvenv/bin/python tests/reference/record_osworld_results.py --osworld /tmp/osworld \\
        --repo mrwwk/DeskCraft --commit 3e11457c9f4d0cd81f27d961b98ae65f8b6ed309
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "osworld_reference" / "results_layout.json"
sys.path.insert(0, str(HERE))

from osworld_results_case import digest, report  # noqa: E402
from record_osworld import load_osworld  # noqa: E402

#: the episode lib_run_single plays: per step, the agent's response and its actions (pyautogui code, or DONE)
REPLIES = [
    ("```python\npyautogui.click(100, 200)\npyautogui.write('hello')\n```", ["pyautogui.click(100, 200)", "pyautogui.write('hello')"]),
    ("```DONE```", ["DONE"]),
]
#: the monitor's names run here: its reading functions and the settings they read
MONITOR_FUNCTIONS = ("get_model_args", "get_task_status_with_config", "get_task_status_brief_with_config")
MONITOR_SETTINGS = ("TASK_STATUS_CACHE", "DONE_STABILITY_PERIOD", "MAX_STEPS")
FILES = ["lib_run_single.py", "desktop_env/desktop_env.py", "monitor/main.py"]


def play(mods: dict[str, Any], root: Path) -> Path:
    """The episode of :data:`REPLIES` through ``run_single_example`` into ``root``'s results layout; its task folder."""
    shots = iter(range(10, 250, 10))

    class Controller:
        def execute_python_command(self, command: str) -> dict[str, Any]:
            return {"status": "success", "output": "", "error": "", "returncode": 0}

        def execute_action(self, action: Any) -> None:
            return None

        def start_recording(self) -> None:
            return None

        def end_recording(self, path: str) -> None:
            return None

    desktop_class = mods["desktop_env.desktop_env"].DesktopEnv
    desktop = desktop_class.__new__(desktop_class)

    def observe() -> dict[str, Any]:
        from PIL import Image
        import io

        out = io.BytesIO()
        Image.new("RGB", (8, 6), (next(shots), 0, 0)).save(out, "PNG")
        return {"screenshot": out.getvalue(), "accessibility_tree": None, "terminal": None, "instruction": None}

    desktop.__dict__.update(_step_no=0, _traj_no=0, action_history=[], is_environment_used=False, action_space="pyautogui", controller=Controller())
    desktop._get_obs = observe

    class Env:
        vm_ip = "127.0.0.1"
        controller = Controller()

        def reset(self, task_config: Any = None) -> dict[str, Any]:
            return observe()

        def _get_obs(self) -> dict[str, Any]:
            return observe()

        def step(self, action: Any, pause: float = 2) -> Any:
            return desktop.step(action, 0)  # DesktopEnv.step itself

        def evaluate(self) -> float:
            return 1.0

    replies = iter(REPLIES)

    class Agent:
        def reset(self, *args: Any, **kwargs: Any) -> None:
            return None

        def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
            return next(replies)

    folder = root / "pyautogui" / "screenshot" / "m" / "chrome" / "t1"
    folder.mkdir(parents=True)
    args = types.SimpleNamespace(sleep_after_execution=0.0, result_dir=str(root), action_space="pyautogui", observation_type="screenshot", model="m")
    mods["lib_run_single"].log_task_completion = lambda *a, **k: None  # lib_results_logger's results.json: not what is recorded
    sleep = time.sleep
    time.sleep = lambda s: None  # type: ignore[assignment]
    try:
        mods["lib_run_single"].run_single_example(Agent(), Env(), {"id": "t1"}, 15, "Open the page", args, str(folder), [])
    finally:
        time.sleep = sleep
    return folder


def monitor(root: Path, results: Path) -> dict[str, Any]:
    """The monitor's reading functions, from ``root``'s ``monitor/main.py``, reading ``results`` (its RESULTS_BASE_PATH)."""
    tree = ast.parse((root / "monitor" / "main.py").read_text("utf-8"))
    kept: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in MONITOR_FUNCTIONS:
            kept.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in MONITOR_SETTINGS for t in node.targets):
            kept.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and all(a.name in ("os", "json", "time", "datetime") for a in node.names):
            kept.append(node)
    namespace: dict[str, Any] = {"__name__": "osworld_monitor"}
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(root / "monitor" / "main.py"), "exec"), namespace)
    namespace["RESULTS_BASE_PATH"] = str(results)
    missing = [n for n in MONITOR_FUNCTIONS + MONITOR_SETTINGS if n not in namespace]
    assert not missing, missing
    return namespace


def read_all(namespace: dict[str, Any], model: Path) -> dict[str, Any]:
    """Each task folder under ``model`` as the monitor's task page and list read it."""
    action_space, observation, name = model.parts[-3:]
    out: dict[str, Any] = {}
    for domain in sorted(p for p in model.iterdir() if p.is_dir()):
        for task in sorted(p for p in domain.iterdir() if p.is_dir()):
            row = {}
            for label, function in (("detail", "get_task_status_with_config"), ("brief", "get_task_status_brief_with_config")):
                try:
                    row[label] = namespace[function](domain.name, task.name, action_space, observation, name)
                except Exception as exc:  # the monitor's own failure is what is recorded
                    row[label] = {"raised": f"{type(exc).__name__}: {exc}"}
            out[f"{domain.name}/{task.name}"] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--osworld", required=True, type=Path, help="the OSWorld copy's files at --commit")
    parser.add_argument("--repo", required=True, help="the repository they come from (owner/name)")
    parser.add_argument("--commit", required=True, help="its commit")
    args = parser.parse_args()
    root = args.osworld.resolve()
    logging.disable(logging.CRITICAL)
    mods = load_osworld(root, ["desktop_env.desktop_env", "lib_run_single"])
    work = Path(tempfile.mkdtemp(prefix="osworld-results-"))
    theirs = play(mods, work / "osworld")
    names = sorted(p.name for p in theirs.iterdir())
    lines = (theirs / "traj.jsonl").read_text("utf-8").splitlines()
    lib_run_single = {
        "replies": [list(r) for r in REPLIES],
        "files": names,
        "traj": [[[key, value] for key, value in json.loads(line).items()] for line in lines],  # pairs: the order kept
        "result": (theirs / "result.txt").read_text("utf-8"),
    }
    osworld_reads = read_all(monitor(root, work / "osworld"), theirs.parent.parent)
    ours_root = work / "guitest"
    from guitest.published.runs import write_osworld

    exported = write_osworld(report(work / "reports"), ours_root, work / "reports")
    guitest_reads = read_all(monitor(root, ours_root), exported.folder)
    files = {f: hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() for f in FILES if (data := (root / f).read_bytes())}
    record = {
        "repository": args.repo,
        "commit": args.commit,
        "files": files,
        "script": "tests/reference/record_osworld_results.py",
        "lib_run_single": lib_run_single,
        "monitor": {"osworld": osworld_reads, "guitest": {"digest": digest(exported.folder), "tasks": guitest_reads}},
    }
    OUT.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
