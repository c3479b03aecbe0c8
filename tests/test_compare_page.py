"""What changed between two runs: ``guitest compare`` names every flipped case (text and ``--json``'s ``flipped``) and
``--html PAGE`` writes a page of them: both runs' points on a grounding case's screenshot, both episodes' steps side by
side with the first diverging step marked, a published OSWorld folder on either side (its steps from traj.jsonl)."""

from __future__ import annotations

import copy
import json
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import chromium
from guitest.cli import main as cli_main
from guitest.published.runs import write_osworld
from guitest.reporting.compare_page import divergence
from guitest.reporting import html as html_mod
from guitest.reporting import report as report_mod
from guitest import strictjson
from guitest.reporting.compare import load_report, main
from reference import osworld_results_case as results_case
from test_compare import make_report


def _main(tmp_path: Path, old: Any, new: Any, *extra: str) -> int:
    paths = []
    for name, report in (("old.json", old), ("new.json", new)):
        path = tmp_path / name
        path.write_text(json.dumps(report), "utf-8")
        paths.append(str(path))
    return main([*paths, "--min-paired", "0", *extra])


def test_compare_names_exactly_the_flipped_cases_in_its_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = {"a-lost": "hit", "a-gained": "miss", "a-gained2": "unparsed", "a-errs": "hit", "a-heals": "error", "a-same": "hit", "a-wrong": "miss", "a-only-old": "hit"}
    new = {"a-lost": "miss", "a-gained": "hit", "a-gained2": "hit", "a-errs": "error", "a-heals": "miss", "a-same": "hit", "a-wrong": "unparsed", "a-only-new": "miss"}
    many = {f"b-{i:02d}": "hit" for i in range(25)}  # 25 lost: the text names 20 and says how many more
    out = tmp_path / "c.json"
    assert _main(tmp_path, make_report(old | many), make_report(new | {k: "miss" for k in many}), "--json", str(out)) == 0
    text = capsys.readouterr().out
    flipped = json.loads(out.read_text("utf-8"))["flipped"]
    assert flipped == {
        "lost": [{"id": "a-lost", "old": "hit", "new": "miss"}] + [{"id": f"b-{i:02d}", "old": "hit", "new": "miss"} for i in range(25)],
        "gained": [{"id": "a-gained", "old": "miss", "new": "hit"}, {"id": "a-gained2", "old": "unparsed", "new": "hit"}],
        "newly_errored": [{"id": "a-errs", "old": "hit", "new": "error"}],
        "no_longer_errored": [{"id": "a-heals", "old": "error", "new": "miss"}],
    }
    assert "flipped: 30 of the 32 shared cases (lost 26, gained 2, newly errored 1, no longer errored 0)" not in text  # the counts are each kind's
    assert "flipped: 30 of the 32 shared cases (lost 26, gained 2, newly errored 1, no longer errored 1)" in text
    assert "  gained (hit in new, not in old), 2: a-gained (miss -> hit), a-gained2 (unparsed -> hit)\n" in text
    assert "  newly errored (an error in new, none in old), 1: a-errs (hit -> error)\n" in text
    assert "  no longer errored (an error in old, none in new), 1: a-heals (error -> miss)\n" in text
    lost = next(line for line in text.splitlines() if line.startswith("  lost"))
    assert lost.startswith("  lost (hit in old, not in new), 26: a-lost (hit -> miss), b-00 (hit -> miss)")
    assert "b-18 (hit -> miss), and 6 more: see --json or --html" in lost and "b-19" not in lost
    for unflipped in ("a-same", "a-wrong", "a-only-old", "a-only-new"):
        assert unflipped not in json.dumps(flipped) and f"{unflipped} (" not in text


class Elements(HTMLParser):
    """Every start tag of a page with its attributes, and its text, per flipped case (``<details id=case-...>``)."""

    def __init__(self) -> None:
        super().__init__()
        self.cases: dict[str, dict[str, Any]] = {}
        self.current: dict[str, Any] | None = None
        self.row: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "details":
            self.current = self.cases[urllib.parse.unquote(str(a["id"])[len("case-") :])] = {"tags": [], "text": "", "rows": []}
        if self.current is None:
            return
        self.current["tags"].append((tag, a))
        if tag == "tr":
            self.row = [a, ""]
            self.current["rows"].append(self.row)

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.current["text"] += data
            if self.row is not None:
                self.row[1] += data


def _page(path: Path) -> dict[str, dict[str, Any]]:
    parser = Elements()
    parser.feed(path.read_text("utf-8"))
    return parser.cases


def _grounding_report(verdicts: dict[str, str], points: dict[str, list[float]], data: Path) -> dict[str, Any]:
    report = make_report(verdicts)
    for case in report["cases"]:
        case.update({"size": [400, 300], "truth": [300, 200, 330, 230], "image": f"{case['id']}.png", "instruction": f"find {case['id']}"})
        case["prediction"] = {"pixel": points[case["id"]]}
        case["response"] = f"Answer: <b>{points[case['id']]}</b>"
    report["run"] = {"data": f"{data} (its own data, beside the suite file)"}
    return report


def _grounding_page(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two grounding runs' page: text-1 lost (its screenshot found by the old run's HTML report), text-4 gained (by its
    name under the data folder), text-3 lost (its screenshot nowhere), text-2 missed in both; the page and the two
    screenshots."""
    shots, data = tmp_path / "shots", tmp_path / "data"
    (data / "imgs").mkdir(parents=True)
    shots.mkdir()
    Image.new("RGB", (400, 300), (240, 240, 240)).save(shots / "text-1.png")  # found as the old run's HTML report shows it
    Image.new("RGB", (400, 300), (240, 240, 240)).save(data / "imgs" / "text-4.png")  # found by its name under the run's data folder
    verdicts_old = {"text-1": "hit", "text-2": "miss", "text-3": "hit", "text-4": "miss"}  # text-3's screenshot is nowhere
    verdicts_new = {"text-1": "miss", "text-2": "miss", "text-3": "miss", "text-4": "hit"}
    old = _grounding_report(verdicts_old, {"text-1": [315.0, 215.0], "text-2": [10.0, 20.0], "text-3": [1.0, 2.0], "text-4": [5.0, 6.0]}, data)
    new = _grounding_report(verdicts_new, {"text-1": [50.0, 60.0], "text-2": [12.0, 20.0], "text-3": [3.0, 4.0], "text-4": [316.0, 216.0]}, data)
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "old.json").write_text(json.dumps(old), "utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), "utf-8")
    strictjson.write_together(html_mod.page_files(load_report(reports / "old.json"), {"text-1": str(shots / "text-1.png")}, [reports / "old.html"], reports))
    page = tmp_path / "out" / "what-changed.html"
    assert main([str(reports / "old.json"), str(tmp_path / "new.json"), "--html", str(page), "--min-paired", "0"]) == 0
    return page, shots / "text-1.png", data / "imgs" / "text-4.png"


def test_the_page_shows_both_runs_points_on_the_screenshot_of_a_flipped_grounding_case(tmp_path: Path) -> None:
    page, shot1, shot4 = _grounding_page(tmp_path)
    cases = _page(page)
    assert set(cases) == {"text-1", "text-3", "text-4"}  # text-2 missed in both: not a flip
    for cid, screenshot, old_point, new_point in (("text-1", shot1, (315.0, 215.0), (50.0, 60.0)), ("text-4", shot4, (5.0, 6.0), (316.0, 216.0))):
        one = cases[cid]
        img = next(a for t, a in one["tags"] if t == "img")
        assert (page.parent / urllib.parse.unquote(img["src"])).resolve() == screenshot.resolve()
        circles = {a["class"]: (float(a["cx"]), float(a["cy"])) for t, a in one["tags"] if t == "circle"}
        assert circles == {"old": old_point, "new": new_point}
        rect = next(a for t, a in one["tags"] if t == "rect")
        assert [float(rect[k]) for k in ("x", "y", "width", "height")] == [300, 200, 30, 30]
        assert f"Answer: <b>{list(old_point)}</b>" in one["text"] and f"Answer: <b>{list(new_point)}</b>" in one["text"]  # both replies, as text
    assert "<b>" not in page.read_text("utf-8")  # a reply's markup is escaped
    three = cases["text-3"]
    assert "The screenshot was not found" in three["text"] and "(1, 2)" in three["text"] and "(3, 4)" in three["text"]
    assert not [a for t, a in three["tags"] if t in ("img", "circle")]
    head = page.read_text("utf-8").split("<details", 1)[0]
    assert "lost (hit in old, not in new), 2: text-1 (hit -&gt; miss), text-3 (hit -&gt; miss)" in head  # the statistics at the top
    assert "overall" in head and "McNemar" in head


def _live_runs(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """tests/reference/osworld_results_case.py's desktop run, and a run where chrome-t1 typed something else at step 1
    and gave up at step 2 (hit -> miss) and gimp-t4 is unchanged."""
    old = results_case.report(tmp_path / "reports")
    new = copy.deepcopy(old)
    case = next(c for c in new["cases"] if c["id"] == "chrome-t1")
    case["verdict"], case["success"], case["score"] = "miss", False, 0.0
    steps = case["episode"]["trajectory"]
    steps[1]["actions"] = [{"kind": "fail"}]
    steps[1]["reply"] = "```FAIL```"
    return old, new


def _steps(case: dict[str, Any]) -> list[tuple[bool, str]]:
    """The rows of a case's steps table: (marked as the divergence, the row's text)."""
    return [("diverge" in (a.get("class") or ""), text) for a, text in case["rows"][1:]]


def test_the_page_shows_both_episodes_steps_side_by_side_with_the_divergence_marked(tmp_path: Path) -> None:
    old, new = _live_runs(tmp_path)
    report_mod.write_json(old, tmp_path / "reports" / "old.json")
    report_mod.write_json(new, tmp_path / "reports" / "new.json")
    page = tmp_path / "page.html"
    assert main([str(tmp_path / "reports" / "old.json"), str(tmp_path / "reports" / "new.json"), "--html", str(page)]) == 0
    cases = _page(page)
    assert set(cases) == {"chrome-t1"}
    rows = _steps(cases["chrome-t1"])
    assert [marked for marked, _ in rows] == [False, True]
    assert "click point=[100.0, 200.0]; type text=hello" in rows[0][1] and rows[0][1].count("type text=hello") == 2  # step 1 alike on both sides
    assert "done" in rows[1][1] and "fail" in rows[1][1] and "first divergence" in rows[1][1]
    assert "```DONE```" in rows[1][1] and "```FAIL```" in rows[1][1]  # both replies
    shots = [a["src"] for t, a in cases["chrome-t1"]["tags"] if t == "img"]
    assert len(shots) == 4 and all((page.parent / urllib.parse.unquote(s)).is_file() for s in shots)
    assert sorted(Path(urllib.parse.unquote(s)).name for s in shots) == ["step-01.png", "step-01.png", "step-02.png", "step-02.png"]


def test_a_published_osworld_folder_shows_its_steps_and_screenshots_from_traj_jsonl(tmp_path: Path) -> None:
    old, new = _live_runs(tmp_path)
    folder = write_osworld(old, tmp_path / "osworld", tmp_path / "reports").folder
    report_mod.write_json(new, tmp_path / "reports" / "new.json")
    page = tmp_path / "page.html"
    out = tmp_path / "c.json"
    assert cli_main(["compare", str(folder), str(tmp_path / "reports" / "new.json"), "--html", str(page), "--json", str(out), "--min-paired", "0"]) == 0
    assert json.loads(out.read_text("utf-8"))["flipped"]["lost"] == [{"id": "chrome-t1", "old": "hit", "new": "miss"}]
    case = _page(page)["chrome-t1"]
    rows = _steps(case)
    assert [marked for marked, _ in rows] == [False, True]  # step 1's actions are the same code on both sides
    assert "pyautogui.click(100, 200); pyautogui.write('hello')" in rows[0][1]  # the folder's own traj.jsonl lines
    assert "DONE" in rows[1][1] and "fail" in rows[1][1]
    shots = [urllib.parse.unquote(a["src"]) for t, a in case["tags"] if t == "img"]
    from_folder = [s for s in shots if (page.parent / s).resolve().parent == (folder / "chrome" / "t1").resolve()]
    assert len(from_folder) == 2 and all((page.parent / s).is_file() for s in from_folder)  # the screen after each step, as traj.jsonl names it
    assert "a published OSWorld run's step shows the screen after its action" in case["text"]


def test_a_page_that_cannot_be_written_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("", "utf-8")
    assert _main(tmp_path, make_report({"x-1": "hit"}), make_report({"x-1": "miss"}), "--html", str(tmp_path / "a-file" / "page.html")) == 2
    assert f"guitest compare: cannot write {tmp_path / 'a-file' / 'page.html'}: " in capsys.readouterr().err


def test_in_a_browser_a_case_loads_its_screenshot_when_opened_and_the_page_asks_for_nothing_else(tmp_path: Path) -> None:
    """Debian's Chromium through Playwright: the page's own style applies under its Content-Security-Policy (no
    violation reported), no screenshot is requested before its case is opened, and an opened case shows it."""
    page_path, shot1, _ = _grounding_page(tmp_path)
    with chromium.launched() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        requests: list[str] = []
        page.on("console", lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None)
        page.on("request", lambda req: requests.append(req.url))
        page.goto(page_path.as_uri())
        assert requests == [page_path.as_uri()]  # closed cases load nothing
        page.click("#case-text-1 > summary")
        page.wait_for_function("document.querySelector('#case-text-1 img').complete && document.querySelector('#case-text-1 img').naturalWidth > 0")
        assert page.evaluate("document.querySelector('#case-text-1 img').naturalWidth") == 400
        assert page.evaluate("getComputedStyle(document.querySelector('#case-text-1 circle.new')).stroke") == "rgb(47, 111, 223)"
        assert requests == [page_path.as_uri(), shot1.resolve().as_uri()]
        assert problems == []


def test_two_episodes_diverge_at_the_first_step_whose_actions_differ_or_that_one_lacks() -> None:
    def steps(*keys: str) -> list[dict[str, Any]]:
        return [{"key": [k]} for k in keys]

    assert divergence(steps("a", "b"), steps("a", "b")) is None
    assert divergence(steps("a", "b"), steps("a", "c")) == 1
    assert divergence(steps("x", "b"), steps("a", "b")) == 0
    assert divergence(steps("a", "b"), steps("a", "b", "c")) == 2  # the longer episode's extra step
    assert divergence([], steps("a")) == 0
    assert divergence([], []) is None
