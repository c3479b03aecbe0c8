"""``replay:PATH``: score answers produced elsewhere, from one of three kinds of file (docs/replay.md):

- guitest's own replies: JSONL lines ``{"id": case id, "response": text}`` (optional ``"finish_reason"``), each
  text read with the profile's convention as a model's reply would be. An id given twice is refused.
- the results file ScreenSpot-Pro's official evaluation script writes (eval_screenspot_pro.py and
  eval_screenspot_pro_parallel.py of likaixin2000/ScreenSpot-Pro-GUI-Grounding, every version: a JSON object whose
  ``details`` hold one record per sample, with ``id`` only since 7e6cc78 and never from the parallel script).
- the per-sample log of a harness adapted from that script, one such record per JSONL line (OmniParser's
  eval/logs_sspro_omniv2.json, microsoft/OmniParser at 5d49a5a: the same fields, plus ``idx``).

A record answers the sample it was made from, found by the fields every version records: the task file
(``task_filename``, the annotation file's name), the screenshot (``img_path`` ends with the row's ``img_filename``),
the instruction (``prompt_to_evaluate``) and the box (``bbox``); a record that matches no sample, or two, or a sample
two records match, is refused by name when the suite is collected. Its ``pred`` (the point the script judged, in
pixels of the screenshot; null when the model gave none) answers as it is (:class:`guitest.exchange.Recorded`): no
text is rendered or parsed, so no ``--model-profile`` takes part, and no screenshot is read (the annotation gives the
size). Only the records guitest's suite asks (``gt_type`` positive, ``lang`` en, ``instruction_style``
instruction) are read; the others are left out.
"""

from __future__ import annotations

import json
import math
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .. import strictjson
from ..errors import ModelError
from ..exchange import Recorded
from ..printable import printable
from ..profiles import Profile
from ..sample import Sample
from .base import Blind, Case, Prompt, Reply, SentImage, Settings

#: the profile a file of records is read with, whatever --model-profile says: its points are pixels, judged as they are
RECORDED = Profile(
    name="recorded",
    space="pixel_original",
    styles=(),
    prompt="{instruction}",
    render="({x}, {y})",
    source="the points another harness recorded (eval_screenspot_pro.py's pred), judged as they are: docs/replay.md",
)
#: the record fields a replay needs, with what each must hold
NEEDED = {"task_filename": "a string", "img_path": "a string", "prompt_to_evaluate": "a string", "bbox": "[x1, y1, x2, y2] in pixels"}


@dataclass(frozen=True)
class Record:
    """One per-sample record of a harness's results file, as the replay reads it; ``where`` names it in messages
    (``details[3] (id 'x')``, ``line 4``)."""

    where: str
    task_file: str
    image: str
    instruction: str
    box: tuple[float, float, float, float]
    point: tuple[float, float] | None
    response: str

    def described(self) -> str:
        """The record's place and the fields it is matched on, for a message."""
        box = [int(v) if v.is_integer() else v for v in self.box]
        return f"{self.where} (task file {self.task_file!r}, image {self.image!r}, instruction {printable(self.instruction)!r}, box {box})"


class Replay(Blind):
    """Looks each case's answer up in the replay file: a recorded point (judged as it is) or a reply's text (read
    with the profile); a case with none is an error outcome."""

    uses = ("concurrency",)
    needs_screenshot = False

    def __init__(self, name: str, settings: Settings, path: str, profile: Profile | None = None, profile_reason: str = "") -> None:
        super().__init__(name, settings, profile, profile_reason)
        self.path = Path(path)
        self.replies: dict[str, Reply] = {}
        self.records: list[Record] = []
        self.answers: dict[str, Record] = {}  # case id -> its record, as the collected suites' samples matched them
        self.left_out = 0  # records of samples guitest's suite does not ask (another language, style or gt_type)
        self.kind = "replies"  # or "records": a harness's per-sample records
        try:
            if self.path.stat().st_size > strictjson.MAX_BYTES:  # the bound of every JSON file guitest reads
                raise ModelError(f"replay file {self.path}: larger than {strictjson.MAX_BYTES >> 20} MiB, the most guitest reads of a JSON file")
            text = self.path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelError(f"replay file {self.path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            if not (text.lstrip().startswith("{") and self._official(text)):
                self._lines(text)
        except RecursionError:  # JSON nested thousands deep: not any file a harness writes
            raise ModelError(f"replay file {self.path}: nested too deep to be a replay file") from None
        if self.kind == "records" and not self.records:
            if not self.left_out:
                raise ModelError(f"replay file {self.path}: holds no per-sample record")
            raise ModelError(
                f"replay file {self.path}: none of its {self.left_out} records is of a sample guitest's suite asks "
                "(gt_type positive, lang en, instruction_style instruction): run the official script with those to replay it"
            )
        if self.records:
            reason = (
                f"the file's records are points in pixels (--model-profile={self.profile.name} not used)" if self.profile_reason == "--model-profile" else "the file's records are points in pixels"
            )
            self.profile, self.profile_reason = RECORDED, reason

    def _official(self, text: str) -> bool:
        """Read ScreenSpot-Pro's official results (a JSON object with ``details``); False when ``text`` is not one."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return False
        details = data.get("details") if isinstance(data, dict) else None
        if not isinstance(details, list):
            return False
        self.kind = "records"
        for number, row in enumerate(details):
            where = f"details[{number}]"
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                where += f" (id {printable(row['id'])!r})"
            self._record(row, where)
        return True

    def _lines(self, text: str) -> None:
        """Read a JSONL file: guitest's replies, or a harness's per-sample records (every line the kind of the first)."""
        first_line: dict[str, int] = {}
        records: bool | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"replay file {self.path}, line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ModelError(f"{where}: not valid JSON: {exc.msg}") from None
            if records is None:
                records = isinstance(row, dict) and "response" not in row and "pred" in row
                self.kind = "records" if records else "replies"
            if records:
                self._record(row, f"line {number}")
                continue
            if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("response"), str):
                kinds = "like the lines before it" if self.replies else f"or a per-sample record ({', '.join(NEEDED)}, pred)"
                raise ModelError(f'{where}: expected {{"id": str, "response": str}} {kinds}')
            case_id = row["id"]
            if case_id in first_line:
                raise ModelError(f"{where}: id {printable(case_id)!r} again (first on line {first_line[case_id]}): keep one reply per case")
            first_line[case_id] = number
            finish = row.get("finish_reason", "stop")
            self.replies[case_id] = Reply(text=row["response"], finish_reason=finish if isinstance(finish, str) else "stop")

    def _record(self, row: Any, where: str) -> None:
        """Check one per-sample record and keep it when guitest's suite asks its sample (see the module docstring)."""
        said = f"replay file {self.path}, {where}"
        if not isinstance(row, dict):
            raise ModelError(f"{said}: expected a per-sample record (an object with {', '.join(NEEDED)} and pred), got {type(row).__name__}")
        if row.get("gt_type", "positive") != "positive" or row.get("lang", "en") != "en" or row.get("instruction_style", "instruction") != "instruction":
            self.left_out += 1  # guitest's suite asks each sample once: the English instruction, its target on the screen
            return
        for field, expected in NEEDED.items():
            value = row.get(field)
            ok = _numbers(value, 4) if field == "bbox" else isinstance(value, str)
            if not ok:
                shown = "missing" if field not in row else f"got {printable(json.dumps(value))[:80]}"
                raise ModelError(f"{said}, field {field!r}: expected {expected}, {shown}")
        pred = row.get("pred")
        if pred is not None and not _numbers(pred, 2, finite=False):
            raise ModelError(f"{said}, field 'pred': expected [x, y] in pixels or null, got {printable(json.dumps(pred))[:80]}")
        response = row.get("raw_response", "")
        self.records.append(
            Record(
                where=where,
                task_file=row["task_filename"],
                image=posixpath.normpath(row["img_path"].replace("\\", "/")),
                instruction=row["prompt_to_evaluate"],
                box=_box(row["bbox"]),
                point=(float(pred[0]), float(pred[1])) if pred is not None else None,
                response=response if isinstance(response, str) else json.dumps(response, ensure_ascii=False),
            )
        )

    def read_samples(self, samples: Sequence[Sample], images_dir: str) -> None:
        """Match the file's records to a suite's samples (see the module docstring). A suite none of them matches is
        not the file's (its cases will say they have no record); one that some match must be matched by all."""
        if not self.records:
            return
        by_fields: dict[tuple[str, str, tuple[float, float, float, float]], list[int]] = {}
        for n, record in enumerate(self.records):
            by_fields.setdefault((record.task_file, record.instruction, record.box), []).append(n)
        found: dict[str, Record] = {}
        claimed: dict[int, Sample] = {}
        for sample in samples:
            if sample.box is None:
                continue
            task_file = os.path.splitext(os.path.basename(sample.source.rpartition("#")[0]))[0]
            image = os.path.relpath(sample.image, images_dir).replace(os.sep, "/")
            hits = [n for n in by_fields.get((task_file, sample.instruction, _box(sample.box)), ()) if self.records[n].image == image or self.records[n].image.endswith("/" + image)]
            if len(hits) > 1:
                first, second = (self.records[n] for n in hits[:2])
                raise ModelError(f"replay file {self.path}: {first.where} and {second.where} both answer case {sample.id!r} ({sample.source}): keep one run of each sample in the file")
            if not hits:
                continue
            if hits[0] in claimed:
                other = claimed[hits[0]]
                raise ModelError(
                    f"replay file {self.path}: {self.records[hits[0]].described()} matches two cases, {other.id!r} ({other.source}) and {sample.id!r} ({sample.source}): "
                    "the annotation repeats the row, so the record cannot say which it answers"
                )
            claimed[hits[0]] = sample
            found[sample.id] = self.records[hits[0]]
        if not found:
            return
        if len(claimed) < len(self.records):
            missing = [r for n, r in enumerate(self.records) if n not in claimed]
            raise ModelError(
                f"replay file {self.path}: {missing[0].described()} matches no sample of this suite under {images_dir} "
                f"({len(missing)} of its {len(self.records)} records match none): replay it against the data the file was made from"
            )
        self.answers.update(found)

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        if self.kind == "records":
            record = self.answers.get(case.sample.id)
            if record is None:
                matched = f"its {len(self.records)} records answer {len(self.answers)} case(s)" if self.answers else f"none of its {len(self.records)} records matches a sample of this suite"
                raise ModelError(f"replay file {self.path} has no record of case {case.sample.id!r} ({matched}; records are matched on task file, image, instruction and box)")
            return Reply(text=record.response, recorded=Recorded(record.point))
        reply = self.replies.get(case.sample.id)
        if reply is None:
            raise ModelError(f"replay file {self.path} has no reply for case id {case.sample.id!r}")
        return reply


def _numbers(value: Any, count: int, finite: bool = True) -> bool:
    """Whether ``value`` is a list of ``count`` numbers that are floats (finite ones, unless ``finite`` is False: the
    NaN or Infinity Python's json writes for a point; an integer too large for a float is never one)."""
    if not isinstance(value, list) or len(value) != count:
        return False
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        try:
            number = float(v)
        except OverflowError:
            return False
        if finite and not math.isfinite(number):
            return False
    return True


def _box(values: Sequence[float]) -> tuple[float, float, float, float]:
    """A box as four floats (so a record's ``[10, 20, 30, 40]`` and an annotation's ``(10.0, ...)`` are one key)."""
    return (float(values[0]), float(values[1]), float(values[2]), float(values[3]))


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> Replay:
    """``--model=replay:PATH``: the answers of the file at PATH (guitest's JSONL replies or a harness's per-sample records)."""
    if not arg:
        raise ModelError('--model=replay:PATH needs the path of a JSONL file of {"id", "response"} lines, or of a per-sample results file (docs/replay.md)')
    return Replay(spec, settings, arg, profile, profile_reason)
