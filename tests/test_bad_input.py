"""Bad input gives one actionable :class:`guitest.errors.SuiteError`, never a traceback or half-read data.

Suite files (``load_suite``), annotation files (``read_suite_samples``) and a missing data
folder (``guitest.datapath.locate``), each written to ``tmp_path`` by the test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from guitest.datapath import ENV_VAR, default_root, inside, locate, resolve_root
from guitest.errors import SuiteError
from guitest.formats import read_suite_samples
from guitest.suite import load_suite

REPO = Path(__file__).resolve().parents[1]

GOOD_SUITE = """\
name: broken_demo
format: screenspot_pro
data:
  dir: Pro
  annotations: annotations/*.json
  images: images
task: grounding
tags: [group, ui_type]
"""


def write_suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text, "utf-8")
    return path


def suite_error(path: Path) -> str:
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    return str(info.value)


# ---------------------------------------------------------------- suite files


def test_good_suite_loads(tmp_path: Path) -> None:
    # the base all broken variants below start from must itself be valid
    suite = load_suite(write_suite(tmp_path, GOOD_SUITE))
    assert (suite.name, suite.format, suite.tags) == ("broken_demo", "screenspot_pro", ("group", "ui_type"))


def test_not_yaml_names_file_and_line(tmp_path: Path) -> None:
    lines = GOOD_SUITE.splitlines()
    # line 7 (1-based) becomes "task: grounding: oops", a mapping value where none is allowed
    assert lines[6] == "task: grounding"
    lines[6] = "task: grounding: oops"
    path = write_suite(tmp_path, "\n".join(lines) + "\n")
    message = suite_error(path)
    assert str(path) in message
    assert "line 7" in message


def test_not_a_mapping(tmp_path: Path) -> None:
    path = write_suite(tmp_path, "- just\n- a list\n")
    message = suite_error(path)
    assert str(path) in message
    assert "mapping" in message


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE + "colour: red\n")
    message = suite_error(path)
    assert str(path) in message
    assert "colour" in message


def test_unknown_key_inside_data_names_the_section(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE.replace("  images: images\n", "  images: images\n  imgs: x\n"))
    message = suite_error(path)
    assert str(path) in message
    assert "field 'data'" in message
    assert "imgs" in message


def test_missing_format(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE.replace("format: screenspot_pro\n", ""))
    message = suite_error(path)
    assert str(path) in message
    assert "field 'format'" in message
    assert "missing" in message


@pytest.mark.parametrize(
    ("old", "new", "field", "bad"),
    [
        ("task: grounding", "task: classify", "task", "classify"),
        ("format: screenspot_pro", "format: screenspot_pr0", "format", "screenspot_pr0"),
        ("tags: [group, ui_type]", "tags: [group, ui_type]\naverage: mean", "average", "mean"),
        ("  images: images", "  images: images\n  base: home", "data.base", "home"),
    ],
)
def test_wrong_enum_value(tmp_path: Path, old: str, new: str, field: str, bad: str) -> None:
    assert old in GOOD_SUITE
    path = write_suite(tmp_path, GOOD_SUITE.replace(old, new))
    message = suite_error(path)
    assert str(path) in message
    assert f"field '{field}'" in message
    assert bad in message


def test_all_schema_problems_reported_at_once(tmp_path: Path) -> None:
    text = GOOD_SUITE.replace("task: grounding", "task: classify").replace("format: screenspot_pro\n", "") + "colour: red\n"
    message = suite_error(write_suite(tmp_path, text))
    assert "field 'task'" in message
    assert "field 'format'" in message
    assert "colour" in message


def test_cross_naming_an_undeclared_tag(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE + "cross: [[group, platform]]\n")
    message = suite_error(path)
    assert str(path) in message
    assert "field 'cross'" in message
    assert "platform" in message


def test_gate_by_naming_an_unknown_tag(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE + "gate:\n  by: {platform=windows: 0.5}\n")
    message = suite_error(path)
    assert str(path) in message
    assert "field 'gate.by'" in message
    assert "platform" in message


def test_gate_by_on_a_declared_cross_loads(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, GOOD_SUITE + "cross: [[group, ui_type]]\ngate:\n  by: {group/ui_type=CAD/text: 0.5}\n"))
    assert suite.gate["by"] == {"group/ui_type=CAD/text": 0.5}


def test_gate_by_combination_naming_an_unknown_tag(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE + "gate:\n  by: {platform/ui_type=windows/text: 0.5}\n")
    message = suite_error(path)
    assert "field 'gate.by'" in message


def test_missing_prompt_file(tmp_path: Path) -> None:
    path = write_suite(tmp_path, GOOD_SUITE + "prompt: my_prompt.txt\n")
    message = suite_error(path)
    assert "field 'prompt'" in message
    assert "my_prompt.txt" in message


# ---------------------------------------------------------------- annotation files


def pro_row(i: int, prefix: str = "b", **changes) -> dict:
    row = {
        "img_filename": f"{prefix}/shot_{i}.png",
        "bbox": [10, 20, 50, 60],
        "instruction": f"click thing {i}",
        "instruction_cn": "点击",
        "id": f"{prefix}_{i}",
        "application": "app",
        "platform": "windows",
        "img_size": [100, 100],
        "ui_type": "text",
        "group": "CAD",
    }
    row.update(changes)
    return row


@pytest.fixture()
def pro_suite(tmp_path: Path):
    return load_suite(write_suite(tmp_path, GOOD_SUITE))


def write_annotations(tmp_path: Path, name: str, payload) -> Path:
    folder = tmp_path / "Pro" / "annotations"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False), "utf-8")
    return path


def read_error(suite, data_dir: Path) -> str:
    with pytest.raises(SuiteError) as info:
        read_suite_samples(suite, str(data_dir))
    return str(info.value)


def test_not_json_names_line_and_column(tmp_path: Path, pro_suite) -> None:
    # line 3 is '   "b": }': the value is missing where '}' stands, column 9 (3 spaces, "b", ':', space, '}')
    path = write_annotations(tmp_path, "a.json", '[\n  {"a": 1,\n   "b": }\n]\n')
    message = read_error(pro_suite, tmp_path / "Pro")
    assert str(path) in message
    assert "line 3, column 9" in message


def test_not_a_list(tmp_path: Path, pro_suite) -> None:
    path = write_annotations(tmp_path, "a.json", {"rows": [pro_row(0)]})
    message = read_error(pro_suite, tmp_path / "Pro")
    assert str(path) in message
    assert "list" in message


def test_no_annotation_files(tmp_path: Path, pro_suite) -> None:
    (tmp_path / "Pro" / "annotations").mkdir(parents=True)
    message = read_error(pro_suite, tmp_path / "Pro")
    assert "annotations/*.json" in message


def bad_file_rows() -> list:
    return [
        pro_row(0),  # fine
        pro_row(1, bbox=[10, 20, 50]),  # 3 numbers
        {k: v for k, v in pro_row(2).items() if k != "instruction"},  # no instruction
        pro_row(3, bbox=[10, 20, 10, 60]),  # zero width
        pro_row(4, img_filename="../../etc/passwd"),  # leaves the image folder
        pro_row(5, id="a_0"),  # same case id as row 0 of a_good.json
        pro_row(6),  # fine
        pro_row(7, img_filename="/etc/passwd"),  # absolute path
    ]


EXPECTED_PROBLEMS = {  # row index -> (id, field)
    1: ("b_1", "bbox"),
    2: ("b_2", "instruction"),
    3: ("b_3", "bbox"),
    4: ("b_4", "img_filename"),
    5: ("a_0", "id"),
    7: ("b_7", "img_filename"),
}


def test_every_bad_row_in_one_error(tmp_path: Path, pro_suite) -> None:
    write_annotations(tmp_path, "a_good.json", [pro_row(0, "a"), pro_row(1, "a")])
    write_annotations(tmp_path, "b_bad.json", bad_file_rows())
    message = read_error(pro_suite, tmp_path / "Pro")
    assert str(pro_suite.path) in message
    assert f"{len(EXPECTED_PROBLEMS)} invalid annotation row(s)" in message
    lines = [line.strip() for line in message.splitlines()[1:]]
    assert len(lines) == len(EXPECTED_PROBLEMS)
    for index, (row_id, field) in EXPECTED_PROBLEMS.items():
        wanted = f"b_bad.json, row {index} (id {row_id}), field '{field}'"
        assert any(wanted in line for line in lines), f"no line for {wanted!r} in:\n{message}"
    # the good rows (0 and 6) and the good file are not reported as bad
    assert not any(re.search(r"row [06] \(", line) for line in lines)
    assert not any(line.startswith("annotations/a_good.json") for line in lines)
    # the duplicate names where the first use of the id is
    dup = next(line for line in lines if "row 5 " in line)
    assert "a_good.json, row 0" in dup
    # the traversal rows name the offending path
    assert any("../../etc/passwd" in line for line in lines)


def test_same_files_fixed_read_completely(tmp_path: Path, pro_suite) -> None:
    # Control for the test above: with the bad rows removed, both files read in full,
    # so the error above came from the bad rows, not from the layout.
    write_annotations(tmp_path, "a_good.json", [pro_row(0, "a"), pro_row(1, "a")])
    write_annotations(tmp_path, "b_bad.json", [r for i, r in enumerate(bad_file_rows()) if i not in EXPECTED_PROBLEMS])
    samples = read_suite_samples(pro_suite, str(tmp_path / "Pro"))
    # no id template in the suite: the reader's default {group}-{application}-{platform}-{ui_type}-{id}
    assert [s.id for s in samples] == [
        "CAD-app-windows-text-a_0",
        "CAD-app-windows-text-a_1",
        "CAD-app-windows-text-b_0",
        "CAD-app-windows-text-b_6",
    ]
    assert sorted(s.source for s in samples) == [
        "annotations/a_good.json#0",
        "annotations/a_good.json#1",
        "annotations/b_bad.json#0",
        "annotations/b_bad.json#1",  # b_6 is row 1 once the bad rows are gone
    ]


def test_one_bad_row_means_no_samples(tmp_path: Path, pro_suite) -> None:
    # A valid file next to a file with one bad row: nothing is returned at all.
    write_annotations(tmp_path, "a_good.json", [pro_row(i, "a") for i in range(5)])
    write_annotations(tmp_path, "b_bad.json", [pro_row(0), pro_row(1, ui_type="button")])
    message = read_error(pro_suite, tmp_path / "Pro")
    assert "1 invalid annotation row(s)" in message
    assert "b_bad.json, row 1 (id b_1), field 'ui_type'" in message


def test_many_bad_rows_are_summarised(tmp_path: Path, pro_suite) -> None:
    write_annotations(tmp_path, "a.json", [pro_row(i, bbox=[1, 2, 3]) for i in range(25)])
    message = read_error(pro_suite, tmp_path / "Pro")
    assert "25 invalid annotation row(s)" in message
    assert "and 5 more" in message


def test_rows_without_id_are_named_by_index(tmp_path: Path) -> None:
    suite = load_suite(REPO / "suites" / "screenspot" / "suite.yaml")
    folder = tmp_path / "ScreenSpot"
    folder.mkdir()
    rows = [
        {"img_filename": "a.png", "bbox": [1, 2, 3, 4], "instruction": "ok", "data_type": "text", "data_source": "ios"},
        {"img_filename": "b.png", "bbox": [1, 2, 3, 4], "data_type": "text", "data_source": "ios"},
        {"img_filename": "c.png", "bbox": [1, 2, 0, 4], "instruction": "zero width", "data_type": "icon", "data_source": "ios"},
    ]
    (folder / "screenspot_mobile.json").write_text(json.dumps(rows), "utf-8")
    with pytest.raises(SuiteError) as info:
        read_suite_samples(suite, str(folder))
    message = str(info.value)
    assert "screenspot_mobile.json, row 1, field 'instruction'" in message
    assert "screenspot_mobile.json, row 2, field 'bbox" in message
    assert "(id" not in message


# ---------------------------------------------------------------- data folder


def test_locate_missing_folder_explains_itself(tmp_path: Path) -> None:
    suite = load_suite(REPO / "suites" / "screenspot_pro" / "suite.yaml")
    root = tmp_path / "nowhere"
    with pytest.raises(SuiteError) as info:
        locate(str(suite.folder), suite.data, str(root), f"${ENV_VAR}", str(suite.path))
    message = str(info.value)
    assert str(suite.path) in message
    assert str(root / "ScreenSpot-Pro") in message  # where it looked
    assert f"(from ${ENV_VAR})" in message
    # the resolution order, in order
    order = [message.index("--data-root"), message.index(f"${ENV_VAR}, then"), message.index(str(default_root()))]
    assert order == sorted(order)
    # the suite's own howto text (YAML folds it onto one line)
    assert " ".join(suite.data["howto"].split()) in " ".join(message.split())
    assert "likaixin/ScreenSpot-Pro" in message


def test_locate_existing_folder(tmp_path: Path) -> None:
    suite = load_suite(REPO / "suites" / "screenspot_pro" / "suite.yaml")
    (tmp_path / "ScreenSpot-Pro").mkdir()
    assert locate(str(suite.folder), suite.data, str(tmp_path), "--data-root", str(suite.path)) == str(tmp_path / "ScreenSpot-Pro")


def test_locate_without_howto_still_says_how(tmp_path: Path) -> None:
    data = {"dir": "Nope", "annotations": "*.json", "base": "data_root", "images": "."}
    with pytest.raises(SuiteError) as info:
        locate(str(tmp_path), data, str(tmp_path / "root"), "--data-root", "x/suite.yaml")
    assert "To get the data:" in str(info.value)


def test_resolve_root_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "from_env"))
    assert resolve_root(str(tmp_path / "from_option")) == ((tmp_path / "from_option").resolve(), "--data-root")
    assert resolve_root(None) == ((tmp_path / "from_env").resolve(), f"${ENV_VAR}")
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.delenv("LMUData", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert resolve_root(None) == ((tmp_path / "xdg" / "guitest").resolve(), "default")


@pytest.mark.parametrize(
    ("relative", "inside_base"),
    [("a/b.png", True), ("a/../b.png", True), ("../b.png", False), ("../../etc/passwd", False), ("/etc/passwd", False), ("a/../../base2/x.png", False)],
)
def test_inside(tmp_path: Path, relative: str, inside_base: bool) -> None:
    base = str(tmp_path / "base")
    got = inside(base, relative)
    assert (got is not None) is inside_base
    if inside_base:
        assert got.startswith(base + "/")


def test_non_finite_bbox_is_rejected(tmp_path: Path, pro_suite) -> None:
    text = json.dumps([pro_row(0)]).replace("[10, 20, 50, 60]", "[0, 0, Infinity, 50]")
    assert "Infinity" in text
    write_annotations(tmp_path, "a.json", text)
    message = read_error(pro_suite, tmp_path / "Pro")
    assert "a.json, row 0 (id b_0), field 'bbox[2]'" in message


def test_a_row_with_several_bad_fields_counts_as_one_row(tmp_path: Path, pro_suite) -> None:
    row = {k: v for k, v in pro_row(0).items() if k not in ("instruction", "img_filename")}
    row.update(bbox=[1, 2], ui_type=7)
    write_annotations(tmp_path, "a.json", [row, pro_row(1)])
    message = read_error(pro_suite, tmp_path / "Pro")
    problems = [line for line in message.splitlines()[1:] if line.strip()]
    assert len(problems) == 4 and all("row 0" in p for p in problems)
    assert "1 invalid annotation row(s) (4 problems)" in message
