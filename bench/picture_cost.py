"""``--child thumbs``: what the report's pictures of the screenshots cost per image (linked, or embedded thumbnails)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any


def child_thumbs(args: argparse.Namespace) -> dict[str, Any]:
    """What each way of giving the HTML report its pictures costs per screenshot, over a sample of the full-size suite.

    For ``--n`` screenshots spread over every size of the suite (largest first), CPU ms per
    image of: linking (``thumbnails.picture`` in link mode: the path), decoding the PNG alone,
    a thumbnail from the file (a full decode: what the worker did for every case before, and
    what ``--report-images=embed`` does per file when the report is written), a thumbnail
    from pixels already decoded (the model path's decode shared), Pillow's own
    ``Image.thumbnail(reducing_gap=2)``, and the same screenshots as JPEG files (quality 90)
    with and without reduced DCT decoding (``Image.draft``). Then ``thumbnails.embed`` over the
    sample in 1 thread and in one per core: the wall time, to show the threads' speed-up.
    """
    import io
    import tempfile

    from PIL import Image

    from guitest.reporting import thumbnails
    from guitest.images import thumbnail

    paths_by_size: dict[tuple[int, int], list[str]] = {}
    for f in sorted(Path(args.suite, "data", "annotations").glob("*.json")):
        for row in json.loads(f.read_text()):
            paths_by_size.setdefault(tuple(row["img_size"]), []).append(str(Path(args.suite, "data", "images", row["img_filename"])))
    sizes = sorted(paths_by_size, key=lambda s: -s[0] * s[1])
    picked: list[str] = []
    while len(picked) < args.n and any(paths_by_size.values()):
        for size in sizes:
            if paths_by_size[size] and len(picked) < args.n:
                picked.append(paths_by_size[size].pop(0))

    def cpu_ms(fn: Any, items: list[Any]) -> float:
        c = time.process_time()
        for item in items:
            fn(item)
        return 1000 * (time.process_time() - c) / len(items)

    def decode(path: str) -> None:
        with Image.open(path) as im:
            im.load()

    def pil_thumbnail(path: str) -> None:
        with Image.open(path) as im:
            im.thumbnail((320, 320), reducing_gap=2.0)
            im.convert("RGB").save(io.BytesIO(), "JPEG", quality=70)

    def from_decoded(im: Any) -> None:
        thumbnail(im)

    def jpeg_full(path: str) -> None:
        with Image.open(path) as im:
            thumbnail(im)

    def size_of(path: str) -> tuple[int, int]:
        with Image.open(path) as im:
            return im.size

    out: dict[str, Any] = {"n": len(picked), "sizes": sorted({size_of(p) for p in picked}, key=lambda s: -s[0] * s[1])}
    ms = out["cpu_ms_per_image"] = {}
    ms["link (the path; default)"] = cpu_ms(lambda p: thumbnails.picture(p, None, "link"), picked)
    ms["PNG decode alone"] = cpu_ms(decode, picked)
    ms["thumbnail from the PNG file (a full decode: the worker before; embed per file)"] = cpu_ms(thumbnails.thumbnail_of_file, picked)
    ms["Pillow Image.thumbnail(reducing_gap=2) from the PNG file"] = cpu_ms(pil_thumbnail, picked)
    decoded = []
    for p in picked[: min(len(picked), 12)]:  # a dozen decoded frames in memory at once, not the whole sample
        im = Image.open(p)
        im.load()
        decoded.append(im)
    ms["thumbnail from pixels already decoded (shared with the model path)"] = cpu_ms(from_decoded, decoded)
    decoded.clear()
    with tempfile.TemporaryDirectory() as tmp:
        jpegs = []
        for i, p in enumerate(picked):
            with Image.open(p) as im:
                j = os.path.join(tmp, f"{i}.jpg")
                im.convert("RGB").save(j, "JPEG", quality=90)
                jpegs.append(j)
        ms["JPEG file: thumbnail with a full decode"] = cpu_ms(jpeg_full, jpegs)
        ms["JPEG file: thumbnail with reduced DCT decoding (Image.draft; embed)"] = cpu_ms(thumbnails.thumbnail_of_file, jpegs)
    four_k = [p for p in picked if size_of(p) == (3840, 2160)]
    if four_k:
        out["cpu_ms_per_4k_image"] = {
            "PNG decode alone": cpu_ms(decode, four_k),
            "thumbnail from the PNG file": cpu_ms(thumbnails.thumbnail_of_file, four_k),
        }
    pictures = {str(i): p for i, p in enumerate(picked)}
    walls = out["embed_wall_s"] = {}
    for threads in sorted({1, os.cpu_count() or 1}):
        t = time.perf_counter()
        made = thumbnails.embed(pictures, threads=threads)
        walls[threads] = time.perf_counter() - t
        assert len(made) == len(picked)
    out["thumbnail_kb"] = sum(len(v) for v in made.values()) / len(made) / 1024
    return out
