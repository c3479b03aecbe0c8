"""Boxes and points (``guitest.geometry``) and verdict counting (``guitest.reporting.tallies``).

Expected numbers are derived by hand (in comments) or by an independent computation in
this file: the Wilson bounds as the roots of the quadratic that defines them, with z taken
from ``statistics.NormalDist``, not from the closed form the module uses.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.geometry import center, clip, contains, is_proper, normalize, xywh_to_xyxy
from guitest.reporting.tallies import aggregate, counts, wilson

# ---------------------------------------------------------------- geometry


@pytest.mark.parametrize(
    ("xywh", "xyxy"),
    [
        ((10, 20, 30, 40), (10, 20, 40, 60)),
        ([0, 0, 1, 1], (0, 0, 1, 1)),
        ((1.5, 2.25, 0.5, 0.75), (1.5, 2.25, 2.0, 3.0)),
    ],
)
def test_xywh_to_xyxy(xywh, xyxy) -> None:
    assert xywh_to_xyxy(xywh) == xyxy


def test_clip_inside_is_unchanged_and_unflagged() -> None:
    assert clip((10, 20, 30, 40), (100, 50)) == ((10, 20, 30, 40), False)


def test_clip_touching_the_border_is_not_flagged() -> None:
    # x2 == width and y2 == height: inside the [0, w] x [0, h] closed range, nothing cut.
    assert clip((0, 0, 100, 50), (100, 50)) == ((0, 0, 100, 50), False)
    assert clip((0.0, 0.0, 100.0, 50.0), (100, 50))[1] is False


@pytest.mark.parametrize(
    ("box", "size", "expected"),
    [
        ((135, -1, 151, 19), (3840, 1080), (135, 0, 151, 19)),  # ScreenSpot-Pro inventor_windows_60
        ((90, 10, 101, 20), (100, 50), (90, 10, 100, 20)),  # overruns the right edge by 1 px
        ((-5, -5, 105, 55), (100, 50), (0, 0, 100, 50)),  # overruns every edge
        ((10, 40, 20, 60), (100, 50), (10, 40, 20, 50)),  # overruns the bottom
    ],
)
def test_clip_cuts_and_flags(box, size, expected) -> None:
    clipped, flag = clip(box, size)
    assert clipped == expected
    assert flag is True


def test_clip_box_entirely_outside_becomes_degenerate() -> None:
    clipped, flag = clip((120, 10, 130, 20), (100, 50))
    assert flag is True
    assert clipped == (100, 10, 100, 20)
    assert not is_proper(clipped)


@pytest.mark.parametrize(
    ("point", "inside"),
    [
        ((15, 25), True),
        ((10, 20), True),  # top-left corner
        ((30, 40), True),  # bottom-right corner
        ((10, 30), True),  # left edge
        ((20, 40), True),  # bottom edge
        ((9.999, 30), False),
        ((30.001, 30), False),
        ((20, 19.999), False),
        ((20, 40.001), False),
        ((-15, -25), False),
    ],
)
def test_contains_is_edge_inclusive(point, inside) -> None:
    assert contains((10, 20, 30, 40), point) is inside


def test_is_proper_center_normalize() -> None:
    assert is_proper((0, 0, 1, 1))
    assert not is_proper((0, 0, 0, 1))
    assert not is_proper((0, 0, 1, 0))
    assert not is_proper((2, 2, 1, 3))
    assert center((10, 20, 30, 60)) == (20, 40)
    # (100/400, 50/200, 300/400, 150/200)
    assert normalize((100, 50, 300, 150), (400, 200)) == (0.25, 0.25, 0.75, 0.75)


# ---------------------------------------------------------------- wilson


def wilson_by_quadratic(hits: int, n: int) -> tuple[float, float]:
    """Wilson bounds as the two p with (p_hat - p)^2 = z^2 p (1 - p) / n.

    Expanding: (1 + z^2/n) p^2 - (2 p_hat + z^2/n) p + p_hat^2 = 0, solved by the
    quadratic formula; z is the 97.5% normal quantile from the standard library.
    """
    z = statistics.NormalDist().inv_cdf(0.975)
    p_hat = hits / n
    a = 1 + z * z / n
    b = -(2 * p_hat + z * z / n)
    c = p_hat * p_hat
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize(("hits", "n"), [(81, 263), (1, 2), (5, 100), (50, 100), (977, 1581), (3, 7), (0, 10), (10, 10)])
def test_wilson_matches_the_quadratic_roots(hits: int, n: int) -> None:
    low, high = wilson_by_quadratic(hits, n)
    assert wilson(hits, n) == pytest.approx([low, high], abs=2e-6)  # the module rounds to 6 places


def test_wilson_known_values() -> None:
    # 81 of 263: [0.2553, 0.3662] (four decimals).
    assert wilson(81, 263) == pytest.approx([0.2553, 0.3662], abs=1e-4)
    # 0 of 10: the textbook example, upper bound 0.2775 (cf. the "rule of three" 0.3); lower bound 0.
    assert wilson(0, 10) == pytest.approx([0.0, 0.2775], abs=1e-4)
    # n of n mirrors 0 of n.
    assert wilson(10, 10) == pytest.approx([1 - 0.2775, 1.0], abs=1e-4)


@pytest.mark.parametrize(("hits", "n"), [(81, 263), (7, 40), (33, 34)])
def test_wilson_bounds_satisfy_the_defining_equation(hits: int, n: int) -> None:
    z = statistics.NormalDist().inv_cdf(0.975)
    p_hat = hits / n
    for p in wilson(hits, n):
        assert abs(p_hat - p) == pytest.approx(z * math.sqrt(p * (1 - p) / n), abs=1e-5)


def test_wilson_of_nothing() -> None:
    assert wilson(0, 0) == [0.0, 0.0]


# ---------------------------------------------------------------- counts


def result(case_id: str, verdict: str, notes=None, **tags: str) -> dict:
    return {"id": case_id, "verdict": verdict, "tags": tags, "notes": notes}


def test_counts_excludes_errors_from_accuracy() -> None:
    rows = [result("a", "hit"), result("b", "hit"), result("c", "miss"), result("d", "error"), result("e", "unparsed"), result("f", "refused"), result("g", "truncated"), result("h", "error")]
    table = counts(rows)
    assert table["n"] == 8
    assert (table["hit"], table["miss"], table["unparsed"], table["refused"], table["truncated"], table["error"]) == (2, 1, 1, 1, 1, 2)
    # scored = 8 - 2 errors = 6; accuracy = 2 / 6
    assert table["accuracy"] == pytest.approx(1 / 3, abs=1e-6)
    assert table["ci95"] == pytest.approx(list(wilson_by_quadratic(2, 6)), abs=2e-6)


def test_counts_none_when_nothing_scored() -> None:
    assert counts([])["accuracy"] is None
    assert counts([])["n"] == 0
    only_errors = counts([result("a", "error"), result("b", "error")])
    assert only_errors["accuracy"] is None
    assert only_errors["n"] == 2
    assert only_errors["ci95"] == [0.0, 0.0]


def test_counts_all_hits_and_all_wrong() -> None:
    assert counts([result("a", "hit")])["accuracy"] == 1.0
    assert counts([result("a", "miss"), result("b", "unparsed")])["accuracy"] == 0.0


# ---------------------------------------------------------------- aggregate

RESULTS = [
    result("r01", "hit", ["bbox_clipped"], split="mobile", data_type="text"),
    result("r02", "miss", None, split="mobile", data_type="text"),
    result("r03", "hit", [], split="mobile", data_type="icon"),
    result("r04", "error", None, split="mobile", data_type="icon"),
    result("r05", "unparsed", ["bbox_clipped", "image_size_mismatch"], split="desktop", data_type="text"),
    result("r06", "hit", None, split="desktop", data_type="text"),
    result("r07", "refused", ["instruction_cn_null"], split="desktop", data_type="icon"),
    result("r08", "hit", None, split="desktop", data_type="icon"),
    result("r09", "truncated", None, split="desktop", data_type="icon"),
    result("r10", "hit", None, split="mobile"),  # no data_type: in the split table only
    result("r11", "error", None, split="web", data_type="link"),  # a category with nothing scored
]


def test_aggregate_overall() -> None:
    overall = aggregate(RESULTS, ["split", "data_type"], [["split", "data_type"]])["overall"]
    # 11 results, hits r01 r03 r06 r08 r10 = 5, errors r04 r11 = 2, scored 9
    assert (overall["n"], overall["hit"], overall["error"]) == (11, 5, 2)
    assert overall["accuracy"] == pytest.approx(5 / 9, abs=1e-6)


def test_aggregate_breakdown_per_tag() -> None:
    agg = aggregate(RESULTS, ["split", "data_type"], [["split", "data_type"]])
    split = agg["breakdown"]["split"]
    assert sorted(split) == ["desktop", "mobile", "web"]
    # mobile: r01 r02 r03 r04 r10 -> n 5, 3 hits, 1 error -> 3/4
    assert (split["mobile"]["n"], split["mobile"]["hit"], split["mobile"]["accuracy"]) == (5, 3, 0.75)
    # desktop: r05..r09 -> n 5, 2 hits, 0 errors -> 2/5
    assert (split["desktop"]["n"], split["desktop"]["accuracy"]) == (5, 0.4)
    assert split["web"]["accuracy"] is None
    data_type = agg["breakdown"]["data_type"]
    assert sorted(data_type) == ["icon", "link", "text"]
    # text: r01 r02 r05 r06 -> 2/4; icon: r03 r04 r07 r08 r09 -> 2 hits of 4 scored; r10 has no data_type
    assert (data_type["text"]["n"], data_type["text"]["accuracy"]) == (4, 0.5)
    assert (data_type["icon"]["n"], data_type["icon"]["accuracy"]) == (5, 0.5)
    assert sum(row["n"] for row in data_type.values()) == 10


def test_aggregate_cross_keys_and_values() -> None:
    agg = aggregate(RESULTS, ["split", "data_type"], [["split", "data_type"]])
    cross = agg["breakdown"]["split/data_type"]
    assert sorted(cross) == ["desktop/icon", "desktop/text", "mobile/icon", "mobile/text", "web/link"]
    assert cross["mobile/text"]["accuracy"] == 0.5  # r01 hit, r02 miss
    assert cross["mobile/icon"]["accuracy"] == 1.0  # r03 hit, r04 error excluded
    assert cross["desktop/text"]["accuracy"] == 0.5  # r05 unparsed, r06 hit
    assert cross["desktop/icon"]["accuracy"] == pytest.approx(1 / 3, abs=1e-6)  # r07 refused, r08 hit, r09 truncated
    assert cross["web/link"]["accuracy"] is None


def test_aggregate_macro_is_mean_of_per_value_accuracies() -> None:
    agg = aggregate(RESULTS, ["split", "data_type"], [["split", "data_type"]])
    # split: (3/4 + 2/5) / 2 (web has nothing scored, so no accuracy to average)
    assert agg["macro"]["split"] == pytest.approx(float((Fraction(3, 4) + Fraction(2, 5)) / 2), abs=1e-6)
    # data_type: (1/2 + 1/2) / 2
    assert agg["macro"]["data_type"] == pytest.approx(0.5, abs=1e-6)
    # cross: (1/2 + 1 + 1/2 + 1/3) / 4 = 7/12
    assert agg["macro"]["split/data_type"] == pytest.approx(7 / 12, abs=1e-6)
    # and macro differs from micro here (5/9), so the two are really different numbers
    assert agg["macro"]["split"] != agg["overall"]["accuracy"]


def test_aggregate_macro_none_when_nothing_scored() -> None:
    agg = aggregate([result("a", "error", split="x")], ["split"])
    assert agg["macro"]["split"] is None


def test_aggregate_counts_data_notes() -> None:
    agg = aggregate(RESULTS, ["split", "data_type"])
    assert agg["notes"] == {"bbox_clipped": 2, "image_size_mismatch": 1, "instruction_cn_null": 1}
    assert list(agg["notes"]) == sorted(agg["notes"])


def test_aggregate_is_identical_for_any_order() -> None:
    reference = json.dumps(aggregate(RESULTS, ["split", "data_type"], [["split", "data_type"]]))
    rng = random.Random(20240517)
    orders = [list(reversed(RESULTS))]
    for _ in range(60):
        shuffled = list(RESULTS)
        rng.shuffle(shuffled)
        orders.append(shuffled)
    for order in orders:
        assert json.dumps(aggregate(order, ["split", "data_type"], [["split", "data_type"]])) == reference


def test_aggregate_order_independence_with_many_fractional_accuracies() -> None:
    # Many categories with awkward accuracies (k/7, k/13 ...) so a float sum in arrival order
    # would differ in the last bits between permutations.
    rng = random.Random(7)
    rows = []
    for i in range(400):
        rows.append(result(f"c{i:04d}", rng.choice(["hit", "miss", "hit", "error", "unparsed"]), rng.choice([None, ["bbox_clipped"]]), app=f"app{i % 23}", kind=rng.choice(["text", "icon"])))
    reference = json.dumps(aggregate(rows, ["app", "kind"], [["app", "kind"]]))
    for _ in range(10):
        rng.shuffle(rows)
        assert json.dumps(aggregate(rows, ["app", "kind"], [["app", "kind"]])) == reference


def test_cross_keys_do_not_collide_when_values_contain_a_slash() -> None:
    rows = [result("1", "hit", p="a/b", q="c"), result("2", "miss", p="a", q="b/c")]
    cross = aggregate(rows, ["p", "q"], [["p", "q"]])["breakdown"]["p/q"]
    assert sum(1 for _ in cross) == 2


_TAG_VALUES = st.one_of(st.none(), st.integers(0, 2), st.sampled_from(["a", "b", "a/b", "%", "b%2F"]))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["hit", "miss", "unparsed", "refused", "truncated", "unsure", "error"]), _TAG_VALUES, _TAG_VALUES), max_size=40))
def test_aggregate_equals_counting_each_group_directly(rows) -> None:
    """The tallying fast path of aggregate gives, per group, exactly counts() of that group's results
    (groups formed here by group_key, one result at a time); tags missing or not text form no group."""
    from guitest.reporting.tallies import group_key

    results = []
    for n, (verdict, p, q) in enumerate(rows):
        tags = {k: v for k, v in (("p", p), ("q", q)) if v is not None}
        results.append({"id": f"c{n:03d}", "verdict": verdict, "tags": tags})
    agg = aggregate(results, ["p", "q"], [["p", "q"]])
    for name, combo in (("p", ("p",)), ("q", ("q",)), ("p/q", ("p", "q"))):
        groups: dict[str, list] = {}
        for r in results:
            key = group_key(r, combo)
            if key is not None:
                groups.setdefault(key, []).append(r)
        assert agg["breakdown"][name] == {k: counts(v) for k, v in sorted(groups.items())}
    assert agg["overall"] == counts(results)
