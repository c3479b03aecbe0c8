"""The run's configuration: one table of options drives the parser, the typed configuration and its checks,
and docs/options.md documents every option in it."""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from pathlib import Path

import pytest

from guitest.plan.runconfig import OPTIONS, ConfigError, RunConfig, from_values

OPTIONS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "options.md"


def parse(*argv: str) -> RunConfig:
    """Parse a command line with the options exactly as the plugin declares them to pytest."""
    parser = argparse.ArgumentParser()
    for option in OPTIONS:
        parser.add_argument(option.flag, **option.kwargs)
    return from_values(vars(parser.parse_args(argv)))


def test_every_option_is_in_the_options_table_and_every_row_is_an_option() -> None:
    text = OPTIONS_PAGE.read_text("utf-8")
    assert text.count("\n| option | default | meaning |\n") == 1, "docs/options.md has one options table"
    section = text.split("\n| option | default | meaning |\n", 1)[1].split("\n\n", 1)[0]  # the table: up to its first blank line
    documented = re.findall(r"^\| `(--[a-z0-9-]+)", section, re.M)
    declared = [option.flag for option in OPTIONS]
    assert sorted(set(declared) - set(documented)) == [], "options missing from docs/options.md's table"
    assert sorted(set(documented) - set(declared)) == [], "docs/options.md's table names options guitest does not have"
    assert len(documented) == len(set(documented))


def test_the_parsers_defaults_are_the_configurations() -> None:
    assert parse() == from_values({}) == RunConfig()
    assert {option.name for option in OPTIONS} == {f.name for f in fields(RunConfig) if "option" in f.metadata}
    assert [option.flag for option in OPTIONS][:3] == ["--model", "--base-url", "--api-key-env"]  # pytest --help keeps the order


def test_values_are_typed_by_their_field() -> None:
    config = parse(
        "--model=openai:m",
        "--base-url=http://a/v1",
        "--base-url=http://b/v1",
        "--timeout=2.5",
        "--retries=-1",
        "--concurrency=4",
        "--allow-unknown-state",
        "--env-provider-option",
        "region=eu",
        "--seed=7",
    )
    assert config.base_url == ("http://a/v1", "http://b/v1") and config.env_provider_option == ("region=eu",)
    assert config.timeout == 2.5 and config.seed == 7 and config.allow_unknown_state is True
    assert config.in_flight == 8  # --concurrency per endpoint
    settings = config.model_settings()
    assert settings.base_url == "http://a/v1" and settings.base_urls == ("http://a/v1", "http://b/v1")
    assert settings.retries == 0 and settings.timeout == 2.5 and settings.concurrency == 4
    with pytest.raises(SystemExit):
        parse("--cache=sometimes")  # choices come from the table too


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--concurrency=0"], "--concurrency must be at least 1"),
        (["--repeats=0"], "--repeats must be at least 1"),
        (["--keep-runs=-1"], "--keep-runs must be 0 or more"),
        (["--keep-episodes=-2"], "--keep-episodes must be 0 or more"),
        (["--min-accuracy=85"], "--min-accuracy=85.0 is not between 0 and 1 (accuracy is a fraction: 0.85, not 85)"),
        (["--gate-exit-code=3"], "--gate-exit-code=3 collides with pytest's own exit codes 0-5; pick another"),
        (["--baseline=no/such.json"], "--baseline=no/such.json: no such file (give the JSON report of an earlier run)"),
        (["--baseline-min-paired=90"], "--baseline-min-paired=90.0 is not between 0 and 1"),
        (["--baseline-min-drop=-0.1"], "--baseline-min-drop=-0.1 is not between 0 and 1"),  # before: a traceback at the end of the run
        (["--env-provider-option=region"], "--env-provider-option"),
    ],
)
def test_a_bad_value_is_a_config_error_naming_its_option(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(*argv)
    assert str(caught.value).startswith(message)
