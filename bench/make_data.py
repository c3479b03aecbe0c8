"""Generate benchmark suites in the ScreenSpot layout (deterministic, no download).

    python bench/make_data.py OUT --cases N --kind small|large [--images K] [--seed S]

writes ``OUT/suite.yaml`` and ``OUT/data/screenspot_{mobile,desktop,web}.json`` plus
``OUT/data/imgs/*.png``: the suite shape of ``tests/builders.py`` (``format:
screenspot``, ``task: grounding``, tags ``[split, data_type, data_source]``,
``data: {dir: data, base: suite, annotations: "screenspot_*.json", images: imgs}``).

Kinds:

* ``small``: 320x240 screenshots, ``--images`` distinct ones (default 8) shared by
  all rows; for the throughput runs and (with ``--cases 100000``) the collection run.
* ``large``: ScreenSpot-Pro-sized screenshots, 2560x1440 to 3840x2160, with
  screenshot-like content (windows, toolbars, lines of anti-aliased text, icons, a
  photo-like panel) so PNG decode and encode cost what they cost on real data:
  a 3840x2160 one is a few MB of PNG, not a blank frame. ``--images`` distinct
  ones (default: one per case, like ScreenSpot-Pro where nearly every row has its
  own screenshot).

Rows are spread round-robin over the three splits; boxes lie inside their image.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

SUITE_YAML = """\
name: {name}
format: screenspot
data:
  dir: data
  base: suite
  annotations: "screenspot_*.json"
  images: imgs
task: grounding
id: "{{split}}-{{data_source}}-{{data_type}}-{{row}}"
tags: [split, data_type, data_source]
cross: [[split, data_type]]
"""

SPLITS = ("mobile", "desktop", "web")
SOURCES = {"mobile": ("ios", "android"), "desktop": ("windows", "macos"), "web": ("shop", "forum", "tool", "gitlab")}
LARGE_SIZES = ((2560, 1440), (2880, 1800), (3440, 1440), (3840, 2160))
WORDS = (
    "File Edit View Insert Format Tools Window Help Open Save Export Settings Layers Properties "
    "Render Timeline Project Assets Console Debug Build Run Terminal Search Replace Filter Sort "
    "Account Profile Dashboard Reports Invoice Customer Order Total Amount Status Pending Shipped"
).split()


def small_image(rng: random.Random, size: tuple[int, int] = (320, 240)) -> Image.Image:
    """A small synthetic screenshot: a few flat panels and bars (cheap, compresses well)."""
    image = Image.new("RGB", size, tuple(rng.randrange(200, 250) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    w, h = size
    draw.rectangle((0, 0, w, 20), fill=tuple(rng.randrange(40, 120) for _ in range(3)))
    for _ in range(12):
        x, y = rng.randrange(0, w - 40), rng.randrange(24, h - 16)
        draw.rectangle((x, y, x + rng.randrange(16, 40), y + rng.randrange(8, 16)), fill=tuple(rng.randrange(0, 256) for _ in range(3)))
    return image


def large_image(rng: random.Random, size: tuple[int, int]) -> Image.Image:
    """A screenshot-like image: desktop, windows with title bars, toolbars, text, icons, a photo panel."""
    w, h = size
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    tint = Image.new("RGB", size, tuple(rng.randrange(30, 120) for _ in range(3)))
    image = Image.blend(image, tint, 0.6)
    draw = ImageDraw.Draw(image)
    fonts = [ImageFont.load_default(size=s) for s in (13, 15, 18, 24)]
    # a taskbar
    draw.rectangle((0, h - 48, w, h), fill=(32, 32, 40))
    for i in range(24):
        x = 12 + i * 56
        draw.rounded_rectangle((x, h - 42, x + 40, h - 6), 6, fill=tuple(rng.randrange(60, 230) for _ in range(3)))
    # windows
    for _ in range(rng.randrange(3, 6)):
        ww, wh = rng.randrange(w // 3, int(w * 0.7)), rng.randrange(h // 3, int(h * 0.8))
        x0, y0 = rng.randrange(0, w - ww), rng.randrange(0, h - 48 - wh)
        bg = tuple(rng.randrange(225, 256) for _ in range(3))
        draw.rectangle((x0 + 6, y0 + 6, x0 + ww + 6, y0 + wh + 6), fill=(20, 20, 20))
        draw.rectangle((x0, y0, x0 + ww, y0 + wh), fill=bg, outline=(120, 120, 120))
        draw.rectangle((x0, y0, x0 + ww, y0 + 34), fill=tuple(rng.randrange(50, 200) for _ in range(3)))
        draw.text((x0 + 12, y0 + 8), " ".join(rng.choice(WORDS) for _ in range(4)), fill=(255, 255, 255), font=fonts[2])
        # toolbar of icons
        for i in range(min(40, ww // 40)):
            ix = x0 + 10 + i * 38
            color = tuple(rng.randrange(0, 256) for _ in range(3))
            shape = rng.randrange(3)
            box = (ix, y0 + 42, ix + 28, y0 + 70)
            if shape == 0:
                draw.ellipse(box, fill=color)
            elif shape == 1:
                draw.rounded_rectangle(box, 5, fill=color)
            else:
                draw.polygon([(ix + 14, y0 + 42), (ix + 28, y0 + 70), (ix, y0 + 70)], fill=color)
        # a side panel of items and a body of text lines
        side = rng.randrange(160, 320)
        draw.rectangle((x0, y0 + 78, x0 + side, y0 + wh), fill=tuple(c - 20 for c in bg))
        y = y0 + 86
        while y < y0 + wh - 20:
            draw.text((x0 + 10, y), " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4))), fill=(30, 30, 30), font=fonts[1])
            y += 24
        y = y0 + 86
        font = rng.choice(fonts[:2])
        while y < y0 + wh - 20:
            n = rng.randrange(3, max(4, (ww - side) // 60))
            draw.text((x0 + side + 14, y), " ".join(rng.choice(WORDS).lower() for _ in range(n)), fill=(20, 20, 20), font=font)
            y += rng.randrange(18, 30)
    # a photo-like panel: smooth colour noise, the part of a screenshot PNG compresses worst
    pw, ph = w // 4, h // 4
    noise = Image.frombytes("RGB", (pw // 8, ph // 8), rng.randbytes((pw // 8) * (ph // 8) * 3)).resize((pw, ph), Image.Resampling.BICUBIC)
    grain = Image.effect_noise((pw, ph), 18).convert("RGB")
    photo = Image.blend(noise, grain, 0.15).filter(ImageFilter.SMOOTH)
    image.paste(photo, (rng.randrange(0, w - pw), rng.randrange(0, h - 48 - ph)))
    return image


def make(out: Path, cases: int, kind: str, images: int | None = None, seed: int = 0, name: str | None = None) -> dict:
    """Write the suite; returns what was written (counts, sizes, seconds)."""
    t0 = time.perf_counter()
    rng = random.Random(seed)
    data = out / "data"
    imgs = data / "imgs"
    imgs.mkdir(parents=True, exist_ok=True)
    n_images = images or (8 if kind == "small" else cases)
    n_images = max(1, min(n_images, cases))
    sizes = []
    image_bytes = 0
    for i in range(n_images):
        path = imgs / f"img{i:05d}.png"
        if kind == "small":
            size = (320, 240)
            img = small_image(rng, size)
        else:
            size = LARGE_SIZES[i % len(LARGE_SIZES)]
            img = large_image(rng, size)
        if not path.exists() or Image.open(path).size != size:
            img.save(path, optimize=False)
        sizes.append(size)
        image_bytes += path.stat().st_size
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for i in range(cases):
        split = SPLITS[i % 3]
        img = i % n_images
        w, h = sizes[img]
        bw, bh = rng.randrange(10, max(11, w // 10)), rng.randrange(10, max(11, h // 10))
        x, y = rng.randrange(0, w - bw), rng.randrange(0, h - bh)
        rows[split].append(
            {
                "img_filename": f"img{img:05d}.png",
                "bbox": [x, y, bw, bh],
                "instruction": f"click the {rng.choice(WORDS).lower()} control number {i}",
                "data_type": rng.choice(("text", "icon")),
                "data_source": rng.choice(SOURCES[split]),
            }
        )
    for split, entries in rows.items():
        (data / f"screenspot_{split}.json").write_text(json.dumps(entries, indent=1))
    (out / "suite.yaml").write_text(SUITE_YAML.format(name=name or out.name.replace("-", "_")))
    return {
        "folder": str(out),
        "cases": cases,
        "images": n_images,
        "image_bytes": image_bytes,
        "sizes": sorted(set(sizes)),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="suite folder to write")
    parser.add_argument("--cases", type=int, required=True)
    parser.add_argument("--kind", choices=("small", "large"), default="small")
    parser.add_argument("--images", type=int, default=None, help="distinct screenshots (small: 8; large: one per case)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default=None, help="suite name (default: from the folder name)")
    args = parser.parse_args(argv)
    info = make(args.out, args.cases, args.kind, args.images, args.seed, args.name)
    print(json.dumps(info))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
