"""The judge task through guitest.run.case.run_case, with a scripted in-process model that records every prompt.

What is sent (order of screenshots and records, placeholders dropped, the cap, head_tail, text
only), how replies become verdicts (both modes, unsure, repair, unparsed), the FAIL rule, and
the task metrics.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from guitest.run.case import run_case
from guitest.errors import SuiteError
from guitest.models.base import Case, Model, Prompt, Reply, SentImage, Settings
from guitest.models.baselines import Oracle
from guitest.tasks import load_task
from guitest.tasks.judge import parse_reply
from guitest.verdict import HIT, MISS, UNPARSED, UNSURE
from test_trajectory_formats import inline_shot, samples_of, suite_file, write_ufo_task, write_waa_run, write_waa_task


class Scripted(Model):
    """Encodes each image as a stand-in payload and answers from a list, recording the prompts it gets."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__("scripted", Settings())
        self.replies = list(replies)
        self.prompts: list[Prompt] = []

    def preprocess(self, image, case: Case) -> SentImage:  # type: ignore[no-untyped-def]
        return SentImage(image=None, size=image.size, data=b"png", mime="image/png")

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        self.prompts.append(prompt)
        return Reply(self.replies.pop(0) if self.replies else "no more replies")


def reply(complete: str, *subs: str) -> str:
    return json.dumps({"reason": "seen on screen", "sub_scores": [{"name": f"goal {i}", "evaluation": s} for i, s in enumerate(subs)], "complete": complete})


def ufo_sample(tmp_path: Path, shots: list[str], final: str = "screen", actions: list[str] | None = None, **settings: Any):
    data = tmp_path / "data"
    steps = [{"action": a} for a in (actions or [f"click {i}" for i in range(1, len(shots) + 1)])]
    write_ufo_task(data / "logs" / "task", "make the title bold", steps, shots, final=final)
    [sample] = samples_of(suite_file(tmp_path, "ufo_log", "logs/*/response.log", settings=settings or None), data)
    return sample, load_task("judge", settings)


def order(prompt: Prompt) -> list[str]:
    return ["image" if isinstance(p, int) else "text" for p in prompt.parts]


def texts(prompt: Prompt) -> list[str]:
    return [p for p in prompt.parts if isinstance(p, str)]


def test_all_mode_sends_each_screenshot_before_its_record_and_drops_placeholders(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen", "black", "missing", "1x1", "screen"])
    model = Scripted([reply("yes", "yes")])
    result = run_case(sample, model, task=task)
    [prompt] = model.prompts
    assert order(prompt) == ["text", "image", "text", "text", "text", "text", "image", "text", "text", "image", "text"]
    t = texts(prompt)
    assert "You are shown 3 screenshot(s): the screens before steps 1, 5 and the final screen" in t[0]
    assert "3 screenshot(s) were left out as missing or placeholders" in t[0]
    assert t[1].startswith("Step 1 (the screenshot above") and '"action": "click 1"' in t[1]
    assert t[2].startswith("Step 2 (no screenshot: it is all black)")
    assert t[3].startswith("Step 3 (no screenshot: it is missing)")
    assert t[4].startswith("Step 4 (no screenshot: it is a 1x1 placeholder)")
    assert t[6] == "The final screen, after the agent's last action:"
    assert prompt.system and "sub-goals" in prompt.system and len(prompt.images) == 3
    assert result["verdict"] == HIT  # unlabelled: the agent's success as judged
    assert result["prediction"]["sent"] == {"images": 3, "step_images": [1, 5], "final_image": True, "dropped": {"1x1": 1, "black": 1, "missing": 1}, "text_only": False}
    assert sorted(result["notes"]) == ["screenshot_dropped_1x1", "screenshot_dropped_black", "screenshot_dropped_missing"]


def test_at_most_max_step_images_the_first_and_the_latest_plus_the_final(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen"] * 7, max_step_images=3)
    model = Scripted([reply("no", "no")])
    result = run_case(sample, model, task=task)
    [prompt] = model.prompts
    assert len(prompt.images) == 4 and order(prompt).count("image") == 4
    t = texts(prompt)
    assert [s.split(" (")[0] for s in t[1:8]] == [f"Step {i}" for i in range(1, 8)]
    assert all("left out, at most 3 step screenshots are shown" in t[i] for i in (2, 3, 4, 5))
    assert "the screens before steps 1, 6-7 and the final screen" in t[0]
    assert result["prediction"]["sent"]["step_images"] == [1, 6, 7] and result["verdict"] == MISS


def test_head_tail_sends_first_and_final_and_the_steps_as_text(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["black", "screen", "screen", "screen"], screenshots="head_tail")
    model = Scripted([reply("yes", "yes")])
    run_case(sample, model, task=task)
    [prompt] = model.prompts
    assert order(prompt) == ["text", "text", "image", "text", "image", "text", "text"]
    t = texts(prompt)
    assert t[1] == "The first screenshot: the screen before step 2's action."  # step 1's is a placeholder
    assert t[2] == "The final screen, after the agent's last action:"
    assert t[3].count("\n") == 4 and '"step": 4' in t[3]
    assert "You are shown 2 screenshot(s)" in t[0] and "the steps follow as text" in t[0]


def test_head_tail_without_final_shows_the_latest_screenshot_and_says_so(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen", "screen", "black"], final="black", screenshots="head_tail")
    model = Scripted([reply("yes", "yes")])
    result = run_case(sample, model, task=task)
    t = texts(model.prompts[0])
    assert "No usable final screenshot (all black). The latest usable screenshot, the screen before step 2's action:" in t
    assert result["prediction"]["sent"]["step_images"] == [1, 2] and result["prediction"]["sent"]["final_image"] is False


def test_no_usable_screenshot_means_text_only_judging_and_the_judge_is_told(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["missing", "black", "broken"], final="1x1")
    model = Scripted([reply("unsure", "unsure")])
    result = run_case(sample, model, task=task)
    [prompt] = model.prompts
    assert prompt.images == () and set(order(prompt)) == {"text"}
    assert "No usable screenshot exists for this trajectory" in texts(prompt)[0] and "judge from the text of the steps alone" in texts(prompt)[0]
    assert "No final screenshot: it is a 1x1 placeholder." in texts(prompt)
    assert result["verdict"] == UNSURE and result["prediction"]["sent"]["text_only"] is True
    assert "judged_text_only" in result["notes"]


def test_invalid_json_gets_one_text_only_repair(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen"])
    model = Scripted(["I think it is done: complete = yes", reply("yes", "yes")])
    result = run_case(sample, model, task=task)
    first, repair = model.prompts
    assert repair.images == () and repair.parts == (repair.user,)
    assert "it holds no JSON object" in repair.user and "I think it is done" in repair.user and "make the title bold" in repair.user
    assert result["verdict"] == HIT and result["first_response"] == "I think it is done: complete = yes"


def test_a_reply_still_invalid_after_the_repair_is_unparsed(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen"])
    model = Scripted(['{"reason": "x", "sub_scores": [], "complete": "maybe"}', '```json\n{"complete": "yes"\n```'])
    result = run_case(sample, model, task=task)
    assert len(model.prompts) == 2 and "field 'complete' 'maybe' is not one of" in model.prompts[1].user
    assert result["verdict"] == UNPARSED and "not valid JSON" in result["prediction"]["problem"]


def test_repair_can_be_switched_off(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen"], repair=False)
    model = Scripted(["no json", reply("yes")])
    assert run_case(sample, model, task=task)["verdict"] == UNPARSED and len(model.prompts) == 1


def waa_sample(tmp_path: Path, func: str, actions: list[Any], result: float | None, **settings: Any):
    data = tmp_path / "data"
    write_waa_task(data / "examples", "vs_code", "task-1", "install the python extension", func=func)
    write_waa_run(data / "results" / "vs_code" / "task-1", actions, ["screen"] * (len(actions) + 1), result=result)
    [sample] = samples_of(suite_file(tmp_path, "waa_result", "results/*/*/traj.jsonl", settings={"waa_tasks": "examples", **settings}), data)
    return sample, load_task("judge", {"waa_tasks": "examples", **settings})


@pytest.mark.parametrize(
    "func, result, verdict, complete, rule",
    [
        ("infeasible", 1.0, HIT, "yes", "fail_on_infeasible"),  # judge mode: the rule says complete, the label agrees
        ("exact_match", 0.0, HIT, "no", "fail_on_feasible"),  # judge mode: the rule says not complete, the label agrees
        ("infeasible", None, HIT, "yes", "fail_on_infeasible"),  # agent mode: complete = hit
        ("exact_match", None, MISS, "no", "fail_on_feasible"),
    ],
)
def test_fail_as_last_action_is_decided_by_the_rule_not_the_judge(tmp_path: Path, func: str, result: float | None, verdict: str, complete: str, rule: str) -> None:
    sample, task = waa_sample(tmp_path, func, ["pyautogui.click(3, 4)", "FAIL"], result)
    contrary = reply("no" if complete == "yes" else "yes", "yes")
    model = Scripted([contrary])
    out = run_case(sample, model, task=task)
    assert out["verdict"] == verdict
    assert model.prompts == []  # the judge is not asked
    p = out["prediction"]
    assert (p["complete"], p["decided_by"], p["rule"], p["mode"]) == (complete, "rule", rule, "agent" if result is None else "judge")


def test_the_rule_can_be_switched_off(tmp_path: Path) -> None:
    sample, task = waa_sample(tmp_path, "infeasible", ["FAIL"], None, infeasible_rule=False)
    out = run_case(sample, Scripted([reply("no", "no")]), task=task)
    assert (out["verdict"], out["prediction"]["decided_by"]) == (MISS, "judge")


@pytest.mark.parametrize("label_result, judged, verdict", [(1.0, "yes", HIT), (1.0, "no", MISS), (0.0, "no", HIT), (0.0, "yes", MISS), (0.0, "unsure", UNSURE)])
def test_with_a_label_the_judge_is_scored_against_it(tmp_path: Path, label_result: float, judged: str, verdict: str) -> None:
    sample, task = waa_sample(tmp_path, "exact_match", ["click"], label_result)
    out = run_case(sample, Scripted([reply(judged, judged)]), task=task)
    assert out["verdict"] == verdict and out["truth"] == ("yes" if label_result else "no")
    assert (out["prediction"]["label"], out["prediction"]["mode"], out["prediction"]["app"]) == (out["truth"], "judge", "vs_code")


def test_evaluate_agent_ignores_labels_for_the_verdict(tmp_path: Path) -> None:
    sample, task = waa_sample(tmp_path, "exact_match", ["click"], 0.0, evaluate="agent")
    out = run_case(sample, Scripted([reply("yes", "yes")]), task=task)
    assert out["verdict"] == HIT and out["prediction"]["mode"] == "agent" and out["prediction"]["label"] == "no"


def test_the_oracle_answers_the_label_and_errs_without_one(tmp_path: Path) -> None:
    sample, task = waa_sample(tmp_path, "exact_match", ["click"], 0.0)
    assert run_case(sample, Oracle("oracle", Settings()), task=task)["verdict"] == HIT
    unlabelled, task = ufo_sample(tmp_path / "u", ["screen"])
    out = run_case(unlabelled, Oracle("oracle", Settings()), task=task)
    assert out["verdict"] == "error" and "no right answer" in out["error"]


@pytest.mark.parametrize(
    "text, ok",
    [
        ('<think>{"complete": "no"}</think>\n' + reply("yes", "yes"), True),
        ("Here you go:\n```json\n" + reply("no", "no") + "\n```", True),
        (reply("yes", "maybe"), False),
        ('{"reason": "r", "complete": "yes"}', False),
        ("[1, 2]", False),
        ('{"complete": ' + "[" * 100_000 + "]" * 100_000 + "}", False),  # a RecursionError out of the reader before
    ],
)
def test_parse_reply(text: str, ok: bool) -> None:
    value, problem = parse_reply(text)
    assert (value is not None) == ok and (problem is None) == ok


# -- task metrics --------------------------------------------------------------------------------


def case(i: int, app: str, complete: str | None, label: str | None = None, by: str = "judge", verdict: str | None = None) -> dict[str, Any]:
    mode = "judge" if label else "agent"
    if verdict is None:
        if complete is None:
            verdict = UNPARSED
        elif complete == "unsure":
            verdict = UNSURE
        else:
            verdict = (HIT if complete == label else MISS) if label else (HIT if complete == "yes" else MISS)
    return {"id": f"c{i:03d}", "verdict": verdict, "tags": {"app": app}, "prediction": {"mode": mode, "app": app, "label": label, "complete": complete, "decided_by": by}}


def test_agent_metrics_count_success_per_app_with_unsure_apart() -> None:
    cases = [
        case(0, "chrome", "yes"),
        case(1, "chrome", "no"),
        case(2, "chrome", "unsure"),
        case(3, "vlc", "yes"),
        case(4, "vlc", "yes", by="rule"),
        case(5, "vlc", None),
        {"id": "c006", "verdict": "error", "tags": {"app": "vlc"}, "prediction": None, "error": "boom"},
    ]
    metrics = load_task("judge").summarize(cases)
    assert metrics is not None and "judge" not in metrics and metrics["errors"] == 1
    chrome, vlc, overall = metrics["agent"]["chrome"], metrics["agent"]["vlc"], metrics["agent"]["(all)"]
    assert (chrome["n"], chrome["yes"], chrome["no"], chrome["unsure"], chrome["success_rate"], chrome["unsure_rate"]) == (3, 1, 1, 1, round(1 / 3, 6), round(1 / 3, 6))
    assert (vlc["n"], vlc["yes"], vlc["no_answer"], vlc["rule"], vlc["success_rate"]) == (3, 2, 1, 1, round(2 / 3, 6))
    assert (overall["n"], overall["yes"]) == (6, 3)
    assert list(metrics["agent"]) == ["(all)", "chrome", "vlc"]


def test_judge_metrics_agreement_precision_recall_kappa_unsure() -> None:
    # 50 decided pairs (label, judged) as in the textbook example (kappa 0.4), plus 5 unsure and 1 unparsed, plus rule cases
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    cases = [case(i, "chrome" if i % 2 else "msedge", judged, label) for i, (label, judged) in enumerate(pairs)]
    cases += [case(100 + i, "chrome", "unsure", "yes") for i in range(5)] + [case(200, "msedge", None, "no")]
    cases += [case(300, "vlc", "yes", "yes", by="rule"), case(301, "vlc", "yes", "no", by="rule")]
    random.Random(1).shuffle(cases)
    metrics = load_task("judge").summarize(cases)
    assert metrics is not None
    overall = metrics["judge"]["(all)"]
    assert (overall["n"], overall["agree"], overall["unsure"], overall["no_answer"]) == (56, 35, 5, 1)
    assert overall["agreement"] == round(35 / 56, 6) and overall["unsure_rate"] == round(5 / 56, 6)
    assert (overall["tp"], overall["fp"], overall["fn"], overall["tn"]) == (20, 10, 5, 15)
    assert overall["precision"] == round(20 / 30, 6) and overall["recall"] == round(20 / 25, 6)
    assert overall["kappa"] == 0.4 and overall["kappa_n"] == 50
    assert "vlc" not in metrics["judge"] and metrics["rule_decided_with_label"]["vlc"] == {"n": 2, "agree": 1}
    assert metrics["judge"]["chrome"]["n"] + metrics["judge"]["msedge"]["n"] == 56
    assert load_task("judge").summarize(sorted(cases, key=lambda c: c["id"])) == metrics  # order does not matter
    lines = load_task("judge").summary_lines(metrics)
    assert any(line.startswith("judge evaluation") for line in lines) and any("0.400" in line for line in lines)


def test_inline_screenshots_and_tiny_payload_placeholders_in_the_trajectory_format(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = [
        {
            "id": "t1",
            "request": "pin the tab",
            "steps": [{"action": "a", "screenshot": inline_shot("tiny")}, {"action": "b", "screenshot": inline_shot("screen", 3)}],
            "final_screenshot": inline_shot("screen", 4),
        }
    ]
    (data / "runs.json").write_text(json.dumps(rows))
    [sample] = samples_of(suite_file(tmp_path, "trajectory", "*.json"), data)
    model = Scripted([reply("yes", "yes")])
    result = run_case(sample, model, task=load_task("judge"))
    assert order(model.prompts[0]) == ["text", "text", "image", "text", "text", "image", "text"]
    assert "Step 1 (no screenshot: it is an empty placeholder)" in texts(model.prompts[0])[1]
    assert result["prediction"]["sent"]["dropped"] == {"tiny_payload": 1} and result["notes"] == ["screenshot_dropped_tiny_payload"]


def test_a_suite_prompt_file_replaces_the_instructions(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen"])
    model = Scripted([reply("yes", "yes")])
    run_case(sample, model, task, "Be strict. The request was: {instruction}. Answer in JSON.")
    assert model.prompts[0].system == "Be strict. The request was: make the title bold. Answer in JSON."


def test_unknown_or_bad_settings_are_named(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as info:
        load_task("judge", {"screenshots": "some", "max_step_images": -1, "cap": 3}, "suite.yaml")
    message = str(info.value)
    assert "field 'settings.screenshots'" in message and "field 'settings.max_step_images'" in message and "'cap' was unexpected" in message


@pytest.mark.parametrize("screenshots", ["all", "head_tail"])
def test_max_step_images_zero_sends_only_the_final_screenshot(tmp_path: Path, screenshots: str) -> None:
    sample, task = ufo_sample(tmp_path, ["screen", "screen"], final="black", max_step_images=0, screenshots=screenshots)
    model = Scripted([reply("unsure", "unsure")])
    result = run_case(sample, model, task=task)
    assert model.prompts[0].images == () and result["prediction"]["sent"]["text_only"] is True
    if screenshots == "all":
        assert "Step 1 (no screenshot: left out, at most 0 step screenshots are shown)" in texts(model.prompts[0])[1]


def test_evaluate_judge_makes_an_unlabelled_trajectory_an_error(tmp_path: Path) -> None:
    sample, task = ufo_sample(tmp_path, ["screen"], evaluate="judge")
    model = Scripted([reply("yes", "yes")])
    out = run_case(sample, model, task=task)
    assert out["verdict"] == "error" and "no label" in out["error"] and model.prompts == []
