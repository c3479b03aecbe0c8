"""GUI-HalluBench: element lists (``gui_hallubench``) and hallucination probes (``gui_hallubench_hallucination``).

Element lists, in the published layout ``data/annotation/{en,zh}/ui_elements_{en,zh}.json``:
a list of ``{image_path, elements: [{type, index, description, coordinates [x1, y1, x2, y2]
pixels}]}``, ``image_path`` relative to the data set's folder. The language comes from the
file name (``_en.json``), else its folder (``en/``), else a row's ``language`` field.

Hallucination probes (``schemas/formats/gui_hallubench_hallucination.schema.json``): a list
of ``{id, image_path, kind: confusion|fabrication, instruction, target, distractor}`` with
boxes in pixels; ``target`` is required for confusion, and fabrication rows have neither box.

Both readers give every row the fields ``language``, ``name`` (the image path without its
extension, ``/`` as ``_``) and ``platform`` (``unspecified`` when the row has none). A box
given as x2 < x1 or y2 < y1 is read with its corners swapped, and the case notes it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..sample import Sample
from ..suite import Suite
from . import Converted, annotation_files, load_json_rows, read_rows

LANGUAGE = re.compile(r"_([a-z]{2})\.json$", re.IGNORECASE)
ELEMENTS_ID = "{language}-{name}"
HALLUCINATION_ID = "{language}-{kind}-{id}"


def _language(path: str) -> str:
    """The language a file's name or folder names (``ui_elements_en.json``, ``en/``), else ``unknown``."""
    match = LANGUAGE.search(os.path.basename(path))
    if match:
        return match.group(1).lower()
    folder = os.path.basename(os.path.dirname(path))
    return folder.lower() if re.fullmatch(r"[A-Za-z]{2}", folder) else "unknown"


def _ordered(box: list[float]) -> tuple[tuple[float, float, float, float], bool]:
    """The box with its corners in order, and whether they had to be swapped."""
    x1, y1, x2, y2 = box
    out = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
    return out, out != tuple(box)


def _common(row: dict[str, Any]) -> dict[str, Any]:
    """The fields every GUI-HalluBench row offers to ids and tags."""
    name = os.path.splitext(row["image_path"])[0].replace("\\", "/").strip("/").replace("/", "_")
    return {**row, "name": name, "platform": row.get("platform") or "unspecified"}


def _convert_elements(row: dict[str, Any], images_dir: str) -> Converted:
    elements = []
    swapped = 0
    for element in row["elements"]:
        box, was_swapped = _ordered(element["coordinates"])
        swapped += was_swapped
        elements.append({"type": element["type"], "description": element.get("description") or "", "box": list(box)})
    types = sorted({e["type"] for e in elements})
    fields = {**_common(row), "types": "+".join(types) or "none", "n_elements": len(elements)}
    del fields["elements"]
    size = tuple(row["img_size"]) if "img_size" in row else None
    return Converted(
        image=row["image_path"],
        instruction="",
        box=None,
        fields=fields,
        size=size,
        notes=("element_corners_swapped",) if swapped else (),
        data={"elements": elements, "space": "pixel"},
        image_field="image_path",
        box_field="elements",
    )


def _convert_hallucination(row: dict[str, Any], images_dir: str) -> Converted:
    notes = []
    boxes: dict[str, list[float] | None] = {}
    for name in ("target", "distractor"):
        if row.get(name) is None:
            boxes[name] = None
            continue
        box, swapped = _ordered(row[name])
        if swapped:
            notes.append(f"{name}_corners_swapped")
        boxes[name] = list(box)
    target = boxes["target"]
    return Converted(
        image=row["image_path"],
        instruction=row["instruction"],
        box=tuple(target) if target is not None else None,  # type: ignore[arg-type]
        fields=_common(row),
        size=tuple(row["img_size"]) if "img_size" in row else None,
        notes=tuple(notes),
        data={"kind": row["kind"], **boxes},
        image_field="image_path",
        box_field="target",
        expect_refusal=row["kind"] == "fabrication",
    )


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """Samples of every annotation file, in file-name order then row order."""

    def files():
        for path in annotation_files(suite, data_dir):
            language = _language(path)
            rows = load_json_rows(path)
            yield path, [_with_language(row, language) for row in rows], {"file": os.path.basename(path)}

    if suite.format == "gui_hallubench_hallucination":
        return read_rows(suite, data_dir, files(), "gui_hallubench_hallucination", _convert_hallucination, HALLUCINATION_ID)
    return read_rows(suite, data_dir, files(), "gui_hallubench", _convert_elements, ELEMENTS_ID)


def _with_language(row: Any, language: str) -> Any:
    """The row with the file's language, unless the row names its own (rows that are not objects are left to the schema)."""
    if isinstance(row, dict) and not isinstance(row.get("language"), str):
        return {**row, "language": language}
    return row
