"""One checked JSON loader (guitest.strictjson.load) for every reader of a report-like file, and what each command
does with a file it refuses.

Whatever the file holds (not JSON, 100,000 nested brackets, an array where an object is expected, 600 MiB, a binary
file, a folder, a part of the wrong kind), `guitest compare`, `guitest merge` and `guitest leaderboard` (its report
and its --against file) exit 2 with one line naming the file and why, and --lf reads it as no previous report. Before,
the nested brackets were a RecursionError's traceback out of all three and out of --lf's reader, the folder was a
traceback too, and a huge file was read whole before anything was said.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from guitest import strictjson
from guitest.cli import main
from guitest.reporting import builder
from guitest.reporting import report as report_mod
from guitest.tasks import load_task


def a_report(shard: str | None = "1/2") -> dict[str, Any]:
    """A small grounding report, valid against the report schema, that reads as a shard of a run."""
    cases = [{"id": f"c{n}", "verdict": "hit" if n % 2 else "miss", "tags": {"split": "mobile", "data_type": "icon"}, "prediction": None, "response": "x"} for n in range(4)]
    report = report_mod.build(
        suite={"name": "tiny", "path": "suites/tiny/suite.yaml", "format": "screenspot", "task": "grounding", "settings": {}},
        model={"spec": "oracle", "adapter": "OracleModel", "space": "normalized", "settings": {}},
        results=cases,  # type: ignore[arg-type]
        n_selected=4,
        missing=[],
        tags=["split", "data_type"],
        cross=[],
        gate={"thresholds": {"metric": "accuracy", "accuracy": None, "by": {}}, "failures": [], "notes": [], "passed": None},
        run={"shard": shard, "started": "2026-12-05T10:00:00+0000", "seconds": 1.0, "workers": 1},
        task=load_task("grounding"),
    )
    assert report_mod.validate(report) == []
    return dict(report)


def written(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    return path


def huge(path: Path) -> Path:
    with open(path, "wb") as f:  # sparse: 600 MiB that take no disk, and must not be read
        f.truncate(600 << 20)
    return path


def folder(path: Path) -> Path:
    path.mkdir()
    return path


def shaped(**changed: Any) -> Callable[[Path], Path]:
    return lambda path: written(path, json.dumps({**a_report(), **changed}))


# (what the file holds, how it is written, what the one line says)
SHAPES: list[tuple[str, Callable[[Path], Path], str]] = [
    ("wrong JSON", lambda p: written(p, '{"cases": [{"id": '), "not JSON (Expecting value at line 1, column 19)"),
    ("deep JSON", lambda p: written(p, "[" * 100_000 + "]" * 100_000), "nested deeper than 100 levels, more than guitest reads"),
    ("an array", lambda p: written(p, "[1, 2]"), "the top level is an array, expected an object"),
    ("a huge file", huge, "larger than 512 MiB, the most guitest reads of a JSON file"),
    ("a binary file", lambda p: (p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256))), p)[1], "not UTF-8 text (byte 0): not a JSON file"),
    ("a folder", folder, "a folder, not a JSON file"),
    ("a huge integer", lambda p: written(p, '{"cases": [], "n": 1' + "0" * 400 + "}"), "an integer of 401 digits, past the largest number guitest reads"),
]
# a part of the report of another kind than the command reads (an array where an object is expected), per command
NESTED = {
    "compare": (shaped(headline=[]), "not a guitest report: 'headline' is not an object"),
    "merge": (shaped(gate={"thresholds": [1]}), "not a guitest JSON report as guitest writes one: gate.thresholds: [1] is not of type 'object'"),
    "leaderboard": (shaped(cases=[{"id": "c0", "verdict": "hit", "tags": {"split": ["mobile"]}}]), "'tags' is not an object of names to values"),
    "against": (lambda p: written(p, json.dumps({"oracle": {"results": []}})), "has no results object in row 'oracle'"),
}


def run(command: str, bad: Path, good: Path, out: Path) -> list[str]:
    """The command's arguments with ``bad`` where the file under test goes."""
    return {
        "compare": ["compare", str(bad), str(good)],
        "merge": ["merge", str(bad), "--report-dir", str(out)],
        "leaderboard": ["leaderboard", str(bad), "--schema", "screenspot_v2"],
        "against": ["leaderboard", str(good), "--schema", "screenspot_v2", "--name", "oracle", "--out", str(out / "entry.json"), "--subset", "--against", str(bad)],  # a shard's report: --subset
    }[command]


@pytest.mark.parametrize("command", ["compare", "merge", "leaderboard", "against"])
@pytest.mark.parametrize(("shape", "write", "says"), SHAPES + [("a part of another kind", None, None)], ids=[s[0] for s in SHAPES] + ["nested"])
def test_every_command_exits_2_with_one_line_on_any_unreadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, shape: str, write: Callable[[Path], Path] | None, says: str | None
) -> None:
    if write is None:
        write, says = NESTED[command]
    assert says is not None
    good = written(tmp_path / "good.json", json.dumps(a_report()))
    bad = write(tmp_path / "bad.json")
    if command == "compare" and shape == "a folder":
        says = "not an OSWorld results folder"  # compare reads a folder as a published run's
    code = main(run(command, bad, good, tmp_path / "out"))
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert str(bad) in lines[0] and says in lines[0], lines[0]
    assert not (tmp_path / "out" / "tiny.json").exists()


@pytest.mark.parametrize(("shape", "write", "says"), SHAPES, ids=[s[0] for s in SHAPES])
def test_last_failed_reads_an_unreadable_report_as_no_previous_report(tmp_path: Path, shape: str, write: Callable[[Path], Path], says: str) -> None:
    assert builder.read_previous(write(tmp_path / "tiny.json")) is None
    assert builder.read_previous(written(tmp_path / "ok.json", json.dumps(a_report()))) is not None


def test_the_loader_reads_what_guitest_writes_and_bounds_the_rest(tmp_path: Path) -> None:
    report = a_report()
    assert strictjson.load(written(tmp_path / "r.json", report_mod.json_text(report))) == json.loads(report_mod.json_text(report))
    # what older guitest versions wrote for a non-finite number, and a float past the largest, read as dumps writes them now
    assert strictjson.loads("[NaN, Infinity, -Infinity, 1e400, 1.5, -0.0]", "x") == [None, None, None, None, 1.5, -0.0]
    assert strictjson.loads("\ufeff{}".encode(), "x") == {}  # a byte-order mark
    assert strictjson.loads("[" * 100 + "]" * 100, "x") is not None  # 100 levels: read
    with pytest.raises(strictjson.UnreadableJSON, match=r"^x: nested deeper than 100 levels"):
        strictjson.loads("[" * 101 + "]" * 101, "x")
    with pytest.raises(strictjson.UnreadableJSON, match=r"^x: nested deeper than 100 levels"):
        strictjson.loads('{"a": ' * 150 + "1" + "}" * 150, "x")
    for digits in (310, 5000):  # past the largest float; past the 4300 digits Python's int() takes
        with pytest.raises(strictjson.UnreadableJSON, match=rf"^x: an integer of {digits} digits"):
            strictjson.loads("9" * digits, "x")
    with pytest.raises(strictjson.UnreadableJSON, match=r"^x: empty, not JSON$"):
        strictjson.loads(" \n", "x")
    with pytest.raises(strictjson.UnreadableJSON, match=r"^x: larger than 10 bytes"):
        strictjson.loads("[1, 2, 3, 4, 5]", "x", max_bytes=10)
    with pytest.raises(strictjson.UnreadableJSON, match=r"^a\\nb: no such file$"):  # one line, whatever the name
        strictjson.load(tmp_path / "missing.json", label="a\nb")
    with pytest.raises(strictjson.UnreadableJSON, match="the top level is an object, expected an array"):
        strictjson.loads("{}", "x", expect=list)


def test_a_pipe_is_read_no_further_than_the_bound(tmp_path: Path) -> None:
    # a device or a pipe has no size to look at first: at most the bound is read from it
    with pytest.raises(strictjson.UnreadableJSON, match="larger than 1 MiB"):
        strictjson.load("/dev/zero", max_bytes=1 << 20)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:  # opening a pipe waits for its reader: the writer waits for the loader's open
        with open(fifo, "w") as f:
            f.write('{"a": 1}')

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert strictjson.load(fifo) == {"a": 1}
    writer.join()
