"""Click grounding: the model names a point; a hit is a point inside the truth box, edges included."""

from __future__ import annotations

from typing import Any

from ..geometry import Box, contains, to_original_pixels
from ..parsing import is_refusal, parse_point
from ..verdict import HIT, MISS, REFUSED, TRUNCATED, UNPARSED

DEFAULT_PROMPT = (
    "You are given a screenshot of a graphical user interface.\n"
    "Find the UI element described by this instruction: {instruction}\n"
    "Give the point to click as normalized coordinates (x, y), each between 0 and 1, "
    "where (0, 0) is the top-left corner and (1, 1) the bottom-right corner of the screenshot.\n"
    "If the element is not on the screen, say so instead.\n"
    "End your reply with a final line of the form: Answer: [x, y]"
)


def judge(
    text: str,
    finish_reason: str | None,
    truth: Box,
    space: str,
    sent_size: tuple[int, int],
    original_size: tuple[int, int],
    expect_refusal: bool = False,
) -> tuple[str, dict[str, Any] | None]:
    """The verdict for a reply and the prediction behind it (None when there is none).

    A reply cut off by the token limit is ``truncated`` whatever it holds: a point is
    never read from a reply that did not finish.
    """
    if finish_reason == "length":
        return TRUNCATED, None
    point = parse_point(text)
    if point is None:
        if is_refusal(text):
            return (HIT if expect_refusal else REFUSED), None
        return UNPARSED, None
    px, py = to_original_pixels((point.x, point.y), space, sent_size, original_size)
    ow, oh = original_size
    prediction = {
        "point": [round(px / ow, 6), round(py / oh, 6)],
        "pixel": [round(px, 2), round(py, 2)],
        "raw": [point.x, point.y] if point.box is None else list(point.box),
        "space": space,
        "via": point.via,
    }
    if expect_refusal:
        return MISS, prediction
    return (HIT if contains(truth, (px, py)) else MISS), prediction
