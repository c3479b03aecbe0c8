"""The answer parser never raises, whatever the string (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.answers.region import is_refusal, parse_answer
from guitest.profiles import PROFILES
from guitest.tasks.grounding import judge

# Fragments of real answer syntax, so the generator reaches deep into every style's code.
FRAGMENTS = [
    "Answer:",
    "Final answer：",
    "**Answer:**",
    "<think>",
    "</think>",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    ",",
    "%",
    "'",
    '"',
    "<|box_start|>",
    "<|box_end|>",
    "<box>",
    "</box>",
    "<point>",
    "</point>",
    "<bbox>",
    "</bbox>",
    "click(start_box='",
    "')",
    "pyautogui.click(x=",
    ", y=",
    '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [',
    '"point_2d": [',
    '"bbox_2d": [',
    "x=",
    "y=",
    "0.5",
    "-3",
    "1e308",
    "1e-9",
    "NaN",
    "Infinity",
    "1000",
    "99999999999999999999",
    "\n",
    " ",
    "not found",
    "```json",
    "```",
    "<tool_call>",
    "</tool_call>",
]
replies = st.one_of(st.text(max_size=400), st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=replies, profile=st.sampled_from(sorted(PROFILES)), finish=st.sampled_from(["stop", "length", None]))
@example(text="<POINT>0:1E307</POINT>", profile="generic", finish=None)  # found by a CI run: finite, but inf once scaled
def test_judging_any_reply_never_raises(text: str, profile: str, finish: str | None) -> None:
    p = PROFILES[profile]
    verdict, prediction = judge(text, finish, (10.0, 10.0, 50.0, 40.0), p, (112, 84), (200, 150))
    assert verdict in {"hit", "miss", "unparsed", "refused", "truncated"}
    if verdict in ("hit", "miss"):
        assert prediction is not None and len(prediction["pixel"]) == 2
        assert all(math.isfinite(v) for v in (*prediction["pixel"], *prediction["point"], *prediction["raw"]))
    elif prediction is not None:  # only a coordinate written as NaN or inf (or beyond the float range) is no point at all
        assert verdict == "unparsed" and prediction == {"notes": ["non_finite_point"]}
    parse_answer(text, p.styles)
    is_refusal(text)


def test_deeply_nested_brackets_do_not_recurse_forever() -> None:
    text = "[" * 100_000 + "Answer: [0.5, 0.5]"
    point = parse_answer(text, PROFILES["gpt-4o"].styles)
    assert point is not None and (point.x, point.y) == (0.5, 0.5)


@pytest.mark.parametrize("profile", ["generic", "ui-tars", "qwen2-vl", "gpt-4o"])
def test_a_huge_finite_coordinate_is_a_miss_outside_the_image(profile: str) -> None:
    p = PROFILES[profile]
    text = p.answer_text(0.0, 1e307)
    verdict, prediction = judge(text, "stop", (10.0, 10.0, 50.0, 40.0), p, (112, 84), (200, 150))
    assert verdict == "miss"
    assert prediction is not None and prediction["outside_image"] is True
    assert 1e307 in prediction["raw"] and all(math.isfinite(v) for v in prediction["pixel"])


def test_a_coordinate_written_as_infinity_has_no_point() -> None:
    p = PROFILES["gpt-4o"]
    verdict, prediction = judge('{"x": 0.5, "y": 1e999}', "stop", (10.0, 10.0, 50.0, 40.0), p, (112, 84), (200, 150))
    assert (verdict, prediction) == ("unparsed", {"notes": ["non_finite_point"]})
