"""Records what every released version of ScreenSpot-Pro's official evaluation script writes, for
tests/test_replay_records.py. Run by hand, never in CI: the tests replay the recordings
(tests/data/screenspot_pro_versions/), so CI needs neither the scripts nor a network.

The scripts of likaixin2000/ScreenSpot-Pro-GUI-Grounding, taken at each commit that changed
eval_screenspot_pro.py on its main branch (3443b5b, the first release; 588f1f2; 7e6cc78, which added ``id`` to each
record; 6ca3cf9, which moved ``build_model`` to model_factory.py and added eval_screenspot_pro_parallel.py, whose
records have no ``id`` and come in the order its worker processes finish), are run as they ship on every row of two
real annotation files (illustrator_windows, autocad_windows: /work/shared/data/screenspot_pro), their model stood in
for by :data:`STAND_IN` (a ``model_factory`` module: ``build_model(args)``; the older scripts' own ``build_model``
is replaced by it). The parallel script's GPUs are stood in for too: ``torch.cuda.set_device`` does nothing.

Stored: 3443b5b (records without ``id``) and 7e6cc78 (with ``id``), one per format of the records. The others were
recorded too and their ``details`` were byte for byte those of the version before them (588f1f2 = 3443b5b, 6ca3cf9 =
7e6cc78; only the order of the ``metrics`` keys differs, from set iteration), and the parallel script's were those of
3443b5b (its records come in the order its workers finish: tests/test_replay_records.py shuffles them).

The stand-in answers as the official model wrappers do, a point in fractions of the screenshot (a pixel divided by
the image size; gpt4x.py, qwen2_5vl.py): on a row whose box has a right or bottom edge that ``(edge / size) * size``
does not give back exactly in floating point, that edge, a whole pixel (the script writes ``pred`` a hair off the
edge; its own check, on the fractions, calls it correct); else by the row's index: the box's centre, a whole pixel on
its right edge, a pixel below its bottom edge, no point (``wrong_format``), its top-left corner.

Usage (the script needs torch, tqdm and pillow; the project's environment has them)::

    git --git-dir=<a snapshot of the repository> archive <commit> eval_screenspot_pro.py eval_screenspot_pro_parallel.py | tar -x -C /tmp/sspro-<commit>
    python tests/reference/record_screenspot_pro_versions.py --repo /tmp/sspro-<commit> --commit <commit> [--parallel]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "screenspot_pro_versions"
SHARED = HERE.parents[2] / "shared" / "data" / "screenspot_pro"
FILES = ["illustrator_windows", "autocad_windows"]
#: where the records say the screenshots were (the scripts only join it to each row's img_filename)
IMAGES = "/data/ScreenSpot-Pro/images"

STAND_IN = """
import os

import torch

torch.cuda.set_device = lambda index: None  # the parallel script's GPUs: this machine has none


def answer(row, index):
    (x1, y1, x2, y2), (w, h) = row["bbox"], row["img_size"]
    cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
    if (x2 / w) * w != x2:
        return x2, cy
    if (y2 / h) * h != y2:
        return cx, y2
    kind = index % 5
    if kind == 0:
        return (x1 + x2) / 2, (y1 + y2) / 2
    if kind == 1:
        return x2, cy
    if kind == 2:
        return cx, y2 + 1
    if kind == 3:
        return None
    return x1, y1


class Model:
    def __init__(self, folder):
        self.rows = {}
        for name in sorted(os.listdir(folder)):
            if name.endswith(".json"):
                with open(os.path.join(folder, name)) as f:
                    for index, row in enumerate(json.load(f)):
                        self.rows[(row["img_filename"], row["instruction"])] = (row, index)

    def set_generation_config(self, **kwargs):
        pass

    def ground_only_positive(self, instruction, image):
        name = os.path.relpath(image, os.environ["STAND_IN_IMAGES"])
        row, index = self.rows[(name, instruction)]
        point = answer(row, index)
        if point is None:
            return {"point": None, "raw_response": "I cannot find it.", "result": "positive"}
        (w, h), (x, y) = row["img_size"], point
        return {"point": [x / w, y / h], "raw_response": f"({x}, {y})", "result": "positive"}


def build_model(args):
    return Model(args.screenspot_test)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True, help="a folder holding the script(s) of one commit")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--parallel", action="store_true", help="run eval_screenspot_pro_parallel.py (6ca3cf9 and later)")
    args = parser.parse_args()
    name = f"{args.commit[:7]}-parallel" if args.parallel else args.commit[:7]
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sspro-record-"))
    annotations = work / "annotations"
    annotations.mkdir()
    for file in FILES:
        shutil.copy(SHARED / f"{file}.json", annotations / f"{file}.json")
    (work / "model_factory.py").write_text(STAND_IN)
    os.environ["STAND_IN_IMAGES"] = IMAGES
    # the parallel script's workers are spawned: they find the stand-in and the script on PYTHONPATH
    os.environ["PYTHONPATH"] = os.pathsep.join([str(work), args.repo, os.environ.get("PYTHONPATH", "")])
    sys.path[:0] = [str(work), args.repo]
    stand_in = importlib.import_module("model_factory")
    reference = importlib.import_module("eval_screenspot_pro_parallel" if args.parallel else "eval_screenspot_pro")
    reference.build_model = stand_in.build_model  # the scripts before 6ca3cf9 define their own
    options = dict(
        model_type="stand-in",
        model_name_or_path="stand-in",
        screenspot_imgs=IMAGES,
        screenspot_test=str(annotations),
        task=",".join(FILES),
        inst_style="instruction",
        language="en",
        gt_type="positive",
        log_path=str(out / "results.json"),
    )
    if args.parallel:
        options["num_gpu"] = 2
    reference.main(argparse.Namespace(**options))
    script = "eval_screenspot_pro_parallel.py" if args.parallel else "eval_screenspot_pro.py"
    (out / "README.md").write_text(
        f"Recorded by tests/reference/record_screenspot_pro_versions.py: results.json is what {script} of\n"
        f"likaixin2000/ScreenSpot-Pro-GUI-Grounding at {args.commit} writes for every row of {', '.join(f + '.json' for f in FILES)}\n"
        "(real ScreenSpot-Pro annotation files, read from ../shared/data/screenspot_pro by the tests), its model stood in for\n"
        "(see the recorder). tests/test_replay_records.py replays it.\n"
    )
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
