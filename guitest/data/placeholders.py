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
    base = os.path.normpath(os.fspath(images_dir))
    sizes: dict[str, tuple[int, int]] = {}  # image path -> size
    defaults: dict[str, tuple[int, int]] = {}  # v1/v2: image path -> its split's default
    problems: list[str] = []
    rows_read = 0
    for annotation in annotations:
        path = os.fspath(annotation)
        try:
            with open(path, encoding="utf-8") as f:
                rows = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append(f"{path}: cannot read annotation file: {exc}")
            continue
        if not isinstance(rows, list):
            problems.append(f"{path}: expected a JSON list of rows, got {type(rows).__name__}")
            continue
        if fmt == "screenspot_pro":
            default = None
        else:
            match = _SPLIT.search(os.path.basename(path))
            default = DEFAULT_SIZES.get(match.group(1), FALLBACK_SIZE) if match else FALLBACK_SIZE
        for index, row in enumerate(rows):
            rows_read += 1
            where = f"{path}, row {index}"
            name = row.get("img_filename") if isinstance(row, dict) else None
            if not isinstance(name, str) or not name:
                problems.append(f"{where}: 'img_filename' is missing or not a non-empty string")
                continue
            target = inside(base, name)
            if target is None:
                problems.append(f"{where}: image {name!r} resolves outside {base}; refusing it")
                continue
            if default is None:
                size = _pro_size(row.get("img_size"))
                if size is None:
                    problems.append(f"{where}: 'img_size' must be [width, height], positive integers; got {row.get('img_size')!r}")
                    continue
                if sizes.setdefault(target, size) != size:
                    problems.append(f"{where}: img_size {list(size)} differs from {list(sizes[target])} recorded for {name!r} before")
            else:
                extent = _xywh_extent(row.get("bbox"))
                if extent is None:
                    problems.append(f"{where}: 'bbox' must be [x, y, w, h], four numbers; got {row.get('bbox')!r}")
                    continue
                old = sizes.get(target, default)
                sizes[target] = (max(old[0], extent[0]), max(old[1], extent[1]))
                defaults.setdefault(target, default)
    if problems:
        shown = problems[:20]
        more = f"\n  ... and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
        raise SuiteError(f"{len(problems)} problem(s); no placeholder was written:\n  " + "\n  ".join(shown) + more)

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
    enlarged = sum(1 for target, default in defaults.items() if sizes[target] != default)
    return {"rows": rows_read, "images": len(sizes), "written": written, "skipped": skipped, "enlarged": enlarged}


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
