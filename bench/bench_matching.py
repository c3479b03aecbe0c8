"""How fast element lists are scored: 2000 samples x 60 predicted x 60 true elements.

    python bench/bench_matching.py [--samples 2000] [--elements 60] [--repeat 5] [--seed 0]

Three workloads, each timed as the best of ``--repeat`` runs (one core):

- ``realistic``: true elements laid out like a screen (rows of non-overlapping boxes of
  varied sizes); predictions are the truths jittered by a few pixels (80%), shifted off
  (10%) or invented (10%), shuffled; descriptions of 10-30 characters.
- ``dense``: every box overlaps every other (60 near-identical boxes on each side), so
  all 3600 pairs pass the IoU threshold: the worst case for the greedy step.
- ``disjoint``: no pair overlaps: the IoU matrix alone.

For each it prints, in seconds for all samples: ``batch``, :func:`guitest.tasks.matching.match_many`
(all samples at once: IoU matrices and greedy rounds vectorised over samples); ``match``,
:func:`guitest.tasks.matching.match` one sample at a time (what a case does); ``score``,
:func:`guitest.tasks.matching.score` one sample at a time (matching plus the difflib similarity
of every matched pair and the per-type counts); and the matched pairs found.
"""

from __future__ import annotations

import argparse
import random
import string
import time
from typing import Any, Callable

from guitest.tasks import matching as el

TYPES = ("icon", "text", "button", "image", "input")
W, H = 1920, 1080


def _words(rng: random.Random) -> str:
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 8))) for _ in range(rng.randint(2, 4)))


def _layout(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """``n`` non-overlapping boxes in rows across a 1920x1080 screen."""
    out: list[dict[str, Any]] = []
    y = 0.0
    while len(out) < n:
        h = rng.uniform(18, 60)
        x = 0.0
        while len(out) < n:
            w = rng.uniform(30, 300)
            if x + w > W:
                break
            out.append({"type": rng.choice(TYPES), "description": _words(rng), "box": [x, y, x + w, y + h]})
            x += w + rng.uniform(4, 40)
        y = (y + h + rng.uniform(4, 20)) % (H - 60)
    return out


def realistic(rng: random.Random, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    true = _layout(rng, n)
    pred = []
    for t in true:
        x1, y1, x2, y2 = t["box"]
        roll = rng.random()
        if roll < 0.8:
            j = [rng.uniform(-3, 3) for _ in range(4)]
            pred.append({**t, "box": [x1 + j[0], y1 + j[1], x2 + j[2], y2 + j[3]], "description": t["description"][: rng.randint(3, 30)]})
        elif roll < 0.9:
            pred.append({**t, "box": [x1 + (x2 - x1) * 0.7, y1, x2 + (x2 - x1) * 0.7, y2]})
        else:
            x, y = rng.uniform(0, W - 100), rng.uniform(0, H - 40)
            pred.append({"type": rng.choice(TYPES), "description": _words(rng), "box": [x, y, x + 100, y + 40]})
    rng.shuffle(pred)
    return pred, true


def dense(rng: random.Random, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def one() -> dict[str, Any]:
        j = [rng.uniform(0, 2) for _ in range(4)]
        return {"type": "icon", "description": _words(rng), "box": [100 + j[0], 100 + j[1], 200 + j[2], 150 + j[3]]}

    return [one() for _ in range(n)], [one() for _ in range(n)]


def disjoint(rng: random.Random, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    true = _layout(rng, n)
    pred = [{**t, "box": [t["box"][0], t["box"][1] + 2000, t["box"][2], t["box"][3] + 2000]} for t in true]
    return pred, true


def timed(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    """Best wall time of ``repeat`` calls, and what the call returned."""
    best, out = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--elements", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{args.samples} samples x {args.elements} predicted x {args.elements} true elements, best of {args.repeat}")
    print(f"{'workload':<10} {'batch s':>8} {'match s':>8} {'score s':>8} {'pairs':>8}")
    for name, make in (("realistic", realistic), ("dense", dense), ("disjoint", disjoint)):
        rng = random.Random(args.seed)
        data = [make(rng, args.elements) for _ in range(args.samples)]
        boxes = [([p["box"] for p in pred], [t["box"] for t in true]) for pred, true in data]
        t_batch, pairs = timed(lambda boxes=boxes: sum(m.tp for m in el.match_many(boxes)), args.repeat)
        t_match, pairs_one = timed(lambda boxes=boxes: sum(el.match(p, t).tp for p, t in boxes), args.repeat)
        assert pairs == pairs_one, (pairs, pairs_one)
        t_score, _ = timed(lambda data=data: sum(el.score(p, t)["tp"] for p, t in data), args.repeat)
        print(f"{name:<10} {t_batch:8.3f} {t_match:8.3f} {t_score:8.3f} {pairs:8d}")


if __name__ == "__main__":
    main()
