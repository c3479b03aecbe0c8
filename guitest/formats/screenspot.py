"""ScreenSpot (SeeClick) and ScreenSpot-v2: ``screenspot_{split}[_v2].json``, bbox pixel x, y, w, h."""

from __future__ import annotations

import os
import re
from typing import Any

from ..geometry import xywh_to_xyxy
from ..sample import Sample
from ..suite import Suite
from . import Converted, annotation_files, load_json_rows, read_rows

SPLIT = re.compile(r"screenspot_([a-z]+?)(?:_v2)?\.json$")
DEFAULT_ID = "{split}-{data_source}-{data_type}-{row}"


def _convert(row: dict[str, Any], images_dir: str) -> Converted:
    return Converted(
        image=row["img_filename"],
        instruction=row["instruction"],
        box=xywh_to_xyxy(row["bbox"]),
        fields=dict(row),
    )


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """Samples of every split file; ``split`` (mobile/desktop/web) comes from the file name."""

    def files():
        for path in annotation_files(suite, data_dir):
            match = SPLIT.search(os.path.basename(path))
            split = match.group(1) if match else os.path.splitext(os.path.basename(path))[0]
            yield path, load_json_rows(path), {"split": split, "file": os.path.basename(path)}

    return read_rows(suite, data_dir, files(), "screenspot", _convert, DEFAULT_ID)
