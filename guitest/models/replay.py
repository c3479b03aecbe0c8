"""``replay:PATH``: score replies produced elsewhere, from JSONL lines ``{"id": case id, "response": text}``."""

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
        try:
            lines = self.path.read_text("utf-8").splitlines()
        except OSError as exc:
            raise ModelError(f"replay file {self.path}: cannot read it: {exc.strerror}") from None
        for number, line in enumerate(lines, start=1):
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

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        reply = self.replies.get(case.sample.id)
        if reply is None:
            raise ModelError(f"replay file {self.path} has no reply for case id {case.sample.id!r}")
        return reply


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> Replay:
    """``--model=replay:PATH``: the replies of the JSONL file at PATH."""
    if not arg:
        raise ModelError('--model=replay:PATH needs the path of a JSONL file of {"id", "response"} lines')
    return Replay(spec, settings, arg, profile, profile_reason)
