"""The evidence behind the ``binary`` rule's thresholds for MiniWoB++'s five continuous tasks (guitest/miniwob/rules.py).

    python suites/miniwob/thresholds.py      # about 10 s; prints each task's figures

Each figure is computed from the task page's own reward formula (miniwob/html/miniwob/<task>.html), with
the page's geometry as Chromium gives it: the pointer's page coordinates are whole CSS pixels (floored),
and the three geometry tasks draw and score their blue dot at (pageX, pageY - 50) in svg coordinates while
the svg sits at page (2, 52) (#area's 2 px padding), so the dot lands 2 px right of and below the pointer.

- circle-center, find-midpoint: the lowest raw reward of a pointer within 1 CSS pixel of the drawn answer on
  each axis, over every radius (25..39) or half-pixel midpoint the page can generate;
- bisect-angle: the best whole-pixel dot over simulated problems drawn as the page draws them;
- use-colorwheel(-2): jscolor's HSV pad (101x71: hue across, saturation down) and value slider (71 px), whose
  colours this model gives exactly (checked against the real picker at six positions); the best position for
  each colour, and the worst position one pixel off it on each of the three axes.
"""

from __future__ import annotations

import colorsys
import itertools
import math
import random

import numpy as np

# ui_utils.COLORS and their hex values (ui_utils.colorNameToHex)
NAMED = {
    "black": "000000", "white": "ffffff", "aqua": "00ffff", "blue": "0000ff", "gray": "808080", "green": "008000",
    "lime": "00ff00", "maroon": "800000", "navy": "000080", "olive": "808000", "purple": "800080", "red": "ff0000",
    "silver": "c0c0c0", "teal": "008080", "yellow": "ffff00", "pink": "ffc0cb", "magenta": "ff00ff", "gold": "ffd700",
    "orange": "ffa500",
}


def pointers(answer: float) -> list[int]:
    """The page x (or y less 52) of every pointer within 1 CSS pixel of an answer drawn at svg coordinate ``answer``."""
    return sorted({math.floor(answer + 2 + d) for d in (-1.0, -0.5, 0.0, 0.5, 1.0)})


def circle_center() -> dict[str, float]:
    worst, on_centre, best = 1.0, 1.0, 1.0
    for r in range(25, 40):
        def raw(px: int, py: int) -> float:  # px, py: the dot's centre in svg coordinates (pageX, pageY - 50)
            d = math.hypot((px - 3.5) - (0 - 3), (py - 3.5) - (0 - 3))  # the circle at (0, 0)
            return (r - d) / r if d < r else -1.0
        worst = min(worst, min(raw(x, y) for x in pointers(0) for y in pointers(0)))
        on_centre = min(on_centre, raw(2, 2))
        best = min(best, max(raw(x, y) for x in range(-3, 4) for y in range(-3, 4)))
    return {"worst within 1 px": worst, "pointer on the drawn centre": on_centre, "best click (r = 25)": best}


def find_midpoint() -> dict[str, float]:
    def raw(px: int, py: int, mx: float, my: float) -> float:
        d = math.hypot((px - 3.5) - (mx - 3.5), (py - 3.5) - (my - 3.5))
        return (30 - d) / 30 if d < 30 else -1.0
    worst = min(raw(x, y, mx, my) for mx in (0, 0.5) for my in (0, 0.5) for x in pointers(mx) for y in pointers(my))
    return {"worst within 1 px": worst, "pointer on the drawn midpoint": raw(2, 2, 0, 0)}


def bisect_angle(problems: int = 3000, seed: int = 0) -> dict[str, float]:
    rng = random.Random(seed)

    def randi(a: int, b: int) -> int:
        return math.floor(rng.random() * (b - a) + a)

    xs, ys = np.meshgrid(np.arange(2, 152), np.arange(2, 132))  # dot centres a click on the svg can give ...
    off = (ys >= 128) & (xs >= 30) & (xs <= 125)  # ... but where the Submit button (page 30..125 x 178..209) covers it

    def angle(ax, ay, bx, by):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.degrees(np.arccos(np.clip((ax * bx + ay * by) / (np.hypot(ax, ay) * np.hypot(bx, by)), -1, 1)))

    best, angles = [], []
    for _ in range(problems):
        points = [(randi(5, 135), randi(10, 120))]
        while len(points) < 3:
            p = (randi(5, 135), randi(10, 120))
            if all(not (abs(p[0] - q[0]) < 40 and abs(p[1] - q[1]) < 40) for q in points):
                points.append(p)
        (vx, vy), (ax, ay), (bx, by) = points
        total = angle(ax - vx, ay - vy, bx - vx, by - vy)
        ua, ub = angle(ax - vx, ay - vy, xs - vx, ys - vy), angle(bx - vx, by - vy, xs - vx, ys - vy)
        raw = np.where((ua > total) | (ub > total) | np.isnan(ua) | off, -1.0, (total - np.maximum(ua, ub)) / (total / 2))
        best.append(float(np.nanmax(raw)))
        angles.append(float(total))
    scores = np.array(best)
    low = [a for a, b in zip(angles, best) if b < 0.9]
    return {"problems": problems, "best >= 0.99": float((scores >= 0.99).mean()), "best < 0.9": len(low), "their largest angle (degrees)": max(low, default=0.0)}


def colorwheel() -> dict[str, float]:
    w, h = 101, 71
    grid = np.array([[[colorsys.hsv_to_rgb(i / (w - 1), 1 - j / (h - 1), 1 - k / (h - 1)) for k in range(h)] for j in range(h)] for i in range(w)])
    grid = np.round(grid * 255)

    def scores(target: str) -> tuple[float, float]:
        want = np.array([int(target[i : i + 2], 16) for i in (0, 2, 4)])
        raw = 1 - np.abs(grid - want).sum(-1) / 255 / 3
        i, j, k = np.unravel_index(np.argmax(raw), raw.shape)
        near = [raw[min(max(i + a, 0), w - 1), min(max(j + b, 0), h - 1), min(max(k + c, 0), h - 1)] for a, b, c in itertools.product((-1, 0, 1), repeat=3)]
        return float(raw[i, j, k]), float(min(near))

    named = [scores(t) for t in NAMED.values()]
    rng = random.Random(0)
    drawn = [scores("".join(rng.choice("0123456789abcdef") for _ in range(6))) for _ in range(300)]
    return {
        "named: best position, lowest": min(b for b, _ in named),
        "named: 1 px off, lowest": min(n for _, n in named),
        "300 random: best position, lowest": min(b for b, _ in drawn),
        "300 random: 1 px off, lowest": min(n for _, n in drawn),
    }


def main() -> int:
    for name, figures in (("circle-center", circle_center()), ("find-midpoint", find_midpoint()), ("bisect-angle", bisect_angle()), ("use-colorwheel(-2)", colorwheel())):
        print(name + ": " + ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
