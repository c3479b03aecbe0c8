"""A benchmark sample: what one case needs, as paths and numbers (never pixels)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Sample:
    """One benchmark sample, as a reader produced it.

    ``box`` is the truth box as ``(x1, y1, x2, y2)`` in pixels of the ORIGINAL image
    (readers convert their format's convention once). It is normalised to 0..1 when the
    case runs, because ScreenSpot v1/v2 do not record the image size and reading every
    image header at collection would make collection of large suites slow. Tasks without
    a truth box (a choice, a list of elements, a trajectory) leave it None and keep their
    input and truth in ``data`` as plain builtins (see the task's module).
    """

    id: str
    image: str
    instruction: str
    box: tuple[float, float, float, float] | None
    tags: dict[str, str]
    source: str
    size: tuple[int, int] | None = None
    expect_refusal: bool = False
    notes: tuple[str, ...] = field(default=())
    data: dict[str, Any] = field(default_factory=dict)
