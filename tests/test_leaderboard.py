"""A ScreenSpot-Pro or -v2 report written as a grounding-leaderboard entry (GUI-Agent/grounding-leaderboard, its
results/*.json schema at ef17af0): every figure is the report's own accuracy at full precision, bit for bit what the
leaderboard's submission notebook builds from the official script's file of the same replies; a run of part of the
suite is refused unless --subset, and the entry then says so; --against sets an entry beside a row."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest

from builders import REPO, SHARED_DATA
from guitest.reporting import builder, leaderboard
from guitest.reporting import report as report_mod

GROUPS = {"CAD": ["autocad", "solidworks"], "Dev": ["vscode", "pycharm"], "Office": ["word"]}


def pro_report(seed: int = 3) -> dict:
    rng = random.Random(seed)
    cases = []
    for group, apps in GROUPS.items():
        for app in apps:
            for i in range(12):
                kind = "icon" if i % 3 == 0 else "text"
                verdict = rng.choice(["hit", "hit", "miss", "unparsed", "error"])
                cases.append(
                    {"id": f"{group}-{app}-{kind}-{i}", "verdict": verdict, "tags": {"group": group, "application": app, "platform": "windows", "ui_type": kind}, "prediction": None, "response": None}
                )
    report = report_mod.build(
        suite={"name": "screenspot_pro", "path": "suites/screenspot_pro/suite.yaml", "format": "screenspot_pro", "task": "grounding"},
        model={"spec": "openai:m"},
        results=cases,  # type: ignore[arg-type]
        n_selected=len(cases),
        missing=[],
        tags=["group", "application", "platform", "ui_type"],
        cross=[["group", "ui_type"], ["platform", "ui_type"]],
        gate={},
        run={},
    )
    report["selection"] = {"n_suite": len(cases), "subset": False, "by": [], "limit": None}  # the whole suite
    return report  # type: ignore[return-value]


def exact(row: dict) -> float:
    """A table row's accuracy unrounded: its hits over its cases not in error."""
    return row["hit"] / (row["n"] - row["error"])


def test_every_figure_is_the_reports_own() -> None:
    report = pro_report()
    made = leaderboard.entry(report, "screenspot_pro")  # type: ignore[arg-type]
    results = made["openai:m"]["results"]
    cells = report["breakdown"]["group/ui_type"]
    for group in GROUPS:
        assert results["group"][group] == {"icon": exact(cells[f"{group}/icon"]), "text": exact(cells[f"{group}/text"]), "avg": exact(report["breakdown"]["group"][group])}
    for app in (a for apps in GROUPS.values() for a in apps):
        assert results["application"][app]["avg"] == exact(report["breakdown"]["application"][app])
    by_type = report["breakdown"]["ui_type"]
    assert results["overall"] == {"icon": exact(by_type["icon"]), "text": exact(by_type["text"]), "avg": exact(report["overall"])}
    # the report's tables keep six decimals of the same figures
    assert round(results["overall"]["avg"], 6) == report["overall"]["accuracy"] and results["overall"]["avg"] != report["overall"]["accuracy"]


def test_overall_avg_is_micro_as_the_leaderboard_rows_are() -> None:
    # HuzzleWorld-2B's row at ef17af0: icon 0.45364238410596025, text 0.7031729785056294, avg 0.6078431372549019,
    # which are 274/604, 687/977 and 961/1581: the avg counts every case (micro), not the mean of the two
    cases = [{"id": f"i{n}", "verdict": "hit" if n < 274 else "miss", "tags": {"group": "OS", "application": "vmware", "ui_type": "icon"}, "prediction": None, "response": None} for n in range(604)]
    cases += [{"id": f"t{n}", "verdict": "hit" if n < 687 else "miss", "tags": {"group": "OS", "application": "vmware", "ui_type": "text"}, "prediction": None, "response": None} for n in range(977)]
    report = report_mod.build(
        suite={"name": "screenspot_pro", "path": "p", "format": "f", "task": "grounding"}, model={"spec": "m"}, results=cases, n_selected=1581, missing=[], tags=["ui_type"], cross=[], gate={}, run={}
    )  # type: ignore[arg-type]
    report["selection"] = {"n_suite": 1581, "subset": False, "by": [], "limit": None}
    overall = leaderboard.entry(report, "screenspot_pro")["m"]["results"]["overall"]
    # at full precision, as the row holds them (the report's tables keep six decimals: 0.453642)
    assert overall == {"icon": 0.45364238410596025, "text": 0.7031729785056294, "avg": 0.6078431372549019}


def test_v2_and_refusals(tmp_path: Path) -> None:
    report = pro_report()
    with pytest.raises(leaderboard.LeaderboardError, match="no data_type, split tag"):
        leaderboard.entry(report, "screenspot_v2")  # type: ignore[arg-type]
    for case in report["cases"]:
        case["tags"] |= {"split": "desktop", "data_type": case["tags"]["ui_type"]}
    made = leaderboard.entry(report, "screenspot_v2", name="mine")  # type: ignore[arg-type]
    assert set(made["mine"]["results"]) == {"platform", "overall_avg"} and made["mine"]["results"]["overall_avg"] == exact(report["overall"])
    report["complete"], report["missing"] = False, ["x"]
    with pytest.raises(leaderboard.LeaderboardError, match="incomplete"):
        leaderboard.entry(report, "screenspot_pro")  # type: ignore[arg-type]


def test_the_command_writes_the_entry_and_sets_it_beside_a_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from guitest.cli import main

    report = pro_report()
    report_mod.write_json(report, tmp_path / "screenspot_pro.json")  # type: ignore[arg-type]
    assert main(["leaderboard", str(tmp_path / "screenspot_pro.json"), "--name", "ours", "--out", str(tmp_path / "entry.json")]) == 0
    entry = json.loads((tmp_path / "entry.json").read_text())
    board = {"theirs": {"link": "", "description": "", "results": json.loads(json.dumps(entry["ours"]["results"]))}}
    board["theirs"]["results"]["group"]["CAD"]["icon"] = 0.9
    (tmp_path / "board.json").write_text(json.dumps(board))
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "screenspot_pro.json"), "--name", "ours", "--out", str(tmp_path / "e2.json"), "--against", str(tmp_path / "board.json"), "--row", "theirs"]) == 0
    out = capsys.readouterr().out
    ours = entry["ours"]["results"]["group"]["CAD"]["icon"]
    assert "1 field(s) differ" in out and f"group.CAD.icon {ours:.4f} vs 0.9000" in out
    assert main(["leaderboard", str(tmp_path / "screenspot_pro.json"), "--against", str(tmp_path / "board.json"), "--row", "nobody"]) == 2


RECORDED = Path(__file__).parent / "data" / "screenspot_pro_leaderboard"
PRO = SHARED_DATA / "screenspot_pro"
RECORD = "python tests/reference/record_screenspot_pro_leaderboard.py --repo /tmp/sspro-bd8bbbb --commit bd8bbbb470fbc4fda2a4fa9ec90bd2572507794e --notebook-only"


def notebook_entries() -> dict:
    """What the leaderboard's submission notebook wrote for stand-in.json: its own code cell, run as it ships by
    tests/reference/record_screenspot_pro_leaderboard.py on the very file (the SHA-256 recorded says so)."""
    recorded = json.loads((RECORDED / "notebook_entry.json").read_text())
    read = hashlib.sha256((RECORDED / "stand-in.json").read_bytes()).hexdigest()
    assert recorded["input"] == {"stand-in.json": read}, f"stand-in.json changed since the notebook's entry was recorded: re-record with {RECORD}"
    entries: dict = json.loads(recorded["written"])
    return entries


@pytest.mark.skipif(not PRO.is_dir(), reason=f"real annotations not found at {PRO} (see ../shared/data/README.md)")
def test_an_entry_is_the_official_notebooks_bit_for_bit(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    """ScreenSpot-Pro's eval_screenspot_pro.py wrote stand-in.json for 104 real rows (every group and application, icon
    and text; recorded at bd8bbbb, README there); the leaderboard's notebook made its entry from it (recorded by running
    its code cell), and guitest's run of the same replies (replay, through suites/screenspot_pro) makes its own: the two
    are equal bit for bit."""
    from PIL import Image

    from guitest.cli import main

    details = json.loads((RECORDED / "stand-in.json").read_text())["details"]
    theirs = notebook_entries()["stand-in"]["results"]

    shutil.copytree(REPO / "suites" / "screenspot_pro", pytester.path / "suites" / "screenspot_pro")
    data = pytester.path / "data-root" / "ScreenSpot-Pro"
    (data / "annotations").mkdir(parents=True)
    wanted = {(d["task_filename"], d["id"]) for d in details}
    blanks: dict[tuple[int, int], Path] = {}
    for name in sorted({name for name, _ in wanted}):
        rows = [r for r in json.loads((PRO / f"{name}.json").read_text()) if (name, r["id"]) in wanted]
        (data / "annotations" / f"{name}.json").write_text(json.dumps(rows))
        for row in rows:  # the replay looks at no pixel: a blank image of the row's size, one file per size
            size = tuple(row["img_size"])
            if size not in blanks:
                blanks[size] = pytester.path / f"blank-{size[0]}x{size[1]}.png"
                Image.new("L", size).save(blanks[size])
            image = data / "images" / row["img_filename"]
            image.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(blanks[size], image)
    result = pytester.runpytest_subprocess("suites/screenspot_pro", f"--model=replay:{RECORDED / 'stand-in.json'}", "--data-root=data-root", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()[-3000:]
    capsys.readouterr()
    assert main(["leaderboard", str(pytester.path / "reports" / "screenspot_pro.json"), "--name", "stand-in", "--out", str(pytester.path / "entry.json")]) == 0
    ours = json.loads((pytester.path / "entry.json").read_text())["stand-in"]["results"]
    assert len(ours["application"]) == 26 and len(ours["group"]) == 6
    # the same keys, and every figure the same float: repr is shortest round-trip, so equal text is equal bits
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)
    assert ours["overall"]["avg"] == 35 / 104 == 0.33653846153846156  # not 0.336538, the report's six decimals


def subset_report(selection: dict | None, shard: str | None = None) -> dict:
    report = pro_report()
    report.pop("selection")
    if selection is not None:
        report["selection"] = selection
    report["run"]["shard"] = shard
    return report


def test_a_part_of_the_suite_is_refused_unless_asked_for_and_then_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from guitest.cli import main

    n = len(pro_report()["cases"])
    whole = subset_report({"n_suite": n, "subset": False, "by": [], "limit": None})
    assert set(leaderboard.entry(whole, "screenspot_pro")["openai:m"]) == {"link", "description", "results"}  # type: ignore[arg-type]
    # a -k run: 60 of the suite's 1581 cases
    picked = subset_report({"n_suite": 1581, "subset": True, "by": ["-k 'icon'"], "limit": None})
    with pytest.raises(leaderboard.LeaderboardError, match=r"the run covers 60 of the suite's 1581 cases \(-k 'icon'\): a leaderboard row counts the whole suite; run it whole, or pass --subset"):
        leaderboard.entry(picked, "screenspot_pro")  # type: ignore[arg-type]
    made = leaderboard.entry(picked, "screenspot_pro", subset=True)["openai:m"]  # type: ignore[arg-type]
    assert made["description"].startswith("SUBSET: 60 of 1581 cases. guitest ")
    assert made["subset"] == {"cases": 60, "of": 1581, "by": ["-k 'icon'"], "limit": None, "shard": None}
    assert made["results"] == leaderboard.entry(whole, "screenspot_pro")["openai:m"]["results"]  # type: ignore[arg-type]
    # a limited run and a shard, as the report records them
    limited = subset_report({"n_suite": 1581, "subset": True, "by": [], "limit": {"n": 60, "seed": 0, "strata": ["group", "ui_type"]}}, shard="1/2")
    with pytest.raises(leaderboard.LeaderboardError, match=r"60 of the suite's 1581 cases \(--limit=60: spread over group, ui_type, seed 0; --shard=1/2\)"):
        leaderboard.entry(limited, "screenspot_pro")  # type: ignore[arg-type]
    # a report written before guitest recorded its selection cannot be told from a whole run
    with pytest.raises(leaderboard.LeaderboardError, match="does not record how many cases its suite has"):
        leaderboard.entry(subset_report(None), "screenspot_pro")  # type: ignore[arg-type]
    # the command: exit 2 with the reason, and --subset writes the labelled entry
    report_mod.write_json(picked, tmp_path / "screenspot_pro.json")  # type: ignore[arg-type]
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "screenspot_pro.json")]) == 2
    assert "the run covers 60 of the suite's 1581 cases (-k 'icon')" in capsys.readouterr().err
    assert main(["leaderboard", str(tmp_path / "screenspot_pro.json"), "--subset", "--out", str(tmp_path / "entry.json")]) == 0
    assert json.loads((tmp_path / "entry.json").read_text())["openai:m"]["subset"]["of"] == 1581


def test_a_report_built_from_part_of_its_suite_records_it_and_its_gate_says_so() -> None:
    cases = pro_report()["cases"]
    record = {"name": "screenspot_pro", "path": "p", "format": "f", "task": "grounding", "shape": {"tables": ["group", "ui_type"], "cross": [], "average": "micro", "macro_over": None}}
    limits = {"metric": "accuracy", "accuracy": 0.1, "by": {}}

    def built(selection: dict, n_selected: int) -> dict:
        ids = [c["id"] for c in cases]
        return builder.suite_report(record, None, model={"spec": "m"}, results=cases, selected=ids + [f"x{i}" for i in range(n_selected - len(ids))], run={}, limits=limits, selection=selection)  # type: ignore[arg-type,return-value]

    whole = built({"n_suite": 60, "subset": False, "by": [], "limit": None}, 60)
    assert whole["selection"]["subset"] is False and whole["gate"]["notes"] == []
    part = built({"n_suite": 1581, "subset": False, "by": ["-k 'icon'"], "limit": None}, 60)
    assert part["selection"]["subset"] is True and part["gate"]["notes"] == ["gated on a subset: 60 of the suite's 1581 cases; a pass says nothing of the other 1521"]
    # --lf folds a re-run into the report of a limited run: it covers that run's cases, so it keeps its --limit
    limit = {"n": 60, "seed": 4, "strata": ["group", "ui_type"]}
    previous = built({"n_suite": 1581, "subset": False, "by": [], "limit": limit}, 60)
    again = builder.suite_report(
        record,
        None,
        model={"spec": "m"},
        results=cases[:2],
        selected=[c["id"] for c in cases[:2]],
        run={},
        limits=limits,
        previous=previous,
        selection={"n_suite": 1581, "subset": False, "by": ["--lf"], "limit": None},
    )  # type: ignore[arg-type]
    assert again["selection"] == {"n_suite": 1581, "subset": True, "by": [], "limit": limit} and again["n_selected"] == 60


def test_the_exact_accuracy_is_the_tables_own_unrounded_with_or_without_repeats() -> None:
    from guitest.reporting.tallies import counts, exact_accuracy

    rng = random.Random(1)
    verdicts = ["hit", "miss", "error", "unparsed"]
    for _ in range(300):
        repeated = rng.random() < 0.5
        cases = [
            {"id": str(i), "verdict": "hit", "attempts": [{"verdict": rng.choice(verdicts)} for _ in range(rng.randint(1, 4))]} if repeated else {"id": str(i), "verdict": rng.choice(verdicts)}
            for i in range(rng.randint(1, 40))
        ]
        table, exact = counts(cases)["accuracy"], exact_accuracy(cases)
        assert (table is None and exact is None) or round(exact, 6) == table  # type: ignore[arg-type]
    assert exact_accuracy([{"id": "a", "verdict": "hit"}, {"id": "b", "verdict": "miss"}, {"id": "c", "verdict": "miss"}]) == 1 / 3
