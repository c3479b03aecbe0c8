"""How evenly ``--limit=N`` spreads a first try over ScreenSpot-Pro's categories, and what choosing costs.

    python bench/bench_limit.py [--seeds 100] [--n 20 50]

On the 1581 real ScreenSpot-Pro annotation rows (../shared/data/screenspot_pro), for each N and each seed 0..seeds-1,
the largest distance of a category's count among the N chosen from its proportional share (N x its size / 1581), per
kind of category: group, group x text/icon, text/icon, application, platform; once with the cases ordered as
guitest.plan.limiting.strata orders them (the suite's first cross breakdown first) and once in the order the suite lists its
tags. Then the seconds ``limiting.choose`` takes for 100,000 cases. docs/selection.md quotes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guitest.plan import limiting  # noqa: E402

PRO = Path(__file__).resolve().parents[2] / "shared" / "data" / "screenspot_pro"
TAGS = ("group", "application", "platform", "ui_type")
CROSS = [["group", "ui_type"], ["platform", "ui_type"]]
KINDS = {"group": ("group",), "group x type": ("group", "ui_type"), "type": ("ui_type",), "application": ("application",), "platform": ("platform",)}


def rows() -> list[dict]:
    return [row for path in sorted(PRO.glob("*.json")) for row in json.loads(path.read_text())]


def worst(rows: list[dict], order: tuple[str, ...], n: int, seeds: int) -> dict[str, float]:
    key = "suites/screenspot_pro/suite.yaml"  # node ids as the plugin hands them over: the suite file and the case id
    cases = [(f"{key}::{'-'.join(str(r[t]) for t in (*TAGS, 'id'))}", key, limiting.stratum(r, order)) for r in rows]
    tags = {case_id: r for (case_id, _, _), r in zip(cases, rows, strict=True)}
    out = dict.fromkeys(KINDS, 0.0)
    for seed in range(seeds):
        chosen = limiting.choose(cases, n, seed)
        for kind, keys in KINDS.items():
            sizes = Counter(tuple(r[k] for k in keys) for r in rows)
            got = Counter(tuple(tags[c][k] for k in keys) for c in chosen)
            out[kind] = max(out[kind], max(abs(got[v] - size * n / len(rows)) for v, size in sizes.items()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50])
    args = parser.parse_args()
    data = rows()
    print(f"ScreenSpot-Pro, {len(data)} cases; the largest distance from the proportional share over seeds 0-{args.seeds - 1}, in cases")
    print("| order | N | " + " | ".join(KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    for name, order in (("strata (cross first)", limiting.strata(TAGS, CROSS)), ("as the suite lists its tags", TAGS)):
        for n in args.n:
            figures = worst(data, order, n, args.seeds)
            print(f"| {name}: {', '.join(order)} | {n} | " + " | ".join(f"{figures[k]:.2f}" for k in KINDS) + " |")
    many = [(f"s::case-{i}", "s", (f"g{i % 6}", f"t{i % 2}", f"a{i % 26}")) for i in range(100_000)]
    start = time.perf_counter()
    limiting.choose(many, 20, 0)
    print(f"limiting.choose, 100,000 cases: {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
