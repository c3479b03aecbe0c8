"""ScreenSpot-Pro: one ``<application>_<platform>.json`` per application, bbox pixel x1, y1, x2, y2."""

from __future__ import annotations

import os
from typing import Any

from ..sample import Sample
from ..suite import Suite
from . import Converted, annotation_files, load_json_rows, read_rows

DEFAULT_ID = "{group}-{application}-{platform}-{ui_type}-{id}"


def _convert(row: dict[str, Any], images_dir: str) -> Converted:
    notes = ("instruction_cn_null",) if "instruction_cn" in row and row["instruction_cn"] is None else ()
    return Converted(
        image=row["img_filename"],
        instruction=row["instruction"],
        box=tuple(row["bbox"]),
        fields=dict(row),
        size=(row["img_size"][0], row["img_size"][1]),
        notes=notes,
    )


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """Samples of every application file, in file-name order then row order."""

    def files():
        for path in annotation_files(suite, data_dir):
            yield path, load_json_rows(path), {"file": os.path.basename(path)}

    return read_rows(suite, data_dir, files(), "screenspot_pro", _convert, DEFAULT_ID)
