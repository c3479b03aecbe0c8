"""The HTML report's pictures of the screenshots: linked by path (the default, free) or embedded as thumbnails.

A case's result carries its picture as one string (result key ``thumbnail``): either a
``data:image/jpeg;base64,`` thumbnail or the screenshot's absolute path. :func:`picture`
makes it in the worker, on the request path, so it never decodes anything there:

* ``link`` (the default): the path. The page shows the screenshot file itself (the
  browser decodes and shrinks it when the card scrolls into view), so the report costs
  nothing per case; the page then needs the screenshots where they were.
* ``embed``: a thumbnail in the page, so the page is one self-contained file (a CI
  artifact). A thumbnail needs the pixels; where the model path decoded them anyway
  (``--resize=client``, a re-encode, a local model) it is made from them at once, for a
  few ms; otherwise the result carries the path and :func:`embed` makes the thumbnails
  when the report is written, each file once, in threads (Pillow releases the interpreter
  lock while it decodes, shrinks and encodes, so they use every core). A 4K PNG costs
  100-200 ms of CPU to decode whatever is done with it, so on a ScreenSpot-Pro-sized
  run this is minutes: docs/bench.md has the figures.

A live episode's step screenshots get their thumbnails where they are saved (:func:`save_step_thumbnail`, in the
process that ran the episode, while the model is asked the next step): ``step-01.png`` gets ``step-01.thumb.jpg``
beside it, which the viewer shows in the step strip, the full screenshot one click away. A screenshot no larger
than twice the thumbnail gets none: the browser shrinks a small PNG for nothing, and a MiniWoB++ step (a few
hundred pixels) costs the run no decoding at all.
"""

from __future__ import annotations

import base64
import io
import os
import urllib.parse
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # PIL (with guitest.images' pixel limit) loads where a thumbnail is made: linked pictures never need it
    from PIL import Image

MODES = ("link", "embed")
DEFAULT_MODE = "link"
DATA_PREFIX = "data:image/"
#: a step screenshot's thumbnail: ``<name>.png`` -> ``<name>.thumb.jpg``
THUMBNAIL_SUFFIX = ".thumb.jpg"
#: the thumbnails' longest side (pixels)
MAX_SIDE = 320


def picture(path: str, image: Image.Image | None, mode: str) -> str:
    """What a case's result carries for the report's picture of the screenshot at ``path`` (see the module docstring).

    Never decodes: in ``embed`` mode a thumbnail is made here only from pixels the model
    path already decoded (``image`` loaded); otherwise, and always in ``link`` mode, the
    absolute path is returned.
    """
    if mode == "embed" and image is not None and is_decoded(image):
        from ..images import thumbnail

        return thumbnail(image)
    return os.path.abspath(path)


def is_decoded(image: Image.Image) -> bool:
    """Whether ``image``'s pixels are in memory (a file opened lazily keeps its undecoded tiles until loaded)."""
    return not getattr(image, "tile", ())


def is_embedded(value: object) -> bool:
    """Whether ``value`` is an inline image (a ``data:image/...;base64,`` URI)."""
    return isinstance(value, str) and value.startswith(DATA_PREFIX) and ";base64," in value


def thumbnail_of_file(path: str, max_side: int = 320, quality: int = 70) -> str | None:
    """The thumbnail data URI (see :func:`guitest.images.thumbnail`) of the image file at ``path``; None when it cannot be read.

    A JPEG is decoded at a reduced scale (its DCT allows 1/2, 1/4, 1/8: :meth:`PIL.Image.Image.draft`),
    at least twice the thumbnail's size; other formats are decoded in full.
    """
    from ..images import thumbnail  # first: guitest.images sets PIL's pixel limit
    from PIL import Image

    try:
        with Image.open(path) as image:
            if image.format == "JPEG":
                scale = max(image.size) / max_side
                if scale >= 4:
                    image.draft("RGB", (image.width // int(scale / 2), image.height // int(scale / 2)))
            return thumbnail(image, max_side, quality)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def embed(pictures: Mapping[str, str], threads: int | None = None) -> dict[str, str]:
    """``pictures`` (case id -> data URI or path) with every path replaced by its thumbnail.

    Each distinct file is decoded once, in ``threads`` threads (default: one per core).
    A case whose file cannot be read is left out (its card shows no picture).
    """
    paths = sorted({p for p in pictures.values() if not is_embedded(p)})
    made = dict(zip(paths, _map(thumbnail_of_file, paths, threads), strict=True))
    out = {}
    for case_id, value in pictures.items():
        uri = value if is_embedded(value) else made.get(value)
        if uri is not None:
            out[case_id] = uri
    return out


def _map(fn: Callable[[str], str | None], items: list[str], threads: int | None) -> list[str | None]:
    workers = max(1, min(threads or os.cpu_count() or 1, len(items)))
    if workers == 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(workers, thread_name_prefix="guitest-thumbnail") as pool:
        return list(pool.map(fn, items))


def link(path: str, page_dir: str | os.PathLike[str] | None) -> str | None:
    """The ``src`` with which a page in ``page_dir`` shows the screenshot at absolute ``path``; None for anything but an absolute path.

    A path relative to ``page_dir``, percent-encoded, so it can only ever name a file (a
    ``:`` is encoded, so no scheme); with no ``page_dir``, or none in common (another
    drive), a ``file:`` URI.
    """
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path:
        return None
    if page_dir is not None:
        try:
            rel = os.path.relpath(path, os.path.abspath(page_dir))
        except ValueError:
            rel = None
        if rel is not None:
            return urllib.parse.quote(Path(rel).as_posix(), safe="/")
    return Path(path).as_uri()


def thumbnail_path(path: str) -> str:
    """Where the thumbnail of the screenshot at ``path`` is kept: beside it, ``<name>.thumb.jpg``."""
    return os.path.splitext(path)[0] + THUMBNAIL_SUFFIX


def step_thumbnail(png: bytes, max_side: int = MAX_SIDE) -> bytes | None:
    """A JPEG thumbnail of the screenshot ``png`` (the bytes of an image file), or None when the screenshot is no larger
    than twice ``max_side`` (read from its header alone: nothing is decoded) or cannot be read."""
    from ..images import thumbnail  # first: guitest.images sets PIL's pixel limit
    from PIL import Image

    try:
        with Image.open(io.BytesIO(png)) as image:
            if max(image.size) <= 2 * max_side:
                return None
            uri = thumbnail(image, max_side)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    return base64.b64decode(uri.split(",", 1)[1])


def save_step_thumbnail(path: str, png: bytes) -> str | None:
    """Write the thumbnail of the screenshot ``png`` saved at ``path`` beside it (:func:`thumbnail_path`); its path, or
    None when it needs none, cannot be made or cannot be written (the screenshot itself is what counts)."""
    small = step_thumbnail(png)
    if small is None:
        return None
    target = thumbnail_path(path)
    try:
        with open(target, "wb") as f:
            f.write(small)
    except OSError:
        return None
    return target
