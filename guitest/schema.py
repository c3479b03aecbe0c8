"""JSON schemas shipped with guitest: loaded and compiled once, errors named by field.

A valid document is checked by a predicate generated from its schema (:func:`fast_check`); jsonschema is imported
only to name the problems of an invalid one, or for a schema with keywords the generator does not know.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import TYPE_CHECKING, Any, Iterator, Mapping

if TYPE_CHECKING:  # imported where a document is found invalid: a valid suite file and rows never load it (0.04 s)
    import jsonschema


def has_schema(name: str) -> bool:
    """Whether guitest ships ``schemas/<name>.schema.json``."""
    return resources.files("guitest").joinpath("schemas", f"{name}.schema.json").is_file()


@functools.cache
def shipped(name: str) -> Any:
    """The JSON of ``schemas/<name>.schema.json`` (read once per process)."""
    return json.loads(resources.files("guitest").joinpath("schemas", f"{name}.schema.json").read_text("utf-8"))


@functools.cache
def validator(name: str) -> jsonschema.protocols.Validator:
    """Return the compiled validator for ``schemas/<name>.schema.json`` (compiled once per process). The shipped
    schemas are not checked against their metaschema here: that took 60 ms a schema in every process that wrote a
    report, and tests/test_schema_fast.py checks each of them once."""
    import jsonschema

    schema = shipped(name)
    return jsonschema.validators.validator_for(schema)(schema)


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


def validator_of(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    """A validator for a schema given as data (a format of a project's own); ``jsonschema.SchemaError`` when the
    schema itself is invalid."""
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def iter_problems(name: str, instance: Any) -> Iterator[tuple[str, str]]:
    """Yield ``(field, message)`` for every schema violation of ``instance``, in a stable order."""
    if fast_check(name)(instance):
        return iter(())
    return problems(validator(name), instance)


def problems(checker: jsonschema.protocols.Validator, instance: Any) -> Iterator[tuple[str, str]]:
    """Yield ``(field, message)`` for every violation of ``checker``'s schema by ``instance``, in a stable order."""
    errors = sorted(checker.iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    for error in errors:
        yield field_path(error), short_message(error)


# -- a fast path for the common case: a valid row --------------------------------------------------
# jsonschema takes ~0.2 ms a row; a suite of 100,000 rows must collect in seconds. The schema stays
# the single source of truth: it is compiled into a plain predicate for the subset of keywords the
# annotation schemas use, and any row the predicate rejects goes through jsonschema for the message.

_IGNORED = {"$schema", "$id", "title", "description", "default", "examples", "$comment", "$defs"}


class _Unsupported(Exception):
    pass


_NUMBER = "(isinstance({v}, (int, float)) and not isinstance({v}, bool))"
_TYPE_CODE = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    "number": _NUMBER,
    "integer": "((isinstance({v}, int) and not isinstance({v}, bool)) or (isinstance({v}, float) and {v}.is_integer()))",
}
_COMPARE = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


class _Generator:
    """Writes a schema as Python source: one function per schema node, each check an ``if ...: return False``.

    A row is checked by straight-line code instead of a closure per keyword: about ten
    times faster than the closures, which were themselves five times faster than jsonschema.
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.functions: list[str] = []
        self.constants: dict[str, Any] = {}
        self.refs: dict[str, str] = {}  # "#/$defs/x" -> the function checking it (made once, so recursion ends)

    def constant(self, value: Any) -> str:
        name = f"c{len(self.constants)}"
        self.constants[name] = value
        return name

    def node(self, schema: Any) -> str:
        """The name of a generated function checking ``schema``."""
        name = f"f{len(self.functions)}"
        self.functions.append("")  # reserve the slot: nested nodes are numbered after this one
        body = self.checks(schema)
        self.functions[int(name[1:])] = f"def {name}(v):\n" + "".join(f"    {line}\n" for line in body) + "    return True\n"
        return name

    def ref(self, target: Any) -> str:
        """The function checking a local ``$ref`` (``#/...`` within the schema); _Unsupported for any other."""
        if not isinstance(target, str) or not target.startswith("#/"):
            raise _Unsupported(target)
        if target not in self.refs:
            node = self.root
            for part in target[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(node, dict) or part not in node:
                    raise _Unsupported(target)
                node = node[part]
            self.refs[target] = f"f{len(self.functions)}"
            self.node(node)
        return self.refs[target]

    def checks(self, node: Any) -> list[str]:
        if node is True or node == {}:
            return []
        if node is False:
            return ["return False"]
        if not isinstance(node, dict):
            raise _Unsupported(node)
        out: list[str] = []
        for key, value in node.items():
            if key in _IGNORED:
                continue
            if key == "type":
                names = value if isinstance(value, list) else [value]
                if any(n not in _TYPE_CODE for n in names):
                    raise _Unsupported(value)
                out.append("if not (" + " or ".join(_TYPE_CODE[n].format(v="v") for n in names) + "): return False")
            elif key == "enum":
                allowed = self.constant([(a, type(a)) for a in value])
                out.append(f"if not any(v == a and type(v) is t for a, t in {allowed}): return False")
            elif key == "required":
                required = self.constant(tuple(value))
                out.append(f"if isinstance(v, dict) and not all(n in v for n in {required}): return False")
            elif key == "properties":
                lines = [f"x = v.get({k!r}, MISSING)\nif x is not MISSING and not {self.node(sub)}(x): return False" for k, sub in value.items()]
                if lines:
                    out.append("if isinstance(v, dict):")
                    out += ["    " + part for line in lines for part in line.split("\n")]
            elif key == "additionalProperties":
                known = self.constant(frozenset(node.get("properties", {})))
                extra = self.node(value)
                out.append(f"if isinstance(v, dict) and not all(k in {known} or {extra}(x) for k, x in v.items()): return False")
            elif key == "items":
                start = len(node.get("prefixItems", ()))
                item = self.node(value)
                out.append(f"if isinstance(v, list) and not all({item}(x) for x in v[{start}:]): return False")
            elif key == "prefixItems":
                checks = [self.node(sub) for sub in value]
                for i, check in enumerate(checks):
                    out.append(f"if isinstance(v, list) and len(v) > {i} and not {check}(v[{i}]): return False")
            elif key in ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"):
                kind = "list" if key.endswith("Items") else "dict" if key.endswith("Properties") else "str"
                op = ">=" if key.startswith("min") else "<="
                out.append(f"if isinstance(v, {kind}) and not len(v) {op} {int(value)}: return False")
            elif key in _COMPARE:
                bound = self.constant(value)
                out.append(f"if {_NUMBER.format(v='v')} and not v {_COMPARE[key]} {bound}: return False")
            elif key == "$ref":
                out.append(f"if not {self.ref(value)}(v): return False")
            elif key == "propertyNames":
                out.append(f"if isinstance(v, dict) and not all({self.node(value)}(k) for k in v): return False")
            elif key == "uniqueItems":
                if value:
                    out.append("if isinstance(v, list) and not unique(v): return False")
            elif key == "pattern":
                rx = self.constant(re.compile(value))
                out.append(f"if isinstance(v, str) and {rx}.search(v) is None: return False")
            else:
                raise _Unsupported(key)
        return out


def _unique(items: list[Any]) -> bool:
    """``uniqueItems``: a list of strings (a suite's tags) by a set; any other list by jsonschema's own rule (1 and 1.0
    are the same item there, 1 and true are not)."""
    if all(type(item) is str for item in items):
        return len(set(items)) == len(items)
    return _unique_items().is_valid(items)


@functools.cache
def _unique_items() -> jsonschema.protocols.Validator:
    return validator_of({"uniqueItems": True})


def _compile(schema: Any) -> Any:
    """A predicate for ``schema`` generated as Python source (raises _Unsupported for keywords it does not know)."""
    gen = _Generator(schema)
    entry = gen.node(schema)
    namespace: dict[str, Any] = {"MISSING": object(), "unique": _unique, **gen.constants}
    exec(compile("".join(gen.functions), "<guitest schema predicate>", "exec"), namespace)  # noqa: S102 - source built above from a shipped schema
    return namespace[entry]


@functools.cache
def fast_check(name: str) -> Any:
    """A predicate equivalent to ``validator(name).is_valid`` for the keywords it knows, else ``is_valid`` itself."""
    try:
        return _compile(shipped(name))
    except _Unsupported:
        return validator(name).is_valid
