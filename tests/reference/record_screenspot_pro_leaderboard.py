"""Records what ScreenSpot-Pro's official evaluation script writes for a run that touches every group and application,
for tests/test_leaderboard.py. Run by hand, never in CI: the test reads the recording (tests/data/screenspot_pro_leaderboard/).

The script (eval_screenspot_pro.py of likaixin2000/ScreenSpot-Pro-GUI-Grounding) is run as it ships, its
``model_factory.build_model`` stood in for by a model that answers each sample in turn with the centre of its box
(correct), a point beside it (wrong) or no point (wrong_format), on 104 real ScreenSpot-Pro annotation rows: the first
two icon and the first two text rows of each of the 26 application files of ../shared/data/screenspot_pro, so each of
the six groups and every application has icon and text cases, as the leaderboard's submission notebook needs. Its log
(``metrics`` and ``details``, per-sample results) is written as ``stand-in.json`` (the notebook names an entry after its
file). The rows themselves are not copied: the test reads them from ../shared/data by the task file and id each detail
names. The notebook (leaderboard_submission.ipynb, the same at e9f0ff0 and bd8bbbb) is copied as it is, for the test to
run its own code cell.

Usage::

    git --git-dir=<a snapshot of the repository> worktree add --detach /tmp/sspro bd8bbbb470fbc4fda2a4fa9ec90bd2572507794e
    .tox/py311/bin/python tests/reference/record_screenspot_pro_leaderboard.py --repo /tmp/sspro --commit bd8bbbb470fbc4fda2a4fa9ec90bd2572507794e
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
OUT = HERE.parent / "data" / "screenspot_pro_leaderboard"
SHARED = HERE.parents[2] / "shared" / "data" / "screenspot_pro"


def picked_rows() -> dict[str, list[dict]]:
    """Per application file (its name without .json), its first two icon and first two text rows, in file order."""
    out = {}
    for path in sorted(SHARED.glob("*.json")):
        rows = json.loads(path.read_text())
        icons = [r for r in rows if r["ui_type"] == "icon"][:2]
        texts = [r for r in rows if r["ui_type"] == "text"][:2]
        out[path.stem] = [r for r in rows if r in icons or r in texts]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    picked = picked_rows()
    order = [r for name in sorted(picked) for r in picked[name]]  # the order the script asks in: task files as given, rows in file order
    assert len(order) == 104
    queue = iter(order)
    answers = iter(range(10**6))

    class Model:
        def ground_only_positive(self, instruction: str, image: str) -> dict:
            row = next(queue)
            assert row["instruction"] == instruction and image.endswith(row["img_filename"])
            (x1, y1, x2, y2), (w, h) = row["bbox"], row["img_size"]
            kind = next(answers) % 3
            if kind == 2:
                return {"point": None, "raw_response": "I cannot find it."}
            x, y = ((x1 + x2) / 2, (y1 + y2) / 2) if kind == 0 else (min(x2 + 40, w - 1), y1)
            return {"point": [x / w, y / h], "raw_response": f"({x:.0f}, {y:.0f})", "result": "positive"}

    sys.modules["model_factory"] = types.SimpleNamespace(build_model=lambda args: Model())  # type: ignore[assignment]
    sys.path.insert(0, args.repo)
    import eval_screenspot_pro as reference  # noqa: E402

    with tempfile.TemporaryDirectory() as tmp:
        annotations = Path(tmp, "annotations")
        annotations.mkdir()
        for name, file_rows in picked.items():
            (annotations / f"{name}.json").write_text(json.dumps(file_rows, ensure_ascii=False))
        reference.main(
            argparse.Namespace(
                model_type="stand-in",
                model_name_or_path="stand-in",
                screenspot_imgs="images",  # named in each detail; the stand-in opens no image
                screenspot_test=str(annotations),
                task=",".join(sorted(picked)),
                inst_style="instruction",
                language="en",
                gt_type="positive",
                log_path=str(OUT / "stand-in.json"),
            )
        )
    shutil.copyfile(Path(args.repo, "leaderboard_submission.ipynb"), OUT / "leaderboard_submission.ipynb")
    (OUT / "README.md").write_text(
        f"Recorded by tests/reference/record_screenspot_pro_leaderboard.py from likaixin2000/ScreenSpot-Pro-GUI-Grounding at {args.commit}:\n"
        "stand-in.json is what its eval_screenspot_pro.py writes for 104 real ScreenSpot-Pro rows (the first two icon and two text\n"
        "rows of each application file of ../shared/data/screenspot_pro; its model stood in for, see the script), and\n"
        "leaderboard_submission.ipynb is the repository's notebook that turns such files into grounding-leaderboard entries\n"
        "(unchanged since e9f0ff06a66aacc0e418e4bd906d77800c3a596e). tests/test_leaderboard.py runs the notebook's code cell on\n"
        "stand-in.json and guitest's own run of the same replies, and compares the two entries bit for bit.\n"
    )


if __name__ == "__main__":
    main()
