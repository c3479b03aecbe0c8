"""Click grounding: the model names a point; a hit is a point inside the truth box, edges included.

The prompt and the reading of the reply come from the model's profile (:mod:`guitest.profiles`).
"""

from __future__ import annotations

import math
import sys

from typing import Any, Mapping

from ..geometry import Box, Point, center, clip, contains, guess_space, is_proper, normalize, to_original_pixels
from ..exchange import Case, Prompt, Recorded
from ..answers.region import is_refusal, parse_answer
from ..profiles import Profile
from ..sample import Sample
from ..verdict import ERROR, HIT, MISS, REFUSED, TRUNCATED, UNPARSED
from . import Task

#: how far (pixels) a stored point may lie from an edge of the stored truth box and still be read either way: a report
#: keeps both to 0.01 px (the point here, the truth box in :func:`guitest.run.case._shown`), each off by up to half of that
ROUNDED_PX = 0.011


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

    rechecks = True

    def recheck(self, row: Mapping[str, Any]) -> str | None:
        return recheck_point(row, as_box(row.get("truth")), expect_refusal=None)


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
    return point_verdict(truth, (px, py), expect_refusal), prediction


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
    return point_verdict(normalize(truth, original_size), (fx, fy), expect_refusal), prediction


def point_verdict(truth: Box, point: Point, expect_refusal: bool = False) -> str:
    """The verdict of a point read from an answer: a hit inside the truth box, edges included (both in the same
    units), else a miss; a miss wherever it lies when the sample expects a refusal (the target is not there)."""
    if expect_refusal:
        return MISS
    return HIT if contains(truth, point) else MISS


def recheck_point(row: Mapping[str, Any], truth: Box | None, expect_refusal: bool | None) -> str | None:
    """Why a report row's verdict is not the one :func:`judge` (or :func:`judge_point`) gives the point it stored
    (``prediction.pixel``) against ``truth`` (the row's truth box, pixels), or None (see :meth:`Task.recheck`).
    ``expect_refusal``: whether the sample expects a refusal; None when the row does not say (a grounding row).

    What the stored evidence settles: a reply cut off at the token limit is ``truncated``; a point is a hit or a miss
    by :func:`point_verdict`, unless it lies within :data:`ROUNDED_PX` of an edge (the report rounds both); a hit
    without a point is a refusal where the sample expects one, so its reply must be a refusal (:func:`is_refusal`).
    Not settled, so never refused: an error (the harness failed: nothing was judged), ``unparsed``, ``refused`` and
    ``truncated`` (read from the reply's text by the model's own adapter, which merge does not run again), and, where
    the row does not say whether its sample expects a refusal, a miss whose point lies inside the box (such a sample
    makes every point a miss)."""
    verdict = row.get("verdict")
    if verdict == ERROR:
        return None
    if row.get("finish_reason") == "length" and verdict != TRUNCATED:
        return f"verdict {verdict}, but its reply was cut off at the token limit (finish_reason length), which is truncated whatever it holds"
    prediction = row.get("prediction")
    point = as_point(prediction.get("pixel")) if isinstance(prediction, dict) else None
    if point is None:
        if verdict != HIT:
            return None
        if expect_refusal is False:
            return "verdict hit, but it names no point, and its sample's target is there (only the refusal of an absent one is a hit without a point)"
        response = row.get("response")
        if not (isinstance(response, str) and is_refusal(response)):
            return "verdict hit, but it has no point and its reply is no refusal"
        return None
    if verdict not in (HIT, MISS):
        return f"verdict {verdict}, but it names a point ({_shown(point)}), which is a hit or a miss"
    if expect_refusal:
        return None if verdict == MISS else f"verdict hit, but its sample expects a refusal and it names a point ({_shown(point)}), a miss"
    if truth is None:
        return f"verdict {verdict}, but its truth is not a box of four numbers [x1, y1, x2, y2] to judge its point against"
    x1, y1, x2, y2 = truth
    wide = (x1 - ROUNDED_PX, y1 - ROUNDED_PX, x2 + ROUNDED_PX, y2 + ROUNDED_PX)
    narrow = (x1 + ROUNDED_PX, y1 + ROUNDED_PX, x2 - ROUNDED_PX, y2 - ROUNDED_PX)
    settled = point_verdict(narrow, point)
    if settled != point_verdict(wide, point) or settled == verdict:
        return None  # on an edge, as far as the rounded numbers tell; or as judged
    if settled == HIT and expect_refusal is None:
        return None
    where = "inside" if settled == HIT else "outside"
    return f"verdict {verdict}, but its point ({_shown(point)}) lies {where} its truth box [{_shown(truth)}], edges included"


def as_point(value: Any) -> Point | None:
    """``value`` as a point when it is two finite numbers, else None."""
    numbers = _finite_numbers(value, 2)
    return (numbers[0], numbers[1]) if numbers else None


def as_box(value: Any) -> Box | None:
    """``value`` as a box when it is four finite numbers, else None."""
    numbers = _finite_numbers(value, 4)
    return (numbers[0], numbers[1], numbers[2], numbers[3]) if numbers else None


def _finite_numbers(value: Any, n: int) -> list[float] | None:
    if not isinstance(value, (list, tuple)) or len(value) != n:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        return None
    return [float(v) for v in value]


def _shown(values: tuple[float, ...]) -> str:
    return ", ".join(format(v, ".10g") for v in values)


def _finite(value: float) -> float:
    """``value`` with an overflow to +-inf held at the largest float, so a far-off point stays a number in the report."""
    return max(-sys.float_info.max, min(sys.float_info.max, value))


TASK = Grounding
