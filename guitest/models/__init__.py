"""Model adapters, chosen by ``--model=SPEC``; each is imported only when asked for.

Specs: ``openai:NAME``, ``replay:PATH``, ``oracle``, ``center``, ``random``.
"""

from __future__ import annotations

from .. import profiles
from ..errors import ModelError
from .base import Model, Settings

SPECS = "openai:NAME, replay:PATH, oracle, center, random"


def load_model(spec: str, settings: Settings, *, profile: str | None = None, backoff: float = 0.5) -> Model:
    """Build the adapter for ``spec`` with its profile: ``profile`` by name, else picked from the model name.

    A :class:`ModelError` names the valid specs or profiles when one is unknown.
    """
    kind, _, arg = spec.partition(":")
    if profile:
        chosen, reason = profiles.get(profile), "--model-profile"
    elif kind == "openai":
        chosen, reason = profiles.pick(arg)
    else:
        chosen, reason = profiles.get("generic"), "default for this model"
    if kind == "openai":
        from .openai_api import OpenAIChat

        return OpenAIChat(spec, settings, arg, chosen, reason, backoff=backoff)
    if kind == "replay":
        from .replay import Replay

        if not arg:
            raise ModelError("--model=replay:PATH needs the path of a JSONL file of {\"id\", \"response\"} lines")
        return Replay(spec, settings, arg, chosen, reason)
    if spec in ("oracle", "center", "random"):
        from . import baselines

        cls = {"oracle": baselines.Oracle, "center": baselines.Center, "random": baselines.Random}[spec]
        return cls(spec, settings, chosen, reason)
    raise ModelError(f"unknown model {spec!r}; expected one of: {SPECS}")
