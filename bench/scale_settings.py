"""What the scale bench (bench/run.py) runs at: its sizes, groups and targets, shared by its parts."""

from __future__ import annotations

import os
import sys
from pathlib import Path


HERE = Path(__file__).resolve().parent

REPO = HERE.parent
RUN = HERE / "run.py"  # the bench's entry point: its child modes run as `python bench/run.py --child ...`

PY = sys.executable

CLK = os.sysconf("SC_CLK_TCK")

LATENCY = 0.1

N_SMALL = 1000

N_LARGE = 16

N_HUGE = 100_000

N_MEM = 10_000

N_PRO = 1581  # the rows of ScreenSpot-Pro

CONC = 32

GROUPS = ["reference", "throughput", "harness", "e2e-large", "collection", "memory", "report", "memory100k", "pro"]

DEFAULT_GROUPS = GROUPS[:-2]  # memory100k (a whole 100,000-case run, 3-5 minutes) and pro (15-30 minutes): ask for them

SUITES_OF = {"reference": ["small"], "throughput": ["small"], "harness": ["large"], "e2e-large": ["large"], "collection": ["huge"], "memory100k": ["huge"], "memory": ["mem"]}

PRO_THUMB_SAMPLE = 28  # screenshots of the full-size suite the per-image thumbnail costs are measured on (2 per size)

PRO_HARNESS_4K = 100  # 3840x2160 rows the in-process harness measures

TARGETS = {"throughput": 1.15, "harness_ms": 150.0, "collect_s": 10.0, "worker_rss_mb": 500.0, "report_s": 2.0}
