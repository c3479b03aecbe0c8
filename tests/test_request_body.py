"""request_body.dumps: the bytes of json.dumps(ensure_ascii=False), with long plain strings spliced in."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from propbudget import examples

from guitest.models import request_body


def plain(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def chat(uri: str, text: str = 'click "OK" — the \\ button\n') -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": uri}}, {"type": "text", "text": text}]}],
        "temperature": 0.0,
        "max_tokens": 512,
        "seed": None,
        "stop": ("a", "b"),
    }


def test_a_chat_request_with_a_screenshot_is_the_same_bytes_and_the_encoder_never_sees_the_image(monkeypatch: pytest.MonkeyPatch) -> None:
    uri = "data:image/png;base64," + base64.b64encode(os.urandom(300_000)).decode()
    payload = chat(uri)
    expected = plain(payload)
    seen: list[Any] = []
    real = json.dumps
    monkeypatch.setattr(request_body.json, "dumps", lambda obj, **kw: seen.append(obj) or real(obj, **kw))
    body = request_body.dumps(payload)
    monkeypatch.undo()
    assert body == expected
    assert len(seen) == 1 and uri not in json.dumps(seen[0])  # the encoder got the placeholder, not the 400,000 characters
    assert json.loads(body)["messages"][0]["content"][0]["image_url"]["url"] == uri


@pytest.mark.parametrize("odd", ['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028"])
def test_a_long_string_that_needs_escaping_goes_through_the_encoder(odd: str) -> None:
    long = "A" * request_body.SPLICE_MIN + odd + "B" * 10
    payload = chat(long, text=long)
    assert request_body.dumps(payload) == plain(payload)


def test_what_json_cannot_encode_fails_as_it_does() -> None:
    lone = "A" * request_body.SPLICE_MIN + "\ud800"  # a lone surrogate: no UTF-8 for it
    with pytest.raises(UnicodeEncodeError):
        plain({"s": lone})
    with pytest.raises(UnicodeEncodeError):
        request_body.dumps({"s": lone})


def test_several_long_strings_and_nothing_to_splice() -> None:
    a, b = "x" * (request_body.SPLICE_MIN + 1), "y" * (2 * request_body.SPLICE_MIN)
    payload = {"a": [a, {"b": b, "c": a}], "n": [1, 2.5, True, None], 3: "int key"}
    assert request_body.dumps(payload) == plain(payload)
    assert request_body.dumps({"short": "s"}) == plain({"short": "s"})
    with pytest.raises(TypeError):
        request_body.dumps({"x": object(), "big": a})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(json_values)
def test_any_json_value_gives_the_bytes_of_json_dumps(value: Any) -> None:
    # a low threshold, so that nearly every string of the example is a candidate for splicing
    old = request_body.SPLICE_MIN
    request_body.SPLICE_MIN = 1
    try:
        assert request_body.dumps(value) == plain(value)
    finally:
        request_body.SPLICE_MIN = old


def test_a_screenshot_as_verbatim_bytes_gives_the_body_of_its_str_and_is_never_a_str(monkeypatch: pytest.MonkeyPatch) -> None:
    data = os.urandom(90_000)
    small = os.urandom(500)  # a short image too: spliced whatever its length
    as_str = chat("data:image/png;base64," + base64.b64encode(data).decode())
    as_str["messages"].append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(small).decode()}}]})
    verbatim = chat(request_body.Verbatim(b"data:image/png;base64,", base64.b64encode(data)))  # type: ignore[arg-type]
    verbatim["messages"].append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": request_body.Verbatim(b"data:image/jpeg;base64,", base64.b64encode(small))}}]})
    decoded: list[bytes] = []
    monkeypatch.setattr(request_body.Verbatim, "__str__", lambda self: decoded.append(b"") or "")  # the lean path never asks for a str
    assert request_body.dumps(verbatim) == plain(as_str)
    assert decoded == []
    monkeypatch.undo()
    assert request_body.as_text(verbatim) == as_str  # what the official client is given
