"""``replay:PATH``: score replies produced elsewhere: JSONL lines ``{"id": case id, "response": text}``, or the results
file ScreenSpot-Pro's official evaluation script writes (eval_screenspot_pro.py of
likaixin2000/ScreenSpot-Pro-GUI-Grounding: a JSON object whose ``details`` hold one record per sample with its
``pred``, the point it clicked in the screenshot's pixels, or null when the model gave none), read without a
conversion script: each record answers the case ``{group}-{application}-{platform}-{ui_type}-{id}`` (the id guitest's
screenspot_pro suite gives it) with its point, written in the profile's own syntax, so guitest's judge scores the very
point the script did; a record with no point answers nothing (unparsed: wrong, as the script's ``wrong_format``)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ModelError
from ..profiles import Profile
from .base import Blind, Case, Prompt, Reply, SentImage, Settings


class Replay(Blind):
    """Looks each case's reply up by id; a case with no reply is an error outcome."""

    uses = ("concurrency",)

    def __init__(self, name: str, settings: Settings, path: str, profile: Profile | None = None, profile_reason: str = "") -> None:
        super().__init__(name, settings, profile, profile_reason)
        self.path = Path(path)
        self.replies: dict[str, Reply] = {}
        self.points: dict[str, tuple[float, float] | None] = {}
        try:
            text = self.path.read_text("utf-8")
        except OSError as exc:
            raise ModelError(f"replay file {self.path}: cannot read it: {exc.strerror}") from None
        if text.lstrip().startswith("{") and self._official(text):
            return
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ModelError(f"replay file {self.path}, line {number}: not valid JSON: {exc.msg}") from None
            if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("response"), str):
                raise ModelError(f'replay file {self.path}, line {number}: expected {{"id": str, "response": str}}')
            finish = row.get("finish_reason", "stop")
            self.replies[row["id"]] = Reply(text=row["response"], finish_reason=finish if isinstance(finish, str) else "stop")

    def _official(self, text: str) -> bool:
        """Read ScreenSpot-Pro's official results (see the module docstring); False when ``text`` is not such a file."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return False
        details = data.get("details") if isinstance(data, dict) else None
        if not isinstance(details, list):
            return False
        for number, row in enumerate(details):
            where = f"replay file {self.path}, details[{number}]"
            if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("id", "application", "platform", "ui_type")):
                raise ModelError(f"{where}: expected the official script's record (id, group, application, platform, ui_type, pred)")
            if row.get("gt_type", "positive") != "positive" or row.get("lang", "en") != "en" or row.get("instruction_style", "instruction") != "instruction":
                continue  # guitest's suite asks each sample once: the English instruction, its target on the screen
            key = f"{row.get('group')}-{row['application']}-{row['platform']}-{row['ui_type']}-{row['id']}"
            pred = row.get("pred")
            if pred is not None and not (isinstance(pred, list) and len(pred) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pred)):
                raise ModelError(f"{where} (id {row['id']!r}), field 'pred': expected [x, y] in pixels or null, got {pred!r}")
            if key in self.points:
                raise ModelError(f"{where}: a second record of {key}: keep one run of each sample in the file")
            self.points[key] = (float(pred[0]), float(pred[1])) if pred is not None else None
        return True

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        if self.points:
            if case.sample.id not in self.points:
                raise ModelError(f"replay file {self.path} has no record of case {case.sample.id!r}")
            point = self.points[case.sample.id]
            return Reply(text=self.profile.point_text(point, case.sent_size, case.original_size) if point is not None else "")
        reply = self.replies.get(case.sample.id)
        if reply is None:
            raise ModelError(f"replay file {self.path} has no reply for case id {case.sample.id!r}")
        return reply


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> Replay:
    """``--model=replay:PATH``: the replies of the JSONL file at PATH."""
    if not arg:
        raise ModelError('--model=replay:PATH needs the path of a JSONL file of {"id", "response"} lines')
    return Replay(spec, settings, arg, profile, profile_reason)
