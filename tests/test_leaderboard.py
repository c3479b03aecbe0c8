"""A ScreenSpot-Pro or -v2 report written as a grounding-leaderboard entry (GUI-Agent/grounding-leaderboard, its
results/*.json schema at ef17af0): every figure equals the report's own breakdown, and --against sets it beside a row."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from guitest.reporting import leaderboard
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
    return report_mod.build(
        suite={"name": "screenspot_pro", "path": "suites/screenspot_pro/suite.yaml", "format": "screenspot_pro", "task": "grounding"},
        model={"spec": "openai:m"},
        results=cases,  # type: ignore[arg-type]
        n_selected=len(cases),
        missing=[],
        tags=["group", "application", "platform", "ui_type"],
        cross=[["group", "ui_type"], ["platform", "ui_type"]],
        gate={},
        run={},
    )  # type: ignore[return-value]


def test_every_figure_is_the_reports_own() -> None:
    report = pro_report()
    made = leaderboard.entry(report, "screenspot_pro")  # type: ignore[arg-type]
    results = made["openai:m"]["results"]
    cells = report["breakdown"]["group/ui_type"]
    for group in GROUPS:
        assert results["group"][group] == {"icon": cells[f"{group}/icon"]["accuracy"], "text": cells[f"{group}/text"]["accuracy"], "avg": report["breakdown"]["group"][group]["accuracy"]}
    for app in (a for apps in GROUPS.values() for a in apps):
        assert results["application"][app]["avg"] == report["breakdown"]["application"][app]["accuracy"]
    by_type = report["breakdown"]["ui_type"]
    assert results["overall"] == {"icon": by_type["icon"]["accuracy"], "text": by_type["text"]["accuracy"], "avg": report["overall"]["accuracy"]}


def test_overall_avg_is_micro_as_the_leaderboard_rows_are() -> None:
    # HuzzleWorld-2B's row at ef17af0: icon 0.45364238410596025, text 0.7031729785056294, avg 0.6078431372549019,
    # which are 274/604, 687/977 and 961/1581: the avg counts every case (micro), not the mean of the two
    cases = [{"id": f"i{n}", "verdict": "hit" if n < 274 else "miss", "tags": {"group": "OS", "application": "vmware", "ui_type": "icon"}, "prediction": None, "response": None} for n in range(604)]
    cases += [{"id": f"t{n}", "verdict": "hit" if n < 687 else "miss", "tags": {"group": "OS", "application": "vmware", "ui_type": "text"}, "prediction": None, "response": None} for n in range(977)]
    report = report_mod.build(
        suite={"name": "screenspot_pro", "path": "p", "format": "f", "task": "grounding"}, model={"spec": "m"}, results=cases, n_selected=1581, missing=[], tags=["ui_type"], cross=[], gate={}, run={}
    )  # type: ignore[arg-type]
    overall = leaderboard.entry(report, "screenspot_pro")["m"]["results"]["overall"]
    assert overall == pytest.approx({"icon": 0.45364238410596025, "text": 0.7031729785056294, "avg": 0.6078431372549019}, abs=1e-6)


def test_v2_and_refusals(tmp_path: Path) -> None:
    report = pro_report()
    with pytest.raises(leaderboard.LeaderboardError, match="no data_type, split tag"):
        leaderboard.entry(report, "screenspot_v2")  # type: ignore[arg-type]
    for case in report["cases"]:
        case["tags"] |= {"split": "desktop", "data_type": case["tags"]["ui_type"]}
    made = leaderboard.entry(report, "screenspot_v2", name="mine")  # type: ignore[arg-type]
    assert set(made["mine"]["results"]) == {"platform", "overall_avg"} and made["mine"]["results"]["overall_avg"] == report["overall"]["accuracy"]
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
