"""Everything guitest picks by name, in one registry type: tasks, annotation formats, answer styles,
environment backends, models, live-task runners and data generators.

A :class:`Registry` maps the names of one kind to objects, from three sources, asked in this order:

1. registered in this process with :meth:`Registry.register` (in a ``conftest.py``, say), which
   replaces anything of that name, a built-in included;
2. built in: ``"module:attribute"`` (entry-point syntax, ``"module:attribute [extra]"`` naming the pip
   extra it needs), imported only when the name is first asked for;
3. installed packages, through the kind's entry-point group
   (``[project.entry-points."guitest.tasks"] mytask = "mypkg.tasks:MyTask"``), loaded when first asked for.

So a built-in name means the same wherever guitest is installed unless the project itself says
otherwise, and looking one up never scans the installed packages. A name once found is remembered:
a lookup on a hot path (an answer style, per reply) is one dict read. A miss raises the kind's error
with one message: ``unknown <kind> 'x'; known: a, b, c. Add one with ...``.

The registries below list the built-ins, one line each. The kinds' packages offer theirs where a user
looks (``guitest.tasks.register``, ``guitest.formats.register``, ``guitest.models.register``,
``guitest.answers.register``, ``guitest.envs.register``, ``guitest.live.runners.register``). The entry-point
groups: ``guitest.tasks``, ``guitest.formats``, ``guitest.answers``, ``guitest.envs``, ``guitest.models``,
``guitest.runners``, ``guitest.generators``, ``guitest.oracles``, ``guitest.backends``. This module imports none of them, so any
module (suite.py checking a suite file's names, say) may name a kind without importing its
implementations, and the import graph stays free of circles (tests/test_import_graph.py).
"""

from __future__ import annotations

import importlib
import re
import threading
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Generic, Mapping, TypeVar, overload

from .errors import GuitestError, ModelError, SuiteError

T = TypeVar("T")

#: what a name may be: it is written in suite files, on the command line and in report keys
NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: a built-in: ``module:attribute``, optionally `` [extra]`` (the syntax of an entry point's object reference)
TARGET = re.compile(r"(?P<module>[\w.]+):(?P<attr>[\w.]+)(?:\s*\[(?P<extra>[\w-]+)\])?")


class Registry(Generic[T]):
    """The names of one ``kind`` of thing (see the module docstring for where they come from).

    ``builtins``: one line each, in the order they are listed to a user: the name as a user writes it
    (``"ocr"``, or ``"openai:NAME"`` for a name that takes an argument: the name is what precedes the
    colon) -> ``"module:attribute"``, or ``"module:attribute [extra]"`` when it needs a pip extra
    (``guitest[extra]``, named when its import fails). ``group``: the entry-point group. ``error``: the
    exception a miss raises. ``how``: how a user adds one in Python (shown in the miss message beside
    the entry-point group).
    """

    def __init__(self, kind: str, group: str, builtins: Mapping[str, str], *, error: type[Exception] = LookupError, how: str = "") -> None:
        self.kind = kind
        self.group = group
        self.error = error
        self.how = how
        self.builtins: dict[str, str] = {}  # name -> "module:attribute"
        self.forms: dict[str, str] = {}  # name -> as a user writes it, when that differs
        self.extras: dict[str, str] = {}  # name -> the pip extra it needs
        for written, target in builtins.items():
            name = written.partition(":")[0]
            parsed = TARGET.fullmatch(target)
            if not NAME.fullmatch(name) or parsed is None:
                raise ValueError(f"built-in {kind} {written!r} -> {target!r}: expected a plain name and 'module:attribute' (optionally ' [extra]')")
            self.builtins[name] = f"{parsed['module']}:{parsed['attr']}"
            if written != name:
                self.forms[name] = written
            if parsed["extra"]:
                self.extras[name] = parsed["extra"]
        self._registered: dict[str, T] = {}
        self._found: dict[str, T] = {}  # every name resolved so far, whatever its source
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Registry of {self.kind}s: {', '.join(self.names())}>"

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, obj: T) -> T: ...

    def register(self, name: str, obj: Any = None) -> Any:
        """Make ``obj`` the thing called ``name`` in this process, replacing any other of that name; returns ``obj``.

        Without ``obj`` it is a decorator: ``@TASKS.register("mytask")`` above a class or function.
        A ValueError for a name that is not letters, digits, ``_``, ``.`` and ``-``.
        """
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ValueError(f"a {self.kind} name is letters, digits, '_', '.' and '-', got {name!r}")
        if obj is None:
            return lambda target: self.register(name, target)
        with self._lock:
            self._registered[name] = obj
            self._found[name] = obj
        return obj

    def get(self, name: str) -> T:
        """The thing called ``name``; ``error`` naming the known ones when there is none, or saying why it cannot load."""
        found = self._found.get(name)
        if found is not None:
            return found
        if name in self.builtins:
            obj = self._import(name)
        else:
            ep = self._entry_point(name)
            if ep is None:
                raise self.error(self.unknown(name))
            try:
                obj = ep.load()
            except Exception as exc:  # a broken plug-in is a message naming it, not a traceback
                raise self.error(f"{self.kind} {name!r}: cannot load entry point {ep.value!r} of the group {self.group!r}: {type(exc).__name__}: {exc}") from None
        with self._lock:
            return self._found.setdefault(name, obj)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is known (nothing is imported to tell)."""
        if not isinstance(name, str):
            return False
        return name in self._found or name in self.builtins or self._entry_point(name) is not None

    def names(self) -> list[str]:
        """Every known name: the built-ins in their order, then the registered and installed ones, sorted."""
        others = set(self._registered) | {ep.name for ep in entry_points(group=self.group)}
        return list(self.builtins) + sorted(others - set(self.builtins))

    def known(self) -> str:
        """The known names as a user writes them (``openai:NAME``), comma-separated."""
        return ", ".join(self.forms.get(name, name) for name in self.names())

    def unknown(self, name: str) -> str:
        """The message for a name that is not known: the known ones, and how to add one."""
        how = f"{self.how} or an entry point in the group {self.group!r}" if self.how else f"an entry point in the group {self.group!r}"
        return f"unknown {self.kind} {name!r}; known: {self.known()}. Add one with {how}"

    def _import(self, name: str) -> T:
        module, _, attr = self.builtins[name].partition(":")
        try:
            loaded = importlib.import_module(module)
        except ImportError as exc:
            extra = self.extras.get(name)
            if extra is None:
                raise
            raise self.error(f"{self.kind} {name!r} needs packages that are not installed: pip install 'guitest[{extra}]' ({exc})") from None
        return getattr(loaded, attr)

    def _entry_point(self, name: str) -> EntryPoint | None:
        for ep in entry_points(group=self.group):
            if ep.name == name:
                return ep
        return None


# -- guitest's registries --------------------------------------------------------------------------------

#: what a case asks and how its reply is scored: a :class:`guitest.tasks.Task` subclass (or a factory
#: ``settings -> Task``)
TASKS: Registry[Any] = Registry(
    "task",
    "guitest.tasks",
    {
        "grounding": "guitest.tasks.grounding:TASK",
        "choice": "guitest.tasks.choice:TASK",
        "parsing": "guitest.tasks.parsing:TASK",
        "hallucination": "guitest.tasks.hallucination:TASK",
        "judge": "guitest.tasks.judge:TASK",
        "live": "guitest.tasks.live:TASK",
    },
    error=SuiteError,
    how="guitest.tasks.register(name, TaskClass) in a conftest.py",
)

#: annotation readers, ``read(suite, data_dir) -> list[Sample]`` (suite.yaml ``format:``)
READERS: Registry[Any] = Registry(
    "annotation format",
    "guitest.formats",
    {
        "screenspot": "guitest.formats.screenspot:read",
        "screenspot_v2": "guitest.formats.screenspot:read",
        "screenspot_pro": "guitest.formats.screenspot_pro:read",
        "mmbench_gui_l1": "guitest.formats.mmbench_gui:read",
        "mmbench_gui_l2": "guitest.formats.mmbench_gui:read",
        "gui_hallubench": "guitest.formats.gui_hallubench:read",
        "gui_hallubench_hallucination": "guitest.formats.gui_hallubench:read",
        "screen_annotation": "guitest.formats.screen_annotation:read",
        "trajectory": "guitest.formats.trajectory_logs:read",
        "ufo_log": "guitest.formats.trajectory_logs:read",
        "waa_result": "guitest.formats.trajectory_logs:read",
        "miniwob": "guitest.miniwob.reader:read",
        "webtask": "guitest.formats.webtask:read",
        "osworld": "guitest.desktopenv.reader:read",
    },
    error=SuiteError,
    how="guitest.formats.register(name, read) in a conftest.py",
)

#: the ways models write a point, ``find(region) -> list[Found]``, composed by profiles
STYLES: Registry[Any] = Registry(
    "answer style",
    "guitest.answers",
    {
        "pair": "guitest.answers.pair:find",
        "toolcall": "guitest.answers.toolcall:find",
        "qwen_box": "guitest.answers.qwen_box:find",
        "uitars": "guitest.answers.uitars:find",
        "pyautogui": "guitest.answers.pyautogui:find",
        "tags": "guitest.answers.tags:find",
    },
    error=ModelError,
    how="guitest.answers.register(name, find)",
)

#: live-task environment backends, ``factory(options, base_dir) -> Environment`` (suite.yaml ``env:``);
#: :func:`guitest.envs.factory` turns a miss into an ``EnvFailure``
ENVS: Registry[Any] = Registry(
    "environment backend",
    "guitest.envs",
    {
        "miniwob": "guitest.miniwob.env:make",
        "webapp": "guitest.envs.webapp:make",
        "desktop": "guitest.desktopenv.machine:make",
    },
    error=GuitestError,
    how="guitest.envs.register(name, factory)",
)

#: the oracle baseline's scripted solutions each environment backend brings, by the backend's name
#: (:mod:`guitest.live.oracles`: ``reason``, ``next_action``, ``spoken``)
ORACLES: Registry[Any] = Registry(
    "environment oracle",
    "guitest.oracles",
    {
        "miniwob": "guitest.miniwob.oracle:ORACLE",
        "webapp": "guitest.envs.web_solution:ORACLE",
        "desktop": "guitest.desktopenv.task:ORACLE",
    },
    error=GuitestError,
    how="guitest.live.oracles.register(env, oracle)",
)

#: what each environment backend tells guitest's general modules, a :class:`guitest.backends.Backend` by the backend's
#: name (its options, success rules, report fields, header lines): a name without one is ``guitest.backends.PLAIN``
BACKENDS: Registry[Any] = Registry(
    "environment backend description",
    "guitest.backends",
    {
        "miniwob": "guitest.miniwob.backend:BACKEND",
        "webapp": "guitest.backends:WEB",
        "desktop": "guitest.desktopenv.backend:BACKEND",
    },
    error=GuitestError,
    how="guitest.registry.BACKENDS.register(env, backend)",
)

#: model adapters, ``factory(spec, arg, settings, profile, profile_reason) -> Model`` (``--model=NAME:ARG``)
MODELS: Registry[Any] = Registry(
    "model",
    "guitest.models",
    {
        "openai:NAME": "guitest.models.openai_api:make",
        "anthropic:MODEL": "guitest.live.cua.anthropic:make [anthropic]",
        "openai-cua:MODEL": "guitest.live.cua.openai_responses:make",
        "hf:PATH": "guitest.models.hf:make [hf]",
        "replay:PATH": "guitest.models.replay:make",
        "ocr": "guitest.models.ocr:make",
        "oracle": "guitest.models.baselines:make",
        "center": "guitest.models.baselines:make",
        "random": "guitest.models.baselines:make",
        "py:MODULE:FACTORY": "guitest.models:from_python",
    },
    error=ModelError,
    how="guitest.models.register(name, factory), the conftest hook pytest_guitest_make_model",
)

#: live-task runners, a :class:`guitest.live.runners.runner.Runner` each: how a model family is driven step by step
#: (``--runner=NAME``; a model profile's runner, :data:`guitest.live.runners.PROFILE_RUNNERS`)
RUNNERS: Registry[Any] = Registry(
    "runner",
    "guitest.runners",
    {
        "guitest": "guitest.live.runners.guitest:RUNNER",
        "uitars15": "guitest.live.runners.uitars15:UITARS15",
        "uitars15-qwen2vl": "guitest.live.runners.uitars15:UITARS_V1",
        "qwen25vl": "guitest.live.runners.qwen:QWEN25VL",
        "qwen3vl": "guitest.live.runners.qwen:QWEN3VL",
        "prompt-agent": "guitest.live.runners.prompt_agent:PROMPT_AGENT",
        "aguvis": "guitest.live.runners.prompt_agent:AGUVIS",
    },
    error=ModelError,
    how="guitest.live.runners.register(name, runner) in a conftest.py",
)

#: data generators, ``ensure(folder)``: write a suite's data when it is missing or stale (suite.yaml ``data.generator``)
GENERATORS: Registry[Any] = Registry(
    "data generator",
    "guitest.generators",
    {"demo": "guitest.data.demo:ensure"},
    error=SuiteError,
    how="guitest.registry.GENERATORS.register(name, ensure)",
)
