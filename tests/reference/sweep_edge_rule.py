"""How often a rule over the recorded ``pred`` gives back the verdict of eval_screenspot_pro.py's own check, on every
real ScreenSpot-Pro row: the figures of docs/replay.md, "The edge rule". Run by hand, never in CI.

For each row and each axis, answers around both edges of the box, in the kinds a model wrapper of the official
repository makes (a pixel divided by the image size; a 0..1000 grid; four decimals; a box's centre in pixels; a
centre computed on fractions), each as the point the script receives. The script's verdict comes from its own
``eval_sample_positive_gt`` (imported from the checkout given); ``pred`` is what it records,
``[point[0] * img_size[0], point[1] * img_size[1]]``. Two rules over ``pred`` are counted where they disagree with
it: pixels (``x1 <= pred <= x2``) and fractions (``x1 / w <= pred / w <= x2 / w``, what guitest's replay does).

Usage::

    python tests/reference/sweep_edge_rule.py --repo /tmp/sspro-<commit>
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import types
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "data" / "screenspot_pro"

#: kind -> the fractions a model would answer near the box [lo, hi] on an axis of `size` pixels
KINDS: dict[str, Callable[[int, int, int], list[float]]] = {
    "whole pixel / size": lambda lo, hi, size: [x / size for x in range(max(lo - 2, 0), hi + 3)],
    "0..1000 grid": lambda lo, hi, size: [k / 1000 for k in range(int(lo / size * 1000) - 2, int(hi / size * 1000) + 3)],
    "four decimals": lambda lo, hi, size: [k / 10000 for k in range(int(lo / size * 10000) - 2, int(hi / size * 10000) + 3)],
    "box centre in pixels / size": lambda lo, hi, size: [((a + b) / 2) / size for a in range(lo - 3, lo + 3) for b in (hi - 1, hi, hi + 1, hi + 2)],
    "centre computed on fractions": lambda lo, hi, size: [a / size + (b / size) / 2 for a in range(lo - 3, lo + 3) for b in range(0, 8)],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True, help="a folder holding eval_screenspot_pro.py of one commit")
    args = parser.parse_args()
    sys.modules["model_factory"] = types.SimpleNamespace(build_model=None)  # type: ignore[assignment]  # 6ca3cf9 on import it; no model is built here
    sys.path.insert(0, args.repo)
    import eval_screenspot_pro as reference  # noqa: E402

    rows = [row for path in sorted(SHARED.glob("*.json")) for row in json.loads(path.read_text())]
    for kind, make in KINDS.items():
        total = pixels = fractions = 0
        with contextlib.redirect_stdout(io.StringIO()):  # the script prints every point it checks
            for row in rows:
                (x1, y1, x2, y2), (w, h) = row["bbox"], row["img_size"]
                cy, cx = (y1 + y2) / 2 / h, (x1 + x2) / 2 / w  # the other axis inside the box
                for axis, (lo, hi, size) in enumerate(((x1, x2, w), (y1, y2, h))):
                    for p in make(lo, hi, size):
                        point = [p, cy] if axis == 0 else [cx, p]
                        verdict = reference.eval_sample_positive_gt(row, {"point": point}) == "correct"
                        pred = [point[0] * w, point[1] * h]
                        total += 1
                        pixels += (x1 <= pred[0] <= x2 and y1 <= pred[1] <= y2) != verdict
                        fractions += (x1 / w <= pred[0] / w <= x2 / w and y1 / h <= pred[1] / h <= y2 / h) != verdict
        print(f"{kind}: {total} points; the script's verdict not given back by pixels {pixels}, by fractions {fractions}")


if __name__ == "__main__":
    main()
