"""Answer parsing (``guitest.answers.region``) and the grounding verdict (``guitest.tasks.grounding.judge``).

Every expected coordinate below is derived by hand in a comment next to it, from the
definitions in docs/design.md ("Coordinates: declared, never guessed"), not from the code's output.
"""

from __future__ import annotations

import dataclasses

import pytest

from guitest.answers.region import is_refusal, parse_point, strip_think
from guitest.profiles import PROFILES
from guitest.tasks import grounding
from guitest.verdict import HIT, MISS, REFUSED, TRUNCATED, UNPARSED


def xy(text: str) -> tuple[float, float] | None:
    point = parse_point(text)
    return None if point is None else (point.x, point.y)


# ---------------------------------------------------------------- parse_point


def test_last_answer_marker_wins_over_numbers_in_prose() -> None:
    text = "I first thought [0.1, 0.2] was the button, but on reflection it is the other one.\nAnswer: [0.7, 0.8]"
    assert xy(text) == pytest.approx((0.7, 0.8))
    assert parse_point(text).via == "answer+pair"


def test_last_of_several_answer_markers_wins() -> None:
    text = "Answer: [0.2, 0.3]\nWait, that is the label, not the field.\nAnswer: [0.4, 0.5]"
    assert xy(text) == pytest.approx((0.4, 0.5))


def test_numbers_after_the_answer_marker_are_taken_not_later_prose_pairs_before_it() -> None:
    # The marker's pair is (0.6, 0.9); the prose pair comes earlier and must be ignored.
    assert xy("The icon near (0.05, 0.05) is a logo. answer: (0.6, 0.9)") == pytest.approx((0.6, 0.9))


def test_without_marker_the_last_pair_is_taken() -> None:
    point = parse_point("Candidates: [0.1, 0.1] or [0.3, 0.4]")
    assert (point.x, point.y) == pytest.approx((0.3, 0.4))
    assert point.via == "pair"


def test_think_block_is_stripped() -> None:
    text = "<think>Maybe Answer: [0.9, 0.9]? No.</think>Answer: [0.25, 0.75]"
    assert strip_think(text) == "Answer: [0.25, 0.75]"
    assert xy(text) == pytest.approx((0.25, 0.75))


def test_think_block_without_answer_after_it_leaves_nothing() -> None:
    # The only point is inside the reasoning: it is not an answer.
    assert parse_point("<think>The button is at [0.3, 0.3]</think>I am done.") is None


def test_unclosed_think_block_runs_to_the_end() -> None:
    text = "Prefix text. <think>I will answer Answer: [0.1, 0.2] once I am sure"
    assert strip_think(text) == "Prefix text. "
    assert parse_point(text) is None


def test_think_tags_are_case_insensitive_and_multiline() -> None:
    text = "<THINK>line one [0.9, 0.9]\nline two\n</Think>\nAnswer: [0.5, 0.6]"
    assert xy(text) == pytest.approx((0.5, 0.6))


def test_box_answer_scores_by_its_centre() -> None:
    point = parse_point("Answer: [0.1, 0.2, 0.3, 0.6]")
    # centre: ((0.1 + 0.3) / 2, (0.2 + 0.6) / 2) = (0.2, 0.4)
    assert (point.x, point.y) == pytest.approx((0.2, 0.4))
    assert point.box == pytest.approx((0.1, 0.2, 0.3, 0.6))


def test_parentheses_form() -> None:
    point = parse_point("Answer: (412, 87)")
    assert (point.x, point.y) == (412.0, 87.0)
    assert point.box is None
    box = parse_point("Answer: (100, 200, 300, 400)")
    assert (box.x, box.y) == (200.0, 300.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: [ 0.5 ,0.25 ]", (0.5, 0.25)),  # spaces inside the brackets
        ("Answer: [-3, +4.5]", (-3.0, 4.5)),  # signs
        ("Answer: [.5, 1.]", (0.5, 1.0)),  # bare leading/trailing decimal point
        ("Answer: [1e2, 2.5E-1]", (100.0, 0.25)),  # exponents
        ("ANSWER：[3, 4]", (3.0, 4.0)),  # full-width colon, upper case
    ],
)
def test_number_forms(text: str, expected: tuple[float, float]) -> None:
    assert xy(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I would click the Save button in the toolbar.",
        "Answer: the Save button",
        "Answer: [0.5]",  # one number is not a point
        "Answer: [1, 2, 3]",  # three numbers are neither a point nor a box
        "Answer: [a, b]",
    ],
)
def test_no_answer_gives_none(text: str) -> None:
    assert parse_point(text) is None


def test_retracted_answer_is_not_replaced_by_an_earlier_one() -> None:
    text = "Answer: [0.1, 0.2]. Hmm, actually the element does not exist on this screen.\nAnswer: none"
    assert parse_point(text) is None


# ---------------------------------------------------------------- is_refusal


@pytest.mark.parametrize(
    "text",
    [
        "The element does not exist.",
        "the element doesn't exist in this screenshot",
        "I cannot find it.",
        "I can't locate the requested button.",
        "I am unable to find a 'Submit' button here.",
        "There is no such button on this screen.",
        "The search field is not visible.",
        "<think>looking around</think>Sorry, I cannot find it.",
    ],
)
def test_refusal_phrases_are_detected(text: str) -> None:
    assert is_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "The Save button is in the top-left toolbar. Answer: [0.1, 0.05]",
        "I can find it easily: Answer: [0.5, 0.5]",
        "Click the gear icon to open the settings.",
        "It exists right next to the search field.",
        # refusal words only inside the reasoning block must not count
        "<think>At first I cannot find it, it does not exist... oh, there it is.</think>Answer: [0.3, 0.3]",
    ],
)
def test_normal_replies_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)


@pytest.mark.parametrize("text", ["The element is not on the screen.", "I could not find it."])
def test_refusal_in_the_default_prompts_own_words(text: str) -> None:
    assert is_refusal(text)


def test_there_is_no_need_is_not_a_refusal() -> None:
    assert not is_refusal("There is no need to scroll; the Save button is in the top toolbar.")


# ---------------------------------------------------------------- judge


def judge(text, finish_reason, truth, space, sent_size, original_size, expect_refusal=False):
    """``grounding.judge`` with the generic answer styles read in ``space``."""
    generic = PROFILES["generic"]
    profile = dataclasses.replace(generic, space=space, styles=tuple((style, space) for style, _ in generic.styles))
    return grounding.judge(text, finish_reason, truth, profile, sent_size, original_size, expect_refusal)


ORIGINAL = (3840, 2160)
# A sent size whose x and y scale factors differ (3840/1288 = 2.981..., 2160/728 = 2.967...),
# so a swapped or shared factor gives a different pixel.
SENT = (1288, 728)
# Target pixel (960, 1620) in the original image:
#   normalized     (0.25, 0.75)   -> (0.25 * 3840, 0.75 * 2160)         = (960, 1620)
#   grid1000       (250, 750)     -> (250 / 1000 * 3840, 750/1000*2160)  = (960, 1620)
#   pixel_sent     (322, 546)     -> (322 / 1288 * 3840, 546 / 728 * 2160) = (0.25 * 3840, 0.75 * 2160) = (960, 1620)
#   pixel_original (960, 1620)    -> (960, 1620)
TARGET_BOX = (958.0, 1618.0, 962.0, 1622.0)  # a 4x4 px box around (960, 1620)


@pytest.mark.parametrize(
    ("space", "reply"),
    [
        ("normalized", "Answer: [0.25, 0.75]"),
        ("grid1000", "Answer: [250, 750]"),
        ("grid1000", "Answer: [200, 700, 300, 800]"),  # box, centre (250, 750)
        ("pixel_sent", "Answer: [322, 546]"),
        ("pixel_original", "Answer: [960, 1620]"),
    ],
)
def test_coordinate_spaces_map_to_original_pixels(space: str, reply: str) -> None:
    verdict, prediction = judge(reply, "stop", TARGET_BOX, space, SENT, ORIGINAL)
    assert verdict == HIT
    assert prediction["pixel"] == pytest.approx([960.0, 1620.0])
    # normalized to the original image: (960 / 3840, 1620 / 2160) = (0.25, 0.75)
    assert prediction["point"] == pytest.approx([0.25, 0.75])
    assert prediction["space"] == space


@pytest.mark.parametrize(
    ("space", "expected_pixel"),
    [
        # the same raw numbers (322, 546) read in each space:
        ("normalized", (322 * 3840, 546 * 2160)),
        ("grid1000", (322 / 1000 * 3840, 546 / 1000 * 2160)),  # (1236.48, 1179.36)
        ("pixel_sent", (960.0, 1620.0)),
        ("pixel_original", (322.0, 546.0)),
    ],
)
def test_same_numbers_land_differently_per_space(space: str, expected_pixel: tuple[float, float]) -> None:
    verdict, prediction = judge("Answer: [322, 546]", "stop", TARGET_BOX, space, SENT, ORIGINAL)
    assert prediction["pixel"] == pytest.approx(list(expected_pixel), abs=0.01)
    assert verdict == (HIT if space == "pixel_sent" else MISS)


def test_unknown_space_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown coordinate space"):
        judge("Answer: [1, 2]", "stop", TARGET_BOX, "auto-guess", SENT, ORIGINAL)


def test_prediction_records_raw_reply_numbers() -> None:
    _, prediction = judge("Answer: [200, 700, 300, 800]", "stop", TARGET_BOX, "grid1000", SENT, ORIGINAL)
    assert prediction["raw"] == [200.0, 700.0, 300.0, 800.0]
    _, prediction = judge("Answer: [322, 546]", "stop", TARGET_BOX, "pixel_sent", SENT, ORIGINAL)
    assert prediction["raw"] == [322.0, 546.0]


BOX = (100.0, 200.0, 300.0, 400.0)


@pytest.mark.parametrize(
    "point",
    [(100, 300), (300, 300), (200, 200), (200, 400), (100, 200), (300, 400), (100, 400), (300, 200), (200, 300)],
)
def test_points_on_the_edge_are_hits(point: tuple[float, float]) -> None:
    verdict, _ = judge(f"Answer: [{point[0]}, {point[1]}]", "stop", BOX, "pixel_original", (10, 10), (1000, 1000))
    assert verdict == HIT


@pytest.mark.parametrize("point", [(99.99, 300), (300.01, 300), (200, 199.99), (200, 400.01), (99.99, 199.99)])
def test_points_a_hair_outside_are_misses(point: tuple[float, float]) -> None:
    verdict, prediction = judge(f"Answer: [{point[0]}, {point[1]}]", "stop", BOX, "pixel_original", (10, 10), (1000, 1000))
    assert verdict == MISS
    assert prediction is not None


def test_edge_hit_through_normalized_space() -> None:
    # original 1024 x 512, truth (256, 128, 512, 384); (0.25, 0.5) -> (256, 256): on the left edge.
    # Binary fractions, so the products are exact.
    truth = (256.0, 128.0, 512.0, 384.0)
    assert judge("Answer: [0.25, 0.5]", "stop", truth, "normalized", (1024, 512), (1024, 512))[0] == HIT
    # (0.2499, 0.5) -> (255.8976, 256): just left of the box.
    assert judge("Answer: [0.2499, 0.5]", "stop", truth, "normalized", (1024, 512), (1024, 512))[0] == MISS


def test_truncated_reply_gives_no_prediction_even_with_a_complete_answer() -> None:
    # The answer is complete and inside the box; the reply still did not finish.
    verdict, prediction = judge("Answer: [960, 1620]", "length", TARGET_BOX, "pixel_original", SENT, ORIGINAL)
    assert verdict == TRUNCATED
    assert prediction is None


@pytest.mark.parametrize("finish_reason", ["stop", None, "eos"])
def test_other_finish_reasons_are_read(finish_reason: str | None) -> None:
    verdict, prediction = judge("Answer: [960, 1620]", finish_reason, TARGET_BOX, "pixel_original", SENT, ORIGINAL)
    assert verdict == HIT
    assert prediction is not None


def test_no_answer_is_unparsed() -> None:
    assert judge("Click the blue button.", "stop", BOX, "normalized", (10, 10), (1000, 1000)) == (UNPARSED, None)


def test_refusal_when_none_expected_is_refused() -> None:
    assert judge("I cannot find it.", "stop", BOX, "normalized", (10, 10), (1000, 1000)) == (REFUSED, None)


def test_refusal_when_expected_is_a_hit() -> None:
    verdict, prediction = judge("The element does not exist.", "stop", BOX, "normalized", (10, 10), (1000, 1000), expect_refusal=True)
    assert (verdict, prediction) == (HIT, None)


def test_point_when_refusal_expected_is_a_miss_even_inside_the_box() -> None:
    # (0.2, 0.3) -> (200, 300): inside BOX, but the sample expects "not there".
    verdict, prediction = judge("Answer: [0.2, 0.3]", "stop", BOX, "normalized", (10, 10), (1000, 1000), expect_refusal=True)
    assert verdict == MISS
    assert prediction["pixel"] == pytest.approx([200.0, 300.0])


def test_unparsed_when_refusal_expected_stays_unparsed() -> None:
    verdict, _ = judge("Click the blue button.", "stop", BOX, "normalized", (10, 10), (1000, 1000), expect_refusal=True)
    assert verdict == UNPARSED


def test_truncated_when_refusal_expected_stays_truncated() -> None:
    verdict, _ = judge("I cannot find it", "length", BOX, "normalized", (10, 10), (1000, 1000), expect_refusal=True)
    assert verdict == TRUNCATED


def test_point_in_reply_wins_over_refusal_words_in_prose() -> None:
    # The reply commits to a point; the refusal wording in the prose does not turn it into a refusal.
    verdict, _ = judge("At first I cannot find it, but then: Answer: [0.2, 0.3]", "stop", BOX, "normalized", (10, 10), (1000, 1000))
    assert verdict == HIT
