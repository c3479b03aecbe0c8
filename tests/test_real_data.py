"""The real ScreenSpot-Pro annotations end to end: placeholders, selection, oracle 1581/1581, serial == -n 2.

Reads ../shared/data (see its README); skipped with a reason when that folder is absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from builders import REPO, SHARED_DATA
from guitest.cli import main as guitest_main

PRO = SHARED_DATA / "screenspot_pro"
pytestmark = pytest.mark.skipif(not PRO.is_dir(), reason=f"real annotations not found at {PRO} (see ../shared/data/README.md)")


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    (root / "ScreenSpot-Pro").mkdir()
    (root / "ScreenSpot-Pro" / "annotations").symlink_to(PRO, target_is_directory=True)
    assert guitest_main(["placeholders", str(REPO / "suites" / "screenspot_pro"), f"--data-root={root}"]) == 0
    return root


def real_rows() -> list[dict]:
    return [row for path in sorted(PRO.glob("*.json")) for row in json.loads(path.read_text())]


def test_placeholders_cover_every_image(data_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images = data_root / "ScreenSpot-Pro" / "images"
    assert sum(1 for _ in images.rglob("*.png")) == len({r["img_filename"] for r in real_rows()}) == 1581
    assert guitest_main(["placeholders", str(REPO / "suites" / "screenspot_pro"), f"--data-root={data_root}"]) == 0
    assert "written 0" in capsys.readouterr().out


def test_keyword_selects_exactly_the_windows_icons(pytester: pytest.Pytester, data_root: Path) -> None:
    expected = sorted(f"{r['group']}-{r['application']}-{r['platform']}-{r['ui_type']}-{r['id']}" for r in real_rows() if r["platform"] == "windows" and r["ui_type"] == "icon")
    result = pytester.runpytest_subprocess(str(REPO / "suites" / "screenspot_pro"), f"--data-root={data_root}", "--collect-only", "-q", "-k", "icon and windows")
    ids = sorted(line.split("::", 1)[1] for line in result.stdout.lines if "suite.yaml::" in line)
    assert ids == expected and len(ids) == 379


def test_oracle_scores_1581_of_1581_and_xdist_agrees(pytester: pytest.Pytester, data_root: Path, tmp_path: Path) -> None:
    reports = []
    for extra in ([], ["-n", "2"]):
        out = tmp_path / f"report{len(extra)}.json"
        result = pytester.runpytest_subprocess(
            str(REPO / "suites" / "screenspot_pro"),
            "--model=oracle",
            f"--data-root={data_root}",
            f"--report-dir={tmp_path}",
            f"--report-json={out}",
            "-q",
            "-p",
            "no:cacheprovider",
            *extra,
        )
        assert result.ret == 0, result.stdout.str()[-3000:]
        report = json.loads(out.read_text())
        assert report["overall"]["hit"] == report["n_results"] == report["n_selected"] == 1581
        by_group = {k: v["n"] for k, v in report["breakdown"]["group"].items()}
        assert by_group == dict(Counter(r["group"] for r in real_rows()))
        assert report["notes"] == {"bbox_clipped": 1, "instruction_cn_null": 8}
        report.pop("run")
        reports.append(json.dumps(report, sort_keys=True))
    assert reports[0] == reports[1]
