"""Annotation readers, one module per benchmark format, all sharing :func:`read_rows`.

A reader ``read(suite, data_dir) -> list[Sample]`` turns a format's rows into
:class:`~guitest.sample.Sample` objects. Every row is validated against its schema
(``schemas/formats/<format>.schema.json`` for the built-in formats); all problems of all
rows are collected and raised as one :class:`~guitest.errors.SuiteError`, so nothing runs
on half-read data.

The format names (suite.yaml ``format:``) are :data:`READERS` (:data:`guitest.registry.READERS`:
the built-ins, each reader imported when first named). A project adds its own with
:func:`register`, e.g. in its ``conftest.py``, or an installed package with an entry point in the
group ``guitest.formats``; see docs/adapters.md.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .. import schema
from ..datapath import inside
from ..errors import SuiteError, where
from ..geometry import Box, is_proper
from ..printable import has_controls, printable
from ..registry import READERS
from ..sample import Sample
from ..suite import Suite

register = READERS.register

MAX_PROBLEMS_SHOWN = 20


@dataclass(frozen=True)
class Converted:
    """What a format's converter makes of one valid row (a row may make several: a list of these).

    ``box`` is the grounding truth in original pixels, or None for tasks without one (their
    input and truth go in ``data``). ``image_field`` and ``box_field`` name the row's fields
    in error messages. ``expect_refusal``: the right answer is that the target is not there.
    """

    image: str
    instruction: str
    box: Box | None
    fields: dict[str, Any]
    size: tuple[int, int] | None = None
    notes: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)
    image_field: str = "img_filename"
    box_field: str = "bbox"
    expect_refusal: bool = False


Converter = Callable[[dict[str, Any], str], "Converted | list[Converted]"]


def read_suite_samples(suite: Suite, data_dir: str) -> list[Sample]:
    """Read every annotation file of ``suite`` under ``data_dir`` into samples, in a stable order; a SuiteError
    when the format is unknown or its reader returns anything but a list of samples."""
    try:
        read = READERS.get(suite.format)
    except SuiteError as exc:
        raise SuiteError(f"{where(str(suite.path), field='format')}: {exc}") from None
    samples = read(suite, data_dir)
    if not isinstance(samples, list) or not all(isinstance(s, Sample) for s in samples):
        got = type(samples).__name__ if not isinstance(samples, list) else f"a list holding {type(next(s for s in samples if not isinstance(s, Sample))).__name__}"
        raise SuiteError(f"{where(str(suite.path), field='format')}: the reader of format {suite.format!r} returned {got}, not a list of guitest.sample.Sample")
    return samples


def annotation_files(suite: Suite, data_dir: str) -> list[str]:
    """The suite's annotation files, sorted; a SuiteError when the glob matches nothing."""
    pattern = os.path.join(data_dir, suite.data["annotations"])
    files = sorted(glob.glob(pattern))
    if not files:
        raise SuiteError(f"{suite.path}: no annotation files match {pattern}")
    return files


def load_json(path: str, what: str = "annotation file") -> Any:
    """A JSON file's content; SuiteError with line and column when it is not valid JSON, naming ``what`` it is when unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            # Infinity and NaN are not JSON; kept as strings, the row schema names the row and field.
            return json.load(f, parse_constant=str)
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path} (line {exc.lineno}, column {exc.colno}): not valid JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read {what}: {exc}") from None


def load_json_rows(path: str) -> list[Any]:
    """A JSON annotation file's list of rows; SuiteError with line and column when it is not valid JSON."""
    data = load_json(path)
    if not isinstance(data, list):
        raise SuiteError(f"{path}: expected a JSON list of rows, got {type(data).__name__}")
    return data


def unencodable(value: Any, field: str = "") -> str | None:
    """The field (dotted, list items by index) of the first string in ``value`` that UTF-8 cannot encode (a lone
    surrogate, from a JSON escape like ``\\ud800``), or None. Reports, ids and terminals would fail on it later."""
    if isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return field or "(row)"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = unencodable(key, field) if isinstance(key, str) else None
            found = found or unencodable(item, f"{field}.{key}" if field else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = unencodable(item, f"{field}[{i}]")
            if found:
                return found
    return None


def read_rows(
    suite: Suite,
    data_dir: str,
    files: Iterable[tuple[str, list[Any], dict[str, Any]]],
    schema_name: str | Mapping[str, Any],
    convert: Converter,
    default_id: str,
) -> list[Sample]:
    """Validate and convert rows; collect every problem, raise them together.

    ``files`` yields ``(path, rows, derived)``: ``derived`` are fields the file name
    implies (a ScreenSpot split, say), available to the id template and tags. ``schema_name``
    names a schema of guitest's (``schemas/formats/<name>.schema.json``), or is a JSON schema
    of one row (a format of your own).
    """
    rows_read = _Rows(suite, data_dir, schema_name, convert, default_id)
    for path, rows, derived in files:
        shown = os.path.relpath(path, data_dir)
        for index, row in enumerate(rows):
            rows_read.add(shown, index, row, derived)
    raise_problems(suite, data_dir, rows_read.problems)
    return rows_read.samples


class _Rows:
    """The samples of a suite's rows, read row by row, and every problem found on the way (see :func:`read_rows`)."""

    def __init__(self, suite: Suite, data_dir: str, schema_name: str | Mapping[str, Any], convert: Converter, default_id: str) -> None:
        self.suite = suite
        self.convert = convert
        self.images_dir = os.path.normpath(os.path.join(data_dir, suite.data["images"]))
        self.template = suite.id_template or default_id
        self.describe: Callable[[Any], Iterable[tuple[str, str]]]
        if isinstance(schema_name, str):  # jsonschema is loaded only to describe an invalid row
            self.is_valid, self.describe = schema.fast_check(f"formats/{schema_name}"), functools.partial(schema.iter_problems, f"formats/{schema_name}")
        else:
            checker = schema.validator_of(schema_name)
            self.is_valid, self.describe = checker.is_valid, functools.partial(schema.problems, checker)
        self.problems: list[str] = []
        self.samples: list[Sample] = []
        self.seen: dict[str, tuple[str, int]] = {}
        self.shared_tags: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self.resolved: dict[str, str | None] = {}  # image name -> its path: rows that share a screenshot resolve it once

    def add(self, shown: str, index: int, row: Any, derived: dict[str, Any]) -> None:
        """Validate row ``index`` of the file ``shown`` and add its samples, or note its problems."""
        row_id = row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else None

        def problem(field: str | None, message: str) -> None:
            self.problems.append(f"{where(shown, index, row_id, field)}: {message}")

        if not self.is_valid(row):
            for name, message in self.describe(row):
                problem(name or "(row)", message)
            return
        broken = unencodable(row)
        if broken is not None:
            problem(broken, "holds a lone surrogate (an escape like \\ud800 that is half of a character): not text UTF-8 can carry; fix the file")
            return
        converted = self.convert(row, self.images_dir)
        for conv in converted if isinstance(converted, list) else [converted]:
            self._add_sample(shown, index, row, {**derived, **conv.fields, "row": index}, conv, problem)

    def _add_sample(self, shown: str, index: int, row: dict[str, Any], fields: dict[str, Any], conv: Converted, problem: Callable[[str | None, str], None]) -> None:
        """Add the sample of one converted row (``fields``: what its id and tags are made of), or note its problem."""
        if conv.box is not None and not is_proper(conv.box):
            problem(conv.box_field, f"{list(row[conv.box_field]) if conv.box_field in row else None} has no area (x2 <= x1 or y2 <= y1 after conversion to {list(conv.box)})")
            return
        if conv.image in self.resolved:
            image = self.resolved[conv.image]
        else:  # "": a sample without a screenshot of its own (its task opens what it needs)
            image = self.resolved[conv.image] = inside(self.images_dir, conv.image) if conv.image else ""
        if image is None:
            problem(conv.image_field, f"{conv.image!r} resolves outside the image folder {self.images_dir}; refusing it")
            return
        case_id = self._case_id(fields, shown, problem)
        if case_id is None:
            return
        self.seen[case_id] = (shown, index)
        tags = self._tags(fields, problem)
        if tags is None:
            return
        self.samples.append(
            Sample(
                id=case_id,
                image=image,
                instruction=conv.instruction,
                box=conv.box,
                tags=tags,
                source=f"{shown}#{index}",
                size=conv.size,
                notes=conv.notes,
                data=conv.data,
                expect_refusal=conv.expect_refusal,
            )
        )

    def _case_id(self, fields: dict[str, Any], shown: str, problem: Callable[[str | None, str], None]) -> str | None:
        """The case id the suite's template makes of ``fields``; None, the problem noted, when it is not printable or
        not unique; SuiteError when the template names a field the rows lack."""
        try:
            case_id = self.template.format_map(fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise SuiteError(
                f"{where(str(self.suite.path), field='id')}: the id template {self.template!r} names {exc}, which rows of {shown} do not have (fields: {', '.join(sorted(fields))})"
            ) from None
        if has_controls(case_id):  # a case id is printed as a node id: no escape sequence may reach the terminal
            problem("id", f"case id {printable(case_id)!r} holds control characters; case ids are printed, so they must be plain text")
            return None
        if case_id in self.seen:
            problem("id", f"case id {case_id!r} is also the id of {where(*self.seen[case_id])}; make the suite's id template unique")
            return None
        return case_id

    def _tags(self, fields: dict[str, Any], problem: Callable[[str | None, str], None]) -> dict[str, str] | None:
        """The suite's tags of a row (samples with equal tags share one dict); None, the problem noted, when one has no value."""
        tags = {}
        for tag in self.suite.tags:
            value = fields.get(tag)
            if value is None:
                problem(tag, f"tag '{tag}' has no value in this row (fields: {', '.join(sorted(fields))})")
                return None
            tags[tag] = str(value)
        return self.shared_tags.setdefault(tuple(tags.items()), tags)


def raise_problems(suite: Suite, data_dir: str, problems: list[str], what: str = "invalid annotation row(s)") -> None:
    """Raise one SuiteError listing ``problems`` (the first :data:`MAX_PROBLEMS_SHOWN`, then how many more); nothing when there are none."""
    if not problems:
        return
    head = problems[:MAX_PROBLEMS_SHOWN]
    more = len(problems) - len(head)
    tail = f"\n  ... and {more} more" if more else ""
    places = len({_place(p) for p in problems})  # a row with four bad fields is one row, with four problems
    count = f"{places} {what}" + (f" ({len(problems)} problems)" if places != len(problems) else "")
    raise SuiteError(f"{suite.path}: {count} under {data_dir}; nothing was run:\n  " + "\n  ".join(head) + tail)


_PLACE = re.compile(r"^(.*?, (?:row|line) \d+(?: \(id [^)]*\))?)(?:,|:)")


def _place(problem: str) -> str:
    """The row (or line, or file) a problem message names: the start of the message that :func:`where` wrote."""
    found = _PLACE.match(problem)
    return found.group(1) if found else problem.split(": ", 1)[0]
