"""Records what ScreenSpot-Pro's official evaluation script writes for a run that touches every group and application,
for tests/test_leaderboard.py. Run by hand, never in CI: the test reads the recording (tests/data/screenspot_pro_leaderboard/).

The script (eval_screenspot_pro.py of likaixin2000/ScreenSpot-Pro-GUI-Grounding) is run as it ships, its
``model_factory.build_model`` stood in for by a model that answers each sample in turn with the centre of its box
(correct), a point beside it (wrong) or no point (wrong_format), on 104 real ScreenSpot-Pro annotation rows: the first
two icon and the first two text rows of each of the 26 application files of ../shared/data/screenspot_pro, so each of
the six groups and every application has icon and text cases, as the leaderboard's submission notebook needs. Its log
(``metrics`` and ``details``, per-sample results) is written as ``stand-in.json`` (the notebook names an entry after its
file). The rows themselves are not copied: the test reads them from ../shared/data by the task file and id each detail
names.

Then the leaderboard's submission notebook (leaderboard_submission.ipynb, the same at e9f0ff0 and bd8bbbb) is run on
that file as its tutorial says: its code cell that makes the entries (the cell before it only names the folder and the
output file), executed as it ships on a folder holding stand-in.json alone. The file it writes is recorded as it wrote
it, the JSON text at full precision, as ``notebook_entry.json``'s ``written``, beside the SHA-256 of the stand-in.json it
read (so the test knows the entry is of the file it replays) and the notebook's git blob id. The notebook itself is not
copied here: it is the repository's code.

Usage (the script needs torch, tqdm and pillow; the project's environment has them)::

    mkdir -p /tmp/sspro-bd8bbbb && git --git-dir=<a snapshot of the repository> archive bd8bbbb470fbc4fda2a4fa9ec90bd2572507794e \\
        eval_screenspot_pro.py leaderboard_submission.ipynb | tar -x -C /tmp/sspro-bd8bbbb
    python tests/reference/record_screenspot_pro_leaderboard.py --repo /tmp/sspro-bd8bbbb --commit bd8bbbb470fbc4fda2a4fa9ec90bd2572507794e

With ``--notebook-only`` only the notebook is run, on the stand-in.json already recorded: the script writes its
``metrics`` in an order of Python's set iteration, which changes from run to run (the same figures, the same
``details``), so running it again rewrites stand-in.json in another order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import types
from pathlib import Path

from record_screenspot_pro import stand_in_answer  # this folder is on the path of a script run from it

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


def run_script(repo: str) -> None:
    """eval_screenspot_pro.py of ``repo`` run as it ships on :func:`picked_rows`, its model stood in for; its log is
    written as stand-in.json."""
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
            return stand_in_answer(row, next(answers) % 3)

    sys.modules["model_factory"] = types.SimpleNamespace(build_model=lambda args: Model())  # type: ignore[assignment]
    sys.path.insert(0, repo)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--notebook-only", action="store_true", help="run only the notebook, on the stand-in.json recorded")
    args = parser.parse_args()
    if not args.notebook_only:
        run_script(args.repo)
    notebook = Path(args.repo, "leaderboard_submission.ipynb").read_bytes()
    read = (OUT / "stand-in.json").read_bytes()
    record = {
        "repository": "likaixin2000/ScreenSpot-Pro-GUI-Grounding",
        "commit": args.commit,
        "files": {"leaderboard_submission.ipynb": hashlib.sha1(b"blob %d\0" % len(notebook) + notebook).hexdigest()},
        "script": "tests/reference/record_screenspot_pro_leaderboard.py",
        "input": {"stand-in.json": hashlib.sha256(read).hexdigest()},
        "written": notebook_entries(notebook, read),
    }
    (OUT / "notebook_entry.json").write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    (OUT / "README.md").write_text(
        f"Recorded by tests/reference/record_screenspot_pro_leaderboard.py from likaixin2000/ScreenSpot-Pro-GUI-Grounding at {args.commit}:\n"
        "stand-in.json is what its eval_screenspot_pro.py writes for 104 real ScreenSpot-Pro rows (the first two icon and two text\n"
        "rows of each application file of ../shared/data/screenspot_pro; its model stood in for, see the script), and\n"
        "notebook_entry.json's `written` is the file the repository's leaderboard_submission.ipynb (unchanged since\n"
        "e9f0ff06a66aacc0e418e4bd906d77800c3a596e) wrote from it: its code cell run as it ships on a folder holding stand-in.json,\n"
        "the JSON text as written (full precision), with the SHA-256 of the stand-in.json it read and the notebook's blob id.\n"
        "The notebook is not copied here. tests/test_leaderboard.py makes guitest's own entry from a run of the same replies\n"
        "and compares it with the recorded one bit for bit. The script's usage says how to record both again, or (--notebook-only)\n"
        "the notebook's entry alone.\n"
    )


def notebook_entries(notebook: bytes, stand_in: bytes) -> str:
    """The file the notebook writes for a results folder holding ``stand_in`` as stand-in.json (the notebook names an
    entry after its file): its code cell that makes the entries, run as it ships, with the folder and the output file
    the cell before it names set to a scratch folder's."""
    cells = json.loads(notebook)["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert code[0].startswith("# Specify the folder") and "def process_json_files" in code[1], "not the notebook this script knows"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "results").mkdir()
        (Path(tmp) / "results" / "stand-in.json").write_bytes(stand_in)
        out = Path(tmp) / "en_results.json"
        exec(compile(code[1], "leaderboard_submission.ipynb", "exec"), {"input_folder": str(Path(tmp) / "results"), "output_json": str(out)})  # noqa: S102
        return out.read_text()


if __name__ == "__main__":
    main()
