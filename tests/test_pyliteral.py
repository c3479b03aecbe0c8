"""Python literals in replies: the same values Python gives, never a warning, never code run."""

from __future__ import annotations

import ast
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.answers import pyliteral

PIECES = st.sampled_from(["\\", "h", "n", "'", '"', "d", "x4", "x", "0", "777", "N", "N{BULLET}", "u", "u00e9", "U", " ", "\n", "r", "b"])


def _python(text: str) -> object:
    """What Python itself makes of ``text``, its warnings silenced; the exception's type when it is no literal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError) as exc:
            return type(exc)


LITERAL = st.tuples(st.sampled_from(["", "b", "r", "rb", "Br", "f", "u"]), st.sampled_from(["'", '"', "'''"]), st.lists(PIECES, max_size=10))


@settings(max_examples=examples(500), deadline=None)
@given(literals=st.lists(LITERAL, min_size=1, max_size=3))
def test_source_keeps_the_value_and_says_nothing(literals: list[tuple[str, str, list[str]]]) -> None:
    text = "(" + ", ".join(f"{prefix}{quote}{''.join(pieces)}{quote}" for prefix, quote, pieces in literals) + ",)"
    written = pyliteral.source(text)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            ours: object = ast.literal_eval(written)
        except (ValueError, SyntaxError) as exc:
            ours = type(exc)
    assert ours == _python(text)  # the same tuple of values, or the same refusal
    if all("b" not in prefix.lower() for prefix, _, _ in literals):  # bytes literals keep their own warnings
        assert [str(w.message) for w in said] == []


def test_literal_allows_trailing_commas_and_refuses_code() -> None:
    assert pyliteral.literal("{'a': [1, 2,],}") == {"a": [1, 2]}
    assert pyliteral.literal("  'C:\\home'  ") == "C:\\home"
    for text in ("__import__('os').system('true')", "[1, 2", "", "lambda: 1"):
        with pytest.raises(ValueError, match="not a Python literal"):
            pyliteral.literal(text)
