"""Blank placeholder screenshots for the real annotation files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from PIL import Image

from guitest.errors import SuiteError
from guitest.data.placeholders import DEFAULT_SIZES, FALLBACK_SIZE, make_placeholders

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
NEEDS = "needs the real annotation files in ../shared/data/{} (the shared reference data is not on this machine)"


def real_files(folder: str) -> list[Path]:
    files = sorted((SHARED / folder).glob("*.json"))
    if not files:
        pytest.skip(NEEDS.format(folder))
    return files


def write_rows(path: Path, rows: list) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def pngs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_screenspot_pro_gets_every_image_at_its_recorded_size(tmp_path: Path) -> None:
    files = real_files("screenspot_pro")
    rows = [row for f in files for row in json.loads(f.read_text("utf-8"))]
    images = tmp_path / "images"
    counts = make_placeholders("screenspot_pro", files, images)
    assert counts == {"rows": 1581, "images": 1581, "written": 1581, "skipped": 0, "enlarged": 0}
    written = pngs(images)
    assert len(written) == 1581 and all(p.suffix == ".png" for p in written)
    assert sum(p.stat().st_size for p in written) < 30_000_000
    for row in rows[::25] + [r for r in rows if r["id"] == "inventor_windows_60"]:
        with Image.open(images / row["img_filename"]) as image:
            assert image.format == "PNG"
            assert list(image.size) == row["img_size"], row["id"]
            assert image.convert("RGB").getpixel((image.width // 2, image.height // 2)) == (200, 200, 200)

    again = make_placeholders("screenspot_pro", files, images)
    assert (again["written"], again["skipped"]) == (0, 1581)


@pytest.mark.parametrize("folder, fmt", [("screenspot", "screenspot"), ("screenspot_v2", "screenspot_v2")])
def test_screenspot_images_hold_every_box(tmp_path: Path, folder: str, fmt: str) -> None:
    files = real_files(folder)
    images = tmp_path / "images"
    counts = make_placeholders(fmt, files, images)
    by_image: dict[str, list[tuple[list[float], str]]] = {}
    for f in files:
        split = f.name.split("_")[1].removesuffix(".json")
        for row in json.loads(f.read_text("utf-8")):
            by_image.setdefault(row["img_filename"], []).append((row["bbox"], split))
    assert counts["rows"] == 1272
    assert counts["images"] == counts["written"] == len(by_image) == len(pngs(images))
    enlarged = 0
    for name, boxes in by_image.items():
        with Image.open(images / name) as image:
            width, height = image.size
        default = DEFAULT_SIZES[boxes[0][1]]
        assert width >= default[0] and height >= default[1], name
        for (x, y, w, h), _ in boxes:
            assert x + w <= width and y + h <= height, (name, [x, y, w, h], (width, height))
        # No larger than needed: each side is the default or touched by some box.
        assert width == default[0] or width == max(math.ceil(b[0] + b[2]) for b, _ in boxes), name
        assert height == default[1] or height == max(math.ceil(b[1] + b[3]) for b, _ in boxes), name
        enlarged += (width, height) != default
    assert counts["enlarged"] == enlarged > 0


def test_defaults_come_from_the_split_in_the_file_name(tmp_path: Path) -> None:
    row = {"instruction": "x", "data_type": "icon", "data_source": "ios"}
    files = [
        write_rows(tmp_path / "screenspot_mobile.json", [{**row, "img_filename": "m.png", "bbox": [10, 10, 20, 20]}]),
        write_rows(tmp_path / "screenspot_web_v2.json", [{**row, "img_filename": "w.png", "bbox": [10, 10, 20, 20]}]),
        write_rows(tmp_path / "extra.json", [{**row, "img_filename": "e.png", "bbox": [10, 10, 20, 20]}]),
        write_rows(
            tmp_path / "screenspot_desktop.json",
            [
                {**row, "img_filename": "d.png", "bbox": [3000.2, 5, 40, 30]},
                {**row, "img_filename": "d.png", "bbox": [5, 1500, 40, 30.5]},
            ],
        ),
    ]
    counts = make_placeholders("screenspot", files, tmp_path / "images")
    assert counts == {"rows": 5, "images": 4, "written": 4, "skipped": 0, "enlarged": 1}
    sizes = {p.name: Image.open(p).size for p in pngs(tmp_path / "images")}
    assert sizes == {
        "m.png": DEFAULT_SIZES["mobile"],
        "w.png": DEFAULT_SIZES["web"],
        "e.png": FALLBACK_SIZE,
        "d.png": (3041, 1531),
    }


def test_subfolders_are_created_and_existing_files_kept_unless_overwrite(tmp_path: Path) -> None:
    row = {"img_size": [64, 48], "bbox": [1, 1, 5, 5]}
    ann = write_rows(tmp_path / "app_windows.json", [{**row, "img_filename": "app/a.png"}, {**row, "img_filename": "app/b.png"}])
    images = tmp_path / "images"
    (images / "app").mkdir(parents=True)
    (images / "app" / "a.png").write_bytes(b"real screenshot")
    assert make_placeholders("screenspot_pro", [ann], images)["skipped"] == 1
    assert (images / "app" / "a.png").read_bytes() == b"real screenshot"
    assert Image.open(images / "app" / "b.png").size == (64, 48)
    counts = make_placeholders("screenspot_pro", [ann], images, overwrite=True)
    assert (counts["written"], counts["skipped"]) == (2, 0)
    assert Image.open(images / "app" / "a.png").size == (64, 48)
    assert sorted(p.name for p in (images / "app").iterdir()) == ["a.png", "b.png"]  # no temporary files left


@pytest.mark.parametrize("name", ["../escape.png", "sub/../../escape.png", "/tmp/absolute.png"])
def test_paths_outside_the_image_folder_are_rejected(tmp_path: Path, name: str) -> None:
    good = {"img_filename": "ok.png", "bbox": [0, 0, 10, 10]}
    ann = write_rows(tmp_path / "screenspot_web.json", [good, {"img_filename": name, "bbox": [0, 0, 10, 10]}])
    images = tmp_path / "data" / "images"
    with pytest.raises(SuiteError, match="outside"):
        make_placeholders("screenspot", [ann], images)
    assert pngs(tmp_path / "data") == []  # nothing written, not even the good row's image
    assert not (tmp_path / "escape.png").exists()


def test_bad_rows_are_all_reported_and_nothing_is_written(tmp_path: Path) -> None:
    ann = write_rows(
        tmp_path / "x_windows.json",
        [
            {"img_filename": "a.png", "img_size": [100, 50]},
            {"img_filename": "a.png", "img_size": [100, 60]},
            {"img_filename": "b.png", "img_size": [0, 60]},
            {"img_filename": "c.png"},
            {"img_size": [10, 10]},
            "not a row",
        ],
    )
    with pytest.raises(SuiteError) as info:
        make_placeholders("screenspot_pro", [ann], tmp_path / "images")
    message = str(info.value)
    assert "5 problem(s)" in message
    assert "row 1: img_size [100, 60] differs from [100, 50]" in message
    assert "row 2: 'img_size'" in message and "row 3: 'img_size'" in message
    assert "row 4: 'img_filename'" in message and "row 5: 'img_filename'" in message
    assert pngs(tmp_path / "images") == []


def test_bad_boxes_and_files_are_reported(tmp_path: Path) -> None:
    ann = write_rows(tmp_path / "screenspot_mobile.json", [{"img_filename": "a.png", "bbox": [1, 2, 3]}])
    broken = tmp_path / "screenspot_web.json"
    broken.write_text("[{", encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        make_placeholders("screenspot", [ann, broken, tmp_path / "missing.json"], tmp_path / "images")
    message = str(info.value)
    assert "3 problem(s)" in message and "'bbox' must be [x, y, w, h]" in message
    assert "screenspot_web.json: cannot read" in message and "missing.json: cannot read" in message


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown annotation format 'ui_vision'"):
        make_placeholders("ui_vision", [], tmp_path)
