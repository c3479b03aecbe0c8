"""The report's shape is declared twice, as types (guitest/reporting/document.py, guitest/verdict.py's CaseResult) and as
JSON schema (guitest/schemas/report.schema.json): this test walks both side by side and fails naming the field where
they differ.

What is compared is what both can say: each field's name, whether it is required, its JSON type (null included),
and, inside it, an object's fields (a TypedDict), a mapping's values (``dict[str, X]`` against
``additionalProperties``), an array's items and a Literal's values (against ``enum``). What only the schema can say
(minimum, maximum, pattern, minItems, descriptions, ``additionalProperties: false``) is not compared. A field typed
``Any`` or ``dict[str, Any]`` is an open value: the schema must leave it open too, unless it is listed in
:data:`OPEN` with why it stays untyped.
"""

from __future__ import annotations

import copy
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, NotRequired, Required, TypedDict

import pytest

import guitest
from guitest.reporting import document
from guitest.miniwob import rules
from guitest.verdict import CASE_VERDICTS, TRANSIENT, CaseResult

SCHEMA_PATH = Path(guitest.__file__).parent / "schemas" / "report.schema.json"

#: open values (``Any``/``dict[str, Any]``) whose schema says more than the type: field path -> why they stay open
OPEN: dict[str, str] = {
    "model": "each adapter adds its own fields to the four every model has (guitest.models.base.Model.describe)",
    "run.price": "which fields beside source depends on where the price came from (guitest.cost.pricing)",
}

#: schema enums of fields the types keep as ``str``, with the constants that hold their values
ENUM_CONSTANTS: dict[str, tuple[str, ...]] = {
    "cases[].verdict": CASE_VERDICTS,
    "cases[].attempts[].verdict": CASE_VERDICTS,
    "run.success_rule.name": rules.RULES,
    "run.success_rule.source": rules.SOURCES,
}

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The schema with its ``$ref`` (a ``#/$defs/...`` pointer) followed, its own keys kept beside the target's."""
    while "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _schema_types(schema: dict[str, Any]) -> set[str] | None:
    """The JSON types a schema allows (from ``type``, else from its ``enum``'s values); None: any."""
    if "type" in schema:
        kind = schema["type"]
        return {kind} if isinstance(kind, str) else set(kind)
    if "enum" in schema:
        return {_JSON_TYPES[type(v)] for v in schema["enum"]}
    return None


def _unwrap(hint: Any) -> tuple[Any, bool | None]:
    """A TypedDict field's type without Required/NotRequired, and which of them it said (None: neither)."""
    origin = typing.get_origin(hint)
    if origin is Required:
        return typing.get_args(hint)[0], True
    if origin is NotRequired:
        return typing.get_args(hint)[0], False
    return hint, None


def _is_open(hint: Any) -> bool:
    return hint is Any or (typing.get_origin(hint) is dict and typing.get_args(hint)[1] is Any)


@dataclass(frozen=True)
class Comparison:
    """The JSON schema ``root`` (its ``$defs`` are followed) compared with the types, knowing the ``open`` fields that
    stay untyped and the ``enums`` held as constants (:data:`OPEN`, :data:`ENUM_CONSTANTS` unless given)."""

    root: dict[str, Any]
    open: Mapping[str, str] = field(default_factory=lambda: OPEN)
    enums: Mapping[str, tuple[Any, ...]] = field(default_factory=lambda: ENUM_CONSTANTS)

    def differences(self, hint: Any, schema: dict[str, Any] | None = None, path: str = "report") -> list[str]:
        """Where the type ``hint`` and the JSON ``schema`` (the root's, by default) disagree, one line per field, each
        naming the field's path in the report (``report.run.cache.mode``, ``report.cases[].usage.calls``)."""
        schema = _resolve(self.root if schema is None else schema, self.root)
        key = path.partition(".")[2]
        if _is_open(hint):
            said = sorted(k for k in ("properties", "required", "additionalProperties", "items", "enum") if k in schema)
            if said and key not in self.open:
                return [f"{path}: the type leaves it open ({_show(hint)}) but the schema says its {', '.join(said)}: type it, or list it in OPEN"]
            if hint is Any:  # the schema may say anything of it, or nothing
                return []
            if said:  # listed in OPEN: the schema says more than the type, but it must be an object
                allowed = _schema_types(schema)
                return [] if allowed is None or "object" in allowed else [f"{path}: an object in the type, {sorted(allowed)} in the schema"]
        options = list(typing.get_args(hint)) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union else [hint]
        kinds: set[str] = set()
        literals: list[Any] = []
        compound: list[Any] = []
        for option in options:
            if option in _JSON_TYPES:
                kinds.add(_JSON_TYPES[option])
            elif typing.get_origin(option) is Literal:
                literals += typing.get_args(option)
                kinds |= {_JSON_TYPES[type(v)] for v in typing.get_args(option)}
            elif typing.is_typeddict(option) or typing.get_origin(option) is dict:
                kinds.add("object")
                compound.append(option)
            elif typing.get_origin(option) is list:
                kinds.add("array")
                compound.append(option)
            else:
                return [f"{path}: a type the comparison does not know: {_show(option)}"]
        allowed = _schema_types(schema)
        if allowed is None:
            return [f"{path}: the type says {_show(hint)} but the schema gives no JSON type"]
        if kinds != allowed:
            return [f"{path}: JSON type {sorted(kinds)} in the type ({_show(hint)}), {sorted(allowed)} in the schema"]
        out = []
        if literals or "enum" in schema or key in self.enums:
            values = set(literals) if literals else set(self.enums.get(key, ()))
            if "enum" not in schema or values != set(schema["enum"]):
                out.append(f"{path}: values {_values(values)} in the type, {_values(schema.get('enum', []))} in the schema")
        for option in compound:
            if typing.is_typeddict(option):
                out += self._object_differences(option, schema, path)
            elif typing.get_origin(option) is dict:
                value = typing.get_args(option)[1]
                extra = schema.get("additionalProperties")
                if "properties" in schema or "required" in schema:
                    out.append(f"{path}: a mapping ({_show(option)}) in the type, an object with fields in the schema")
                elif not isinstance(extra, dict):
                    if value is not Any:
                        out.append(f"{path}: the type says each value is {_show(value)}, the schema leaves them open")
                else:
                    out += self.differences(value, extra, f"{path}.*")
            else:
                item = typing.get_args(option)[0]
                items = schema.get("items")
                if not isinstance(items, dict):
                    if not _is_open(item):
                        out.append(f"{path}: the type says each item is {_show(item)}, the schema leaves them open")
                else:
                    out += self.differences(item, items, f"{path}[]")
        return out

    def _object_differences(self, td: Any, schema: dict[str, Any], path: str) -> list[str]:
        """The fields of TypedDict ``td`` against the schema object's properties and required list."""
        hints = typing.get_type_hints(td, include_extras=True)
        if td is CaseResult:  # the fields that travel between processes, never into the report
            hints = {k: v for k, v in hints.items() if k not in TRANSIENT}
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out = []
        for name, hint in hints.items():
            field_type, said = _unwrap(hint)
            is_required = td.__total__ if said is None else said  # __required_keys__ misses Required[...] in quotes
            where = f"{path}.{name}"
            if name not in properties:
                out.append(f"{where}: in {td.__name__} ({_show(field_type)}) but not in the schema's properties")
                continue
            if is_required != (name in required):
                out.append(f"{where}: {_required(is_required)} in {td.__name__}, {_required(name in required)} in the schema")
            out += self.differences(field_type, properties[name], where)
        out += [f"{path}.{name}: in the schema but not in {td.__name__}" for name in properties if name not in hints]
        out += [f"{path}.{name}: required by the schema but not a field of {td.__name__}" for name in sorted(required - hints.keys() - properties.keys())]
        return out


def _required(flag: bool) -> str:
    return "required" if flag else "optional"


def _values(values: Any) -> list[Any]:
    return sorted(values, key=str)


def _show(hint: Any) -> str:
    return str(hint.__name__) if typing.is_typeddict(hint) or isinstance(hint, type) else str(hint).replace("typing.", "")


def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _differences(schema: dict[str, Any], hint: Any = document.Report, **known: Any) -> list[str]:
    return Comparison(schema, **known).differences(hint)


def test_the_report_types_and_the_schema_agree_field_by_field():
    assert _differences(_schema()) == []


def _drop(path: list[str]) -> Any:
    def change(schema: dict[str, Any]) -> None:
        target = schema
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]

    return change


def _set(path: list[str], value: Any) -> Any:
    def change(schema: dict[str, Any]) -> None:
        target = schema
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return change


def _unrequire(path: list[str], name: str) -> Any:
    def change(schema: dict[str, Any]) -> None:
        target = schema
        for part in path:
            target = target[part]
        target["required"].remove(name)

    return change


RUN = ["properties", "run", "properties"]
CASE = ["properties", "cases", "items", "properties"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_drop([*RUN, "workers"]), "report.run.workers: in RunRecord (int) but not in the schema's properties"),
        (_set(["properties", "suite", "properties", "colour"], {"type": "string"}), "report.suite.colour: in the schema but not in SuiteRecord"),
        (_unrequire([], "n_selected"), "report.n_selected: required in Report, optional in the schema"),
        (_set(["required"], ["baseline"]), "report.baseline: optional in Report, required in the schema"),
        (_set(["$defs", "counts", "properties", "hit"], {"type": "number"}), "report.overall.hit: JSON type ['integer'] in the type (int), ['number'] in the schema"),
        (_set([*RUN, "data"], {"type": "string"}), "report.run.data: JSON type ['null', 'string'] in the type (str | None), ['string'] in the schema"),
        (
            _set(["properties", "headline", "properties", "average", "enum"], ["micro", "macro", "median"]),
            "report.headline.average: values ['macro', 'micro'] in the type, ['macro', 'median', 'micro'] in the schema",
        ),
        (_set(["$defs", "verdict", "enum"], ["hit", "miss"]), "report.cases[].verdict: values ["),
        (
            _set([*RUN, "success_rule", "properties", "source"], {"type": "string"}),
            "report.run.success_rule.source: values ['--success-rule', 'default', 'settings.success_rule'] in the type, [] in the schema",
        ),
        (_set([*RUN, "success_rule", "properties", "meaning"], {}), "report.run.success_rule.meaning: the type says str but the schema gives no JSON type"),
        (_set(["$defs", "tally", "properties", "why", "additionalProperties"], {"type": "string"}), "report.cases[].usage.why.*: JSON type ['integer'] in the type (int), ['string'] in the schema"),
        (_set(["properties", "selection", "properties", "by", "items"], {"type": "integer"}), "report.selection.by[]: JSON type ['string'] in the type (str), ['integer'] in the schema"),
        (_set(["properties", "suite", "properties", "settings", "required"], ["seed"]), "report.suite.settings: the type leaves it open (dict[str, Any]) but the schema says its required"),
        (_drop([*CASE, "attempts", "items", "properties", "steps"]), "report.cases[].attempts[].steps: in AttemptRow (int) but not in the schema's properties"),
        (_drop(["properties", "notes", "additionalProperties"]), "report.notes: the type says each value is int, the schema leaves them open"),
    ],
)
def test_a_changed_schema_is_named_at_the_field_that_differs(change: Any, expected: str):
    schema = copy.deepcopy(_schema())
    change(schema)
    found = _differences(schema)
    assert any(line.startswith(expected) for line in found), found


def test_a_changed_type_is_named_at_the_field_that_differs():
    hints = typing.get_type_hints(document.Report, include_extras=True)
    altered = TypedDict("altered", {**hints, "n_results": Required[str], "complete": NotRequired[bool], "extra": int}, total=False)  # type: ignore[misc]
    assert _differences(_schema(), altered) == [
        "report.n_results: JSON type ['string'] in the type (str), ['integer'] in the schema",
        "report.complete: optional in altered, required in the schema",
        "report.extra: in altered (int) but not in the schema's properties",
    ]


class Inner(TypedDict):
    mode: Literal["a", "b"]
    sizes: list[int]


class Outer(TypedDict, total=False):
    inner: Required[Inner]
    scores: dict[str, float | None]
    note: str | None


def test_every_kind_of_type_is_compared_on_a_small_shape():
    schema = {
        "type": "object",
        "required": ["inner"],
        "properties": {
            "inner": {"type": "object", "required": ["mode", "sizes"], "properties": {"mode": {"enum": ["a", "b"]}, "sizes": {"type": "array", "items": {"type": "integer"}}}},
            "scores": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
            "note": {"type": ["string", "null"]},
        },
    }
    assert _differences(schema, Outer) == []
    schema["properties"]["inner"]["properties"]["mode"]["enum"] = ["a"]
    schema["properties"]["scores"]["additionalProperties"] = {"type": "number"}
    schema["properties"]["inner"]["required"] = ["mode"]
    assert _differences(schema, Outer) == [
        "report.inner.mode: values ['a', 'b'] in the type, ['a'] in the schema",
        "report.inner.sizes: required in Inner, optional in the schema",
        "report.scores.*: JSON type ['null', 'number'] in the type (float | None), ['number'] in the schema",
    ]


@pytest.mark.parametrize("key", sorted(OPEN))
def test_each_open_field_listed_is_still_open_and_still_said_more_of_by_the_schema(key: str):
    schema = _schema()
    without = {k: v for k, v in OPEN.items() if k != key}
    assert any(line.startswith(f"report.{key}: the type leaves it open") for line in _differences(schema, open=without))


@pytest.mark.parametrize("key", sorted(ENUM_CONSTANTS))
def test_each_enum_held_as_constants_is_compared(key: str):
    changed = {**ENUM_CONSTANTS, key: ("not a value",)}
    assert any(line.startswith(f"report.{key}: values ['not a value']") for line in _differences(_schema(), enums=changed))


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        (("run", "workers"), "2", "run.workers: '2' is not of type 'integer'"),
        (("run", "started"), 5, "run.started: 5 is not of type 'string'"),
        (("gate", "thresholds", "accuracy"), 2, "gate.thresholds.accuracy: 2 is greater than the maximum of 1"),
        (("gate", "thresholds", "by"), {"split=mobile": "high"}, "gate.thresholds.by.split=mobile: 'high' is not of type 'number'"),
        (("cases", 0, "notes"), [1], "cases[0].notes[0]: 1 is not of type 'string'"),
        (("manifest",), {"version": 2, "guitest": {}, "python": "3.11", "packages": {}, "digests": {"prompt": 1}, "texts": {}}, "manifest.digests.prompt: 1 is not of type 'string'"),
    ],
)
def test_a_report_is_checked_on_the_fields_the_schema_now_declares(field: tuple[Any, ...], value: Any, named: str):
    """What the schema left open before (merge checked some of it by hand) a report written wrong now fails on, named."""
    from guitest.reporting import report as report_mod
    from test_json_bounds import a_report

    report: Any = a_report()
    target = report
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    assert named in report_mod.validate(report)
