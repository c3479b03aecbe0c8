"""JSON schemas shipped with guitest: loaded and compiled once, errors named by field."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Iterator

import jsonschema


@functools.cache
def validator(name: str) -> jsonschema.protocols.Validator:
    """Return the compiled validator for ``schemas/<name>.schema.json`` (compiled once per process)."""
    text = resources.files("guitest").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def field_path(error: jsonschema.ValidationError) -> str:
    """The instance path of an error as ``bbox[2]`` / ``data.dir``; empty for the top level."""
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    if error.validator == "required" and isinstance(error.validator_value, list):
        # The instance path points at the object; name the missing property instead.
        missing = [p for p in error.validator_value if isinstance(error.instance, dict) and p not in error.instance]
        if missing:
            out = f"{out}.{missing[0]}" if out else missing[0]
    return out


def short_message(error: jsonschema.ValidationError) -> str:
    """The error message without jsonschema's long dump of the whole schema."""
    if error.validator == "required":
        return "is required but missing"
    if error.validator == "additionalProperties":
        return error.message
    instance = json.dumps(error.instance, ensure_ascii=False, default=str)
    if len(instance) > 80:
        instance = instance[:77] + "..."
    msg = error.message
    if len(msg) > 200:
        msg = msg[:197] + "..."
    return msg if instance in msg or repr(error.instance) in msg else f"{instance}: {msg}"


def iter_problems(name: str, instance: Any) -> Iterator[tuple[str, str]]:
    """Yield ``(field, message)`` for every schema violation of ``instance``, in a stable order."""
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    for error in errors:
        yield field_path(error), short_message(error)
