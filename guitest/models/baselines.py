"""Baselines that need no weights: ``oracle``, ``center`` and ``random``.

They answer in their profile's own syntax and coordinate space (``generic`` unless
``--model-profile`` says otherwise), so their replies travel the same parsing and
scoring path as a real model's: ``oracle`` under any profile must score 100%.
"""

from __future__ import annotations

import hashlib
import random

from ..errors import ModelError
from ..geometry import Point
from ..profiles import Profile
from .base import Blind, Case, Prompt, Reply, SentImage, Settings, takes_no_argument


class _Baseline(Blind):
    uses: tuple[str, ...] | None = ("concurrency",)

    def say(self, pixel: Point, case: Case) -> Reply:
        """A reply naming ``pixel`` (in pixels of the original image) in the profile's convention."""
        return Reply(text=self.profile.point_text(pixel, case.sent_size, case.original_size))


class Oracle(_Baseline):
    """Answers right (the centre of the truth box, for grounding): the ceiling, and a check of the harness itself."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        text = case.task.oracle_text(case, self.profile)
        if text is None:
            raise ModelError(f"the oracle has no right answer for a {case.task.name} case")
        return Reply(text=text)


class Center(_Baseline):
    """Answers the centre of the screen."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        w, h = case.original_size
        return self.say((w / 2, h / 2), case)


class Random(_Baseline):
    """A uniformly random point, seeded by ``--seed``, the case id and the attempt, so any order gives the same answers."""

    uses = ("concurrency", "seed")

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        seed = f"{self.settings.seed or 0}:{case.sample.id}".encode() + (f":{case.attempt}".encode() if case.attempt else b"")
        rng = random.Random(int.from_bytes(hashlib.sha256(seed).digest()[:8], "big"))
        w, h = case.original_size
        return self.say((rng.random() * w, rng.random() * h), case)


BASELINES: dict[str, type[_Baseline]] = {"oracle": Oracle, "center": Center, "random": Random}


def make(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> _Baseline:
    """``--model=oracle``, ``center`` or ``random`` (they take no argument)."""
    takes_no_argument(spec, arg)
    return BASELINES[spec.partition(":")[0]](spec, settings, profile, profile_reason)
