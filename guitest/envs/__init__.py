"""Environment backends of live tasks, by name: built-in ones, entry points, and ones a conftest registers.

A backend is a factory ``factory(options, base_dir) -> Environment`` (:class:`guitest.live.protocol.Environment`):
``options`` are the suite's ``env_options`` (plain builtins), ``base_dir`` the suite's folder (relative
paths in the options are relative to it). Built in: ``miniwob`` (:mod:`guitest.miniwob.env`) and ``webapp``
(:mod:`.webapp`), both on the browser of :mod:`.browser`, and ``desktop`` (:mod:`.machine`: OSWorld and
Windows Agent Arena machines, or a local desktop). Others come from

- :func:`register` (e.g. in a ``conftest.py``): ``guitest.envs.register("mydesk", make)``, or
- the entry-point group ``guitest.envs`` (``[project.entry-points."guitest.envs"] mydesk = "mypkg.env:make"``).

The names are :data:`guitest.registry.ENVS`: a registration replaces a built-in of its name, and a
built-in comes before an entry point of its name. Each factory is imported only when its name is first
opened. :func:`shutdown` closes what the built-in backends share per process (the browser, local
servers); the plugin calls it at the end of a session.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .. import backends
from ..errors import GuitestError
from ..live.protocol import EnvFailure, Environment
from ..registry import ENVS
from ..report_parts import LiveSuiteRecord

Factory = Callable[[Mapping[str, Any], str], Environment]
ENTRY_POINT_GROUP = ENVS.group


def register(name: str, factory: Factory) -> None:
    """Make ``factory`` the backend called ``name`` in this process (a later registration replaces an earlier one)."""
    ENVS.register(name, factory)


def names() -> list[str]:
    """Every backend name known now: built-in, registered and from entry points, sorted."""
    return sorted(ENVS.names())


def factory(name: str) -> Factory:
    """The factory of backend ``name``; EnvFailure naming the known ones, or saying why a plug-in cannot load."""
    try:
        return ENVS.get(name)
    except GuitestError as exc:
        raise EnvFailure(str(exc)) from None


def open_env(name: str, options: Mapping[str, Any] | None = None, base_dir: str = ".") -> Environment:
    """A new environment of backend ``name``; EnvFailure when the backend cannot start (the message says what to install)."""
    env = factory(name)(dict(options or {}), base_dir)
    if not isinstance(env, Environment):
        raise EnvFailure(f"environment backend {name!r} returned {type(env).__name__}, which lacks reset/step/evaluate/close")
    return env


def settings(name: str, options: Mapping[str, Any]) -> LiveSuiteRecord:
    """What backend ``name`` does under ``options`` (a suite's ``env_options``, with what the live flow adds) that a
    report records beside them, as its description says (:meth:`guitest.backends.Backend.settings`): the desktop's
    waits (``{"waits": ...}``, :func:`guitest.desktopenv.machine.waits`); ``{}`` for the web backends (they wait on the
    page, not the clock). EnvFailure naming a bad option."""
    return backends.backend(name).settings(options)


def settings_text(name: str, record: Mapping[str, Any], about: str = "") -> list[str]:
    """:func:`settings`'s record in words, one line per entry (the run header's, naming the suite ``about``, and the
    suite's summary): ``waits (osworld): 60 s after the set-up before the first screenshot (env_options), ...``."""
    return backends.settings_lines(name, record, about)


def shutdown() -> None:
    """Close the browser, the local servers and the local desktops the built-in backends share in this process (safe to call twice)."""
    import sys

    for module in ("guitest.envs.browser", "guitest.envs.servers", "guitest.desktopenv.machine"):
        loaded = sys.modules.get(module)
        if loaded is not None:
            loaded.shutdown()
