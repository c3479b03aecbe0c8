"""The environment backends tell the general modules what they need through their registry entries
(guitest/backends.py, guitest.registry.BACKENDS): a backend of a plug-in is asked as the built-in ones are, and the
built-in ones say what the general modules used to work out by naming them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Iterator, Mapping

import pytest

from guitest import backends
from guitest.errors import SuiteError
from guitest.live.cua.policy import environment_of
from guitest.live.protocol import TaskSpec
from guitest.miniwob import rules
from guitest.registry import BACKENDS


def command_line(**given: Any) -> SimpleNamespace:
    """The run options backends read, as a RunConfig holds them when nothing is given."""
    values: dict[str, Any] = dict(
        env_url=(), env_provider=None, env_provider_option=(), lease_dir=None, browser_endpoint=(), browser_episodes=None, serve_bind=None, serve_host=None, success_rule=None, collect_only=False
    )
    return SimpleNamespace(**{**values, **given})


class Tallied(backends.Backend):
    """A plug-in's backend: a web page, a machine it needs, rules of its own and a field it adds to the run."""

    web = True
    success_rules = ("strict",)
    title = "Tally"
    run_fields = {"tally": backends.RunField("tally", lambda record: f"{record['n']} counted")}

    def missing_machine(self, env_options: Mapping[str, Any], config: Any) -> str | None:
        return None if env_options.get("host") else "give env_options.host"

    def success_rule(self, settings: Mapping[str, Any], option: str | None, suite_path: str) -> backends.Rule | None:
        return backends.Rule("strict", "default", {"name": "strict"})


@pytest.fixture
def tally() -> Iterator[Tallied]:
    backend = Tallied()
    BACKENDS.register("tally", backend)
    yield backend
    with BACKENDS._lock:  # the registry has no unregister: this test's name leaves with it
        BACKENDS._registered.pop("tally", None)
        BACKENDS._found.pop("tally", None)


def test_a_plugin_backend_is_asked_as_the_builtin_ones_are(tally: Tallied) -> None:
    assert backends.backend("tally") is tally and tally in backends.every()
    assert environment_of(TaskSpec(env="tally", name="t")) == "browser"
    assert backends.run_lines("tally", {"tally": {"n": 3}, "success_rule": {"name": "binary"}}) == ["tally: 3 counted"]
    assert backends.run_rows("tally", {"tally": {}}) == []  # an empty field is left out
    assert tally.missing_machine({}, command_line()) == "give env_options.host"
    rule = backends.success_rule("tally", {}, None, "s.yaml")
    assert rule is not None and rule.name == "strict"
    with pytest.raises(SuiteError, match=r"only MiniWoB\+\+ and Tally suites \(env: miniwob, env: tally\) have a success rule"):
        backends.success_rule("webapp", {"success_rule": "binary"}, None, "web/suite.yaml")


def test_a_backend_without_an_entry_takes_the_browser_options_and_nothing_else() -> None:
    plain = backends.backend("mine")
    assert plain is backends.PLAIN and not plain.web and environment_of(TaskSpec(env="mine", name="t")) == "linux"
    config = command_line(env_url=("http://m:5000",), lease_dir="/l", browser_endpoint=("ws://b:1",), serve_host="h", env_provider="docker")
    assert plain.options({"x": 1}, config) == {"x": 1, "urls": ["http://m:5000"], "browser_endpoints": ["ws://b:1"], "serve_host": "h"}
    assert backends.settings_lines("mine", {"waits": {"ready_after": 1}}) == [] and backends.run_record("mine", {}, "binary") == {}


def test_the_builtin_backends_say_what_the_general_modules_worked_out_by_name() -> None:
    from guitest.desktopenv.machine import NO_MACHINE

    assert backends.success_rules() == rules.RULES
    assert [backends.backend(n).web for n in ("miniwob", "webapp", "desktop")] == [True, True, False]
    desktop = backends.backend("desktop")
    config = command_line(env_url=("http://m:5000",), lease_dir="/l", browser_endpoint=("ws://b:1",), env_provider="docker", env_provider_option=("region=x",))
    assert desktop.options({"a11y": True}, config) == {"a11y": True, "provider": {"name": "docker", "region": "x"}, "urls": ["http://m:5000"], "lease_dir": "/l"}
    assert desktop.missing_machine({}, command_line()) == NO_MACHINE and desktop.missing_machine({"local_desktop": True}, command_line()) is None
    assert desktop.missing_machine({}, command_line(env_url=("http://m:5000",))) is None
    assert backends.check_option("--env-provider-option", ("nokey",)) is not None and backends.check_option("--env-provider-option", ("region=x",)) is None
    record = rules.Chosen("binary", "default").to_dict()
    assert backends.run_record("miniwob", {}, None) == {"success_rule": record}
    assert backends.run_lines("miniwob", {"success_rule": record}) == [rules.summary_line(record)]
    assert backends.option_lines(command_line(success_rule="browsergym"), backends.every()) == [rules.header_line("browsergym")]
    assert backends.option_lines(command_line(), backends.every()) == [] and backends.machines_lines(command_line(env_url=("http://m:5000",), collect_only=True), backends.every()) == []
    with pytest.raises(SuiteError, match=r"only MiniWoB\+\+ suites \(env: miniwob\) have a success rule"):
        backends.success_rule("desktop", {"success_rule": "binary"}, None, "s.yaml")
