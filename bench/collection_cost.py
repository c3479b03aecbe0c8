"""``--child collect``: how long pytest takes to collect a large suite's cases, and the process's memory after."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def child_collect(args: argparse.Namespace) -> dict[str, Any]:
    """Where collection time goes, without pytest: suite file, rows read and validated, rows without validation."""
    from guitest import schema
    from guitest.datapath import locate
    from guitest.formats import read_suite_samples
    from guitest.suite import load_suite

    t = time.perf_counter()
    suite = load_suite(Path(args.suite) / "suite.yaml")
    data_dir = locate(str(suite.folder), suite.data, args.suite, "bench", str(suite.path))
    t_suite = time.perf_counter() - t
    schema.validator("formats/screenspot")  # compiled once per process, as in a run
    rss0 = _rss()
    t = time.perf_counter()
    samples = read_suite_samples(suite, data_dir)
    t_read = time.perf_counter() - t
    peak = _rss() - rss0
    rows = json.loads(Path(data_dir, "screenspot_mobile.json").read_text())
    checks = {"jsonschema": schema.validator("formats/screenspot").is_valid}
    if hasattr(schema, "fast_check"):  # the predicate compiled from the schema (newer trees)
        checks["compiled predicate"] = schema.fast_check("formats/screenspot")
    t_checks = {}
    for label, check in checks.items():
        t = time.perf_counter()
        for row in rows:
            check(row)
        t_checks[label] = (time.perf_counter() - t) * len(samples) / len(rows)
    return {
        "n": len(samples),
        "suite_s": t_suite,
        "read_and_validate_s": t_read,
        "row_check_s": t_checks,
        "samples_mb_python_peak": peak / 2**20,
    }


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0
