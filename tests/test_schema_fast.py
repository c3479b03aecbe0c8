"""The compiled fast path agrees with jsonschema on every row it is shown (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.schema import _compile, fast_check, validator, validator_of

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5000), st.floats(allow_nan=False, allow_infinity=True), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)
FIELDS = ["img_filename", "bbox", "instruction", "data_type", "data_source", "id", "application", "platform", "img_size", "ui_type", "group", "instruction_cn"]
near_valid = st.fixed_dictionaries(
    {},
    optional={
        "img_filename": st.one_of(st.text(max_size=5), scalars),
        "bbox": st.one_of(st.lists(st.one_of(st.integers(-2, 50), st.floats(-1, 50), st.booleans(), st.text(max_size=2)), min_size=0, max_size=5), scalars),
        "instruction": st.one_of(st.sampled_from(["", " ", "click it", "\t"]), scalars),
        "data_type": st.one_of(st.sampled_from(["text", "icon", "Text"]), scalars),
        "data_source": st.one_of(st.text(max_size=3), scalars),
        "id": st.one_of(st.text(max_size=3), scalars),
        "application": st.one_of(st.text(max_size=3), scalars),
        "platform": st.one_of(st.text(max_size=3), scalars),
        "img_size": st.one_of(st.lists(st.one_of(st.integers(-1, 9), st.floats(0, 9)), max_size=3), scalars),
        "ui_type": st.one_of(st.sampled_from(["text", "icon"]), scalars),
        "group": st.one_of(st.text(max_size=3), scalars),
        "instruction_cn": st.one_of(st.none(), st.text(max_size=3), st.integers()),
    },
)


SCHEMAS = Path(__file__).resolve().parents[1] / "guitest" / "schemas"
ALL = sorted(str(p.relative_to(SCHEMAS)).removesuffix(".schema.json") for p in SCHEMAS.rglob("*.schema.json"))


@settings(max_examples=examples(600), deadline=None)
@given(row=st.one_of(near_valid, values), name=st.sampled_from(["formats/screenspot", "formats/screenspot_pro", "suite"]))
def test_fast_check_agrees_with_jsonschema(row, name) -> None:
    assert fast_check(name)(row) == validator(name).is_valid(row)


@settings(max_examples=examples(300), deadline=None)
@given(row=st.one_of(near_valid, values), name=st.sampled_from(ALL))
def test_fast_check_agrees_with_jsonschema_on_every_shipped_schema(row, name) -> None:
    assert fast_check(name)(row) == validator(name).is_valid(row)


@pytest.mark.parametrize("name", ALL)
def test_every_shipped_schema_is_a_valid_schema(name: str) -> None:
    """guitest.schema.validator trusts its own files (checking them against the metaschema cost every report 0.2 s):
    each is checked here, once, against the metaschema it names."""
    import jsonschema

    schema = validator(name).schema
    jsonschema.validators.validator_for(schema).check_schema(schema)


def test_the_row_schemas_compile_to_generated_code() -> None:
    """The annotation schemas use only keywords the generator knows (else the slow jsonschema path serves them)."""
    for name in ("formats/screenspot", "formats/screenspot_pro"):
        assert fast_check(name).__code__.co_filename == "<guitest schema predicate>"


def test_fast_check_accepts_a_real_row_and_rejects_a_broken_one() -> None:
    row = {"img_filename": "a.png", "bbox": [1, 2, 3, 4], "instruction": "x", "data_type": "icon", "data_source": "ios"}
    assert fast_check("formats/screenspot")(row)
    assert not fast_check("formats/screenspot")({**row, "bbox": [1, 2, 0, 4]})  # w must be > 0
    assert fast_check("formats/screenspot") is not validator("formats/screenspot").is_valid  # really compiled


def _report() -> dict:
    from guitest.reporting import report as report_mod

    results = [
        {"id": f"c{n}", "verdict": v, "tags": {"split": s}, "prediction": None, "response": "r", "notes": ["x"]}
        for n, (v, s) in enumerate([("hit", "a"), ("miss", "a"), ("error", "b"), ("unsure", "b")])
    ]
    return report_mod.build(
        suite={"name": "s", "path": "s/suite.yaml", "format": "screenspot", "task": "grounding"},
        model={"spec": "oracle", "adapter": "Oracle", "space": "normalized", "settings": {}},
        results=results,
        n_selected=4,
        missing=[],
        tags=["split"],
        cross=[],
        gate={},
        run={},
    )


MUTATIONS = [
    lambda r: r.pop("overall"),
    lambda r: r["overall"].update(hit=-1),
    lambda r: r["overall"].update(accuracy=1.5),
    lambda r: r["overall"].update(ci95=[0.1]),
    lambda r: r["cases"][0].update(verdict="great"),
    lambda r: r["cases"][1].pop("tags"),
    lambda r: r["cases"][2]["tags"].update(split=3),
    lambda r: r["breakdown"]["split"]["a"].pop("n"),
    lambda r: r["headline"].update(average="median"),
    lambda r: r.update(task_metrics=[]),
    lambda r: r["suite"].update(settings=None),
]


@pytest.mark.parametrize("mutate", [None, *MUTATIONS])
def test_the_report_predicate_follows_refs_and_agrees_with_jsonschema(mutate) -> None:
    """The report schema's $defs/$ref are compiled too (so a 100,000-case report is checked in a blink)."""
    report = _report()
    if mutate is not None:
        mutate(report)
    assert fast_check("report").__code__.co_filename == "<guitest schema predicate>"
    assert fast_check("report")(report) == validator("report").is_valid(report) == (mutate is None)


def test_the_suite_file_and_model_config_schemas_compile_to_generated_code() -> None:
    """propertyNames, uniqueItems and min/maxProperties are compiled too, so a valid suite file (every run reads one)
    and a valid --model-config are checked without loading jsonschema (tests/test_startup_imports.py)."""
    for name in ("suite", "model_config", "tasks/live", "formats/webtask", "formats/miniwob"):
        assert fast_check(name).__code__.co_filename == "<guitest schema predicate>", name


anything = st.one_of(scalars, st.lists(scalars, max_size=2), st.dictionaries(st.text(max_size=2), scalars, max_size=2))
names = st.sampled_from(["a", "b", "c"])
suite_like = st.fixed_dictionaries(
    {"name": st.just("s"), "format": st.just("screenspot"), "data": st.just({"dir": "d", "annotations": "*.json"}), "task": st.just("grounding")},
    optional={
        "tags": st.one_of(st.lists(names, max_size=4), st.lists(anything, max_size=4)),
        "breakdown": st.one_of(st.lists(names, max_size=3), st.lists(anything, max_size=3)),
        "cross": st.lists(st.one_of(st.lists(names, max_size=3), st.lists(anything, max_size=3)), max_size=2),
        "gate": st.fixed_dictionaries(
            {},
            optional={
                "accuracy": st.floats(0, 1),
                "by": st.dictionaries(st.one_of(st.sampled_from(["a=b", "a", "=b", "a/b=c", "a=b=c"]), st.integers(0, 3)), st.one_of(st.floats(0, 1), scalars), max_size=3),
            },
        ),
    },
)


@settings(max_examples=examples(200), deadline=None)
@given(doc=suite_like)
def test_the_suite_predicate_agrees_with_jsonschema_on_repeated_tags_and_gate_keys(doc) -> None:
    assert fast_check("suite")(doc) == validator("suite").is_valid(doc)


KEYWORDS = [
    {"uniqueItems": True},
    {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    {"uniqueItems": False},
    {"propertyNames": {"pattern": "^[^=]+=.+$"}},
    {"propertyNames": {"enum": ["A", "B"]}},
    {"minProperties": 1, "maxProperties": 2},
]


@settings(max_examples=examples(200), deadline=None)
@given(value=st.one_of(values, st.lists(st.one_of(scalars, st.lists(scalars, max_size=2)), max_size=4)), schema=st.sampled_from(KEYWORDS))
def test_each_newly_compiled_keyword_agrees_with_jsonschema(value, schema) -> None:
    """1 and 1.0 are one item to jsonschema's uniqueItems, 1 and true are two; a key that is not a string passes a pattern."""
    assert _compile(schema)(value) == validator_of(schema).is_valid(value)


@pytest.mark.parametrize("items", [[1, 1.0], [1, True], [0, False], [[1], [1.0]], [{"a": 1}, {"a": 1.0}], ["a", "a"], ["a", "b"], [[1], [True], [1]]])
def test_unique_items_as_jsonschema_counts_them(items) -> None:
    assert _compile({"uniqueItems": True})(items) == validator_of({"uniqueItems": True}).is_valid(items)
