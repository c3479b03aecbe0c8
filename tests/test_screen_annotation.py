"""ScreenAI Screen Annotation: the grammar, and the reader on the real validation CSV in ../shared/data."""

from __future__ import annotations

import collections
import csv
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from guitest.run.case import run_case
from guitest.errors import SuiteError
from guitest.formats import read_suite_samples
from guitest.formats.screen_annotation import AnnotationError, parse
from guitest.models.base import Settings
from guitest.models.baselines import Oracle
from guitest.profiles import PROFILES
from guitest.suite import load_suite
from guitest.tasks import load_task

REPO = Path(__file__).resolve().parents[1]
REAL_CSV = REPO.parent / "shared" / "data" / "screen_annotation" / "screen_annotation_valid.csv"

SUITE = """\
name: screen_annotation
format: screen_annotation
data:
  dir: ScreenAnnotation
  annotations: "*.csv"
  images: images
task: parsing
tags: [types]
"""


def write_suite(folder: Path, csv_source: Path | None = None, rows: list[tuple[str, str]] | None = None) -> tuple[Path, Path]:
    """A suite file and a data root with the CSV (linked from ``csv_source`` or written from ``rows``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(SUITE)
    data = folder / "data" / "ScreenAnnotation"
    data.mkdir(parents=True)
    if csv_source is not None:
        os.symlink(csv_source, data / "screen_annotation_valid.csv")
    else:
        with open(data / "screen_annotation_valid.csv", "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["screen_id", "screen_annotation"])
            writer.writerows(rows or [])
    return folder / "suite.yaml", folder / "data"


def read(suite_file: Path, data_root: Path):
    suite = load_suite(suite_file)
    return read_suite_samples(suite, str(data_root / suite.data["dir"]))


# -- the grammar ----------------------------------------------------------------------------------------


def test_nested_elements_with_x_before_y() -> None:
    text = "TOOLBAR 0 999 31 109 (TEXT Account 171 352 54 84, PICTOGRAM back arrow 0 80 40 100), CHECKBOX 861 963 806 867"
    assert parse(text) == [
        {"type": "TOOLBAR", "description": "", "box": [0, 31, 999, 109], "depth": 0},
        {"type": "TEXT", "description": "Account", "box": [171, 54, 352, 84], "depth": 1},
        {"type": "PICTOGRAM", "description": "back arrow", "box": [0, 40, 80, 100], "depth": 1},
        {"type": "CHECKBOX", "description": "", "box": [861, 806, 963, 867], "depth": 0},
    ]


def test_text_with_digits_commas_and_parentheses() -> None:
    text = (
        "TEXT version 3.6.1 53 234 877 898, TEXT San Francisco, CA 94103 10 20 30 40, "
        "TEXT Pty Ltd (ABN 42 061 438 006) (APM) 25 968 695 863, "
        "LIST_ITEM 27 968 244 326 (LABEL Name 29 137 248 272 (LABEL Name 30 134 248 272), TEXT_INPUT 41 957 276 318)"
    )
    elements = parse(text)
    assert [(e["description"], e["box"], e["depth"]) for e in elements] == [
        ("version 3.6.1", [53, 877, 234, 898], 0),
        ("San Francisco, CA 94103", [10, 30, 20, 40], 0),
        ("Pty Ltd (ABN 42 061 438 006) (APM)", [25, 695, 968, 863], 0),  # "42 061 438 006)" is not a box
        ("", [27, 244, 968, 326], 0),
        ("Name", [29, 248, 137, 272], 1),
        ("Name", [30, 248, 134, 272], 2),
        ("", [41, 276, 957, 318], 1),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("TEXT hello", "element TEXT at character 0 has no box"),
        ("TEXT hello 10 5 0 9", "has no box"),  # x1 > x2: not a box
        ("TEXT a 1 2 3 4, BUTTON b 1 2 3 1000", "element BUTTON at character 16 has no box"),
        ("TOOLBAR 0 999 31 109 (TEXT a 1 2 3 4", "unclosed '(' of element TOOLBAR at character 0"),
        ("TEXT a 1 2 3 4, ", "expected an element type"),
        ("text a 1 2 3 4", "expected an element type"),
        ("TEXT a 1 2 3 4 ) extra", "has no box"),  # a ')' at the top level cannot follow a box
        ("BUTTON a 1 2 3 4 (TEXT b 1 2 3 4)) extra", "unexpected ') extra' at character 33"),
    ],
)
def test_grammar_errors_say_where(text: str, message: str) -> None:
    with pytest.raises(AnnotationError, match=re.escape(message)):
        parse(text)


def test_broken_row_names_file_row_and_field(tmp_path: Path) -> None:
    suite_file, data_root = write_suite(tmp_path, rows=[("1", "TEXT a 1 2 3 4"), ("2", "TEXT b 1 2"), ("x3", "TEXT c 1 2 3 4")])
    with pytest.raises(SuiteError) as info:
        read(suite_file, data_root)
    message = str(info.value)
    assert "screen_annotation_valid.csv, row 1 (id 2), field 'screen_annotation': element TEXT at character 0 has no box" in message
    assert "screen_annotation_valid.csv, row 2 (id x3), field 'screen_id'" in message
    assert "2 invalid annotation row(s)" in message


def test_a_case_converts_the_grid_to_pixels(tmp_path: Path) -> None:
    suite_file, data_root = write_suite(tmp_path, rows=[("7", "BUTTON OK 0 999 0 499 (TEXT OK 100 199 100 199)")])
    (found,) = read(suite_file, data_root)
    assert found.tags == {"types": "BUTTON+TEXT"} and found.image.endswith("images/7.jpg")
    Path(found.image).parent.mkdir()
    Image.new("RGB", (1440, 2560)).save(found.image, "JPEG")
    task = load_task("parsing")
    result = run_case(found, Oracle("oracle", Settings(), PROFILES["qwen2-vl"]), task=task)
    assert result["verdict"] == "hit" and result["prediction"]["tp"] == 2
    assert result["truth"][0]["box"] == [0.0, 0.0, 1440.0, round(499 / 999 * 2560, 2)]


# -- the real validation split -------------------------------------------------------------------------------

needs_real = pytest.mark.skipif(not REAL_CSV.is_file(), reason=f"the real ScreenAI CSV is not at {REAL_CSV} (shared reference data)")

# The element types of the annotations. Counted below by a method independent of the reader:
# csv.reader and a regular expression for a known type word at the start, after "(" or after ", ".
TYPES = ("PICTOGRAM TEXT LIST_ITEM BUTTON IMAGE LABEL TOOLBAR NAVIGATION_BAR TEXT_INPUT CHECKBOX RADIO_BUTTON SWITCH PAGER_INDICATOR MAP KEYBOARD").split()
# What both methods found on the validation split (2311 screens, "about 55k elements" in shared/data/README.md).
REAL_SCREENS = 2311
REAL_ELEMENTS = 56987


def _independent_counts() -> tuple[int, collections.Counter]:
    with open(REAL_CSV, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))[1:]
    word = re.compile(r"(?:^|\(|, )(" + "|".join(TYPES) + r") ")
    return len(rows), collections.Counter(t for _, text in rows for t in word.findall(text))


@needs_real
def test_real_csv_counts(tmp_path: Path) -> None:
    suite_file, data_root = write_suite(tmp_path, csv_source=REAL_CSV)
    found = read(suite_file, data_root)
    n_rows, by_type = _independent_counts()
    reader_types = collections.Counter(e["type"] for s in found for e in s.data["elements"])
    assert len(found) == n_rows == REAL_SCREENS
    assert reader_types == by_type
    assert sum(reader_types.values()) == REAL_ELEMENTS
    assert len({s.id for s in found}) == REAL_SCREENS
    assert all(s.data["space"] == "grid999" for s in found)
    boxes = [e["box"] for s in found for e in s.data["elements"]]
    assert all(0 <= x1 <= x2 <= 999 and 0 <= y1 <= y2 <= 999 for x1, y1, x2, y2 in boxes)
