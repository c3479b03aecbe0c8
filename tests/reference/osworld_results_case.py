"""A desktop run's report, made in-process, that tests/test_published_runs.py writes in OSWorld's results layout and
tests/reference/record_osworld_results.py writes the same way before OSWorld's own monitor reads it (by hand, never in
CI). Its episodes cover what the writer decides: a reply of two actions, a reply without an action, each of done,
fail, the step budget and an environment failure, a screenshot at twice the screen's resolution, a fractional score,
and a case for the judge (not written).
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

from PIL import Image

from guitest.live.loop import Episode, StepRecord
from guitest.live.protocol import Evaluation
from guitest.reporting import report as report_mod
from guitest.reporting.document import Report
from guitest.tasks import load_task
from guitest.verdict import CaseResult

MODEL = "openai:agent/v1"
STARTED = "2026-03-04T05:06:07+0100"
EPISODES = "runs/osworld/20260304-050607-ab12/episodes"
MACHINE = "http://10.0.0.7:5000"
BUDGET = 3


def png(colour: tuple[int, int, int]) -> bytes:
    """A small PNG of one colour."""
    out = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(out, "PNG")
    return out.getvalue()


def step(
    number: int, reply: str | None, actions: list[dict[str, Any]], info: dict[str, Any] | None = None, executed: int | None = None
) -> tuple[int, str | None, list[dict[str, Any]], dict[str, Any], int]:
    return number, reply, actions, info or {}, len(actions) if executed is None else executed


# case id -> (app, how it ended, the evaluation (None: the episode errored), screen size and scale, steps)
CASES: dict[str, tuple[str, str, Evaluation | None, tuple[int, int], float, list[Any]]] = {
    "chrome-t1": (
        "chrome",
        "done",
        Evaluation(True, 1.0, "the page is open"),
        (1920, 1080),
        1.0,
        [
            step(
                1,
                "```python\npyautogui.click(100, 200)\npyautogui.write('hello')\n```",
                [{"kind": "click", "point": [100.0, 200.0], "space": "screen"}, {"kind": "type", "text": "hello"}],
                {"machine": MACHINE, "code": "pyautogui.write('hello')"},
            ),
            step(2, "```DONE```", [{"kind": "done"}], {"machine": MACHINE, "final": "done"}),
        ],
    ),
    "vlc-t2": (
        "vlc",
        "budget",
        Evaluation(False, 0.5, "one of two checks passed"),
        (3840, 2160),
        2.0,
        [
            step(1, "```python\npyautogui.hotkey('ctrl', 's')\n```", [{"kind": "key", "keys": ["ctrl", "s"]}], {"machine": MACHINE, "code": "pyautogui.hotkey('ctrl', 's')"}),
            step(
                2,
                "```python\npyautogui.scroll(-3, x=500, y=600)\n```",
                [{"kind": "scroll", "point": [1000.0, 1200.0], "scroll": [0.0, 3.0], "space": "screen"}],
                {"machine": MACHINE, "code": "pyautogui.moveTo(500, 600); pyautogui.scroll(-3)"},
            ),
            step(
                3,
                "```python\npyautogui.moveTo(10, 20)\npyautogui.dragTo(30, 40)\n```",
                [{"kind": "drag", "point": [20.0, 40.0], "end": [60.0, 80.0], "space": "screen"}],
                {"machine": MACHINE, "code": "pyautogui.moveTo(10, 20); pyautogui.dragTo(30, 40, duration=0.3, button='left')"},
            ),
        ],
    ),
    "os-t3": (
        "os",
        "error",
        None,
        (1920, 1080),
        1.0,
        [step(1, "```python\npyautogui.rightClick(5, 6)\n```", [{"kind": "right_click", "point": [5.0, 6.0], "space": "screen"}], {"machine": MACHINE, "code": "pyautogui.rightClick(5, 6)"})],
    ),
    "gimp-t4": ("gimp", "fail", Evaluation(False, 0.0, "the task was feasible"), (1920, 1080), 1.0, [step(1, "```FAIL```", [{"kind": "fail"}], {"machine": MACHINE, "final": "fail"})]),
    "thunderbird-t5": (
        "thunderbird",
        "done",
        Evaluation(True, 1.0, "the mail is sent"),
        (1920, 1080),
        1.0,
        [
            step(1, "I am not sure what to do.", []),
            step(2, "```WAIT```", [{"kind": "wait", "seconds": 1.0}], {"machine": MACHINE}),
            step(3, "```DONE```", [{"kind": "done"}], {"machine": MACHINE, "final": "done"}),
        ],
    ),
    "libreoffice_calc-t6": (
        "libreoffice_calc",
        "done",
        Evaluation(False, 0.0, "no metric of guitest's", "judge"),
        (1920, 1080),
        1.0,
        [step(1, "```DONE```", [{"kind": "done"}], {"machine": MACHINE, "final": "done"})],
    ),
}


def result(case_id: str, report_dir: Path) -> CaseResult:
    """The case as the plugin reports it, its screenshots written under ``report_dir`` where its episode names them."""
    app, end, evaluation, size, scale, steps = CASES[case_id]
    folder = f"{EPISODES}/{case_id}"
    shades = iter(range(10, 250, 20))

    def shot(name: str) -> str:
        path = report_dir / folder / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png((next(shades), len(case_id) * 10, 90)))
        return f"{folder}/{name}.png"

    records = tuple(
        StepRecord(number=n, reply=reply, actions=tuple(actions), text=reply or "", notes=(), screenshot=shot(f"step-{n:02d}"), info=info, executed=executed)
        for n, reply, actions, info, executed in steps
    )
    episode = Episode(
        task=case_id,
        env="desktop",
        seed=None,
        instruction=f"the task of {case_id}",
        steps=records,
        end=end,
        evaluation=evaluation,
        error="step 2: environment failed: the machine went away" if evaluation is None else None,
        screen_size=size,
        scale=scale,
        final_screenshot=shot("final"),
    )
    verdict = "error" if evaluation is None else "unsure" if evaluation.decided_by == "judge" else "hit" if evaluation.success else "miss"
    return {
        "id": case_id,
        "verdict": verdict,
        "tags": {"app": app},
        "prediction": {"success": episode.success, "score": episode.score, "end": end, "steps": len(records), "budget": BUDGET},
        "response": steps[-1][1],
        "success": episode.success,
        "score": episode.score,
        "steps": len(records),
        "seconds": 1.0,
        "trajectory": f"{folder}/trajectory.json",
        "episode": episode.to_dict(),
        **({"error": episode.error} if episode.error else {}),
    }


def report(report_dir: Path, headline: str = "mean_score") -> Report:
    """The run's report, its episodes' screenshots written under ``report_dir``."""
    task = load_task("live", {"headline": headline})
    cases = [result(case_id, report_dir) for case_id in CASES]
    return report_mod.build(
        suite={"name": "osworld", "path": "suites/osworld/suite.yaml", "format": "osworld", "task": "live", "settings": task.settings, "env": "desktop", "max_steps": BUDGET},
        model={"spec": MODEL, "adapter": "openai", "space": "pixel_sent", "settings": {}},
        results=cases,
        n_selected=len(cases),
        missing=[],
        tags=["app"],
        cross=[],
        gate={},
        run={"started": STARTED},
        task=task,
    )


def digest(folder: Path) -> str:
    """What of a results folder OSWorld's monitor reads: every file's path under ``folder``, and the bytes of each but
    the screenshots (a PNG's bytes depend on the zlib that wrote it, and the monitor only serves them)."""
    out = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        out.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        out.update((b"" if path.suffix == ".png" else path.read_bytes()) + b"\0")
    return out.hexdigest()
