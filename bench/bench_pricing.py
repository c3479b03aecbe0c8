"""What metering a model call costs the harness: the CPU of tallying and pricing one call, and of checking the run's
budget before it, beside a reply's own time.

    python bench/bench_pricing.py [--calls 5000] [--workers 8]

Prints the median over 5 rounds of ``--calls`` calls, in microseconds per call, of: a call's tally without a price
(a model with no known price, or ``--prices=off``); with genai-prices' price (gpt-4o-mini); with a ``--prices`` file's
rates; and the budget's check (``--max-total-tokens``) with ``--workers`` processes' spending files to read.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guitest.cost.pricing import make_pricer  # noqa: E402
from guitest.cost.spending import Budget, Spending  # noqa: E402
from guitest.cost.usage import Usage  # noqa: E402

USAGE = Usage(input_tokens=1200, output_tokens=30, cache_read_tokens=512, reasoning_tokens=5)


def per_call(fn, calls: int) -> float:
    """Median microseconds per call of ``fn`` over 5 rounds of ``calls``."""
    fn()
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=8)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        prices = Path(folder) / "prices.yaml"
        prices.write_text("my-model:\n  input: 0.2\n  output: 0.6\n  cache_read: 0.05\n")
        unpriced = Spending(make_pricer("my-model", "http://127.0.0.1:1/v1", "off"))
        genai = Spending(make_pricer("gpt-4o-mini", "http://127.0.0.1:1/v1", None))
        own = Spending(make_pricer("my-model", "http://127.0.0.1:1/v1", str(prices)))
        spent = Path(folder) / "budget"
        spent.mkdir()
        others = [Budget(spent, None, 10**12, slot=n + 1) for n in range(opts.workers - 1)]
        for other in others:
            other.charge({"calls": 1, "input_tokens": 1000, "output_tokens": 10})
        budget = Spending(None, Budget(spent, None, 10**12, slot=0))
        rows = {
            "tally, no price": per_call(lambda: unpriced.call(USAGE, 0.1, 1.8e9), opts.calls),
            "tally and genai-prices' price (gpt-4o-mini)": per_call(lambda: genai.call(USAGE, 0.1, 1.8e9), opts.calls),
            "tally and a --prices file's price": per_call(lambda: own.call(USAGE, 0.1, 1.8e9), opts.calls),
            f"budget check, {opts.workers} processes' slots read": per_call(budget.check, opts.calls),
            "tally and budget charge (this process's slot written)": per_call(lambda: budget.call(USAGE, 0.1, 1.8e9), opts.calls),
        }
    width = max(map(len, rows))
    for name, micros in rows.items():
        print(f"{name:<{width}}  {micros:8.1f} us per call")


if __name__ == "__main__":
    main()
