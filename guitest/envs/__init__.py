"""Environment backends of live tasks, by name: built-in ones, entry points, and ones a conftest registers.

A backend is a factory ``factory(options, base_dir) -> Environment`` (:class:`guitest.live.protocol.Environment`):
``options`` are the suite's ``env_options`` (plain builtins), ``base_dir`` the suite's folder (relative
paths in the options are relative to it). Built in: ``miniwob`` (:mod:`.miniwob`) and ``webapp``
(:mod:`.webapp`), both on the browser of :mod:`.browser`, and ``desktop`` (:mod:`.desktop`: OSWorld and
Windows Agent Arena machines, or a local desktop). Others come from

- the entry-point group ``guitest.envs`` (``[project.entry-points."guitest.envs"] mydesk = "mypkg.env:make"``), or
- :func:`register` (e.g. in a ``conftest.py``): ``guitest.envs.register("mydesk", make)``.

Each factory is imported only when its name is first opened. :func:`shutdown` closes what the built-in
backends share per process (the browser, local servers); the plugin calls it at the end of a session.
"""

from __future__ import annotations

import importlib
import threading
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping

from ..live.protocol import EnvFailure, Environment

Factory = Callable[[Mapping[str, Any], str], Environment]
ENTRY_POINT_GROUP = "guitest.envs"

#: built-in backend name -> "module:factory"
BUILTIN = {
    "miniwob": "guitest.envs.miniwob:make",
    "webapp": "guitest.envs.webapp:make",
    "desktop": "guitest.envs.desktop:make",
}

_registered: dict[str, Factory] = {}
_lock = threading.Lock()


def register(name: str, factory: Factory) -> None:
    """Make ``factory`` the backend called ``name`` in this process (a later registration replaces an earlier one)."""
    with _lock:
        _registered[name] = factory


def names() -> list[str]:
    """Every backend name known now: built-in, registered and from entry points, sorted."""
    return sorted(set(BUILTIN) | set(_registered) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def factory(name: str) -> Factory:
    """The factory of backend ``name`` (registered first, then entry points, then built-in); EnvFailure naming the known ones."""
    with _lock:
        if name in _registered:
            return _registered[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                return ep.load()  # type: ignore[no-any-return]
            except Exception as exc:  # a broken plug-in is reported, not a traceback
                raise EnvFailure(f"environment backend {name!r}: cannot load entry point {ep.value!r}: {type(exc).__name__}: {exc}") from None
    if name in BUILTIN:
        module, _, attr = BUILTIN[name].partition(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
    raise EnvFailure(
        f"unknown environment backend {name!r}; known: {', '.join(names())}. Register one with guitest.envs.register(name, factory) "
        f"or the entry-point group {ENTRY_POINT_GROUP!r}"
    )


def open_env(name: str, options: Mapping[str, Any] | None = None, base_dir: str = ".") -> Environment:
    """A new environment of backend ``name``; EnvFailure when the backend cannot start (the message says what to install)."""
    env = factory(name)(dict(options or {}), base_dir)
    if not isinstance(env, Environment):
        raise EnvFailure(f"environment backend {name!r} returned {type(env).__name__}, which lacks reset/step/evaluate/close")
    return env


def shutdown() -> None:
    """Close the browser, the local servers and the local desktops the built-in backends share in this process (safe to call twice)."""
    import sys

    for module in ("guitest.envs.browser", "guitest.envs.servers", "guitest.envs.desktop"):
        loaded = sys.modules.get(module)
        if loaded is not None:
            loaded.shutdown()
