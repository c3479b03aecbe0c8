"""Test data builders: tiny ScreenSpot-format data sets with exact boxes, and suite files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# (split, image name, size, rows): each row (x, y, w, h, instruction, data_type, data_source)
ROWS: list[tuple[str, str, tuple[int, int], list[tuple[int, int, int, int, str, str, str]]]] = [
    (
        "desktop",
        "win1.png",
        (400, 300),
        [
            (10, 10, 40, 20, "open the file menu", "text", "windows"),
            (300, 200, 30, 30, "close the dialog", "icon", "windows"),
        ],
    ),
    (
        "desktop",
        "mac1.png",
        (640, 400),
        [
            (500, 20, 40, 40, "open settings", "icon", "macos"),
            (100, 300, 120, 30, "save the document", "text", "macos"),
        ],
    ),
    (
        "mobile",
        "phone1.png",
        (300, 600),
        [
            (20, 500, 60, 60, "go back", "icon", "ios"),
            (100, 100, 100, 40, "sign in", "text", "android"),
        ],
    ),
]


def write_dataset(root: Path, rows=ROWS, *, skip_images: tuple[str, ...] = ()) -> Path:
    """Write ``root/screenspot_{split}.json`` and ``root/imgs/*.png``; returns root."""
    (root / "imgs").mkdir(parents=True, exist_ok=True)
    by_split: dict[str, list[dict[str, Any]]] = {}
    for split, name, size, boxes in rows:
        if name not in skip_images:
            Image.new("RGB", size, (240, 240, 240)).save(root / "imgs" / name)
        for x, y, w, h, instruction, data_type, source in boxes:
            by_split.setdefault(split, []).append({"img_filename": name, "bbox": [x, y, w, h], "instruction": instruction, "data_type": data_type, "data_source": source})
    for split, entries in by_split.items():
        (root / f"screenspot_{split}.json").write_text(json.dumps(entries, indent=1))
    return root


SUITE = """\
name: tiny
format: screenspot
data:
  dir: data
  base: suite
  annotations: screenspot_*.json
  images: imgs
task: grounding
id: "{split}-{data_source}-{data_type}-{row}"
tags: [split, data_type, data_source]
cross: [[split, data_type]]
"""


def write_suite(folder: Path, extra: str = "", **dataset_kwargs: Any) -> Path:
    """A suite folder with ``suite.yaml`` and its data under ``data/``; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(SUITE + extra)
    write_dataset(folder / "data", **dataset_kwargs)
    return folder


def n_rows(rows=ROWS) -> int:
    return sum(len(r[3]) for r in rows)


def center_norm(split: str, row: int, rows=ROWS) -> tuple[float, float]:
    """The normalised centre of the truth box of row ``row`` of ``split``."""
    entries = [(size, b) for s, _, size, boxes in rows if s == split for b in boxes]
    (w, h), (x, y, bw, bh, *_) = entries[row]
    return ((x + bw / 2) / w, (y + bh / 2) / h)
