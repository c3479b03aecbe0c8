"""What ``replay:`` scores on OmniParser's published ScreenSpot-Pro log, beside what the log's own ``correctness``
says: the figures of docs/replay.md, "Other harnesses' per-sample logs". Run by hand, never in CI: the log is a
fetched repository's data, which the project does not commit; tests/test_replay_records.py checks the same rule on a
log it writes in the same format.

The log (microsoft/OmniParser eval/logs_sspro_omniv2.json at 5d49a5a, unchanged on master since; SHA-256 below) is
replayed as a run does it, through guitest's screenspot_pro suite on the 1581 real rows of ../shared/data/screenspot_pro
(no screenshot: the records' points are judged as they are), and each record whose verdict differs from the log's
``correctness`` is listed.

Usage::

    git --git-dir=<a snapshot of microsoft/OmniParser> show 5d49a5aca600c8518a780b21218644d1246c1e36:eval/logs_sspro_omniv2.json \\
        > /tmp/logs_sspro_omniv2.json
    PYTHONPATH=$PWD python tests/reference/measure_omniparser_log.py /tmp/logs_sspro_omniv2.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from guitest.run.case import run_case
from guitest.formats import read_suite_samples
from guitest.models.base import Settings
from guitest.models.replay import Replay
from guitest.profiles import PROFILES
from guitest.suite import load_suite

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHARED = REPO.parent / "shared" / "data" / "screenspot_pro"
#: the log as published (5d49a5a)
SHA256 = "f9a34de6784efff9e2a6959b3cd894849bcbd074c08635b441110c65643a63e7"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log", type=Path, help="eval/logs_sspro_omniv2.json of microsoft/OmniParser at 5d49a5a")
    args = parser.parse_args()
    data = args.log.read_bytes()
    if hashlib.sha256(data).hexdigest() != SHA256:
        sys.exit(f"{args.log}: not the published log (SHA-256 {hashlib.sha256(data).hexdigest()}, expected {SHA256})")
    records = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as tmp:
        annotations = Path(tmp) / "ScreenSpot-Pro" / "annotations"
        annotations.mkdir(parents=True)
        for source in sorted(SHARED.glob("*.json")):
            shutil.copy(source, annotations / source.name)
        samples = read_suite_samples(load_suite(REPO / "suites" / "screenspot_pro" / "suite.yaml"), str(Path(tmp) / "ScreenSpot-Pro"))
        model = Replay("replay:omniparser", Settings(), str(args.log), PROFILES["qwen2.5-vl"], "--model-profile")
        model.read_samples(samples, str(Path(tmp) / "ScreenSpot-Pro" / "images"))
        cases = {(Path(s.source.partition("#")[0]).stem, s.instruction, tuple(map(float, s.box or ()))): run_case(s, model) for s in samples}
    verdicts = Counter(c["verdict"] for c in cases.values())
    hits = verdicts["hit"]
    print(f"{args.log}: {len(records)} records, {len(cases)} cases of the suite, {len(model.answers)} answered")
    print(f"replay: {hits} hits of {len(cases)} ({100 * hits / len(cases):.1f}%); verdicts {dict(sorted(verdicts.items()))}")
    print(f"the log's own correctness: {dict(sorted(Counter(r['correctness'] for r in records).items()))}")

    def verdict(record: dict) -> str:
        return str(cases[(record["task_filename"], record["prompt_to_evaluate"], tuple(map(float, record["bbox"])))]["verdict"])

    differ = [r for r in records if (verdict(r) == "hit") != (r["correctness"] == "correct")]
    print(f"{len(differ)} records where the two differ:")
    for r in differ:
        print(f"  idx {r['idx']}: {r['task_filename']}, pred {r['pred']} on bbox {r['bbox']}, the log says {r['correctness']}")
    print("where the points lie (x, y against the box; the log's correctness, the replay's verdict): records")
    shapes = Counter((where(r["pred"][0], r["bbox"][0], r["bbox"][2]), where(r["pred"][1], r["bbox"][1], r["bbox"][3]), r["correctness"], verdict(r)) for r in records if r["pred"] is not None)
    for shape, count in sorted(shapes.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {', '.join(shape)}: {count}")


def where(value: float, low: float, high: float) -> str:
    """Where a coordinate lies against a box's edges on its axis, in whole pixels."""
    if value == low or value == high:
        return "on the low edge" if value == low else "on the high edge"
    if low < value < high:
        return "inside"
    return "a pixel out" if min(abs(value - low), abs(value - high)) <= 1 else "further out"


if __name__ == "__main__":
    main()
