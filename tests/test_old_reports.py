"""Every report a user had before still opens: reports written by earlier guitest versions (tests/data/old_reports,
README there says how each was made) are read by ``guitest compare``, as ``--baseline``, and rendered again, against
a report of this version of the same cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from guitest.reporting import compare, html
from guitest.reporting import report as report_mod
from guitest.reporting.document import from_json

OLD = sorted((Path(__file__).parent / "data" / "old_reports").glob("*.json"))


def test_the_old_reports_are_there() -> None:
    assert [p.name for p in OLD] == ["demo-b6bb0fd.json", "demo-d0eee5b.json"]


@pytest.mark.parametrize("path", OLD, ids=lambda p: p.stem)
def test_an_old_report_opens_compares_and_renders(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads(path.read_text("utf-8"))
    old = compare.load_report(path)
    assert old["overall"] == raw["overall"] and old["cases"] == raw["cases"]  # read as written, nothing recomputed
    # a report of this version over the same cases, one verdict changed: the comparison sees exactly that
    cases = [dict(c) for c in raw["cases"]]
    flipped = next(c for c in cases if c["verdict"] == "hit")
    flipped["verdict"] = "miss"
    new = report_mod.build(
        suite={"name": "demo", "path": "suites/demo/suite.yaml", "format": "demo", "task": "grounding"},
        model=raw["model"],
        results=cases,  # type: ignore[arg-type]
        n_selected=len(cases),
        missing=[],
        tags=list(raw["breakdown"]),
        cross=[],
        gate={},
        run={},
    )
    result = compare.compare(old, new)
    assert result["paired"] == len(cases) == 28
    overall = result["rows"][0]["paired"]
    assert (overall["b"], overall["c"]) == (1, 0)  # hit -> miss once, never the other way
    assert result["rows"][0]["delta"] == pytest.approx(-1 / 28, abs=1e-6)  # 23 of 28 scored cases hit, then 22
    # the command line: both directions, exit 0 without --fail-on-regression
    new_path = tmp_path / "new.json"
    report_mod.write_json(new, new_path)
    assert compare.main([str(path), str(new_path)]) == 0
    assert compare.main([str(new_path), str(path)]) == 0
    out = capsys.readouterr().out
    assert "overall" in out and "82.1" in out and "78.6" in out  # 23/28 and 22/28
    # rendered again by this version: every case on the page, the old headline's figure
    page = html.render(from_json(raw), {}, tmp_path, tmp_path)
    assert all(f'data-id="{c["id"]}"' in page or c["id"] in page for c in raw["cases"])
    assert '<div class="big" id="headline-accuracy">82.1<small>%</small></div>' in page
    assert "| overall |  | 28 | 23 | 82.1 |" in report_mod.markdown(from_json(raw))


@pytest.mark.parametrize("path", OLD, ids=lambda p: p.stem)
def test_an_old_report_is_a_baseline(path: Path, pytester: pytest.Pytester) -> None:
    """``--baseline OLD.json`` in a run of the same cases: the old report is read and compared; the oracle gains the 5
    cases the OCR baseline lost (no regression; 5 gains alone are not significant: McNemar p = 2/32), so the run passes."""
    shutil.copytree(Path(__file__).parents[1] / "suites" / "demo", pytester.path / "suites" / "demo", ignore=shutil.ignore_patterns("data"))
    shutil.copy(path, pytester.path / "old.json")
    result = pytester.runpytest_subprocess("suites/demo", "--model=oracle", "-k", "text or win", "--baseline=old.json", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*overall*82.1*100.0*", "no detectable change"])
    report = json.loads((pytester.path / "reports" / "demo.json").read_text("utf-8"))
    assert report["baseline"]["regressions"] == [] and report["baseline"]["comparable"]["paired"] == 28
    assert report["overall"]["hit"] == 28


def test_a_report_with_only_what_compare_needs_opens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report another tool wrote with only the fields ``guitest compare`` checks (overall, breakdown, cases) opens:
    what it lacks is filled in when read (document.from_json), never a KeyError."""
    raw = json.loads(OLD[-1].read_text("utf-8"))
    bare = {k: raw[k] for k in ("overall", "breakdown", "cases")}
    (tmp_path / "bare.json").write_text(json.dumps(bare), "utf-8")
    assert compare.main([str(tmp_path / "bare.json"), str(OLD[-1])]) == 0
    out = capsys.readouterr().out
    assert "no detectable change" in out
    page = html.render(compare.load_report(tmp_path / "bare.json"))
    assert page.count('class="card') >= len(raw["cases"]) or all(c["id"] in page for c in raw["cases"])
