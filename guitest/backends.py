"""What each live environment backend tells guitest's general modules, so that none of them imports a backend or
compares a suite's ``env`` with a backend's name (as BrowserGym's core never names its benchmarks).

A backend's :class:`Backend` is its entry in :data:`guitest.registry.BACKENDS`, by the backend's name (a suite's
``env:``): whether its tasks run in a web page, how the command line's options fold into its options, the machine
it needs, its success rules and the run-record fields they add, its settings in force and how the report reads
them, and its lines in the run's header. A backend without an entry (a plug-in that registers only its factory) is
:data:`PLAIN`: the defaults below, which are a web-page backend's options and nothing else. This module imports no
backend: an entry is a ``"module:attribute"`` the registry imports when its name is first asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

from .errors import GuitestError, SuiteError, where
from .registry import BACKENDS
from .report_parts import LiveSuiteRecord


class HeaderOptions(Protocol):
    """The run's options a backend's header lines read (a :class:`guitest.plan.runconfig.RunConfig` is one)."""

    @property
    def env_url(self) -> tuple[str, ...]: ...
    @property
    def env_provider(self) -> str | None: ...
    @property
    def collect_only(self) -> bool: ...
    @property
    def success_rule(self) -> str | None: ...


class CommandLine(HeaderOptions, Protocol):
    """The run's options that fold into a backend's options (a :class:`guitest.plan.runconfig.RunConfig` is one)."""

    @property
    def env_provider_option(self) -> tuple[str, ...]: ...
    @property
    def lease_dir(self) -> str | None: ...
    @property
    def browser_endpoint(self) -> tuple[str, ...]: ...
    @property
    def browser_episodes(self) -> int | None: ...
    @property
    def serve_bind(self) -> str | None: ...
    @property
    def serve_host(self) -> str | None: ...


@dataclass(frozen=True)
class Rule:
    """The success rule a suite runs by: ``name``, where it came from (``source``), and the report's record of it."""

    name: str
    source: str
    record: Mapping[str, Any]


@dataclass(frozen=True)
class RunField:
    """A field a backend adds to a report's run record, as the report reads it: ``label`` and ``text(value)``
    (the Markdown and the terminal say ``label: text``, the HTML page a row ``label`` | ``text``)."""

    label: str
    text: Callable[[Mapping[str, Any]], str]


class Backend:
    """What an environment backend tells the general modules; a backend overrides what applies to it (the module
    docstring). The defaults are those of a backend that runs its tasks on guitest's browser and page servers, has
    pass-or-fail checks, and no settings a report records."""

    #: its tasks run in a web page (a computer-use model is told so: OpenAI's ``environment: browser``)
    web: bool = False
    #: the names of the success rules ``--success-rule`` picks among for its suites; empty for pass-or-fail checks
    success_rules: tuple[str, ...] = ()
    #: its suites as a message names them (``MiniWoB++``), for a backend with success rules
    title: str = ""
    #: the fields :meth:`run_record` adds to a report's run record, by name
    run_fields: Mapping[str, RunField] = {}

    def options(self, env_options: Mapping[str, Any], config: CommandLine) -> dict[str, Any]:
        """A suite's ``env_options`` with the command line's added: ``--env-url``'s machines (``urls``) and the
        browser's and page servers' options (``--browser-endpoint``, ``--browser-episodes``, ``--serve-bind``,
        ``--serve-host``; docs/live_envs.md, Remote browsers)."""
        options = dict(env_options)
        if config.env_url:
            options["urls"] = list(config.env_url)
        browser = {"browser_endpoints": list(config.browser_endpoint), "episodes_per_endpoint": config.browser_episodes, "serve_bind": config.serve_bind, "serve_host": config.serve_host}
        options.update({k: v for k, v in browser.items() if v})
        return options

    def missing_machine(self, env_options: Mapping[str, Any], config: HeaderOptions) -> str | None:
        """Why a run that selects this backend's cases cannot run them as the command line stands (no machine to
        run them on), or None when it can."""
        return None

    def check_option(self, flag: str, value: Any) -> str | None:
        """What is wrong with command-line option ``flag``'s ``value`` when this backend reads that option, else None."""
        return None

    def success_rule(self, settings: Mapping[str, Any], option: str | None, suite_path: str) -> Rule | None:
        """The rule a suite of this backend runs by (``option``: ``--success-rule``; ``settings``: the suite's task
        settings); only asked of a backend with :attr:`success_rules`. SuiteError for a bad rule."""
        return None

    def run_record(self, settings: Mapping[str, Any], option: str | None) -> dict[str, Any]:
        """The fields a report's run record holds for a suite of this backend (:attr:`run_fields`); ``{}`` when a
        setting is bad (the suite failed collection for it)."""
        return {}

    def settings(self, options: Mapping[str, Any]) -> LiveSuiteRecord:
        """What it does under ``options`` (with the live flow's additions) that a report records beside them; ``{}``
        when nothing. EnvFailure naming a bad option."""
        return {}

    def settings_lines(self, record: Mapping[str, Any], about: str = "") -> list[str]:
        """:meth:`settings`'s record in words, one line per entry (the run header's, naming the suite ``about``, and
        the suite's summary)."""
        return []

    def machines_line(self, config: HeaderOptions) -> str | None:
        """The run header's line on the machines the command line gives this backend (asked when a model runs)."""
        return None

    def option_lines(self, config: HeaderOptions) -> list[str]:
        """The run header's lines on the command-line options this backend takes."""
        return []


#: the backend of a name without an entry in :data:`guitest.registry.BACKENDS`
PLAIN = Backend()


def backend(env: str | None) -> Backend:
    """What backend ``env`` tells the general modules: its registry entry, or :data:`PLAIN` when it has none (or for
    no backend: a suite that is not live). GuitestError when its entry cannot load."""
    if not env or env not in BACKENDS:
        return PLAIN
    found: Backend = BACKENDS.get(env)
    return found


def every() -> list[Backend]:
    """Every backend with an entry: the built-in ones in their order, then the registered and installed ones."""
    return [backend(name) for name in BACKENDS.names()]


def success_rules() -> tuple[str, ...]:
    """The success rules of the built-in backends (``--success-rule``'s choices, fixed before any conftest runs)."""
    out: list[str] = []
    for name in BACKENDS.builtins:
        out += [rule for rule in backend(name).success_rules if rule not in out]
    return tuple(out)


def success_rule(env: str, settings: Mapping[str, Any], option: str | None, suite_path: str) -> Rule | None:
    """The success rule of a live suite on backend ``env`` (:meth:`Backend.success_rule`); None for a backend whose
    checks are pass or fail: ``--success-rule`` does not apply to it (a run may hold several suites), and a
    ``settings.success_rule`` there is a SuiteError naming the backends that have rules."""
    found = backend(env)
    if found.success_rules:
        return found.success_rule(settings, option, suite_path)
    if settings.get("success_rule") is not None:
        having = [(name, b) for name in BACKENDS.names() if (b := backend(name)).success_rules]
        titles = " and ".join(b.title or name for name, b in having) or "no"
        envs = ", ".join(f"env: {name}" for name, _ in having)
        raise SuiteError(
            f"{where(suite_path, field='settings.success_rule')}: only {titles} suites{f' ({envs})' if envs else ''} have a success rule, "
            f"since only their rewards are partial; env {env!r} decides success by its own check: remove the setting"
        )
    return None


def run_record(env: str | None, settings: Mapping[str, Any], option: str | None) -> dict[str, Any]:
    """The fields a report's run record holds for a live suite on backend ``env`` (:meth:`Backend.run_record`);
    ``{}`` for no backend (a suite that is not live)."""
    return backend(env).run_record(settings, option) if env else {}


def run_rows(env: str | None, run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The fields backend ``env`` added to a report's run record ``run``, each ``(label, text)`` (:class:`RunField`),
    in the order the backend declares them; a field absent or empty is left out."""
    try:
        fields = backend(env).run_fields
    except GuitestError:  # a report of a backend not installed here: its fields are not read, the rest is
        return []
    return [(field.label, field.text(run[name])) for name, field in fields.items() if isinstance(run.get(name), Mapping) and run[name]]


def run_lines(env: str | None, run: Mapping[str, Any]) -> list[str]:
    """:func:`run_rows` as lines, ``label: text``."""
    return [f"{label}: {text}" for label, text in run_rows(env, run)]


def settings_lines(env: str | None, record: Mapping[str, Any], about: str = "") -> list[str]:
    """Backend ``env``'s settings in force (a suite record, or :meth:`Backend.settings`'s record) in words."""
    try:
        found = backend(env)
    except GuitestError:
        return []
    return found.settings_lines(record, about)


def check_option(flag: str, value: Any) -> str | None:
    """What is wrong with command-line option ``flag``'s ``value``, as the built-in backend that reads it says."""
    for name in BACKENDS.builtins:
        problem = backend(name).check_option(flag, value)
        if problem is not None:
            return problem
    return None


def machines_lines(config: HeaderOptions, found: Sequence[Backend]) -> list[str]:
    """The run header's lines on the machines the command line gives the backends ``found`` (:func:`every`)."""
    return [line for b in found if (line := b.machines_line(config)) is not None]


def option_lines(config: HeaderOptions, found: Sequence[Backend]) -> list[str]:
    """The run header's lines on the command-line options the backends ``found`` (:func:`every`) take."""
    return [line for b in found for line in b.option_lines(config)]


class WebPage(Backend):
    """A backend whose tasks run in a web page on guitest's browser, with pass-or-fail checks."""

    web = True


#: the description of a web-page backend (:class:`WebPage`), for a backend that needs no more
WEB = WebPage()
