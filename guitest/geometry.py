"""Boxes and points: conversions between coordinate conventions, clipping, hit testing."""

from __future__ import annotations

Box = tuple[float, float, float, float]
Point = tuple[float, float]


def xywh_to_xyxy(box: list[float] | tuple[float, ...]) -> Box:
    """``(x, y, w, h)`` to ``(x1, y1, x2, y2)``."""
    x, y, w, h = box
    return (x, y, x + w, y + h)


def clip(box: Box, size: tuple[int, int]) -> tuple[Box, bool]:
    """Clip a pixel box to ``[0, w] x [0, h]``; also say whether anything was cut."""
    w, h = size
    x1, y1, x2, y2 = box
    clipped = (min(max(x1, 0), w), min(max(y1, 0), h), min(max(x2, 0), w), min(max(y2, 0), h))
    return clipped, clipped != tuple(box)


def is_proper(box: Box) -> bool:
    """True when the box has positive width and height."""
    return box[2] > box[0] and box[3] > box[1]


def normalize(box: Box, size: tuple[int, int]) -> Box:
    """A pixel box as fractions of the image size."""
    w, h = size
    return (box[0] / w, box[1] / h, box[2] / w, box[3] / h)


def center(box: Box) -> Point:
    """The centre of a box."""
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def contains(box: Box, point: Point) -> bool:
    """True when ``point`` lies in ``box``, edges included."""
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


SPACES = ("normalized", "grid1000", "pixel_sent", "pixel_original")


def to_original_pixels(point: Point, space: str, sent_size: tuple[int, int], original_size: tuple[int, int]) -> Point:
    """Map a point from a model's declared output space to pixels of the original image."""
    x, y = point
    ow, oh = original_size
    if space == "normalized":
        return (x * ow, y * oh)
    if space == "grid1000":
        return (x / 1000 * ow, y / 1000 * oh)
    if space == "pixel_sent":
        sw, sh = sent_size
        return (x / sw * ow, y / sh * oh)
    if space == "pixel_original":
        return (x, y)
    raise ValueError(f"unknown coordinate space {space!r}; expected one of {', '.join(SPACES)}")


def from_original_pixels(point: Point, space: str, sent_size: tuple[int, int], original_size: tuple[int, int]) -> Point:
    """Map a point in pixels of the original image into a declared coordinate space (inverse of the above)."""
    x, y = point
    ow, oh = original_size
    if space == "normalized":
        return (x / ow, y / oh)
    if space == "grid1000":
        return (x / ow * 1000, y / oh * 1000)
    if space == "pixel_sent":
        sw, sh = sent_size
        return (x / ow * sw, y / oh * sh)
    if space == "pixel_original":
        return (x, y)
    raise ValueError(f"unknown coordinate space {space!r}; expected one of {', '.join(SPACES)}")


def guess_space(point: Point, sent_size: tuple[int, int]) -> str:
    """The ``auto`` profile's magnitude guess: 0..1 normalized, within the sent image pixels, else 0..1000 grid, else original pixels."""
    x, y = point
    if 0 <= x <= 1 and 0 <= y <= 1:
        return "normalized"
    if 0 <= x <= sent_size[0] and 0 <= y <= sent_size[1]:
        return "pixel_sent"
    if 0 <= x <= 1000 and 0 <= y <= 1000:
        return "grid1000"
    return "pixel_original"
