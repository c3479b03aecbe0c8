"""Suites written in Python: samples for a test function from an annotation file or a list of dicts.

Used through :func:`guitest.samples` (a decorator) and the ``guitest_model`` fixture; see
docs/suites.md, "Suites written in Python", and ``suites/python_example``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SuiteError, where
from ..formats import read_suite_samples
from ..geometry import contains
from ..sample import Sample
from ..suite import Suite


@dataclass(frozen=True)
class Point:
    """A point the model answered, in pixels of the original screenshot; ``point in box`` tests a hit (edges included)."""

    x: float
    y: float

    def __iter__(self):  # so that `x, y = point` works
        return iter((self.x, self.y))


@dataclass(frozen=True)
class Region:
    """A truth box in pixels of the original screenshot that supports ``point in region``."""

    x1: float
    y1: float
    x2: float
    y2: float

    def __contains__(self, point: object) -> bool:
        if isinstance(point, Point):
            return contains((self.x1, self.y1, self.x2, self.y2), (point.x, point.y))
        return False


def region(sample: Sample) -> Region:
    """The sample's truth box as a :class:`Region`; a ValueError for a sample without one (a choice, say)."""
    if sample.box is None:
        raise ValueError(f"sample {sample.id!r} has no truth box (its task is not grounding)")
    return Region(*sample.box)


def load_samples(spec: dict[str, Any], base: Path) -> list[Sample]:
    """The samples a ``@guitest.samples(...)`` decorator names; the file and ``images`` are relative to the test file's folder ``base``."""
    source = spec["source"]
    tags = tuple(spec.get("tags", ()))
    if isinstance(source, (str, os.PathLike)):
        path = Path(base, source)
        suite = Suite(
            path=path.parent / "(python suite)",
            name=path.stem,
            format=spec.get("format", "screenspot"),
            data={"dir": ".", "base": "suite", "annotations": path.name, "images": str(Path(base, spec.get("images", ".")))},
            task="grounding",
            prompt="default",
            id_template=spec.get("id"),
            tags=tags,
            cross=(),
            average="micro",
        )
        return read_suite_samples(suite, str(path.parent))
    out = []
    images = Path(base, spec.get("images", "."))
    for index, row in enumerate(source):
        try:
            out.append(
                Sample(
                    id=str(row.get("id", index)),
                    image=str(images / row["image"]),
                    instruction=str(row["instruction"]),
                    box=tuple(float(v) for v in row["box"]),  # type: ignore[arg-type]
                    tags={t: str(row[t]) for t in tags},
                    source=f"samples[{index}]",
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SuiteError(f"{where('@guitest.samples', index, field=str(exc))}: each sample needs image, instruction, box [x1, y1, x2, y2] and its tags") from None
    return out
