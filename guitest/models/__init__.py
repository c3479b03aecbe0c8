"""Model adapters, chosen by ``--model=SPEC``: ``NAME`` or ``NAME:ARG``, the name looked up in :data:`MODELS`.

Built in (:data:`guitest.registry.MODELS`, each imported only when asked for): ``openai:NAME``,
``hf:PATH_OR_NAME``, ``replay:PATH``, ``ocr``, ``oracle``, ``center``, ``random``, and
``py:MODULE:FACTORY`` (a factory in a module importable from the project, e.g. beside conftest.py).
Others: :func:`register` (in a conftest.py), an installed package's entry point in the group
``guitest.models`` (``--model=NAME:ARG``), or the conftest hook ``pytest_guitest_make_model`` (see
docs/adapters.md). A factory is called as ``factory(spec, arg, settings, profile, profile_reason)``
and returns a :class:`~guitest.models.base.Model`; a factory that takes a ``backoff`` parameter is
also given ``--retry-backoff``.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable

from .. import profiles
from ..errors import ModelError
from ..profiles import Profile
from ..registry import MODELS
from .base import Model, Settings

ENTRY_POINT_GROUP = MODELS.group
SPECS = ", ".join(MODELS.forms.get(name, name) for name in MODELS.builtins) + f", or an installed {ENTRY_POINT_GROUP} entry point"
Factory = Callable[[str, str, Settings, Profile, str], Model]

register = MODELS.register


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

    A :class:`ModelError` names the known models or profiles when one is unknown.
    """
    name, _, arg = spec.partition(":")
    if name not in MODELS:
        raise ModelError(MODELS.unknown(spec))
    factory = MODELS.get(name)
    chosen, reason = choose_profile(spec, profile)
    return _build(factory, spec, arg, settings, chosen, reason, **({"backoff": backoff} if _takes(factory, "backoff") else {}))


def from_python(spec: str, arg: str, settings: Settings, profile: Profile, profile_reason: str) -> Model:
    """``--model=py:MODULE:FACTORY[:ARG]``: the factory ``FACTORY`` of an importable module, given ``ARG``."""
    parts = arg.split(":", 2)
    return _build(_from_module(arg), spec, parts[2] if len(parts) == 3 else "", settings, profile, profile_reason)


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


def _takes(factory: Any, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a callable without a signature Python can read
        return False


def _build(factory: Any, spec: str, arg: str, settings: Settings, profile: Profile, reason: str, **options: Any) -> Model:
    model = factory(spec, arg, settings, profile, reason, **options)
    if not isinstance(model, Model):
        raise ModelError(f"--model={spec}: the factory returned {type(model).__name__}, not a guitest.models.base.Model")
    return model
