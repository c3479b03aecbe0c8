"""Baselines that need no weights: ``oracle``, ``center`` and ``random``.

They answer in their profile's own syntax and coordinate space (``generic`` unless
``--model-profile`` says otherwise), so their replies travel the same parsing and
scoring path as a real model's: ``oracle`` under any profile must score 100%.
"""

from __future__ import annotations

import hashlib
import random

from ..geometry import Point, center, from_original_pixels
from .base import Blind, Case, Prompt, Reply, SentImage


class _Baseline(Blind):
    def say(self, pixel: Point, case: Case) -> Reply:
        """A reply naming ``pixel`` (in pixels of the original image) in the profile's convention."""
        space = "normalized" if self.space == "auto" else self.space
        x, y = from_original_pixels(pixel, space, case.sent_size, case.original_size)
        return Reply(text=self.profile.answer_text(x, y))


class Oracle(_Baseline):
    """Answers the centre of the truth box: the ceiling, and a check of the harness itself."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        return self.say(center(case.truth), case)


class Center(_Baseline):
    """Answers the centre of the screen."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        w, h = case.original_size
        return self.say((w / 2, h / 2), case)


class Random(_Baseline):
    """A uniformly random point, seeded by ``--seed``, the case id and the attempt, so any order gives the same answers."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        seed = f"{self.settings.seed or 0}:{case.sample.id}".encode() + (f":{case.attempt}".encode() if case.attempt else b"")
        rng = random.Random(int.from_bytes(hashlib.sha256(seed).digest()[:8], "big"))
        w, h = case.original_size
        return self.say((rng.random() * w, rng.random() * h), case)
