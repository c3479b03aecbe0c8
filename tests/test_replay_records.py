"""``replay:`` on the per-sample files other harnesses publish: every version of ScreenSpot-Pro's official
eval_screenspot_pro.py (recorded by tests/reference/record_screenspot_pro_versions.py and record_screenspot_pro.py,
running each version as it ships on real rows) and logs in OmniParser's format, each record matched to its sample
without an ``id``, its point judged as it is (no profile, no screenshot), and what does not fit refused by name.

The real annotation rows come from ../shared/data/screenspot_pro (linked into a data root; no screenshot anywhere).
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from guitest.run.case import run_case
from guitest.errors import ModelError, SuiteError
from guitest.formats import read_suite_samples
from guitest.models.base import Settings
from guitest.models.replay import Replay
from guitest.profiles import PROFILES
from guitest.plan.runconfig import from_values
from guitest.sample import Sample
from guitest.run.session import Session
from guitest.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "screenspot_pro"
DATA = Path(__file__).parent / "data"
VERSIONS = DATA / "screenspot_pro_versions"
#: each recording: its folder, the annotation files its script read, and how many of each file's first rows (None: all)
RECORDINGS: dict[str, tuple[Path, list[str], int | None]] = {
    "3443b5b": (VERSIONS / "3443b5b", ["illustrator_windows", "autocad_windows"], None),  # the first release: no id
    "7e6cc78": (VERSIONS / "7e6cc78", ["illustrator_windows", "autocad_windows"], None),  # the first with an id
    # the first three rows of four files (tests/reference/record_screenspot_pro.py's FILES and ROWS)
    "bd8bbbb": (DATA / "screenspot_pro_reference", ["android_studio_macos", "autocad_windows", "excel_macos", "linux_common_linux"], 3),
}
VERDICT = {"correct": "hit", "wrong": "miss", "wrong_format": "unparsed"}  # the script's words, guitest's

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason=f"needs the real ScreenSpot-Pro annotation files in {SHARED} (the shared reference data is not on this machine)")


def data_root(root: Path, files: list[str] | None, rows: int | None = None) -> Path:
    """``root/ScreenSpot-Pro/annotations/`` holding the named real annotation files from ../shared/data (all 26 for
    None), each cut to its first ``rows`` rows when given; no image folder at all."""
    folder = root / "ScreenSpot-Pro" / "annotations"
    folder.mkdir(parents=True)
    for source in [SHARED / f"{name}.json" for name in files] if files else sorted(SHARED.glob("*.json")):
        if rows is None:
            shutil.copy(source, folder / source.name)
        else:
            (folder / source.name).write_text(json.dumps(json.loads(source.read_text("utf-8"))[:rows], ensure_ascii=False), "utf-8")
    return root


def samples_in(root: Path) -> list[Sample]:
    return read_suite_samples(load_suite(REPO / "suites" / "screenspot_pro" / "suite.yaml"), str(root / "ScreenSpot-Pro"))


def replayed(path: Path, root: Path, profile: str | None = None) -> tuple[Replay, dict[tuple[str, str, tuple[float, ...]], dict[str, Any]]]:
    """The replay of ``path`` over the suite's samples under ``root``, as a run does it (samples matched when read, then
    each case run); each case's result by :func:`key` (its task file, instruction and box: unique in these files)."""
    samples = samples_in(root)
    model = Replay("replay:x", Settings(), str(path), PROFILES[profile] if profile else None, "--model-profile" if profile else "")
    model.read_samples(samples, str(root / "ScreenSpot-Pro" / "images"))
    return model, {(Path(s.source.partition("#")[0]).stem, s.instruction, tuple(map(float, s.box or ()))): run_case(s, model) for s in samples}


def key(record: dict[str, Any]) -> tuple[str, str, tuple[float, ...]]:
    return (record["task_filename"], record["prompt_to_evaluate"], tuple(map(float, record["bbox"])))


def official(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return data["details"] if isinstance(data, dict) else data


@pytest.mark.parametrize("version", list(RECORDINGS))
def test_each_version_of_the_official_script_replays_to_its_own_verdicts(tmp_path: Path, version: str) -> None:
    """Every record's verdict is the one eval_screenspot_pro.py gave it, with no id (3443b5b), with one (7e6cc78,
    bd8bbbb), and no screenshot read; whatever --model-profile says. Before: a record without id was refused, the
    screenshots were opened, and each point was rendered as the profile's text and parsed back."""
    folder, files, rows = RECORDINGS[version]
    root = data_root(tmp_path, files, rows)
    results = folder / "results.json"
    details = official(results)
    for profile in (None, "qwen2.5-vl", "qwen2-vl"):
        model, cases = replayed(results, root, profile)
        assert model.profile.name == "recorded" and model.describe()["profile"]["space"] == "pixel_original"
        assert {key(d): cases[key(d)]["verdict"] for d in details} == {key(d): VERDICT[d["correctness"]] for d in details}, profile
        assert len(cases) == len(details)  # every sample had its record
    metrics = json.loads(results.read_text())["metrics"]["overall"]
    assert Counter(c["verdict"] for c in cases.values())["hit"] == metrics["num_correct_action"]
    hit = next(c for c in cases.values() if c["verdict"] == "hit")
    assert hit["prediction"]["via"] == "recorded" and hit["response"].startswith("(") and "thumbnail" not in hit
    # The recordings test the edge rule: whole-pixel answers on an edge of their box that the script wrote a hair
    # outside it (4860.0, 745.0000000000001 for a bottom edge at 745; 122.99999999999999 for a left edge at 123): its
    # check, on fractions of the image, calls them correct; a comparison of pixels would not.
    hair = [d for d in details if d["pred"] and (inside(d["pred"], d["bbox"]) != (d["correctness"] == "correct"))]
    assert len(hair) == (0 if version == "bd8bbbb" else 5) and all(cases[key(d)]["verdict"] == "hit" for d in hair)


def inside(point: list[float], box: list[float]) -> bool:
    """The point in the box, edges included, compared in pixels."""
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def test_records_in_any_order_answer_the_same_cases(tmp_path: Path) -> None:
    """eval_screenspot_pro_parallel.py (6ca3cf9 on) writes its records as its workers finish them, without id: the
    records of 3443b5b shuffled give the same verdicts."""
    folder, files, _ = RECORDINGS["3443b5b"]
    root = data_root(tmp_path / "data", files)
    data = json.loads((folder / "results.json").read_text())
    _, before = replayed(folder / "results.json", root)
    random.Random(7).shuffle(data["details"])
    (tmp_path / "shuffled.json").write_text(json.dumps(data))
    _, after = replayed(tmp_path / "shuffled.json", root)
    assert {k: v["verdict"] for k, v in after.items()} == {k: v["verdict"] for k, v in before.items()}


#: where an OmniParser point falls, relative to its row's truth box [x1, y1, x2, y2] on an axis, in pixels of the
#: screenshot: its element's centre, which the log's script judged unrounded and wrote rounded (its pred). The shapes
#: of the published log (docs/replay.md, "Other harnesses' per-sample logs"): most inside or far off; on the left edge
#: from inside (correct); on the right or bottom edge from a hair outside (the log's "wrong", the inclusive rule's hit
#: on its pred: what makes its 625 guitest's 630); a pixel outside; on an edge with the other axis off the box.
OMNIPARSER_SHAPES: dict[str, Callable[[float, float, float, float, int, int], tuple[float, float]]] = {
    "inside": lambda x1, y1, x2, y2, w, h: ((x1 + x2) / 2, (y1 + y2) / 2),
    "left edge, from inside": lambda x1, y1, x2, y2, w, h: (x1 + 0.3, (y1 + y2) / 2),
    "right edge, from outside": lambda x1, y1, x2, y2, w, h: (x2 + 0.4, (y1 + y2) / 2),
    "bottom edge, from outside": lambda x1, y1, x2, y2, w, h: ((x1 + x2) / 2, y2 + 0.4),
    "right edge, below the box": lambda x1, y1, x2, y2, w, h: (x2 + 0.4, y2 + 30),
    "a pixel right of the box": lambda x1, y1, x2, y2, w, h: (x2 + 1.2, (y1 + y2) / 2),
    "a pixel above the box": lambda x1, y1, x2, y2, w, h: ((x1 + x2) / 2, y1 - 1.3),
    "far off": lambda x1, y1, x2, y2, w, h: (w * 0.95 if x1 + x2 < w else w * 0.05, (y1 + y2) / 2),
}


def omniparser_record(row: dict[str, Any], task_file: str, idx: int, shape: str) -> dict[str, Any]:
    """A record of OmniParser's ScreenSpot-Pro log (microsoft/OmniParser eval/logs_sspro_omniv2.json at 5d49a5a): its
    fields in its order, the point its model gives in fractions of the screenshot (the centre of a detected element's
    box, ``[x + w/2, y + h/2]`` as eval/ss_pro_gpt4o_omniv2.py computes it; the element here a 10-pixel box around the
    shape's point), ``correctness`` as the official check judges that point, ``pred`` that point in whole pixels."""
    (x1, y1, x2, y2), (w, h) = row["bbox"], row["img_size"]
    px, py = OMNIPARSER_SHAPES[shape](x1, y1, x2, y2, w, h)
    element = [(px - 5) / w, (py - 5) / h, 10 / w, 10 / h]
    point = [element[0] + element[2] / 2, element[1] + element[3] / 2]
    correct = x1 / w <= point[0] <= x2 / w and y1 / h <= point[1] <= y2 / h  # eval_screenspot_pro.py's eval_sample_positive_gt
    return {
        "img_path": f"./ScreenSpot-Pro/images/{row['img_filename']}",
        "group": row["group"],
        "platform": row["platform"],
        "application": row["application"],
        "lang": "en",
        "instruction_style": "instruction",
        "prompt_to_evaluate": row["instruction"],
        "gt_type": "positive",
        "ui_type": row["ui_type"],
        "task_filename": task_file,
        "pred": [round(point[0] * w), round(point[1] * h)],
        "raw_response": {"Analysis": f"The target is the element I tagged {idx}.", "Click BBox ID": str(idx)},
        "bbox": row["bbox"],
        "correctness": "correct" if correct else "wrong",
        "idx": idx,
    }


def test_an_omniparser_log_scores_the_points_it_records_by_the_inclusive_rule(tmp_path: Path) -> None:
    """A log in OmniParser's format (JSONL records, no id, whole-pixel pred, raw_response a dict) on the real rows of
    two files, its points in each shape the published log has: every case's verdict is the inclusive rule on the
    recorded pred, and differs from the log's own correctness exactly where a point written on a right or bottom edge
    was judged, unrounded, a hair outside it. (OmniParser's published log itself replays to 630 hits where its
    correctness counts 625: tests/reference/measure_omniparser_log.py, by hand; docs/replay.md.)"""
    files = ["illustrator_windows", "autocad_windows"]
    root = data_root(tmp_path / "data", files)
    records, shapes = [], list(OMNIPARSER_SHAPES)
    for name in files:
        for row in json.loads((SHARED / f"{name}.json").read_text("utf-8")):
            records.append(omniparser_record(row, name, len(records), shapes[len(records) % len(shapes)]))
    log = tmp_path / "logs_sspro_omniv2.json"
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    model, cases = replayed(log, root, "qwen2.5-vl")
    assert len(cases) == len(records) == len(model.answers) == 65
    for n, r in enumerate(records):
        case, (x1, y1, x2, y2), (x, y) = cases[key(r)], r["bbox"], r["pred"]
        assert case["verdict"] == ("hit" if x1 <= x <= x2 and y1 <= y <= y2 else "miss"), (shapes[n % len(shapes)], r)
        assert case["response"] == json.dumps(r["raw_response"], ensure_ascii=False)
    differ = [shapes[n % len(shapes)] for n, r in enumerate(records) if (cases[key(r)]["verdict"] == "hit") != (r["correctness"] == "correct")]
    assert Counter(differ) == {"right edge, from outside": 8, "bottom edge, from outside": 8}
    hits = Counter(c["verdict"] for c in cases.values())["hit"]
    assert (hits, Counter(r["correctness"] for r in records)["correct"]) == (33, 17)  # 4 shapes of 8 hit; 2 of them the log calls wrong


def official_file(tmp_path: Path, change: Any = None) -> tuple[Path, Path, list[dict[str, Any]]]:
    """The 3443b5b recording (its data root beside it), its details changed by ``change(details)`` first."""
    folder, files, _ = RECORDINGS["3443b5b"]
    root = data_root(tmp_path / "data", files)
    data = json.loads((folder / "results.json").read_text())
    if change is not None:
        change(data["details"])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path, root, data["details"]


def read(path: Path, root: Path) -> Replay:
    model = Replay("replay:x", Settings(), str(path))
    model.read_samples(samples_in(root), str(root / "ScreenSpot-Pro" / "images"))
    return model


def test_a_record_of_no_sample_is_refused_by_name(tmp_path: Path) -> None:
    path, root, _ = official_file(tmp_path, lambda d: d[4].update(bbox=[1, 2, 3, 4]))
    with pytest.raises(ModelError) as info:
        read(path, root)
    message = str(info.value)
    assert message.startswith(f"replay file {path}: details[4] (task file 'illustrator_windows', image '/data/ScreenSpot-Pro/images/illustrator_windows/")
    assert "box [1, 2, 3, 4]) matches no sample of this suite" in message and "(1 of its 65 records match none)" in message


def test_two_records_of_one_sample_are_refused_naming_both(tmp_path: Path) -> None:
    path, root, _ = official_file(tmp_path, lambda d: d.append(dict(d[2])))
    with pytest.raises(ModelError, match=r"details\[2\] and details\[65\] both answer case 'Creative-illustrator-windows-\w+-illustrator_windows_2' \(annotations/illustrator_windows.json#2\)"):
        read(path, root)


def test_a_record_two_rows_share_is_refused_naming_both_cases(tmp_path: Path) -> None:
    path, root, _ = official_file(tmp_path)
    annotation = root / "ScreenSpot-Pro" / "annotations" / "autocad_windows.json"
    rows = json.loads(annotation.read_text())
    annotation.write_text(json.dumps(rows + [{**rows[0], "id": "autocad_windows_copy"}]))
    with pytest.raises(
        ModelError, match=r"details\[31\] \(task file 'autocad_windows'.* matches two cases, '\S+-autocad_windows_0' \(annotations/autocad_windows.json#0\) and '\S+-autocad_windows_copy'"
    ):
        read(path, root)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[3].update(pred="(1, 2)"), r"details\[3\], field 'pred': expected \[x, y\] in pixels or null, got \"\(1, 2\)\""),
        (lambda d: d[3].update(pred=[10**400, 1]), r"details\[3\], field 'pred': expected \[x, y\] in pixels or null, got \[1000"),
        (lambda d: d[5].pop("task_filename"), r"details\[5\], field 'task_filename': expected a string, missing"),
        (lambda d: d[6].update(bbox=[1, 2, 3]), r"details\[6\], field 'bbox': expected \[x1, y1, x2, y2\] in pixels, got \[1, 2, 3\]"),
        (lambda d: d.__setitem__(7, "oops"), r"details\[7\]: expected a per-sample record"),
    ],
    ids=["pred-text", "pred-huge", "no-task-file", "short-box", "not-a-record"],
)
def test_a_bad_record_is_refused_naming_its_field(tmp_path: Path, change: Any, message: str) -> None:
    path, _, _ = official_file(tmp_path, change)
    with pytest.raises(ModelError, match=f"^replay file {path}, {message}"):
        Replay("replay:x", Settings(), str(path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"details": [], "metrics": {}}', "holds no per-sample record"),
        ("cn", "none of its 1 records is of a sample guitest's suite asks (gt_type positive, lang en, instruction_style instruction)"),
        ('{"details": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep to be a replay file"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep to be a replay file"),
    ],
    ids=["no-record", "only-chinese", "deep-object", "deep-line"],
)
def test_a_file_with_no_record_to_replay_is_refused(tmp_path: Path, text: str, message: str) -> None:
    if text == "cn":
        text = json.dumps({"details": [{**official(RECORDINGS["3443b5b"][0] / "results.json")[0], "lang": "cn"}]})
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(ModelError) as info:
        Replay("replay:x", Settings(), str(path))
    assert str(info.value).startswith(f"replay file {path}: {message}")


def test_a_file_past_the_json_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    with open(path, "wb") as f:  # sparse: 600 MiB on paper, nothing on disk
        f.truncate(600 << 20)
    with pytest.raises(ModelError) as info:
        Replay("replay:x", Settings(), str(path))
    assert str(info.value) == f"replay file {path}: larger than 512 MiB, the most guitest reads of a JSON file"


def test_a_suite_the_records_do_not_answer_runs_its_cases_to_errors_that_say_so(tmp_path: Path) -> None:
    path, _, _ = official_file(tmp_path)
    other = data_root(tmp_path / "other", ["vscode_macos"])
    model = read(path, other)  # none of its records is of this suite: not refused, the file is another suite's
    result = run_case(samples_in(other)[0], model)
    assert result["verdict"] == "error"
    assert "has no record of case" in result["error"] and "none of its 65 records matches a sample of this suite" in result["error"]


def test_the_session_refuses_the_suite_when_a_record_does_not_fit(tmp_path: Path) -> None:
    """As a run collects the suite: the suite file named, the record's place and fields, nothing run."""
    path, root, _ = official_file(tmp_path, lambda d: d[0].update(prompt_to_evaluate="something else"))
    suite = tmp_path / "suites" / "screenspot_pro" / "suite.yaml"
    shutil.copytree(REPO / "suites" / "screenspot_pro", suite.parent)
    session = Session(from_values({"model": f"replay:{path}", "data_root": str(root)}, rootdir=str(tmp_path)))
    with pytest.raises(SuiteError, match=rf"^{suite}: replay file {path}: details\[0\] \(task file 'illustrator_windows', .*instruction 'something else'"):
        session.read_suite(suite, "suites/screenspot_pro/suite.yaml")


def test_a_jsonl_file_with_an_id_twice_is_refused_naming_the_id_and_both_lines(tmp_path: Path) -> None:
    """Before: the second reply silently replaced the first."""
    path = tmp_path / "replies.jsonl"
    lines = [{"id": "a", "response": "Answer: [0.1, 0.1]"}, {"id": "b", "response": "x"}, {"id": "a", "response": "Answer: [0.9, 0.9]"}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    with pytest.raises(ModelError) as info:
        Replay("replay:x", Settings(), str(path))
    assert str(info.value) == f"replay file {path}, line 3: id 'a' again (first on line 1): keep one reply per case"


def test_a_jsonl_log_mixing_records_and_replies_is_refused_by_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    record = official(RECORDINGS["3443b5b"][0] / "results.json")[0]
    log.write_text(json.dumps(record) + "\n" + json.dumps({"id": "a", "response": "x"}) + "\n")
    with pytest.raises(ModelError, match=rf"^replay file {log}, line 2, field 'task_filename': expected a string, missing"):
        Replay("replay:x", Settings(), str(log))


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_first_release_replays_to_its_own_figures_through_the_suite(pytester: pytest.Pytester, mode: list[str]) -> None:
    """A results file of the first release (3443b5b: no id) replayed through guitest's own screenspot_pro suite with no
    screenshot on disk, serial and with the records matched in each xdist worker: the script's own overall, text and
    icon accuracies, its wrong_format records unparsed, and the same figures as a leaderboard entry."""
    folder, files, _ = RECORDINGS["3443b5b"]
    shutil.copytree(REPO / "suites" / "screenspot_pro", pytester.path / "suites" / "screenspot_pro")
    data_root(pytester.path / "data-root", files)
    result = pytester.runpytest_subprocess("suites/screenspot_pro", f"--model=replay:{folder / 'results.json'}", "--model-profile=qwen2.5-vl", "--data-root=data-root", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "screenspot_pro.json").read_text())
    metrics = json.loads((folder / "results.json").read_text())["metrics"]["overall"]
    assert report["overall"]["n"] == metrics["num_total"] == 65 and report["overall"]["hit"] == metrics["num_correct_action"] == 43
    assert report["overall"]["accuracy"] == pytest.approx(metrics["action_acc"], abs=1e-6)
    assert report["breakdown"]["ui_type"]["text"]["accuracy"] == pytest.approx(metrics["text_acc"], abs=1e-6)
    assert report["breakdown"]["ui_type"]["icon"]["accuracy"] == pytest.approx(metrics["icon_acc"], abs=1e-6)
    assert report["overall"]["unparsed"] == metrics["wrong_format_num"] == 11
    assert report["model"]["profile"]["name"] == "recorded" and "--model-profile=qwen2.5-vl not used" in report["model"]["profile_reason"]
    from guitest.reporting import leaderboard

    overall = leaderboard.entry(report, "screenspot_pro")[report["model"]["spec"]]["results"]["overall"]
    assert overall == pytest.approx({"icon": metrics["icon_acc"], "text": metrics["text_acc"], "avg": metrics["action_acc"]}, abs=1e-6)


def test_a_recorded_point_off_the_screen_or_not_finite_is_a_miss_that_says_so(tmp_path: Path) -> None:
    """The script's comparisons make NaN and a point off the screen wrong; the report says which (Python's json
    writes NaN for a float nan, and reads it back)."""
    path, root, details = official_file(tmp_path, lambda d: (d[0].update(pred=[float("nan"), 5.0]), d[1].update(pred=[-5, 10])))
    _, cases = replayed(path, root)
    nan, off = cases[key(details[0])], cases[key(details[1])]
    assert nan["verdict"] == "miss" and "non_finite_point" in nan["notes"]
    assert off["verdict"] == "miss" and "outside_image" in off["notes"] and off["prediction"]["pixel"] == [-5, 10]


def test_a_recorded_point_reaches_only_a_task_that_judges_points(tmp_path: Path) -> None:
    """A task without judge_recorded (the default) makes the case an error that says so, never a guessed verdict."""
    from guitest.exchange import Prompt, Recorded, Reply
    from guitest.models.base import Blind
    from guitest.tasks import Task

    class Recording(Blind):
        needs_screenshot = False

        def generate(self, prompt: Any, image: Any, case: Any) -> Reply:
            return Reply(text="(1, 2)", recorded=Recorded((1.0, 2.0)))

    class Words(Task):
        name = "words"

        def build_prompt(self, profile: Any, case: Any, template: str | None) -> Prompt:
            return Prompt(user=case.sample.instruction)

    sample = Sample(id="a", image=str(tmp_path / "absent.png"), instruction="find it", box=(0, 0, 5, 5), tags={}, source="x.json#0", size=(10, 10))
    result = run_case(sample, Recording("recording", Settings()), Words())
    assert result["verdict"] == "error" and result["error"] == "task words judges replies only; a recorded point answers grounding cases"
    grounding = run_case(sample, Recording("recording", Settings()))  # the screenshot is not there and is not needed
    assert grounding["verdict"] == "hit" and grounding["size"] == [10, 10] and "thumbnail" not in grounding


def test_a_jsonl_line_that_is_neither_a_reply_nor_a_record_says_what_either_holds(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text('{"case": "a", "answer": "[0.1, 0.1]"}\n')
    with pytest.raises(ModelError) as info:
        Replay("replay:x", Settings(), str(path))
    assert str(info.value) == f'replay file {path}, line 1: expected {{"id": str, "response": str}} or a per-sample record (task_filename, img_path, prompt_to_evaluate, bbox, pred)'
    path.write_text('{"id": "a", "response": "x"}\n{"id": "b"}\n')
    with pytest.raises(ModelError, match=r'line 2: expected \{"id": str, "response": str\} like the lines before it$'):
        Replay("replay:x", Settings(), str(path))
