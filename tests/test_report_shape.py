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
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, TypedDict

import pytest

import guitest
from guitest.reporting import document
from guitest.verdict import CASE_VERDICTS, TRANSIENT

SCHEMA_PATH = Path(guitest.__file__).parent / "schemas" / "report.schema.json"

#: open values (``Any``/``dict[str, Any]``) whose schema says more than the type: field path -> why they stay open
OPEN: dict[str, str] = {}

#: schema enums of fields the types keep as ``str``, with the constants that hold their values
ENUM_CONSTANTS: dict[str, tuple[str, ...]] = {
    "cases[].verdict": CASE_VERDICTS,
    "cases[].attempts[].verdict": CASE_VERDICTS,
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


def differences(hint: Any, schema: dict[str, Any], root: dict[str, Any], path: str = "report") -> list[str]:
    """Where the type ``hint`` and the JSON ``schema`` disagree, one line per field, each naming the field's path in
    the report (``report.run.cache.mode``, ``report.cases[].usage.calls``)."""
    schema = _resolve(schema, root)
    if _is_open(hint):
        said = sorted(k for k in ("properties", "required", "additionalProperties", "items", "enum") if k in schema)
        if said and path.removeprefix("report.") not in OPEN:
            return [f"{path}: the type leaves it open ({_show(hint)}) but the schema says its {', '.join(said)}: type it, or list it in OPEN"]
        if hint is Any:
            return []
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
    if kinds != allowed and not (kinds == {"integer"} and allowed == {"number"}):
        return [f"{path}: JSON type {sorted(kinds)} in the type ({_show(hint)}), {sorted(allowed)} in the schema"]
    out = []
    key = path.removeprefix("report.")
    if literals or "enum" in schema:
        values = set(literals) if literals else set(ENUM_CONSTANTS.get(key, ()))
        if values != set(schema.get("enum", values)) or (literals and "enum" not in schema):
            out.append(f"{path}: values {sorted(values, key=str)} in the type, {sorted(schema.get('enum', []), key=str)} in the schema")
    for option in compound:
        if typing.is_typeddict(option):
            out += _object_differences(option, schema, root, path)
        elif typing.get_origin(option) is dict:
            value = typing.get_args(option)[1]
            if "properties" in schema or "required" in schema:
                out.append(f"{path}: a mapping ({_show(option)}) in the type, an object with fields in the schema")
            elif value is not Any:
                extra = schema.get("additionalProperties")
                if not isinstance(extra, dict):
                    out.append(f"{path}: the type says each value is {_show(value)}, the schema leaves them open")
                else:
                    out += differences(value, extra, root, f"{path}.*")
        else:
            items = schema.get("items")
            item = typing.get_args(option)[0]
            if not isinstance(items, dict):
                if not _is_open(item):
                    out.append(f"{path}: the type says each item is {_show(item)}, the schema leaves them open")
            else:
                out += differences(item, items, root, f"{path}[]")
    return out


def _object_differences(td: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> list[str]:
    """The fields of TypedDict ``td`` against the schema object's properties and required list."""
    hints = typing.get_type_hints(td, include_extras=True)
    if td.__name__ == "CaseResult":  # the fields that travel between processes, never into the report
        hints = {k: v for k, v in hints.items() if k not in TRANSIENT}
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out = []
    for name, hint in hints.items():
        field, said = _unwrap(hint)
        is_required = td.__total__ if said is None else said
        where = f"{path}.{name}"
        if name not in properties:
            out.append(f"{where}: in {td.__name__} ({_show(field)}) but not in the schema's properties")
            continue
        if is_required != (name in required):
            out.append(f"{where}: {'required' if is_required else 'optional'} in {td.__name__}, {'required' if name in required else 'optional'} in the schema")
        out += differences(field, properties[name], root, where)
    out += [f"{path}.{name}: in the schema but not in {td.__name__}" for name in properties if name not in hints]
    out += [f"{path}.{name}: required by the schema but not a field of {td.__name__}" for name in sorted(required - hints.keys() - properties.keys())]
    return out


def _show(hint: Any) -> str:
    return getattr(hint, "__name__", None) if typing.is_typeddict(hint) else str(hint).replace("typing.", "")  # type: ignore[return-value]


def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_the_report_types_and_the_schema_agree_field_by_field():
    schema = _schema()
    assert differences(document.Report, schema, schema) == []


def test_every_open_field_listed_is_still_open_and_still_said_more_of_by_the_schema():
    schema = _schema()
    # each entry of OPEN must still be needed: with it dropped, the comparison names that field
    for key in OPEN:
        saved = OPEN.pop(key)
        try:
            assert any(line.startswith(f"report.{key}: the type leaves it open") for line in differences(document.Report, schema, schema)), key
        finally:
            OPEN[key] = saved
