"""``--child report``: building and writing the report of many synthetic results (JSON, Markdown, HTML)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def _synthetic_results(n: int) -> list[dict[str, Any]]:
    import random

    from guitest.verdict import case_result

    rng = random.Random(0)
    out = []
    for i in range(n):
        split = ("mobile", "desktop", "web")[i % 3]
        hit = rng.random() < 0.6
        px, py = rng.random(), rng.random()
        out.append(
            case_result(
                f"{split}-src{i % 7}-{('text', 'icon')[i % 2]}-{i}",
                "hit" if hit else "miss",
                {"split": split, "data_type": ("text", "icon")[i % 2], "data_source": f"src{i % 7}"},
                prediction={"point": [round(px, 6), round(py, 6)], "pixel": [round(px * 1920, 2), round(py * 1080, 2)], "raw": [px, py], "space": "normalized", "via": "answer"},
                response=f"Answer: [{px:.3f}, {py:.3f}]",
                finish_reason="stop",
                truth=[10.0, 20.0, 110.0, 60.0],
                size=[1920, 1080],
                sent_size=[1920, 1080],
                image=f"img{i % 500:05d}.png",
                notes=[],
                instruction=f"click the control number {i}",
            )
        )
    return out


def child_report(args: argparse.Namespace) -> dict[str, Any]:
    """Report aggregation for N synthetic results: build, validate, write_json, markdown, as the plugin does at the end."""
    import inspect
    import tempfile

    from guitest.reporting import report as report_mod

    results = _synthetic_results(args.n)
    times: dict[str, float] = {}
    params = inspect.signature(report_mod.build).parameters
    kwargs = dict(
        suite={"name": "bench", "path": "bench/suite.yaml", "format": "screenspot", "task": "grounding"},
        model={"spec": "oracle", "adapter": "Oracle", "space": "normalized", "profile": {}, "profile_reason": "default", "settings": {}},
        results=results,
        n_selected=len(results),
        missing=[],
        tags=["split", "data_type", "data_source"],
        cross=[["split", "data_type"]],
        average="micro",
        macro_over=None,
        gate={"thresholds": {"accuracy": None, "by": {}}, "failures": [], "notes": [], "passed": None},
        run={"data_root": "/tmp", "data_root_source": "bench", "started": "2026-01-01T00:00:00+0000", "seconds": 1.0, "workers": 0, "pytest_args": [], "merged_into_report_of": None},
    )
    kwargs = {k: v for k, v in kwargs.items() if k in params}
    t = time.perf_counter()
    report = report_mod.build(**kwargs)
    times["build"] = time.perf_counter() - t
    t = time.perf_counter()
    problems = report_mod.validate(report)
    times["validate"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        report_mod.write_json(report, Path(tmp, "r.json"))
        times["write_json"] = time.perf_counter() - t
        size = Path(tmp, "r.json").stat().st_size
    t = time.perf_counter()
    report_mod.markdown(report)
    report_mod.text_table(report)
    times["markdown+table"] = time.perf_counter() - t
    html = None
    try:
        from guitest.reporting import html as html_report  # present in newer trees

        t = time.perf_counter()
        html_report.render(report, {})
        html = time.perf_counter() - t
    except Exception:  # absent or a different signature: not measured
        html = None
    if html is not None:
        times["html"] = html
    return {"n": args.n, "seconds": times, "json_mb": size / 2**20, "schema_problems": len(problems)}
