"""Shards: a stable part of a run's cases, so several machines (CI jobs, Kubernetes pods, Slurm tasks) run one suite.

``--shard=K/N`` keeps the cases whose id falls in part K of N: each case's part is its SHA-256 (of the case's pytest id,
the suite file and the case id) modulo N, so a case is in the same part on every run and machine, whatever else is
collected or selected with it (``-k``, ``--lf``), and every case is in exactly one part. The parts are as even as
hashing makes them (for a few thousand cases within a few percent). ``guitest merge`` (:mod:`guitest.scale.merge`)
rebuilds one report from the parts' reports.
"""

from __future__ import annotations

import hashlib


class ShardError(ValueError):
    """A ``--shard`` value that is not ``K/N``."""


def parse(text: str) -> tuple[int, int]:
    """``"2/3"`` as ``(2, 3)``; ShardError saying what to give."""
    k, sep, n = str(text).partition("/")
    try:
        part, parts = int(k), int(n)
    except ValueError:
        part = parts = 0
    if not sep or parts < 1 or not 1 <= part <= parts:
        raise ShardError(f"--shard={text}: expected K/N with 1 <= K <= N, e.g. --shard=1/3 (the first of three parts)")
    return part, parts


def part_of(nodeid: str, parts: int) -> int:
    """The part (1..``parts``) the case with pytest id ``nodeid`` belongs to."""
    return int.from_bytes(hashlib.sha256(nodeid.encode("utf-8")).digest()[:8], "big") % parts + 1
