"""Element matching, P/R/F1 and similarity against a hand-computed table; tolerant JSON list extraction."""

from __future__ import annotations

import random

import pytest

from guitest.tasks import matching as el
from guitest.answers.elements import find_list
from hallubench_data import require_embedding


def box(x1: float, y1: float, x2: float, y2: float) -> list[float]:
    return [x1, y1, x2, y2]


# Each row: (what it shows, predicted boxes, true boxes, expected accepted pairs (pred, true, IoU), tp, fp, fn).
# IoUs worked out by hand, e.g. [0,0,9,10] vs [0,0,10,10]: intersection 90, union 100 -> 0.9.
TABLE = [
    ("identical boxes", [box(0, 0, 10, 10)], [box(0, 0, 10, 10)], [(0, 0, 1.0)], 1, 0, 0),
    ("IoU 1/3 is below 0.5", [box(0, 0, 10, 10)], [box(5, 0, 15, 10)], [], 0, 1, 1),
    # intersection 100, union 200: exactly 0.5, which matches (the reference code compares with >=)
    ("IoU exactly 0.5 matches", [box(0, 0, 10, 10)], [box(0, 0, 10, 20)], [(0, 0, 0.5)], 1, 0, 0),
    # intersection 99, union 201: just under 0.5
    ("IoU 99/201 does not", [box(0, 0, 9.9, 10)], [box(0, 0, 10, 20.1)], [], 0, 1, 1),
    # P0 overlaps T0 (0.9) and T1 (90/144 = 0.625); P1 overlaps T0 (90/110 = 0.818) and T1 (80/164 = 0.488).
    # Greedy takes P0-T0 first; P1-T0 and P0-T1 are then blocked, P1-T1 is under the threshold:
    # one match, although an optimal assignment (P1-T0, P0-T1) would find two. GUI-HalluBench is greedy.
    ("a prediction overlapping two truths", [box(0, 0, 9, 10), box(1, 0, 11, 10)], [box(0, 0, 10, 10), box(0, 0, 9, 16)], [(0, 0, 0.9)], 1, 1, 1),
    # P0 and P1 tie at 0.8 on T0; P1 also has T1 (70/110 = 0.636), P0 has T1 at 50/130 = 0.385.
    # The tie goes to the lower predicted index (P0), which leaves P1 free for T1: two matches.
    ("a tie in IoU", [box(0, 0, 8, 10), box(2, 0, 10, 10)], [box(0, 0, 10, 10), box(3, 0, 13, 10)], [(0, 0, 0.8), (1, 1, 70 / 110)], 2, 0, 0),
    ("tie on one truth: the lower index wins", [box(2, 0, 10, 10), box(0, 0, 8, 10)], [box(0, 0, 10, 10)], [(0, 0, 0.8)], 1, 1, 0),
    ("prediction given as x2 < x1, y2 < y1", [box(10, 10, 0, 0)], [box(0, 0, 10, 10)], [(0, 0, 1.0)], 1, 0, 0),
    ("truth given as x2 < x1", [box(0, 0, 10, 10)], [box(10, 0, 0, 10)], [(0, 0, 1.0)], 1, 0, 0),
    ("no prediction", [], [box(0, 0, 1, 1), box(2, 2, 3, 3), box(4, 4, 5, 5)], [], 0, 0, 3),
    ("no truth", [box(0, 0, 1, 1), box(2, 2, 3, 3)], [], [], 0, 2, 0),
    ("both empty", [], [], [], 0, 0, 0),
    ("boxes without area never match", [box(5, 5, 5, 10)], [box(5, 5, 5, 10)], [], 0, 1, 1),
    # T0 and T1 identical; P0 = T0 exactly, P1 = [0,0,10,12] (100/120 = 0.833 with both).
    ("duplicate truths", [box(0, 0, 10, 10), box(0, 0, 10, 12)], [box(0, 0, 10, 10), box(0, 0, 10, 10)], [(0, 0, 1.0), (1, 1, 100 / 120)], 2, 0, 0),
]


@pytest.mark.parametrize("name, pred, true, pairs, tp, fp, fn", TABLE, ids=[row[0] for row in TABLE])
def test_matching_table(name, pred, true, pairs, tp, fp, fn) -> None:
    result = el.match(pred, true)
    assert [(i, j) for i, j, _ in result.pairs] == [(i, j) for i, j, _ in pairs]
    assert [v for *_, v in result.pairs] == pytest.approx([v for *_, v in pairs])
    assert (result.tp, result.fp, result.fn) == (tp, fp, fn)


# (tp, fp, fn) -> precision, recall, F1 by hand
PRF = [
    ((2, 1, 3), (2 / 3, 2 / 5, 0.5)),  # F1 = 2 * (2/3)(2/5) / (2/3 + 2/5) = (8/15) / (16/15)
    ((1, 0, 0), (1.0, 1.0, 1.0)),
    ((0, 1, 1), (0.0, 0.0, 0.0)),
    ((0, 0, 3), (0.0, 0.0, 0.0)),  # said nothing, missed everything
    ((0, 2, 0), (0.0, 0.0, 0.0)),  # nothing to find, invented two
    ((0, 0, 0), (1.0, 1.0, 1.0)),  # nothing to find, found nothing
    ((3, 1, 0), (0.75, 1.0, 6 / 7)),
]


@pytest.mark.parametrize("counts, expected", PRF)
def test_precision_recall_f1(counts, expected) -> None:
    assert el.prf(*counts) == pytest.approx(expected)


def test_threshold_is_a_setting() -> None:
    pred, true = [box(0, 0, 9, 10)], [box(0, 0, 10, 10)]  # IoU 0.9
    assert el.match(pred, true, 0.9).tp == 1
    assert el.match(pred, true, 0.95).tp == 0


def test_difflib_similarity_is_the_reference_ratio() -> None:
    assert el.difflib_similarity("Sign In", "sign in") == 1.0  # lowercased first
    assert el.difflib_similarity("abcd", "abce") == pytest.approx(2 * 3 / 8)  # 3 matching chars of 4 + 4
    assert el.difflib_similarity("", "x") == 0.0


def test_score_of_one_sample() -> None:
    true = [
        {"type": "button", "description": "Sign in", "box": box(0, 0, 10, 10)},
        {"type": "icon", "description": "search", "box": box(20, 0, 30, 10)},
        {"type": "button", "description": "Cancel", "box": box(40, 0, 50, 10)},
    ]
    pred = [
        {"type": "button", "description": "sign in", "box": box(0, 0, 10, 10)},
        {"type": "icon", "description": "abcd", "box": box(10, 10, 0, 0)},  # corners swapped, lands on true #0 too: loses
        {"type": "text", "description": "serch", "box": box(21, 0, 30, 10)},  # IoU 0.9 with true #1
    ]
    s = el.score(pred, true)
    assert (s["tp"], s["fp"], s["fn"]) == (2, 1, 1)
    assert s["pairs"] == [[0, 0, 1.0], [2, 1, 0.9]]
    # similarities: "sign in"/"sign in" = 1; "serch"/"search": 5 matching of 5 + 6 -> 10/11
    assert s["sim_sum"] == pytest.approx(1 + 10 / 11)
    assert s["similarity"] == pytest.approx((1 + 10 / 11) / 2)
    assert s["by_type"] == {"button": [1, 2], "icon": [1, 1]}
    assert (s["precision"], s["recall"]) == pytest.approx((2 / 3, 2 / 3))


def _naive_iou(a, b) -> float:
    ax1, ax2 = sorted((a[0], a[2]))
    ay1, ay2 = sorted((a[1], a[3]))
    bx1, bx2 = sorted((b[0], b[2]))
    by1, by2 = sorted((b[1], b[3]))
    inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return inter / union if union > 0 else 0.0


def _naive_greedy(pred, true, threshold):
    pairs = sorted(((i, j, _naive_iou(p, t)) for i, p in enumerate(pred) for j, t in enumerate(true)), key=lambda x: -x[2])
    used_p, used_t, out = set(), set(), []
    for i, j, v in pairs:  # sorted() is stable: ties keep the row-by-row order
        if v >= threshold and i not in used_p and j not in used_t:
            used_p.add(i), used_t.add(j), out.append((i, j))
    return out


def _random_samples(seed: int, n: int):
    rng = random.Random(seed)

    def rand_box():  # a coarse grid makes equal IoUs (ties), exact-threshold cases and x2 < x1 frequent
        return [rng.randrange(0, 12) for _ in range(4)]

    return [([rand_box() for _ in range(rng.randrange(0, 9))], [rand_box() for _ in range(rng.randrange(0, 9))]) for _ in range(n)]


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_vectorised_matching_agrees_with_a_plain_loop(threshold: float) -> None:
    for pred, true in _random_samples(7, 1000):
        assert [(i, j) for i, j, _ in el.match(pred, true, threshold).pairs] == _naive_greedy(pred, true, threshold)


def test_matching_many_samples_at_once_agrees_with_one_at_a_time() -> None:
    data = _random_samples(11, 700)
    assert el.match_many(data, chunk=64) == [el.match(p, t) for p, t in data]
    assert el.match_many([([], []), ([[0, 0, 1, 1]], [])]) == [el.Match((), 0, 0), el.Match((), 1, 0)]


def test_a_threshold_of_zero_is_refused() -> None:
    with pytest.raises(ValueError):
        el.match([[0, 0, 1, 1]], [[2, 2, 3, 3]], 0)


# -- tolerant extraction of the list ------------------------------------------------------------------


def test_list_in_code_fence_with_prose_around() -> None:
    text = 'Sure! Here are the elements:\n```json\n[{"type": "button", "box": [1, 2, 3, 4]}]\n```\nLet me know.'
    found = find_list(text)
    assert found is not None and found.items == [{"type": "button", "box": [1, 2, 3, 4]}]
    assert not found.truncated and found.notes == []


def test_trailing_commas_are_repaired() -> None:
    found = find_list('[{"type": "icon", "box": [1, 2, 3, 4,],}, {"type": "text", "box": [5, 6, 7, 8]},]')
    assert found is not None and [i["type"] for i in found.items] == ["icon", "text"]
    assert found.items[0]["box"] == [1, 2, 3, 4]


def test_an_element_nested_past_pythons_recursion_limit_is_unreadable_not_raised() -> None:
    # json.loads raised a RecursionError out of the reader (and the case)
    found = find_list('[{"box": ' + "[" * 5000 + "]" * 5000 + '}, {"type": "icon", "box": [1, 2, 3, 4]}]')
    assert found is not None and found.items == [{"type": "icon", "box": [1, 2, 3, 4]}] and found.unreadable == 1


def test_truncated_last_element_is_dropped_and_counted() -> None:
    found = find_list('```json\n[{"type": "icon", "box": [1, 2, 3, 4]}, {"type": "text", "description": "Sa')
    assert found is not None and found.items == [{"type": "icon", "box": [1, 2, 3, 4]}]
    assert found.truncated and found.dropped == 1 and found.notes == ["truncated_element_dropped"]


def test_truncated_between_elements_drops_nothing() -> None:
    found = find_list('[{"type": "icon", "box": [1, 2, 3, 4]},\n ')
    assert found is not None and found.truncated and found.dropped == 0 and len(found.items) == 1


def test_brackets_and_quotes_inside_strings() -> None:
    found = find_list('[{"type": "text", "description": "a ] b } \\" [c", "box": [1, 2, 3, 4]}]')
    assert found is not None and found.items[0]["description"] == 'a ] b } " [c'


def test_no_list_is_none() -> None:
    assert find_list("I cannot see any elements.") is None
    assert find_list("The box is [1, 2, 3, 4].") is None  # a list of numbers is not a list of elements
    assert find_list("") is None


def test_empty_list_is_an_answer() -> None:
    found = find_list("Nothing here: []")
    assert found is not None and found.items == []


def test_the_last_fenced_list_wins_and_think_is_ignored() -> None:
    text = '<think>[{"type": "draft", "box": [0, 0, 1, 1]}]</think>```json\n[{"type": "a", "box": [1, 1, 2, 2]}]\n```\nfixed:\n```json\n[{"type": "b", "box": [1, 1, 2, 2]}]\n```'
    found = find_list(text)
    assert found is not None and [i["type"] for i in found.items] == ["b"]


def test_object_wrapping_the_list_and_python_literals() -> None:
    found = find_list('{"elements": [{"type": "icon", "box": [1, 2, 3, 4]}]}')
    assert found is not None and found.items[0]["type"] == "icon"
    found = find_list("[{'type': 'icon', 'box': (1, 2, 3, 4), 'visible': True}]")
    assert found is not None and found.items[0]["box"] == (1, 2, 3, 4)


def test_python_literal_with_a_windows_path_reads_quietly() -> None:
    import warnings

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        found = find_list("[{'type': 'text', 'description': 'C:\\home\\me\\new', 'box': [1, 2, 3, 4]}]")
    assert found is not None and found.items[0]["description"] == "C:\\home\\me\new"  # \\h, \\m kept, \\n a newline (as Python)
    assert [str(w.message) for w in said] == []  # no "invalid escape sequence" in the user's run


def test_unreadable_items_are_counted_not_fatal() -> None:
    found = find_list('[{"type": "icon", "box": [1, 2, 3, 4]}, {type: icon box 1 2}, {"type": "x", "box": [0, 0, 1, 1]}]')
    assert found is not None and [i["type"] for i in found.items] == ["icon", "x"]
    assert found.unreadable == 1 and found.notes == ["unreadable_elements"]


@pytest.mark.parametrize("text", ["[", "[{", '[{"a": "', "]]]", "[{}}}]", "```", "```json\n[", "[" * 5000, '[{"a": [' * 300])
def test_garbage_never_raises(text: str) -> None:
    find_list(text)


def test_embedding_similarity_ranks_meaning_over_spelling() -> None:
    require_embedding()
    sims = el.embedding_similarities([("Sign in", "sign in"), ("log in button", "sign in button"), ("log in button", "weather forecast")])
    assert sims[0] == pytest.approx(1.0, abs=1e-5)
    assert sims[1] > 0.6 > sims[2]
    # difflib scores the unrelated pair closer than the embedding does
    assert el.difflib_similarity("log in button", "weather forecast") > sims[2]
