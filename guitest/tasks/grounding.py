"""Click grounding: the model names a point; a hit is a point inside the truth box, edges included.

The prompt and the reading of the reply come from the model's profile (:mod:`guitest.profiles`).
"""

from __future__ import annotations

import math
import sys

from typing import Any

from ..geometry import Box, center, clip, contains, guess_space, is_proper, normalize, to_original_pixels
from ..exchange import Case, Prompt, Recorded
from ..answers.region import is_refusal, parse_answer
from ..profiles import Profile
from ..sample import Sample
from ..verdict import HIT, MISS, REFUSED, TRUNCATED, UNPARSED
from . import Task


class Grounding(Task):
    """Click grounding: a point inside the truth box is a hit (a refusal, where the sample expects one)."""

    name = "grounding"

    def truth(self, sample: Sample, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        if sample.box is None:
            return None, [], "the sample has no truth box"
        truth, clipped = clip(sample.box, size)
        if not is_proper(truth):
            return truth, [], f"truth box {list(sample.box)} lies outside the {size[0]}x{size[1]} image"
        return truth, ["bbox_clipped"] if clipped else [], None

    def build_prompt(self, profile: Profile, case: Case, template: str | None) -> Prompt:
        return fill_prompt(profile, case, template or profile.prompt)

    def judge(self, text: str, finish_reason: str | None, case: Case, profile: Profile, sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        return judge(text, finish_reason, case.truth, profile, sent_size, case.original_size, case.sample.expect_refusal)

    def judge_recorded(self, recorded: Recorded, case: Case) -> tuple[str, dict[str, Any] | None]:
        return judge_point(recorded.point, case.truth, case.original_size, case.sample.expect_refusal)

    def oracle_text(self, case: Case, profile: Profile) -> str | None:
        return point_text(center(case.truth), case, profile)


def fill_prompt(profile: Profile, case: Case, user: str) -> Prompt:
    """A prompt from ``user`` (and the profile's system prompt) with ``{instruction}``, ``{width}``, ``{height}`` of the image sent filled in."""

    def fill(text: str) -> str:
        width, height = case.sent_size
        return text.replace("{instruction}", case.sample.instruction).replace("{width}", str(width)).replace("{height}", str(height))

    return Prompt(user=fill(user), system=fill(profile.system) if profile.system else None)


def point_text(pixel: tuple[float, float], case: Case, profile: Profile) -> str:
    """A reply naming ``pixel`` (original pixels) in the profile's own syntax and space (:meth:`Profile.point_text`)."""
    return profile.point_text(pixel, case.sent_size, case.original_size)


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
    raw = [point.x, point.y] if point.box is None else list(point.box)
    if not all(math.isfinite(v) for v in raw):  # NaN or inf as written: there is no point to score or store
        return UNPARSED, {"notes": ["non_finite_point"]}
    # A finite coordinate is a point, however far out: 1e307 on the 0..1000 grid is inf once scaled, but the
    # model named a place beyond the screen, which is a miss (outside_image), not a reply without an answer.
    px, py = _finite(px), _finite(py)
    ow, oh = original_size
    prediction: dict[str, Any] = {
        "point": [round(px / ow, 6), round(py / oh, 6)],
        "pixel": [round(px, 2), round(py, 2)],
        "raw": raw,
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


def judge_point(point: tuple[float, float] | None, truth: Box, original_size: tuple[int, int], expect_refusal: bool = False) -> tuple[str, dict[str, Any] | None]:
    """The verdict for a point another harness recorded (pixels of the original image; None: it recorded none, which is
    unparsed, as ScreenSpot-Pro's ``wrong_format``) and the prediction behind it.

    The point is compared with the truth box in fractions of the image, edges included, as eval_screenspot_pro.py
    compares: its model's point (fractions) against ``bbox / img_size``. The harness wrote its pixel point as that
    fraction times the size, so dividing by the size gives back the very fraction it judged (for whole pixels, the
    0..1000 grid and decimal answers on every real row: docs/replay.md, "The edge rule"), where comparing pixels
    would call out a whole-pixel point on an edge that the multiplication left a hair outside. A point that is not
    finite is a miss, as the script's comparisons make it.
    """
    if point is None:
        return UNPARSED, None
    x, y = point
    if not (math.isfinite(x) and math.isfinite(y)):
        return MISS, {"via": "recorded", "notes": ["non_finite_point"]}
    ow, oh = original_size
    fx, fy = x / ow, y / oh
    prediction: dict[str, Any] = {"point": [round(fx, 6), round(fy, 6)], "pixel": [round(x, 2), round(y, 2)], "raw": [x, y], "space": "pixel_original", "via": "recorded"}
    if not (0 <= x <= ow and 0 <= y <= oh):
        prediction["outside_image"] = True
    if expect_refusal:
        return MISS, prediction
    return (HIT if contains(normalize(truth, original_size), (fx, fy)) else MISS), prediction


def _finite(value: float) -> float:
    """``value`` with an overflow to +-inf held at the largest float, so a far-off point stays a number in the report."""
    return max(-sys.float_info.max, min(sys.float_info.max, value))


TASK = Grounding
