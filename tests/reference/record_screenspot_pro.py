"""Records what ScreenSpot-Pro's official evaluation script writes, for tests/test_replay_records.py. Run by hand,
never in CI: the test replays the recording (tests/data/screenspot_pro_reference/), so CI needs neither the script
nor a network.

The script (eval_screenspot_pro.py of likaixin2000/ScreenSpot-Pro-GUI-Grounding) is run as it ships, its
``model_factory.build_model`` stood in for by a model that answers each sample in turn with the centre of its box
(correct), a point off it (wrong) or no point (wrong_format), on twelve real ScreenSpot-Pro annotation rows (the first
three rows of each of four application files, from ../shared/data/screenspot_pro; :data:`FILES`, :data:`ROWS`),
given to it in a scratch folder. It writes its log (``metrics`` and ``details``, per-sample results) to results.json.
The rows are not copied into the repository: the tests read the same ones from ../shared/data/screenspot_pro.

Usage (the script needs torch, tqdm and pillow; the project's environment has them)::

    mkdir -p /tmp/sspro-<commit> && git --git-dir=<a snapshot of the repository> archive <commit> eval_screenspot_pro.py \\
        | tar -x -C /tmp/sspro-<commit>
    python tests/reference/record_screenspot_pro.py --repo /tmp/sspro-<commit> --commit <commit>
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "screenspot_pro_reference"
SHARED = HERE.parents[2] / "shared" / "data" / "screenspot_pro"
FILES = ["android_studio_macos", "autocad_windows", "excel_macos", "linux_common_linux"]
ROWS = 3  # the first rows of each file
IMAGES = "/data/ScreenSpot-Pro/images"  # the script's --screenspot_imgs: named in each record, no image opened


def stand_in_answer(row: dict, kind: int) -> dict:
    """The stand-in model's answer to annotation ``row``: ``kind`` 0 the centre of its box (correct), 1 a point off it
    (wrong), 2 no point (wrong_format), as ``ground_only_positive`` returns them (a point relative to the image size)."""
    (x1, y1, x2, y2), (w, h) = row["bbox"], row["img_size"]
    if kind == 2:
        return {"point": None, "raw_response": "I cannot find it."}
    x, y = ((x1 + x2) / 2, (y1 + y2) / 2) if kind == 0 else (min(x2 + 40, w - 1), y1)
    return {"point": [x / w, y / h], "raw_response": f"({x:.0f}, {y:.0f})", "result": "positive"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    annotations = Path(tempfile.mkdtemp(prefix="sspro-rows-"))
    rows = {}
    for name in FILES:
        picked = json.loads((SHARED / f"{name}.json").read_text())[:ROWS]
        (annotations / f"{name}.json").write_text(json.dumps(picked, ensure_ascii=False, indent=1) + "\n")
        rows.update({r["instruction"]: r for r in picked})
    answers = iter(range(10**6))

    class Model:
        def ground_only_positive(self, instruction: str, image: str) -> dict:
            row = rows[instruction]
            return stand_in_answer(row, next(answers) % 3)

    sys.modules["model_factory"] = types.SimpleNamespace(build_model=lambda args: Model())  # type: ignore[assignment]
    sys.path.insert(0, args.repo)
    import eval_screenspot_pro as reference  # noqa: E402

    reference.main(
        argparse.Namespace(
            model_type="stand-in",
            model_name_or_path="stand-in",
            screenspot_imgs=IMAGES,
            screenspot_test=str(annotations),
            task="all",
            inst_style="instruction",
            language="en",
            gt_type="positive",
            log_path=str(OUT / "results.json"),
        )
    )
    (OUT / "README.md").write_text(
        f"Recorded by tests/reference/record_screenspot_pro.py from likaixin2000/ScreenSpot-Pro-GUI-Grounding at {args.commit}:\n"
        "results.json is what its eval_screenspot_pro.py writes for twelve real ScreenSpot-Pro rows, the first three of each of\n"
        f"{', '.join(f + '.json' for f in FILES)}\n"
        "in ../shared/data/screenspot_pro (not copied here: the tests read them there), its model stood in for (see the\n"
        "script). tests/test_replay_records.py replays it.\n"
    )

    shutil.rmtree(annotations)


if __name__ == "__main__":
    main()
