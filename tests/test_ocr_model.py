"""The ``ocr`` baseline: RapidOCR reads the screenshot, the instruction is matched to the text.

Skipped when rapidocr-onnxruntime is not installed, unless GUITEST_REQUIRE_OCR is set
(CI with the ``ocr`` extra): then a missing package fails the run.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

if os.environ.get("GUITEST_REQUIRE_OCR"):
    try:
        import rapidocr_onnxruntime  # noqa: F401

        _missing = None
    except ImportError as exc:
        _missing = str(exc)
    if _missing is not None:  # outside the except block: no chained traceback in the message
        pytest.fail(f"GUITEST_REQUIRE_OCR is set but rapidocr-onnxruntime cannot be imported ({_missing}); install it with: pip install 'guitest[ocr]'", pytrace=False)
else:
    pytest.importorskip(
        "rapidocr_onnxruntime",
        reason="the ocr model needs rapidocr-onnxruntime: pip install 'guitest[ocr]' (set GUITEST_REQUIRE_OCR=1 to fail instead of skip)",
    )

from guitest.data import demo
from guitest import profiles  # noqa: E402
from guitest.run.case import run_case  # noqa: E402
from guitest.errors import ModelError  # noqa: E402
from guitest.formats import read_suite_samples  # noqa: E402
from guitest.models import ocr  # noqa: E402
from guitest.models.base import Case, Settings  # noqa: E402
from guitest.answers.region import parse_answer  # noqa: E402
from guitest.sample import Sample  # noqa: E402
from guitest.suite import load_suite  # noqa: E402
from guitest.tasks.grounding import Grounding  # noqa: E402

from builders import SUITE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def model(profile: str = "generic", **settings: object) -> ocr.OCRModel:
    return ocr.OCRModel("ocr", Settings(**settings), profiles.get(profile), "test")


# --- the demo suite, web split (4 screenshots, 8 text and 8 icon targets) -------------------------


@pytest.fixture(scope="module")
def web_results(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Sample, dict]]:
    """Every web case of the demo suite run end to end (suite file -> samples -> run_case), 4 at a time."""
    folder = tmp_path_factory.mktemp("suite")
    text = (REPO / "suites" / "demo" / "suite.yaml").read_text("utf-8").replace("annotations: screenspot_*.json", "annotations: screenspot_web.json")
    (folder / "suite.yaml").write_text(text, "utf-8")
    demo.ensure(folder / "data")
    suite = load_suite(folder / "suite.yaml")
    samples = read_suite_samples(suite, str(folder / "data"))
    ocr_model = model()
    with ThreadPoolExecutor(4) as pool:  # cases run in a thread pool in the plugin too
        results = list(pool.map(lambda s: run_case(s, ocr_model), samples))
    return list(zip(samples, results, strict=True))


def verdicts(web_results: list[tuple[Sample, dict]], data_type: str) -> Counter:
    return Counter(r["verdict"] for s, r in web_results if s.tags["data_type"] == data_type)


def test_end_to_end_on_the_demo_suite(web_results: list[tuple[Sample, dict]]) -> None:
    assert len(web_results) == 16
    for sample, result in web_results:
        assert result["id"] == sample.id
        assert result["verdict"] in ("hit", "miss", "refused"), result
        if result["verdict"] != "refused":
            assert result["response"].startswith("Answer: [")  # the generic profile's syntax


def test_text_targets_mostly_hit(web_results: list[tuple[Sample, dict]]) -> None:
    # measured: 7/8 on the web split (23/24 on the whole demo); a clear majority with margin
    counts = verdicts(web_results, "text")
    assert sum(counts.values()) == 8
    assert counts["hit"] >= 5, counts


def test_icon_targets_mostly_miss_or_refuse(web_results: list[tuple[Sample, dict]]) -> None:
    # measured: 0/8 hits, 6 refused, 2 misses on the web split (1/24 hits on the whole demo)
    counts = verdicts(web_results, "icon")
    assert sum(counts.values()) == 8
    assert counts["hit"] <= 2, counts
    assert counts["refused"] >= 4, counts


# --- a screenshot drawn here --------------------------------------------------------------------

LABELS = {  # label -> box (x1, y1, x2, y2) of its button
    "Save": (40, 40, 200, 100),
    "Cancel": (240, 40, 400, 100),
    "Open File": (440, 40, 660, 100),
    "Privacy Settings": (40, 300, 340, 360),
    "Sign in": (600, 480, 820, 540),
}


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    image = Image.new("RGB", (900, 600), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=26)
    for label, (x1, y1, x2, y2) in LABELS.items():
        draw.rectangle((x1, y1, x2, y2), fill=(225, 230, 240), outline=(120, 120, 140), width=2)
        draw.text(((x1 + x2) / 2, (y1 + y2) / 2), label, fill=(20, 20, 20), font=font, anchor="mm")
    draw.ellipse((780, 40, 840, 100), outline=(60, 60, 60), width=4)  # an unlabelled icon
    path = tmp_path_factory.mktemp("shot") / "screen.png"
    image.save(path)
    return path


def sample(path: Path, instruction: str, box: tuple[float, float, float, float], n: int = 0) -> Sample:
    return Sample(id=f"synthetic-{n}", image=str(path), instruction=instruction, box=box, tags={"data_type": "text"}, source="test")


@pytest.mark.parametrize(
    "instruction, label",
    [
        ("click the Cancel button", "Cancel"),
        ("save", "Save"),
        ("open the file", "Open File"),
        ("go to privacy settings", "Privacy Settings"),
        ("sign in to your account", "Sign in"),
    ],
)
def test_text_buttons_are_hit(screenshot: Path, instruction: str, label: str) -> None:
    result = run_case(sample(screenshot, instruction, LABELS[label]), model())
    assert result["verdict"] == "hit", result


@pytest.mark.parametrize("profile, max_pixels", [("generic", None), ("qwen2.5-vl", 300_000), ("ui-tars", None), ("ui-tars-1.5", 250_000)])
def test_answers_in_each_profiles_syntax_and_space(screenshot: Path, profile: str, max_pixels: int | None) -> None:
    # qwen2.5-vl and ui-tars-1.5 answer in pixels of a resized image: OCR boxes must be mapped back
    result = run_case(sample(screenshot, "press Sign in", LABELS["Sign in"]), model(profile, max_pixels=max_pixels))
    assert result["verdict"] == "hit", result
    assert result["response"] == profiles.get(profile).answer_text(*_raw(result)), result


def _raw(result: dict) -> tuple[float, float]:
    raw = result["prediction"]["raw"]
    return (raw[0], raw[1])


def test_nonsense_instruction_is_refused(screenshot: Path) -> None:
    result = run_case(sample(screenshot, "frobnicate the zyzzyva quux", LABELS["Save"]), model())
    assert result["verdict"] == "refused", result
    assert result["response"].startswith("I cannot find")


def test_unlabelled_icon_is_not_hit(screenshot: Path) -> None:
    result = run_case(sample(screenshot, "open the profile picture (circle icon)", (780, 40, 840, 100)), model())
    assert result["verdict"] in ("refused", "miss"), result


def test_a_refusal_never_parses_as_a_point(screenshot: Path) -> None:
    for name in ("generic", "qwen2.5-vl", "auto"):
        m = model(name)
        case = Case(sample=sample(screenshot, "click at (0.5, 0.5) or [120, 240]", LABELS["Save"]), original_size=(900, 600), truth=LABELS["Save"], sent_size=(900, 600), task=Grounding())
        text = m.refusal(case)
        assert text.startswith("I cannot find")
        assert parse_answer(text, m.profile.styles) is None


# --- matching, without OCR ------------------------------------------------------------------------


def boxes(*texts: str) -> list[ocr.TextBox]:
    return [ocr.TextBox(t, 0.99, (0, 40 * i, 100, 40 * i + 30)) for i, t in enumerate(texts)]


@pytest.mark.parametrize(
    "instruction, texts, expected",
    [
        ("open the Personalization settings", ["Settings", "Personalization", "System"], "Personalization"),
        ("Click the 'Save' button.", ["Save as...", "Save", "Saved items"], "Save"),
        ("cancel saving (Cancel button)", ["Save Document", "Cancel", "Save"], "Cancel"),
        ("open the Go menu in the menu bar", ["Finder", "Go", "Window"], "Go"),
        ("select shoe size 9", ["Size", "8", "9", "10"], "9"),
        ("reset a forgotten password", ["Password", "Forgot password?", "Sign in"], "Forgot password?"),
        ("start the conversion", ["PDF Converter", "Convert"], "Convert"),
        ("read the post Best editor for Rust", ["Release2.4isout", "BesteditorforRust"], "BesteditorforRust"),
        ("TURN ON WI-FI", ["Bluetooth", "Wi-Fi", "Airplane mode"], "Wi-Fi"),
    ],
)
def test_best_match(instruction: str, texts: list[str], expected: str) -> None:
    box, value = ocr.best_match(instruction, boxes(*texts))
    assert box is not None and box.text == expected
    assert value >= ocr.THRESHOLD


@pytest.mark.parametrize(
    "instruction, texts",
    [
        ("frobnicate the zyzzyva quux", ["Save", "Cancel", "Settings"]),
        ("go back to the previous screen (back arrow)", ["9:41", "Settings", "Wi-Fi"]),
        ("open the shopping cart (cart icon)", []),
    ],
)
def test_no_match_scores_under_the_threshold(instruction: str, texts: list[str]) -> None:
    _, value = ocr.best_match(instruction, boxes(*texts))
    assert value < ocr.THRESHOLD


def test_low_confidence_text_is_ignored() -> None:
    box, _ = ocr.best_match("save", [ocr.TextBox("Save", 0.3, (0, 0, 10, 10))])
    assert box is None


def test_normalization() -> None:
    assert ocr.normalize("  Display & Brightness… ") == "display and brightness"
    assert ocr.normalize("Don't_Save!") == "dont save"
    assert ocr.score("SIGN   IN", "sign-in") == 1.0


# --- the engine -----------------------------------------------------------------------------------


def test_engine_is_loaded_once() -> None:
    assert ocr.engine() is ocr.engine()


def test_a_missing_package_is_a_model_error_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "_ENGINE", None)
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # makes the import fail
    with pytest.raises(ModelError, match=r"pip install 'guitest\[ocr\]'.*pip install rapidocr-onnxruntime"):
        ocr.engine()


def test_registered_as_model_ocr() -> None:
    from guitest.models import load_model

    loaded = load_model("ocr", Settings())
    assert isinstance(loaded, ocr.OCRModel) and loaded.profile.name == "generic"


def test_through_the_plugin(pytester: pytest.Pytester, screenshot: Path) -> None:
    """``pytest SUITE --model=ocr``: text buttons hit, the nonsense instruction is refused, the report says so."""
    data = pytester.path / "suites" / "tiny" / "data"
    (data / "imgs").mkdir(parents=True)
    shutil.copy(screenshot, data / "imgs" / "screen.png")
    rows = [
        {"img_filename": "screen.png", "bbox": xywh(LABELS["Cancel"]), "instruction": "click Cancel", "data_type": "text", "data_source": "windows"},
        {"img_filename": "screen.png", "bbox": xywh(LABELS["Open File"]), "instruction": "open a file", "data_type": "text", "data_source": "windows"},
        {"img_filename": "screen.png", "bbox": [780, 40, 60, 60], "instruction": "frobnicate the zyzzyva", "data_type": "icon", "data_source": "windows"},
    ]
    (data / "screenspot_desktop.json").write_text(json.dumps(rows))
    (data.parent / "suite.yaml").write_text(SUITE)
    result = pytester.runpytest_subprocess("suites/tiny", "--model=ocr", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
    assert report["model"]["adapter"] == "OCRModel"
    verdict = {c["instruction"]: c["verdict"] for c in report["cases"]}
    assert verdict == {"click Cancel": "hit", "open a file": "hit", "frobnicate the zyzzyva": "refused"}


def xywh(box: tuple[float, float, float, float]) -> list[float]:
    return [box[0], box[1], box[2] - box[0], box[3] - box[1]]


def test_second_identical_run_is_answered_from_the_cache(pytester: pytest.Pytester) -> None:
    import json

    from builders import n_rows, write_suite

    write_suite(pytester.path / "suites" / "tiny")
    reports = []
    for _ in range(2):
        result = pytester.runpytest_subprocess("suites/tiny", "--model=ocr", "--cache=on", "-p", "no:cacheprovider")
        assert result.ret == 0, result.stdout.str()
        report = json.loads((pytester.path / "reports" / "tiny.json").read_text())
        reports.append(report)
    assert reports[0]["run"]["cache"]["attempts_answered_from_cache"] == 0
    assert reports[1]["run"]["cache"]["attempts_answered_from_cache"] == n_rows()
    first, second = (dict(r) for r in reports)
    first.pop("run"), second.pop("run")
    assert all(c.pop("cached") is True and c.pop("cached_recorded") for c in second["cases"])  # said per case
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
