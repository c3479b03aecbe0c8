"""Model adapters, chosen by ``--model=SPEC``; each is imported only when asked for.

Specs: ``openai:NAME``, ``replay:PATH``, ``oracle``, ``center``, ``random``.
"""

from __future__ import annotations

from ..errors import ModelError
from .base import Model, Settings

SPECS = "openai:NAME, replay:PATH, oracle, center, random"


def load_model(spec: str, settings: Settings, *, backoff: float = 0.5) -> Model:
    """Build the adapter for ``spec``; a :class:`ModelError` naming the valid specs when it is unknown."""
    kind, _, arg = spec.partition(":")
    if kind == "openai":
        from .openai_api import OpenAIChat

        return OpenAIChat(spec, settings, arg, backoff=backoff)
    if kind == "replay":
        from .replay import Replay

        if not arg:
            raise ModelError("--model=replay:PATH needs the path of a JSONL file of {\"id\", \"response\"} lines")
        return Replay(spec, settings, arg)
    if spec in ("oracle", "center", "random"):
        from . import baselines

        return {"oracle": baselines.Oracle, "center": baselines.Center, "random": baselines.Random}[spec](spec, settings)
    raise ModelError(f"unknown model {spec!r}; expected one of: {SPECS}")
