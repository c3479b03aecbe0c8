"""Baselines that need no weights: ``oracle``, ``center`` and ``random``.

They answer in the default prompt's own format (``Answer: [x, y]``, normalized), so
their replies travel the same parsing and scoring path as a real model's.
"""

from __future__ import annotations

import hashlib
import random

from ..geometry import center, normalize
from .base import Blind, Case, Prompt, Reply, SentImage


def _answer(x: float, y: float) -> Reply:
    return Reply(text=f"Answer: [{x:.6f}, {y:.6f}]")


class Oracle(Blind):
    """Answers the centre of the truth box: the ceiling, and a check of the harness itself."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        return _answer(*center(normalize(case.truth, case.original_size)))


class Center(Blind):
    """Answers the centre of the screen."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        return _answer(0.5, 0.5)


class Random(Blind):
    """A uniformly random point, seeded by ``--seed`` and the case id, so any order gives the same answers."""

    def generate(self, prompt: Prompt, image: SentImage, case: Case) -> Reply:
        seed = f"{self.settings.seed or 0}:{case.sample.id}".encode()
        rng = random.Random(int.from_bytes(hashlib.sha256(seed).digest()[:8], "big"))
        return _answer(rng.random(), rng.random())
