"""JSON schemas shipped with guitest: loaded and compiled once, errors named by field."""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any, Iterator

import jsonschema


def has_schema(name: str) -> bool:
    """Whether guitest ships ``schemas/<name>.schema.json``."""
    return resources.files("guitest").joinpath("schemas", f"{name}.schema.json").is_file()


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


# -- a fast path for the common case: a valid row --------------------------------------------------
# jsonschema takes ~0.2 ms a row; a suite of 100,000 rows must collect in seconds. The schema stays
# the single source of truth: it is compiled into a plain predicate for the subset of keywords the
# annotation schemas use, and any row the predicate rejects goes through jsonschema for the message.

_IGNORED = {"$schema", "$id", "title", "description", "default", "examples", "$comment"}
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
}


class _Unsupported(Exception):
    pass


def _compile(node: Any) -> Any:
    if node is True or node == {}:
        return lambda v: True
    if node is False:
        return lambda v: False
    if not isinstance(node, dict):
        raise _Unsupported(node)
    checks = []
    for key, value in node.items():
        if key in _IGNORED:
            continue
        if key == "type":
            names = value if isinstance(value, list) else [value]
            preds = [_TYPES[n] for n in names]
            checks.append(lambda v, preds=preds: any(p(v) for p in preds))
        elif key == "enum":
            allowed = list(value)
            checks.append(lambda v, allowed=allowed: any(v == a and type(v) is type(a) for a in allowed))
        elif key == "required":
            names = list(value)
            checks.append(lambda v, names=names: not isinstance(v, dict) or all(n in v for n in names))
        elif key == "properties":
            props = {k: _compile(s) for k, s in value.items()}
            checks.append(lambda v, props=props: not isinstance(v, dict) or all(k not in v or p(v[k]) for k, p in props.items()))
        elif key == "additionalProperties":
            known = set(node.get("properties", {}))
            extra = _compile(value)
            checks.append(lambda v, known=known, extra=extra: not isinstance(v, dict) or all(k in known or extra(x) for k, x in v.items()))
        elif key == "items":
            start = len(node.get("prefixItems", ()))
            item = _compile(value)
            checks.append(lambda v, item=item, start=start: not isinstance(v, list) or all(item(x) for x in v[start:]))
        elif key == "prefixItems":
            prefix = [_compile(s) for s in value]
            checks.append(lambda v, prefix=prefix: not isinstance(v, list) or all(p(x) for p, x in zip(prefix, v)))
        elif key in ("minItems", "maxItems", "minLength", "maxLength"):
            limit, is_min = value, key.startswith("min")
            kind = list if key.endswith("Items") else str
            checks.append(lambda v, n=limit, lo=is_min, kind=kind: not isinstance(v, kind) or (len(v) >= n if lo else len(v) <= n))
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            op = {"minimum": lambda a, b: a >= b, "maximum": lambda a, b: a <= b, "exclusiveMinimum": lambda a, b: a > b, "exclusiveMaximum": lambda a, b: a < b}[key]
            checks.append(lambda v, op=op, b=value: not _TYPES["number"](v) or op(v, b))
        elif key == "pattern":
            rx = re.compile(value)
            checks.append(lambda v, rx=rx: not isinstance(v, str) or rx.search(v) is not None)
        else:
            raise _Unsupported(key)
    return lambda v: all(c(v) for c in checks)


@functools.cache
def fast_check(name: str) -> Any:
    """A predicate equivalent to ``validator(name).is_valid`` for the keywords it knows, else ``is_valid`` itself."""
    full = validator(name)
    try:
        return _compile(full.schema)
    except _Unsupported:
        return full.is_valid
