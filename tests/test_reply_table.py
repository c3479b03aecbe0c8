"""The reply table: replies in the styles of real model families, judged by hand.

Each entry of ``tests/data/replies.yaml`` carries a reply, the image size, the size
sent, the truth box in original pixels and the verdict derived by hand from the
profile's declared coordinate convention (docs/profiles.md). The table is checked
for its own consistency first (sizes, boxes, the hand-derived pixel against the
expected verdict), then every entry is run through
``guitest.tasks.grounding.judge``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

TABLE = Path(__file__).parent / "data" / "replies.yaml"
ENTRIES: list[dict[str, Any]] = yaml.safe_load(TABLE.read_text(encoding="utf-8"))

VERDICTS = {"hit", "miss", "unparsed", "refused", "truncated"}
REQUIRED = ("profile", "reply", "image", "sent", "box", "expect", "source", "note")

# Profiles whose answers are pixels of the image actually sent, and the smart_resize
# parameters they are sent with: (factor, min_pixels, max_pixels).
#   qwen2.5-vl: the processor defaults, 4*28*28 .. 16384*28*28
#     (QwenLM/Qwen2-VL qwen-vl-utils/src/qwen_vl_utils/vision_process.py MIN_PIXELS/MAX_PIXELS;
#      Qwen2.5-VL preprocessor_config.json min_pixels 3136, max_pixels 12845056)
#   ui-tars-1.5: 100*28*28 .. 16384*28*28
#     (bytedance/UI-TARS codes/ui_tars/action_parser.py and README_coordinates.md)
SMART_RESIZE = {
    "qwen2.5-vl": (28, 4 * 28 * 28, 16384 * 28 * 28),
    "ui-tars-1.5": (28, 100 * 28 * 28, 16384 * 28 * 28),
}

# How far a hand-derived point must stay from a box edge, so that rounding in the
# implementation can never flip a verdict.
EDGE_MARGIN = 1.5
PIXEL_TOLERANCE = 1.0


def smart_resize(width: int, height: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen2-VL's smart_resize, returning ``(width, height)``.

    Transcribed from the definition in the Qwen2-VL image processor
    (``qwen_vl_utils.vision_process.smart_resize``): both sides rounded to a multiple
    of ``factor``; if the area is over ``max_pixels`` both sides are scaled down by
    ``sqrt(area / max_pixels)`` and floored to the factor, if under ``min_pixels``
    scaled up and ceiled.
    """
    if max(height, width) / min(height, width) > 200:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return w_bar, h_bar


def _case_id(index: int, entry: dict[str, Any]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", entry.get("note", "").lower()).strip("-")
    return f"{entry['profile']}-{index:03d}-{slug[:48].rstrip('-')}"


IDS = [_case_id(i, e) for i, e in enumerate(ENTRIES)]


def _inside(box: list[float], point: list[float]) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _edge_distance(box: list[float], point: list[float]) -> float:
    return min(abs(point[0] - box[0]), abs(point[0] - box[2]), abs(point[1] - box[1]), abs(point[1] - box[3]))


# --- the table itself -------------------------------------------------------------


def test_table_is_big_enough() -> None:
    assert len(ENTRIES) >= 60


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_entry_is_well_formed(entry: dict[str, Any]) -> None:
    missing = [k for k in REQUIRED if k not in entry]
    assert not missing, f"missing fields {missing}"
    assert entry["expect"] in VERDICTS
    assert entry.get("finish_reason", "stop") in ("stop", "length")
    x1, y1, x2, y2 = entry["box"]
    assert x2 > x1 and y2 > y1, "truth box must have positive width and height"
    width, height = entry["image"]
    assert 0 <= x1 and 0 <= y1 and x2 <= width and y2 <= height, "truth box must lie in the image"
    if entry["expect"] in ("hit", "miss"):
        assert "pixel" in entry, "hit/miss entries carry the hand-derived pixel"


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_sent_size_follows_the_profile(entry: dict[str, Any]) -> None:
    width, height = entry["image"]
    if entry["profile"] in SMART_RESIZE:
        factor, min_pixels, max_pixels = SMART_RESIZE[entry["profile"]]
        assert tuple(entry["sent"]) == smart_resize(width, height, factor, min_pixels, max_pixels)
    else:
        assert tuple(entry["sent"]) == (width, height)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["expect"] in ("hit", "miss")], ids=[i for i, e in zip(IDS, ENTRIES, strict=True) if e["expect"] in ("hit", "miss")])
def test_hand_derived_pixel_agrees_with_the_verdict(entry: dict[str, Any]) -> None:
    box, pixel = entry["box"], entry["pixel"]
    assert _inside(box, pixel) == (entry["expect"] == "hit")
    assert _edge_distance(box, pixel) >= EDGE_MARGIN, "point too close to a box edge: ambiguous under rounding"


# --- the implementation -------------------------------------------------------------


def test_every_profile_is_in_the_table_three_times() -> None:
    from guitest import profiles

    counts = {name: sum(1 for e in ENTRIES if e["profile"] == name) for name in profiles.PROFILES}
    assert all(n >= 3 for n in counts.values()), counts
    unknown = {e["profile"] for e in ENTRIES} - set(profiles.PROFILES)
    assert not unknown, f"table names profiles guitest does not know: {sorted(unknown)}"


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_reply_is_judged_as_by_hand(entry: dict[str, Any]) -> None:
    from guitest import profiles
    from guitest.tasks.grounding import judge

    profile = profiles.get(entry["profile"])
    verdict, prediction = judge(
        entry["reply"],
        entry.get("finish_reason", "stop"),
        tuple(entry["box"]),
        profile,
        tuple(entry["sent"]),
        tuple(entry["image"]),
    )
    context = f"\nreply: {entry['reply']!r}\nprediction: {prediction}\nsource: {entry['source']}"
    assert verdict == entry["expect"], f"verdict {verdict!r}, expected {entry['expect']!r}{context}"
    if entry["expect"] in ("hit", "miss"):
        assert prediction is not None, f"no prediction for a {entry['expect']}{context}"
        got = prediction["pixel"]
        want = entry["pixel"]
        assert abs(got[0] - want[0]) <= PIXEL_TOLERANCE and abs(got[1] - want[1]) <= PIXEL_TOLERANCE, f"pixel {got}, expected {want}{context}"


@pytest.mark.parametrize("name", sorted(SMART_RESIZE))
def test_profile_sizing_matches_the_published_defaults(name: str) -> None:
    """The profile's own sizing gives the sizes the table was derived with."""
    from guitest import profiles

    from guitest.images import target_size

    sizing = profiles.get(name).sizing
    factor, min_pixels, max_pixels = SMART_RESIZE[name]
    assert (sizing.kind, sizing.factor, sizing.min_pixels, sizing.max_pixels) == ("smart_resize", factor, min_pixels, max_pixels)
    for entry in (e for e in ENTRIES if e["profile"] == name):
        got = target_size(tuple(entry["image"]), sizing.kind, sizing.factor, sizing.min_pixels, sizing.max_pixels)
        assert tuple(got) == tuple(entry["sent"]), entry["image"]
