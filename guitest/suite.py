"""Suite files (``suite.yaml``): read safely, validated against ``schemas/suite.schema.json``."""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import schema, yamlfile
from .bundled import SUITE_FILENAMES  # noqa: F401 - the suite file names are the bundled module's (stdlib only, for the build); named here too
from .errors import SuiteError, where
from .registry import GENERATORS, READERS, TASKS, Registry
from .tasks import load_task


@dataclass(frozen=True)
class Suite:
    """A validated suite file."""

    path: Path
    name: str
    format: str
    data: dict[str, Any]
    task: str
    prompt: str
    id_template: str | None
    tags: tuple[str, ...]
    cross: tuple[tuple[str, ...], ...]
    average: str
    macro_over: str | None = None
    gate: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    env: str | None = None  # task: live: the environment backend, its options, the step budget
    env_options: dict[str, Any] = field(default_factory=dict)
    max_steps: int | None = None
    breakdown: tuple[str, ...] | None = None  # the tags that get a table in the report (None: every tag)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def tables(self) -> tuple[str, ...]:
        """The tags the report breaks results down by: ``breakdown:`` when given, else every tag."""
        return self.tags if self.breakdown is None else self.breakdown


def load_suite(path: Path) -> Suite:
    """Read and validate a suite file; raise :class:`SuiteError` naming the file and field."""
    try:
        raw = yamlfile.load(path.read_text("utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise SuiteError(f"{path}{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read suite file: {exc.strerror}") from None
    if not isinstance(raw, dict):
        raise SuiteError(f"{path}: a suite file must be a mapping of settings, got {type(raw).__name__}")
    found = list(schema.iter_problems("suite", raw))
    problems = [f"{where(str(path), field=f or '(top level)')}: {m}" for f, m in found]
    problems += _unknown_names(raw, {f for f, _ in found}, str(path))
    if problems:
        raise SuiteError("invalid suite file:\n  " + "\n  ".join(problems))
    suite = Suite(
        path=path,
        name=raw["name"],
        format=raw["format"],
        data={"base": "data_root", "images": ".", **raw["data"]},
        task=raw["task"],
        prompt=raw.get("prompt", "default"),
        id_template=raw.get("id"),
        tags=tuple(raw.get("tags", ())),
        cross=tuple(tuple(c) for c in raw.get("cross", ())),
        average=raw.get("average", "micro"),
        macro_over=raw.get("macro_over"),
        gate=raw.get("gate", {}),
        description=raw.get("description", ""),
        settings=raw.get("settings", {}),
        env=raw.get("env"),
        env_options=raw.get("env_options", {}),
        max_steps=raw.get("max_steps"),
        breakdown=tuple(raw["breakdown"]) if "breakdown" in raw else None,
    )
    _check_references(suite)
    load_task(suite.task, suite.settings, str(path))  # unknown settings fail here, naming the field
    return suite


#: the suite file's fields that name a registered thing: field -> (where its value is, its registry)
NAMED: dict[str, tuple[tuple[str, ...], Registry[object]]] = {
    "format": (("format",), READERS),
    "task": (("task",), TASKS),
    "data.generator": (("data", "generator"), GENERATORS),
}


def _unknown_names(raw: dict[str, Any], bad_fields: set[str], path: str) -> list[str]:
    """A problem for each field naming a format, task or generator that no registry knows (fields the schema
    already found wrong are left to its message)."""
    problems = []
    for field_name, (keys, registry) in NAMED.items():
        value: Any = raw
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and field_name not in bad_fields and value not in registry:
            problems.append(f"{where(path, field=field_name)}: {registry.unknown(value)}")
    return problems


def _check_references(suite: Suite) -> None:
    """Checks the schema cannot express: cross tags are declared tags, the prompt file exists, a live suite names its backend."""
    if (suite.task == "live") != (suite.env is not None):
        what = "a live suite (task: live) needs env: naming its environment backend" if suite.task == "live" else f"env: is for live suites (task: live), not task {suite.task}"
        raise SuiteError(f"{where(str(suite.path), field='env')}: {what}")
    for combo in suite.cross:
        for tag in combo:
            if tag not in suite.tags:
                raise SuiteError(f"{where(str(suite.path), field='cross')}: '{tag}' is not one of the suite's tags {list(suite.tags)}")
    for tag in suite.breakdown or ():
        if tag not in suite.tags:
            raise SuiteError(f"{where(str(suite.path), field='breakdown')}: '{tag}' is not one of the suite's tags {list(suite.tags)}")
    for key in suite.gate.get("by", {}):
        tag = key.split("=", 1)[0]
        combo = tuple(tag.split("/"))
        if len(combo) == 1 and tag not in suite.tables:
            raise SuiteError(f"{where(str(suite.path), field='gate.by')}: '{key}' names tag '{tag}', which is not one of the report's breakdowns {list(suite.tables)}")
        if len(combo) > 1 and combo not in suite.cross:
            declared = ["/".join(c) for c in suite.cross]
            raise SuiteError(
                f"{where(str(suite.path), field='gate.by')}: '{key}' names the combination '{tag}', which is not one of the suite's cross breakdowns {declared}; declare it under 'cross:'"
            )
    breakdowns = list(suite.tables) + ["/".join(c) for c in suite.cross]
    if suite.average == "macro" and suite.macro_over not in breakdowns:
        raise SuiteError(
            f"{where(str(suite.path), field='macro_over')}: average: macro needs macro_over naming one of the breakdowns {breakdowns}" + (f", not '{suite.macro_over}'" if suite.macro_over else "")
        )
    for key, limit in [("gate.accuracy", suite.gate.get("accuracy")), *((f"gate.by.{k}", v) for k, v in suite.gate.get("by", {}).items())]:
        if limit is not None and not math.isfinite(limit):  # the schema's 0..1 bounds let nan through: it would pass at 0%
            raise SuiteError(f"{where(str(suite.path), field=key)}: {limit} is not a threshold; give a number between 0 and 1")
    if suite.prompt != "default":
        prompt_path = suite.folder / suite.prompt
        folder = suite.folder.resolve()
        if not prompt_path.resolve().is_relative_to(folder):
            raise SuiteError(f"{where(str(suite.path), field='prompt')}: prompt file {suite.prompt!r} is outside the suite folder {folder}; put the prompt beside suite.yaml")
        if not prompt_path.is_file():
            raise SuiteError(f"{where(str(suite.path), field='prompt')}: prompt file {prompt_path} does not exist")
        try:
            text = prompt_path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SuiteError(f"{where(str(suite.path), field='prompt')}: cannot read prompt file {prompt_path}: {exc}") from None
        if "{instruction}" not in text:
            raise SuiteError(
                f"{where(str(suite.path), field='prompt')}: prompt file {prompt_path} has no {{instruction}}, so no case's instruction would reach the model; add it where the instruction goes"
            )
    if suite.id_template:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(suite.id_template) if f]
        except ValueError as exc:
            raise SuiteError(f"{where(str(suite.path), field='id')}: bad template: {exc}") from None
        if not fields:
            raise SuiteError(f"{where(str(suite.path), field='id')}: the template names no field, so ids would not be unique")


def prompt_text(suite: Suite) -> str | None:
    """The suite's own prompt template, or None for the model's default prompt."""
    if suite.prompt == "default":
        return None
    return (suite.folder / suite.prompt).read_text("utf-8")
