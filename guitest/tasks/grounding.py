"""Click grounding: the model names a point; a hit is a point inside the truth box, edges included.

The prompt and the reading of the reply come from the model's profile (:mod:`guitest.profiles`).
"""

from __future__ import annotations

from typing import Any

from ..geometry import Box, contains, guess_space, to_original_pixels
from ..parsing import is_refusal, parse_answer
from ..profiles import Profile
from ..verdict import HIT, MISS, REFUSED, TRUNCATED, UNPARSED


def judge(
    text: str,
    finish_reason: str | None,
    truth: Box,
    profile: Profile,
    sent_size: tuple[int, int],
    original_size: tuple[int, int],
    expect_refusal: bool = False,
) -> tuple[str, dict[str, Any] | None]:
    """The verdict for a reply and the prediction behind it (None when there is none).

    A reply cut off by the token limit is ``truncated`` whatever it holds: a point is
    never read from a reply that did not finish. A point outside the image is a miss.
    """
    if finish_reason == "length":
        return TRUNCATED, None
    point = parse_answer(text, profile.styles)
    if point is None:
        if is_refusal(text):
            return (HIT if expect_refusal else REFUSED), None
        return UNPARSED, None
    space = point.space
    guessed = space == "auto"
    if guessed:
        space = guess_space((point.x, point.y), sent_size)
    px, py = to_original_pixels((point.x, point.y), space, sent_size, original_size)
    ow, oh = original_size
    prediction: dict[str, Any] = {
        "point": [round(px / ow, 6), round(py / oh, 6)],
        "pixel": [round(px, 2), round(py, 2)],
        "raw": [point.x, point.y] if point.box is None else list(point.box),
        "space": space,
        "via": point.via,
    }
    if guessed:
        prediction["space_guessed"] = True
    if not (0 <= px <= ow and 0 <= py <= oh):
        prediction["outside_image"] = True
    if expect_refusal:
        return MISS, prediction
    return (HIT if contains(truth, (px, py)) else MISS), prediction
