"""A full-size ScreenSpot-Pro suite for the bench: the real annotations, screenshots generated at their real sizes.

    python bench/make_pro.py OUT [--annotations DIR] [--size WxH] [--limit N] [--processes P]

writes ``OUT/suite.yaml`` (``format: screenspot_pro``, the tags and id of
``suites/screenspot_pro``), ``OUT/data/annotations/*.json`` (the 1581 real annotation
rows, copied from ``--annotations``, default ``../shared/data/screenspot_pro`` beside the
repository) and one PNG per row under ``OUT/data/images/`` at the row's ``img_size``
(1920x1080 to 6016x3384), as the real data set has.

The screenshots are not downloadable here, so each is composed: the canvas is tiled
with crops of the real UI screenshots in ``../shared/data/screenshots`` (at 1x, or
resampled 2x as on a Retina display), and a "document" panel of photo-like content
(smooth colour noise with grain: the viewport of a 3D, photo, video or CAD application)
covers about a fifth of it. The mix is tuned so that the files have the entropy of the
real ones: the real ScreenSpot-Pro PNGs average about 0.37 bytes per pixel (3.4 GB for
9.3 gigapixels), these about the same, so a 3840x2160 screenshot is a 2-4 MB file and
decodes as slowly as a real one.

Generation is cached: an image already on disk at its size is kept, and a stamp
(``OUT/.made``) records the generator version and the rows, so a second call returns at
once. It runs in ``--processes`` processes (default: all cores): about 0.3 s of CPU per
image, so the whole set takes about 6 minutes once on 2 cores (docs/bench.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from PIL import Image, ImageFilter

VERSION = "make_pro 1"
REPO = Path(__file__).resolve().parent.parent
ANNOTATIONS = REPO.parent / "shared" / "data" / "screenspot_pro"
SCREENSHOTS = REPO.parent / "shared" / "data" / "screenshots"
STAMP = ".made"
PHOTO_SHARE = 0.18  # of the canvas area covered by photo-like content (tuned to the real files' bytes per pixel)

SUITE_YAML = """\
name: {name}
format: screenspot_pro
data:
  dir: data
  base: suite
  annotations: annotations/*.json
  images: images
task: grounding
prompt: default
id: "{{group}}-{{application}}-{{platform}}-{{ui_type}}-{{id}}"
tags: [group, application, platform, ui_type]
cross: [[group, ui_type], [platform, ui_type]]
average: micro
"""

_POOL: dict[str, list[Image.Image]] = {}


def _sources() -> list[Image.Image]:
    """The real UI screenshots to tile from (RGB), loaded once per process."""
    if "ui" not in _POOL:
        images = []
        for path in sorted(SCREENSHOTS.rglob("*.png")):
            with Image.open(path) as im:
                if im.width >= 900 and im.height >= 500:
                    images.append(im.convert("RGB"))
        if not images:
            raise SystemExit(f"no screenshots to tile from under {SCREENSHOTS}")
        _POOL["ui"] = images
    return _POOL["ui"]


def _textures() -> list[Image.Image]:
    """Photo-like textures (smooth colour noise with grain), made once per process from a fixed seed."""
    if "photo" not in _POOL:
        rng = random.Random(7)
        out = []
        for _ in range(3):
            w, h = 2048, 1536
            low = Image.frombytes("RGB", (w // 12, h // 12), rng.randbytes((w // 12) * (h // 12) * 3)).resize((w, h), Image.Resampling.BICUBIC)
            grain = Image.effect_noise((w, h), 20).convert("RGB")
            out.append(Image.blend(low, grain, 0.12).filter(ImageFilter.SMOOTH))
        _POOL["photo"] = out
    return _POOL["photo"]


def _crop(source: Image.Image, w: int, h: int, rng: random.Random) -> Image.Image:
    x = rng.randrange(0, max(1, source.width - w))
    y = rng.randrange(0, max(1, source.height - h))
    return source.crop((x, y, min(x + w, source.width), min(y + h, source.height)))


def compose(size: tuple[int, int], seed: int) -> Image.Image:
    """A screenshot-like image of ``size``: real UI tiles, one photo-like document panel; the same for the same seed."""
    rng = random.Random(seed)
    w, h = size
    canvas = Image.new("RGB", size, (30, 30, 34))
    sources = _sources()
    retina = w >= 2880 and rng.random() < 0.6  # Retina Macs: UI drawn at 2x
    y = 0
    while y < h:
        row_h = min(h - y, rng.randrange(500, 1300))
        x = 0
        while x < w:
            tile_w = min(w - x, rng.randrange(700, 2400))
            source = rng.choice(sources)
            if retina:
                part = _crop(source, (tile_w + 1) // 2, (row_h + 1) // 2, rng)
                part = part.resize((part.width * 2, part.height * 2), Image.Resampling.BILINEAR)
            else:
                part = _crop(source, tile_w, row_h, rng)
            canvas.paste(part.crop((0, 0, min(part.width, tile_w), min(part.height, row_h))), (x, y))
            x += tile_w
        y += row_h
    # the document panel: photo-like content, PHOTO_SHARE of the area, made of texture crops
    area = PHOTO_SHARE * w * h * rng.uniform(0.7, 1.3)
    pw = min(w, int((area * rng.uniform(1.2, 1.8)) ** 0.5))
    ph = min(h, int(area / pw))
    px, py = rng.randrange(0, w - pw + 1), rng.randrange(0, h - ph + 1)
    textures = _textures()
    ty = 0
    while ty < ph:
        tx = 0
        th = min(ph - ty, 1536)
        while tx < pw:
            tw = min(pw - tx, 2048)
            canvas.paste(_crop(rng.choice(textures), tw, th, rng), (px + tx, py + ty))
            tx += tw
        ty += th
    return canvas


def _make_one(job: tuple[str, tuple[int, int], int]) -> tuple[str, int, float]:
    path, size, seed = job
    t = time.process_time()
    image = compose(size, seed)
    tmp = f"{path}.tmp{os.getpid()}"
    image.save(tmp, format="PNG", compress_level=1)
    os.replace(tmp, path)
    return path, os.path.getsize(path), time.process_time() - t


def _rows(annotations: Path) -> dict[str, list[dict[str, Any]]]:
    files = sorted(annotations.glob("*.json"))
    if not files:
        raise SystemExit(f"no ScreenSpot-Pro annotations (*.json) under {annotations}: pass --annotations DIR")
    return {f.name: json.loads(f.read_text()) for f in files}


def _has_size(path: Path, size: tuple[int, int]) -> bool:
    try:
        with Image.open(path) as im:
            return im.size == size
    except OSError:
        return False


def make(out: Path, annotations: Path = ANNOTATIONS, limit: int | None = None, processes: int | None = None, name: str | None = None, size: tuple[int, int] | None = None) -> dict[str, Any]:
    """Write the suite (cached, see the module docstring); returns counts, bytes and seconds. ``size``: only the rows
    of that ``img_size`` (e.g. the 270 rows of 3840x2160)."""
    t0 = time.perf_counter()
    files = _rows(annotations)
    if size is not None:
        files = {fname: kept for fname, rows in files.items() if (kept := [r for r in rows if tuple(r["img_size"]) == tuple(size)])}
    if limit is not None:  # the first ``limit`` rows over all files, in file order: a smaller set of the same shape
        left, cut = limit, {}
        for fname, rows in files.items():
            if left <= 0:
                break
            cut[fname] = rows[:left]
            left -= len(cut[fname])
        files = cut
    digest = hashlib.sha256(json.dumps([VERSION, files], sort_keys=True).encode()).hexdigest()[:16]
    stamp = out / STAMP
    data = out / "data"
    images = data / "images"
    jobs = []
    for rows in files.values():
        for row in rows:
            size = tuple(row["img_size"])
            path = images / row["img_filename"]
            jobs.append((str(path), size, int(hashlib.sha256(row["img_filename"].encode()).hexdigest()[:8], 16)))
    made = 0
    cpu = 0.0
    if not (stamp.is_file() and stamp.read_text() == digest):
        stamp.unlink(missing_ok=True)
        if (data / "annotations").exists():
            shutil.rmtree(data / "annotations")
        (data / "annotations").mkdir(parents=True)
        for fname, rows in files.items():
            (data / "annotations" / fname).write_text(json.dumps(rows, indent=1, ensure_ascii=False))
        (out / "suite.yaml").write_text(SUITE_YAML.format(name=name or out.name.replace("-", "_")))
        todo = []
        for job in jobs:
            Path(job[0]).parent.mkdir(parents=True, exist_ok=True)
            if not _has_size(Path(job[0]), job[1]):
                todo.append(job)
        with ProcessPoolExecutor(max_workers=processes or os.cpu_count() or 1) as pool:
            for _path, _size, seconds in pool.map(_make_one, todo, chunksize=4):
                made += 1
                cpu += seconds
                if made % 100 == 0:
                    print(f"  {made}/{len(todo)} screenshots ({time.perf_counter() - t0:.0f} s)", flush=True)
        stamp.write_text(digest)
    sizes = [os.path.getsize(j[0]) for j in jobs]
    pixels = sum(j[1][0] * j[1][1] for j in jobs)
    return {
        "folder": str(out),
        "cases": len(jobs),
        "images": len({j[0] for j in jobs}),
        "made": made,
        "made_cpu_s": round(cpu, 1),
        "seconds": round(time.perf_counter() - t0, 1),
        "image_bytes": sum(sizes),
        "mean_mb": round(sum(sizes) / len(sizes) / 1e6, 2),
        "max_mb": round(max(sizes) / 1e6, 2),
        "bytes_per_pixel": round(sum(sizes) / pixels, 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="suite folder to write")
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS, help=f"folder of the real ScreenSpot-Pro annotation files (default {ANNOTATIONS})")
    parser.add_argument("--size", default=None, help="only the rows of this img_size, WxH (e.g. 3840x2160)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N rows (a smaller set of the same shape)")
    parser.add_argument("--processes", type=int, default=None, help="generator processes (default: all cores)")
    parser.add_argument("--name", default=None, help="suite name (default: from the folder name)")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x")) if args.size else None
    print(json.dumps(make(args.out, args.annotations, args.limit, args.processes, args.name, size)))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
