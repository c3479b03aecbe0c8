"""ScreenAI Screen Annotation: a CSV of ``screen_id, screen_annotation`` made into element lists.

An annotation is a comma-separated list of elements ``TYPE text x1 x2 y1 y2`` (note the
order: both x, then both y) on a 0-999 grid of the screenshot, each optionally followed by
its children in parentheses: ``TOOLBAR 0 999 31 109 (TEXT Account 171 352 54 84), ...``.
The text is free (it may hold digits, commas and parentheses): an element's box is the
first run of four integers after its type that is followed by ``(``, ``,``, ``)`` or the end.

Every element, nested or not, becomes one ``{type, description, box}`` of the sample's
list (``box`` as ``[x1, y1, x2, y2]`` on the grid, ``space: grid999``: the parsing task
converts it once the image size is known). The screenshots are Rico's ``<screen_id>.jpg``.
"""

from __future__ import annotations

import csv
import os
import re
from typing import Any, Iterator

from .. import schema
from ..errors import SuiteError, where
from ..sample import Sample
from ..suite import Suite
from . import Converted, annotation_files, raise_problems, read_rows

TYPE = re.compile(r"\s*([A-Z][A-Z0-9_]*)(?=\s|$)")
GRID = r"(0|[1-9][0-9]{0,2})"  # 0..999, no leading zeros
BOX = re.compile(rf"(?:(?<=\s)|^){GRID} {GRID} {GRID} {GRID}(?=\s*([(),]|$))")
GRID_MAX = 999
DEFAULT_ID = "{screen_id}"


class AnnotationError(ValueError):
    """An annotation string that does not follow the grammar; the message says where."""


def parse(text: str) -> list[dict[str, Any]]:
    """Every element of an annotation, parents before their children, as ``{type, description, box, depth}``.

    ``box`` is ``[x1, y1, x2, y2]`` on the 0-999 grid. Raises :class:`AnnotationError`
    naming the character offset when the text does not follow the grammar.
    """
    out: list[dict[str, Any]] = []
    pos = _parse_list(text, 0, 0, out)
    if text[pos:].strip():
        raise AnnotationError(f"unexpected {text[pos : pos + 20]!r} at character {pos}")
    return out


def _parse_list(text: str, pos: int, depth: int, out: list[dict[str, Any]]) -> int:
    """Parse elements from ``pos`` until the end or an unmatched ``)``; returns where it stopped."""
    while True:
        head = TYPE.match(text, pos)
        if head is None:
            raise AnnotationError(f"expected an element type (upper case) at character {pos}: {text[pos : pos + 20]!r}")
        box = _find_box(text, head.end(), depth)
        if box is None:
            raise AnnotationError(f"element {head.group(1)} at character {head.start(1)} has no box (four integers x1 x2 y1 y2 on the 0-{GRID_MAX} grid, x1 <= x2, y1 <= y2)")
        x1, x2, y1, y2 = (int(v) for v in box.groups()[:4])
        out.append({"type": head.group(1), "description": text[head.end() : box.start()].strip(), "box": [x1, y1, x2, y2], "depth": depth})
        pos = _skip(text, box.end())
        if pos < len(text) and text[pos] == "(":
            pos = _skip(text, _parse_list(text, pos + 1, depth + 1, out))
            if pos >= len(text) or text[pos] != ")":
                raise AnnotationError(f"unclosed '(' of element {head.group(1)} at character {head.start(1)}")
            pos = _skip(text, pos + 1)
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        return pos


def _find_box(text: str, pos: int, depth: int) -> re.Match[str] | None:
    """The first run of four grid integers after ``pos`` that can be a box: corners in order, and not
    followed by ``)`` at the top level (numbers in the text, like ``(ABN 42 061 438 006)``, are skipped)."""
    while True:
        box = BOX.search(text, pos)
        if box is None:
            return None
        x1, x2, y1, y2 = (int(v) for v in box.groups()[:4])
        if x1 <= x2 and y1 <= y2 and (depth > 0 or box.group(5) != ")"):
            return box
        pos = box.start() + 1


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def read_csv(path: str) -> list[dict[str, Any]]:
    """The CSV's rows as dicts (header ``screen_id, screen_annotation``); SuiteError when it cannot be read."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None or not {"screen_id", "screen_annotation"} <= set(reader.fieldnames):
                raise SuiteError(f"{path}: expected a CSV with the columns screen_id, screen_annotation; got {reader.fieldnames}")
            return [dict(row) for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise SuiteError(f"{path}: cannot read the CSV: {exc}") from None


def _convert(row: dict[str, Any], images_dir: str) -> Converted:
    elements = [{k: e[k] for k in ("type", "description", "box")} for e in row["elements"]]
    fields = {k: v for k, v in row.items() if k not in ("elements", "screen_annotation")}
    types = sorted({e["type"] for e in elements})
    return Converted(
        image=f"{row['screen_id']}.jpg",
        instruction="",
        box=None,
        fields={**fields, "types": "+".join(types), "n_elements": len(elements)},
        data={"elements": elements, "space": "grid999"},
        image_field="screen_id",
        box_field="screen_annotation",
    )


def _parsed(path: str, shown: str, problems: list[str]) -> Iterator[dict[str, Any]]:
    """The CSV's rows with their parsed ``elements``; rows that break the schema or the grammar go to ``problems``."""
    for index, row in enumerate(read_csv(path)):
        found = list(schema.iter_problems("formats/screen_annotation", row)) if not schema.fast_check("formats/screen_annotation")(row) else []
        for field, message in found:
            problems.append(f"{where(shown, index, row.get('screen_id'), field or '(row)')}: {message}")
        if found:
            continue
        try:
            elements = parse(row["screen_annotation"])
        except AnnotationError as exc:
            problems.append(f"{where(shown, index, row['screen_id'], 'screen_annotation')}: {exc}")
            continue
        yield {**row, "elements": elements}


def read(suite: Suite, data_dir: str) -> list[Sample]:
    """One sample per screen of every CSV file, in file-name order then row order."""
    problems: list[str] = []
    files = []
    for path in annotation_files(suite, data_dir):
        files.append((path, list(_parsed(path, os.path.relpath(path, data_dir), problems)), {"file": os.path.basename(path)}))
    raise_problems(suite, data_dir, problems)
    return read_rows(suite, data_dir, files, "screen_annotation", _convert, DEFAULT_ID)
