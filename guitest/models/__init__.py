"""Model adapters, chosen by ``--model=SPEC``; each is imported only when asked for.

Built in: ``openai:NAME``, ``anthropic:MODEL`` and ``openai-cua:MODEL`` (computer-use agents), ``hf:PATH_OR_NAME``, ``replay:PATH``, ``ocr``, ``oracle``,
``center``, ``random``. Custom adapters: ``py:MODULE:FACTORY`` (a module importable
from the project, e.g. beside conftest.py), an installed package's entry point in the
group ``guitest.models`` (``--model=NAME:ARG``), or a conftest hook
``pytest_guitest_make_model`` (see docs/adapters.md). A factory is called as
``factory(spec, arg, settings, profile, profile_reason)`` and returns a
:class:`~guitest.models.base.Model`.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Callable

from .. import profiles
from ..errors import ModelError
from ..profiles import Profile
from .base import Model, Settings

SPECS = "openai:NAME, anthropic:MODEL, openai-cua:MODEL, hf:PATH, replay:PATH, ocr, oracle, center, random, py:MODULE:FACTORY, or an installed guitest.models entry point"
ENTRY_POINT_GROUP = "guitest.models"
Factory = Callable[[str, str, Settings, Profile, str], Model]


def choose_profile(spec: str, profile: str | None) -> tuple[Profile, str]:
    """The profile for ``spec``: by name when given, else picked from the model name (openai:, hf:), else generic."""
    kind, _, arg = spec.partition(":")
    if profile:
        return profiles.get(profile), "--model-profile"
    if kind in ("openai", "hf") and arg:
        return profiles.pick(arg)
    return profiles.get("generic"), "default for this model"


def load_model(spec: str, settings: Settings, *, profile: str | None = None, backoff: float = 0.5) -> Model:
    """Build the adapter for ``spec`` with its profile.

    A :class:`ModelError` names the valid specs or profiles when one is unknown.
    """
    kind, _, arg = spec.partition(":")
    chosen, reason = choose_profile(spec, profile)
    if kind == "openai":
        from .openai_api import OpenAIChat

        return OpenAIChat(spec, settings, arg, chosen, reason, backoff=backoff)
    if kind in ("anthropic", "openai-cua"):  # the computer-use APIs: live agents (guitest.live.cua)
        from ..live.cua import adapter

        return adapter(kind)(spec, settings, arg, chosen, reason, backoff=backoff)
    if kind == "hf":
        if not arg:
            raise ModelError("--model=hf:PATH_OR_NAME needs a local model folder (or a model name already in the Hugging Face cache)")
        try:
            from .hf import HFModel
        except ImportError as exc:
            raise ModelError(f"--model=hf: needs transformers and torch: pip install 'guitest[hf]' ({exc})") from None
        return HFModel(spec, settings, arg, chosen, reason)
    if kind == "replay":
        from .replay import Replay

        if not arg:
            raise ModelError("--model=replay:PATH needs the path of a JSONL file of {\"id\", \"response\"} lines")
        return Replay(spec, settings, arg, chosen, reason)
    if spec == "ocr":
        from .ocr import OCRModel

        return OCRModel(spec, settings, chosen, reason)
    if spec in ("oracle", "center", "random"):
        from . import baselines

        cls = {"oracle": baselines.Oracle, "center": baselines.Center, "random": baselines.Random}[spec]
        return cls(spec, settings, chosen, reason)
    if kind == "py":
        parts = arg.split(":", 2)
        return _build(_from_module(arg), spec, parts[2] if len(parts) == 3 else "", settings, chosen, reason)
    factory = _from_entry_point(kind)
    if factory is not None:
        return _build(factory, spec, arg, settings, chosen, reason)
    raise ModelError(f"unknown model {spec!r}; expected one of: {SPECS}")


def _from_module(target: str) -> Factory:
    module_name, _, name = target.partition(":")
    name = name.partition(":")[0]
    if not module_name or not name:
        raise ModelError(f"--model=py:{target}: expected py:MODULE:FACTORY, e.g. py:my_adapters:make_model")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"--model=py:{target}: cannot import module {module_name!r} ({exc}); it must be importable from the rootdir or installed") from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ModelError(f"--model=py:{target}: module {module_name!r} has no callable {name!r}")
    return factory


def _from_entry_point(name: str) -> Factory | None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                return ep.load()
            except Exception as exc:  # a broken plugin package: say which
                raise ModelError(f"--model={name}: the entry point {ep.value!r} of group {ENTRY_POINT_GROUP} failed to load: {exc}") from None
    return None


def build(factory: Any, spec: str, arg: str, settings: Settings, profile: Profile, reason: str) -> Model:
    """Call a custom adapter's factory and check that it made a Model."""
    return _build(factory, spec, arg, settings, profile, reason)


def _build(factory: Any, spec: str, arg: str, settings: Settings, profile: Profile, reason: str) -> Model:
    model = factory(spec, arg, settings, profile, reason)
    if not isinstance(model, Model):
        raise ModelError(f"--model={spec}: the factory returned {type(model).__name__}, not a guitest.models.base.Model")
    return model
