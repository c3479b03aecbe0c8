"""The answer parser never raises, whatever the string (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guitest.answers.region import is_refusal, parse_answer
from guitest.profiles import PROFILES
from guitest.tasks.grounding import judge

# Fragments of real answer syntax, so the generator reaches deep into every style's code.
FRAGMENTS = [
    "Answer:", "Final answer：", "**Answer:**", "<think>", "</think>", "[", "]", "(", ")", "{", "}", ",", "%", "'", '"',
    "<|box_start|>", "<|box_end|>", "<box>", "</box>", "<point>", "</point>", "<bbox>", "</bbox>", "click(start_box='",
    "')", "pyautogui.click(x=", ", y=", '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [',
    '"point_2d": [', '"bbox_2d": [', "x=", "y=", "0.5", "-3", "1e308", "1e-9", "NaN", "Infinity", "1000", "99999999999999999999",
    "\n", " ", "not found", "```json", "```", "<tool_call>", "</tool_call>",
]
replies = st.one_of(st.text(max_size=400), st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=replies, profile=st.sampled_from(sorted(PROFILES)), finish=st.sampled_from(["stop", "length", None]))
def test_judging_any_reply_never_raises(text: str, profile: str, finish: str | None) -> None:
    p = PROFILES[profile]
    verdict, prediction = judge(text, finish, (10.0, 10.0, 50.0, 40.0), p, (112, 84), (200, 150))
    assert verdict in {"hit", "miss", "unparsed", "refused", "truncated"}
    if verdict in ("hit", "miss"):
        assert prediction is not None and len(prediction["pixel"]) == 2
    else:
        assert prediction is None
    parse_answer(text, p.styles)
    is_refusal(text)


def test_deeply_nested_brackets_do_not_recurse_forever() -> None:
    text = "[" * 100_000 + "Answer: [0.5, 0.5]"
    point = parse_answer(text, PROFILES["gpt-4o"].styles)
    assert point is not None and (point.x, point.y) == (0.5, 0.5)
