"""The compiled fast path agrees with jsonschema on every row it is shown (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.schema import fast_check, validator

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
