"""Blank placeholder screenshots, so real annotation files can run end to end without the real images.

The public benchmarks publish their annotation files in code repositories but their
screenshots on a model hub; :func:`make_placeholders` writes one blank PNG for every
image an annotation file names, of the size the file records (ScreenSpot-Pro) or of
an approximate size (ScreenSpot v1/v2, which record none). A model shown a blank image
cannot find anything: placeholders exercise reading, selection, prompting, resizing,
parsing, scoring and reporting, never a model's accuracy.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import threading
from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from ..datapath import inside
from ..errors import SuiteError

FORMATS = ("screenspot", "screenspot_v2", "screenspot_pro")

# ScreenSpot v1/v2 record no image size. These per-split defaults are approximate
# (typical of each split: an iPhone portrait screen, a 1080p desktop, a 1080p browser),
# and each image is enlarged until every box of every row naming it fits inside.
DEFAULT_SIZES: dict[str, tuple[int, int]] = {
    "mobile": (1170, 2532),
    "desktop": (1920, 1080),
    "web": (1920, 1080),
}
FALLBACK_SIZE = (1920, 1080)  # a file whose name names no known split

GREY = 200
_SPLIT = re.compile(r"screenspot_([a-z]+?)(?:_v2)?\.json$")


def make_placeholders(
    fmt: str,
    annotations: Sequence[str | Path],
    images_dir: Path,
    *,
    overwrite: bool = False,
) -> dict[str, int]:
    """Write a blank grey PNG under ``images_dir`` for every image the annotation files name.

    ``fmt`` is ``screenspot``, ``screenspot_v2`` or ``screenspot_pro``.

    Sizes: a ScreenSpot-Pro image gets exactly its rows' ``img_size``. A ScreenSpot
    v1/v2 image gets its split's default from :data:`DEFAULT_SIZES` (the split comes from
    the file name, ``screenspot_<split>[_v2].json``; :data:`FALLBACK_SIZE` otherwise),
    enlarged in width and height so that every box of every row naming the image fits
    inside. These v1/v2 sizes are approximate, NOT the real screenshots' sizes: they
    exist only to exercise the pipeline, and any number that depends on the image size
    (``sent_size``, resizing) differs from a run on the real images.

    Every row is checked before anything is written: an unreadable file, a row without
    the fields needed, an image path that leaves ``images_dir`` (``..`` or absolute), or
    two different ``img_size`` for one image raise :class:`~guitest.errors.SuiteError`
    listing every problem. An existing file is left alone unless ``overwrite`` is true;
    files are written atomically (temporary file, then rename).

    Returns counts: ``rows`` read, distinct ``images`` named, ``written``, ``skipped``
    (existed already), and ``enlarged`` (v1/v2 images larger than their split default).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown annotation format {fmt!r}; placeholders support {', '.join(FORMATS)}")
    sizes, defaults, rows_read = _image_sizes(fmt, annotations, os.path.normpath(os.fspath(images_dir)))
    written, skipped = _write_blanks(sizes, overwrite)
    enlarged = sum(1 for target, default in defaults.items() if sizes[target] != default)
    return {"rows": rows_read, "images": len(sizes), "written": written, "skipped": skipped, "enlarged": enlarged}


class _Sizes:
    """The size of each image the rows name, gathered row by row with every problem found (see :func:`make_placeholders`)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.sizes: dict[str, tuple[int, int]] = {}  # image path -> size
        self.defaults: dict[str, tuple[int, int]] = {}  # v1/v2: image path -> its split's default
        self.problems: list[str] = []
        self.rows_read = 0

    def add(self, row: Any, where: str, default: tuple[int, int] | None) -> None:
        """Note the image of one row: a ScreenSpot-Pro row's ``img_size`` (``default`` None), else its split's
        ``default`` enlarged to hold the row's box."""
        self.rows_read += 1
        name = row.get("img_filename") if isinstance(row, dict) else None
        if not isinstance(name, str) or not name:
            self.problems.append(f"{where}: 'img_filename' is missing or not a non-empty string")
            return
        target = inside(self.base, name)
        if target is None:
            self.problems.append(f"{where}: image {name!r} resolves outside {self.base}; refusing it")
            return
        if default is None:
            size = _pro_size(row.get("img_size"))
            if size is None:
                self.problems.append(f"{where}: 'img_size' must be [width, height], positive integers; got {row.get('img_size')!r}")
            elif self.sizes.setdefault(target, size) != size:
                self.problems.append(f"{where}: img_size {list(size)} differs from {list(self.sizes[target])} recorded for {name!r} before")
            return
        extent = _xywh_extent(row.get("bbox"))
        if extent is None:
            self.problems.append(f"{where}: 'bbox' must be [x, y, w, h], four numbers; got {row.get('bbox')!r}")
            return
        old = self.sizes.get(target, default)
        self.sizes[target] = (max(old[0], extent[0]), max(old[1], extent[1]))
        self.defaults.setdefault(target, default)


def _image_sizes(fmt: str, annotations: Sequence[str | Path], base: str) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]], int]:
    """``(sizes, defaults, rows read)`` of every image the annotation files name (see :func:`make_placeholders`);
    SuiteError listing every problem when there is one."""
    found = _Sizes(base)
    for annotation in annotations:
        path = os.fspath(annotation)
        rows = _annotation_rows(path, found.problems)
        if rows is None:
            continue
        default = None if fmt == "screenspot_pro" else _split_default(path)
        for index, row in enumerate(rows):
            found.add(row, f"{path}, row {index}", default)
    if found.problems:
        shown = found.problems[:20]
        more = f"\n  ... and {len(found.problems) - len(shown)} more" if len(found.problems) > len(shown) else ""
        raise SuiteError(f"{len(found.problems)} problem(s); no placeholder was written:\n  " + "\n  ".join(shown) + more)
    return found.sizes, found.defaults, found.rows_read


def _annotation_rows(path: str, problems: list[str]) -> list[Any] | None:
    """The JSON list of rows in the annotation file ``path``; None, with the problem noted, when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(f"{path}: cannot read annotation file: {exc}")
        return None
    if not isinstance(rows, list):
        problems.append(f"{path}: expected a JSON list of rows, got {type(rows).__name__}")
        return None
    return rows


def _split_default(path: str) -> tuple[int, int]:
    """A ScreenSpot v1/v2 file's default image size: its split's (``screenspot_<split>[_v2].json``), else :data:`FALLBACK_SIZE`."""
    match = _SPLIT.search(os.path.basename(path))
    return DEFAULT_SIZES.get(match.group(1), FALLBACK_SIZE) if match else FALLBACK_SIZE


def _write_blanks(sizes: dict[str, tuple[int, int]], overwrite: bool) -> tuple[int, int]:
    """Write a blank PNG of its size at each path of ``sizes`` (an existing file only when ``overwrite``): ``(written, skipped)``."""
    encoded: dict[tuple[int, int], bytes] = {}  # a few distinct sizes: encode each once
    made_dirs: set[str] = set()
    written = skipped = 0
    for target in sorted(sizes):
        if not overwrite and os.path.exists(target):
            skipped += 1
            continue
        size = sizes[target]
        data = encoded.get(size)
        if data is None:
            data = encoded[size] = _blank_png(size)
        folder = os.path.dirname(target)
        if folder not in made_dirs:
            os.makedirs(folder, exist_ok=True)
            made_dirs.add(folder)
        _write_atomically(target, data)
        written += 1
    return written, skipped


def _pro_size(value: Any) -> tuple[int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
        return (value[0], value[1])
    return None


def _xywh_extent(value: Any) -> tuple[int, int] | None:
    """The smallest image size that holds an ``[x, y, w, h]`` box: ``(ceil(x + w), ceil(y + h))``, at least 1."""
    if not (isinstance(value, (list, tuple)) and len(value) == 4 and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        return None
    x, y, w, h = value
    return (max(1, math.ceil(x + w)), max(1, math.ceil(y + h)))


def _blank_png(size: tuple[int, int]) -> bytes:
    # A one-colour palette image is stored at 1 bit per pixel: a 6016x3384 placeholder is ~6 KB.
    image = Image.new("P", size, 0)
    image.putpalette([GREY, GREY, GREY])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=9)
    return buffer.getvalue()


def _write_atomically(path: str, data: bytes) -> None:
    # A name unique to this process and thread; open() (unlike mkstemp) honours the umask.
    tmp = f"{path}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
