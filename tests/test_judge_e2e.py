"""Trajectory judging end to end: the shipped suite and a UFO-log suite, a loopback OpenAI-compatible judge, serial and -n 2.

The WAA result folders sit under a data root (the shipped ``suites/trajectory_judge`` suite
file, unchanged) and carry labels (``result.txt``): the judge is scored. The UFO log folders
sit in a suite-relative folder and carry none: the agent is scored. The fake server's request
log proves what each judge request held: the 40-image cap, dropped placeholders, text-only
judging, the repair request.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import fakeserver
from builders import REPO
from test_trajectory_formats import suite_file, write_ufo_task, write_waa_run, write_waa_task


def verdict(complete: str) -> str:
    return json.dumps({"reason": "what the screens show", "sub_scores": [{"name": "the goal", "evaluation": complete}], "complete": complete})


# (app, task id, checker, request, actions, screenshot kinds [initial, after 1, ...], result.txt, the judge's replies, expected verdict)
WAA_RUNS: list[tuple[str, str, str, str, list[Any], list[str], float, list[str], str]] = [
    ("chrome", "ok-1", "exact_match", "turn on do not track", ["click", "click"], ["screen"] * 3, 1.0, [verdict("yes")], "hit"),
    ("chrome", "bad-2", "exact_match", "clear the browsing history", ["click"], ["screen"] * 2, 0.0, [verdict("yes")], "miss"),
    ("vlc", "INF-3", "infeasible", "make vlc play a dvd in 8k", ["click", "FAIL"], ["screen"] * 3, 1.0, [verdict("no")], "hit"),
    ("vs_code", "feas-4", "exact_match", "install the rust extension", [{"action_type": "FAIL"}], ["screen"] * 2, 0.0, [verdict("yes")], "hit"),
    ("notepad", "unsure-5", "exact_match", "save the note as draft.txt", ["type"], ["screen"] * 2, 1.0, [verdict("unsure")], "unsure"),
    ("msedge", "long-6", "exact_match", "add forty five bookmarks", [f"click({i})" for i in range(45)], ["screen"] * 46, 1.0, [verdict("yes")], "hit"),
    ("clock", "holes-7", "exact_match", "set an alarm for seven", ["a", "b", "c", "d"], ["black", "1x1", "missing", "screen", "broken"], 0.0, [verdict("no")], "hit"),
    ("settings", "blind-8", "exact_match", "switch to dark mode", ["a", "b"], ["missing", "black", "1x1"], 1.0, [verdict("yes")], "hit"),
    ("file_explorer", "fix-9", "exact_match", "rename report to final", ["click"], ["screen"] * 2, 1.0, ["It is done, complete: yes.", verdict("yes")], "hit"),
    ("windows_calc", "junk-10", "exact_match", "compute seven factorial", ["click"], ["screen"] * 2, 0.0, ["no idea", '{"complete": "perhaps"}'], "unparsed"),
]
# (folder, request, application, screenshot kinds per step, final kind, the judge's reply, expected verdict)
UFO_RUNS = [
    ("paint-a", "draw a circle in paint", "mspaint.exe", ["screen", "black", "screen"], "screen", verdict("yes"), "hit"),
    ("word-b", "make the title of the letter bold", "WINWORD.EXE", ["screen", "screen"], "missing", verdict("no"), "miss"),
    ("word-c", "insert a table with three rows", "WINWORD.EXE", ["1x1"], "black", verdict("unsure"), "unsure"),
]


def write_project(root: Path) -> None:
    """The shipped suite over WAA runs under a data root, and a UFO-log suite with its data beside it."""
    shipped = root / "suites" / "trajectory_judge"
    shipped.mkdir(parents=True)
    (shipped / "suite.yaml").write_text((REPO / "suites" / "trajectory_judge" / "suite.yaml").read_text())
    waa = root / "dataroot" / "windows_agent_arena"
    for seed, (app, task_id, func, request, actions, shots, result, _, _) in enumerate(WAA_RUNS):
        write_waa_task(waa / "examples", app, task_id, request, func=func)
        write_waa_run(waa / "results" / "pyautogui" / "a11y_tree" / "navi" / app / task_id, actions, shots, result=result, seed=seed)
    ufo = root / "suites" / "ufo_judge"
    for seed, (name, request, application, shots, final, _, _) in enumerate(UFO_RUNS):
        steps = [{"application": application, "action": f"click_input({i})"} for i in range(len(shots))]
        write_ufo_task(ufo / "data" / "logs" / name, request, steps, shots, final=final, seed=seed)
    suite_file(ufo, "ufo_log", "logs/*/response.log", id_template="{task_id}")


def by_request(requests: list[dict[str, Any]], request: str) -> list[dict[str, Any]]:
    return [r for r in requests if r["path"].endswith("/chat/completions") and request in r["user_text"]]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_judging_trajectories_through_an_openai_endpoint(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_project(pytester.path)
    script = {run[3]: [{"content": c} for c in run[7]] for run in WAA_RUNS}
    script.update({run[1]: [{"content": run[5]}] for run in UFO_RUNS})
    with fakeserver.serve(tmp_path, script=script) as server:
        result = pytester.runpytest_subprocess(
            "suites/trajectory_judge",
            "suites/ufo_judge",
            "--model=openai:judge-vl",
            f"--base-url={server.base_url}",
            f"--data-root={pytester.path / 'dataroot'}",
            "--retries=0",
            "--concurrency=4",
            *mode,
        )
        requests = server.requests()
    output = result.stdout.str()
    assert result.ret == 0, output + result.stderr.str()

    # -- judge evaluation: the WAA runs have labels ---------------------------------------------
    report = json.loads((pytester.path / "reports" / "trajectory_judge.json").read_text())
    cases = {c["id"]: c for c in report["cases"]}
    assert {i: c["verdict"] for i, c in cases.items()} == {f"{r[0]}-{r[1]}": r[8] for r in WAA_RUNS}
    for rule_case, rule in (("vlc-INF-3", "fail_on_infeasible"), ("vs_code-feas-4", "fail_on_feasible")):
        assert cases[rule_case]["prediction"]["decided_by"] == "rule" and cases[rule_case]["prediction"]["rule"] == rule
    # decided without the judge: it got no request for them (its scripted contrary replies were never used)
    assert by_request(requests, "make vlc play a dvd in 8k") == by_request(requests, "install the rust extension") == []
    assert cases["chrome-ok-1"]["tags"] == {"app": "chrome", "evaluator": "exact_match", "feasibility": "feasible", "labelled": "labelled"}

    # the 40-image cap: 45 steps with real screens -> the first and the 39 latest, then the final one
    [long] = by_request(requests, "add forty five bookmarks")
    assert long["image_count"] == 41
    assert long["user_order"] == ["text", "image", "text"] + ["text"] * 5 + ["image", "text"] * 39 + ["text", "image", "text"]
    assert "left out, at most 40 step screenshots are shown" in long["user_text"]
    # placeholders dropped: only step 4's screen (the screen after action 3) is real; the final one is broken
    [holes] = by_request(requests, "set an alarm for seven")
    assert holes["image_count"] == 1 and holes["user_order"] == ["text"] * 4 + ["image"] + ["text"] * 3
    assert "Step 1 (no screenshot: it is all black)" in holes["user_text"] and "No final screenshot: it is not a readable image." in holes["user_text"]
    assert sorted(cases["clock-holes-7"]["notes"]) == ["screenshot_dropped_1x1", "screenshot_dropped_black", "screenshot_dropped_missing", "screenshot_dropped_unreadable"]
    # no usable screenshot: text only, and the judge is told
    [blind] = by_request(requests, "switch to dark mode")
    assert blind["image_count"] == 0 and set(blind["user_order"]) == {"text"}
    assert "judge from the text of the steps alone" in blind["user_text"]
    assert cases["settings-blind-8"]["prediction"]["sent"]["text_only"] is True
    # one repair request, text only; a reply still invalid after it is unparsed
    first, repair = by_request(requests, "rename report to final")
    assert first["image_count"] == 2 and repair["image_count"] == 0 and "Your previous answer" in repair["user_text"]
    assert cases["file_explorer-fix-9"]["first_response"] == "It is done, complete: yes."
    assert len(by_request(requests, "compute seven factorial")) == 2 and cases["windows_calc-junk-10"]["verdict"] == "unparsed"

    metrics = report["task_metrics"]
    judged = [(r[6] == 1.0 and "yes" or "no", json.loads(r[7][-1]).get("complete")) for r in WAA_RUNS if r[1] not in ("INF-3", "feas-4")]
    decided = [(label, j) for label, j in judged if j in ("yes", "no")]
    overall = metrics["judge"]["(all)"]
    assert (overall["n"], overall["agree"], overall["unsure"], overall["no_answer"]) == (len(judged), sum(a == b for a, b in judged), 1, 1)
    tp = sum(p == ("yes", "yes") for p in decided)
    assert overall["precision"] == round(tp / sum(j == "yes" for _, j in decided), 6) and overall["recall"] == round(tp / sum(lbl == "yes" for lbl, _ in decided), 6)
    po = Fraction(sum(a == b for a, b in decided), len(decided))
    la, ja = Fraction(sum(lbl == "yes" for lbl, _ in decided), len(decided)), Fraction(sum(j == "yes" for _, j in decided), len(decided))
    pe = la * ja + (1 - la) * (1 - ja)
    assert overall["kappa"] == round(float((po - pe) / (1 - pe)), 6)
    assert metrics["rule_decided_with_label"] == {"(all)": {"n": 2, "agree": 2}, "vlc": {"n": 1, "agree": 1}, "vs_code": {"n": 1, "agree": 1}}
    assert metrics["judge"]["chrome"]["agree"] == 1 and metrics["judge"]["chrome"]["n"] == 2
    assert (metrics["repair_requests"], metrics["repaired"]) == (2, 1)

    # -- agent evaluation: the UFO logs have no labels ---------------------------------------------
    ufo = json.loads((pytester.path / "reports" / "ufo_judge.json").read_text())
    assert {c["id"]: c["verdict"] for c in ufo["cases"]} == {r[0]: r[6] for r in UFO_RUNS}
    agent = ufo["task_metrics"]["agent"]
    assert "judge" not in ufo["task_metrics"]
    assert (agent["(all)"]["n"], agent["(all)"]["yes"], agent["(all)"]["unsure"], agent["(all)"]["success_rate"]) == (3, 1, 1, round(1 / 3, 6))
    assert (agent["mspaint.exe"]["success_rate"], agent["WINWORD.EXE"]["success_rate"], agent["WINWORD.EXE"]["unsure_rate"]) == (1.0, 0.0, 0.5)
    [paint] = by_request(requests, "draw a circle in paint")
    assert paint["image_count"] == 3 and paint["user_order"] == ["text", "image", "text", "text", "image", "text", "text", "image", "text"]
    [table] = by_request(requests, "insert a table with three rows")
    assert table["image_count"] == 0

    # the terminal shows both report modes
    assert "agent evaluation: judged success rate" in output and "judge evaluation: the judge against the labels" in output
