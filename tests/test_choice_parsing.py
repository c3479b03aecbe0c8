"""Reading a multiple-choice letter out of a reply (guitest.answers.choices), and rotating options (circular evaluation)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.answers.choices import read_choice
from guitest.tasks.choice import rotate

OPTIONS = {
    "A": "It's a sub-screen within a 'Rings' section",
    "B": "It's the main dashboard of the app",
    "C": "It's a sub-screen within the 'Summary' section",
    "D": "It's a standalone 'Awards' page",
    "E": "Sharing",
}


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        # MMBench-GUI's parser takes the first regex match: the capital starting the sentence (B, D)
        ("Based on the layout, the choice is C", "C"),
        ("Deduced from the tab bar at the bottom, correct is C", "C"),
        ("Answer: C", "C"),
        ("answer: c", "C"),
        ("The answer is (C)", "C"),
        ("The correct answer is option C.", "C"),
        ("**Answer:** D", "D"),
        ("Final answer: E", "E"),
        ("Answer:\n\n**B**", "B"),
        ("I'd go with B, the dashboard.", "B"),
        ("\\boxed{D}", "D"),
        ("答案：B", "B"),
        ("**C**", "C"),
        ("Option C", "C"),
        ("C", "C"),
        ("(C)", "C"),
        ("Looking at the tabs...\nC.\n", "C"),
        ("C. It's a sub-screen within the 'Summary' section", "C"),
        # the last marker wins; options named after it, or in reasoning before it, do not
        ("The answer is A. On reflection the Summary tab is highlighted. Answer: C", "C"),
        ("Option A is wrong. Answer: C. Option B is also wrong.", "C"),
        ("<think>Answer: A</think>Answer: B", "B"),
        ("Answer: B\nAnswer: D", "D"),
        # a prose marker without a letter is skipped, an earlier one still counts
        ("The answer is C. Double-checking, the answer is indeed right.", "C"),
        # an option's text quoted back: after the marker, or alone in the reply
        ("Answer: Sharing", "E"),
        ("It's the main dashboard of the app.", "B"),
    ],
)
def test_reads_the_chosen_letter(reply: str, letter: str) -> None:
    choice = read_choice(reply, OPTIONS)
    assert choice is not None and choice.letter == letter, (reply, choice)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "The answer is a button in the corner.",  # the article, not option A
        "Answer: not sure",  # the explicit marker names nothing: no answer, even if a letter came before
        "Answer: A\nAnswer: I cannot tell",
        "e.g. something",
        "Both Sharing and It's the main dashboard of the app are plausible.",  # two options quoted: ambiguous
        "Based on the layout",
        "Deduced from the tabs",
    ],
)
def test_no_choice_is_read_where_none_was_made(reply: str) -> None:
    assert read_choice(reply, OPTIONS) is None


def test_the_marker_and_how_the_letter_was_read_are_reported() -> None:
    assert read_choice("Answer: C", OPTIONS).via == "marker"  # type: ignore[union-attr]
    assert read_choice("Answer: Sharing", OPTIONS).via == "marker+text"  # type: ignore[union-attr]
    assert read_choice("**C**", OPTIONS).via == "bold"  # type: ignore[union-attr]
    assert read_choice("Sharing", OPTIONS).via == "text"  # type: ignore[union-attr]


def test_a_letter_outside_the_options_is_read_as_said() -> None:
    # the judge then scores it a miss ("not_an_option"); it is an answer, not a format error
    choice = read_choice("Answer: F", OPTIONS)
    assert choice is not None and choice.letter == "F"


def test_the_longest_quoted_option_wins_over_one_it_contains() -> None:
    options = {"A": "Settings", "B": "Open Settings", "C": "Close"}
    assert read_choice("Open Settings", options).letter == "B"  # type: ignore[union-attr]


@settings(max_examples=examples(300), deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    choice = read_choice(text, OPTIONS)
    assert choice is None or choice.letter in "ABCDEF"


def test_rotation_moves_every_text_under_every_letter_once() -> None:
    options = {"A": "one", "B": "two", "C": "three", "D": "four"}
    seen = []
    for shift in range(4):
        moved, answer = rotate(options, "C", shift)
        assert sorted(moved.values()) == sorted(options.values())
        assert moved[answer] == "three"
        seen.append(answer)
    assert rotate(options, "C", 0) == (options, "C")
    assert sorted(seen) == ["A", "B", "C", "D"]
