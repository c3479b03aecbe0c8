"""MMBench-GUI L1 (content understanding, multiple choice) and L2 (element grounding).

Published layout under the data root: ``MMBench-GUI/L1_annotations.json``,
``MMBench-GUI/L2_annotations.json`` and ``MMBench-GUI/offline_images/os_*/``.
``image_path`` is relative to the platform's folder ``offline_images/<platform>/`` (as
MMBench-GUI's own loader joins them); a path that already starts with its platform
folder is taken relative to ``offline_images/``.

L1: the released file nests its questions: an item (``index, image_path, image_size,
platform, app_name``) holds ``groups``, a list of ``{question, options, answer,
explanation, difficulty}``, each group one case (field ``group``: its position). The flat
form (one question per row, the item's fields beside the question's) is accepted too.
Circular evaluation does not change the cases: the choice task asks each question's
rotations within its one case.

L2: ``bbox`` is normalized x1, y1, x2, y2 of the original image, converted once to pixels
with ``image_size``. Every case gets the field ``level`` (``L1``/``L2``) for selection.
"""

from __future__ import annotations

import os
from typing import Any

from .. import schema
from ..errors import where
from ..sample import Sample
from ..suite import Suite
from . import Converted, annotation_files, load_json_rows, raise_problems, read_rows

L1_ID = "{platform}-{difficulty}-{index}-{group}"
L2_ID = "{platform}-{grounding_type}-{data_type}-{index}"
ITEM_FIELDS = ("index", "image_path", "image_size", "platform", "app_name")


def image_path(row: dict[str, Any]) -> str:
    """The row's image relative to ``offline_images/``: under its platform's folder unless the path already names it."""
    path = row["image_path"]
    first = path.replace("\\", "/").split("/", 1)[0]
    return path if first == row["platform"] else f"{row['platform']}/{path}"


def _questions(row: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """``(group position, question fields)`` of an L1 row: each of its groups, or the flat row itself as group 0."""
    if "groups" in row:
        return list(enumerate(row["groups"]))
    return [(0, row)]


def _convert_l1(row: dict[str, Any], images_dir: str) -> list[Converted]:
    """One sample per question of ``row`` with a valid answer (the others are reported by :func:`_answer_problems`)."""
    item = {k: row[k] for k in ITEM_FIELDS}
    return [
        Converted(
            image=image_path(row),
            instruction=group["question"],
            box=None,
            fields={**item, **group, "group": position, "level": "L1"},
            size=(row["image_size"][0], row["image_size"][1]),
            data={"question": group["question"], "options": group["options"], "answer": group["answer"], "question_id": f"{row['index']}-{position}"},
            image_field="image_path",
        )
        for position, group in _questions(row)
        if group["answer"] in group["options"]
    ]


def _convert_l2(row: dict[str, Any], images_dir: str) -> Converted:
    w, h = row["image_size"]
    notes: tuple[str, ...] = ()
    bbox = list(row["bbox"])
    if -1 in bbox:  # MMBench-GUI's own scorer reads -1 as 0 ("make_safe"); the run clips it and counts it
        notes = ("bbox_minus_one",)
    x1, y1, x2, y2 = bbox
    return Converted(
        image=image_path(row),
        instruction=row["instruction"],
        box=(x1 * w, y1 * h, x2 * w, y2 * h),
        fields={**row, "level": "L2"},
        size=(w, h),
        notes=notes,
        image_field="image_path",
    )


def _answer_problems(shown: str, rows: list[Any], schema_name: str) -> list[str]:
    """Problems the row schema cannot state: an L1 answer that is not one of its question's option letters."""
    is_valid = schema.fast_check(f"formats/{schema_name}")
    problems = []
    for index, row in enumerate(rows):
        if not is_valid(row):
            continue  # read_rows names its schema problems
        for position, group in _questions(row):
            if group["answer"] not in group["options"]:
                field = f"groups[{position}].answer" if "groups" in row else "answer"
                problems.append(f"{where(shown, index, None, field)}: {group['answer']!r} is not one of the options {sorted(group['options'])}")
    return problems


def _files(suite: Suite, data_dir: str, level: str):
    for path in annotation_files(suite, data_dir):
        yield path, load_json_rows(path), {"file": os.path.basename(path), "level": level}


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """Samples of every annotation file, in file-name order, then row order (then group)."""
    if suite.format == "mmbench_gui_l2":
        return read_rows(suite, data_dir, _files(suite, data_dir, "L2"), "mmbench_gui_l2", _convert_l2, L2_ID)
    files = list(_files(suite, data_dir, "L1"))
    samples = read_rows(suite, data_dir, iter(files), "mmbench_gui_l1", _convert_l1, L1_ID)
    problems = [p for path, rows, _ in files for p in _answer_problems(os.path.relpath(path, data_dir), rows, "mmbench_gui_l1")]
    raise_problems(suite, data_dir, problems)
    return samples
