"""A published OSWorld run (its results layout) read into a guitest report whose figures equal what OSWorld's own
show_result.py prints on the same folder (tests/reference/osworld_show_result.py, the fork mrwwk/DeskCraft at
3e11457, run here as it ships), and compared task by task with a guitest run."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
from pathlib import Path

import pytest

from guitest.cli import main
from guitest.published_runs import PublishedRunError, osworld_report, osworld_score
from guitest.reporting import report as report_mod

SHOW_RESULT = Path(__file__).parent / "reference" / "osworld_show_result.py"
# show_result.py prints Office, Daily and Professional from these domains: it needs each to have a finished task
SCORES = {
    "libreoffice_calc": {"c1": "1.0", "c2": "0.0", "c3": "0.5"},
    "libreoffice_impress": {"i1": "0.25", "i2": None},
    "libreoffice_writer": {"w1": "1"},
    "vlc": {"v1": "0.0", "v2": "True"},
    "thunderbird": {"t1": "1.0", "t2": None, "t3": "0.0"},
    "chrome": {"ch1": "0.6666666666666666", "ch2": "1.0"},
    "gimp": {"g1": "0.0"},
    "vs_code": {"vs1": "1.0", "vs2": "0.75"},
    "os": {"o1": "1.0", "o2": "0.0", "o3": None},
}


def write_results(root: Path) -> Path:
    """OSWorld's layout as lib_run_single.py writes it: result.txt ("{result}\\n"), traj.jsonl; None: a task that did not finish."""
    model = root / "pyautogui" / "screenshot" / "some-model"
    for domain, tasks in SCORES.items():
        for task, score in tasks.items():
            folder = model / domain / task
            folder.mkdir(parents=True)
            steps = [
                {
                    "step_num": n,
                    "action_timestamp": "20261204@000000",
                    "action": "pyautogui.click(1, 2)",
                    "response": f"step {n}",
                    "reward": 0,
                    "done": False,
                    "info": {},
                    "screenshot_file": f"step_{n}.png",
                }
                for n in (1, 2)
            ]
            (folder / "traj.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
            if score is not None:
                (folder / "result.txt").write_text(f"{score}\n")
    return model


def show_result(root: Path, model: str = "some-model") -> str:
    """What OSWorld's show_result.get_result prints for the model's folder (what it printed before it failed, when the
    folder lacks a domain its Office, Daily and Professional lines name: a KeyError there)."""
    spec = importlib.util.spec_from_file_location("osworld_show_result", SHOW_RESULT)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(KeyError):
        module.get_result("pyautogui", model, "screenshot", str(root))
    return out.getvalue()


def test_the_report_says_what_show_result_says(tmp_path: Path) -> None:
    write_results(tmp_path)
    printed = show_result(tmp_path)
    domains = {m[1]: (int(m[2]), float(m[3])) for m in re.finditer(r"Domain: (\S+) Runned: (\d+) Success Rate: (\S+) %", printed)}
    runned, overall = re.search(r"Runned: (\d+) Current Success Rate: (\S+) %", printed).groups()  # type: ignore[union-attr]
    assert len(domains) == len(SCORES)
    report = osworld_report(tmp_path)  # the root: its one model's folder is found
    assert report["headline"]["figure"] == "mean_score"
    for domain, (n, rate) in domains.items():
        row = report["breakdown"]["app"][domain]
        assert row["n"] - row["error"] == n and row["mean_score"] == pytest.approx(rate / 100, abs=1e-6)
    assert report["overall"]["n"] - report["overall"]["error"] == int(runned) == 16
    assert report["overall"]["mean_score"] == pytest.approx(float(overall) / 100, abs=1e-6) and report["headline"]["accuracy"] == report["overall"]["mean_score"]
    assert report["overall"]["error"] == 3 and report["overall"]["hit"] == 7  # 1.0, 1 and True succeed; 0.75 and the like do not
    assert report_mod.validate(report) == []


def test_compare_sets_a_published_run_beside_a_guitest_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_results(tmp_path / "results")
    ours = osworld_report(folder)
    flipped = next(c for c in ours["cases"] if c["verdict"] == "hit")
    flipped["verdict"] = "miss"
    report_mod.write_json(ours, tmp_path / "ours.json")
    assert main(["compare", str(folder), str(tmp_path / "ours.json"), "--min-paired", "0.8"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^overall(\s+\S+){5}\s+16\s+1\s+0\b", out, re.M), out  # the 16 finished tasks paired, the one hit lost
    assert "errored in old, left out of the paired test (3): libreoffice_impress-i2, os-o3, thunderbird-t2" in out
    assert main(["compare", str(tmp_path / "ours.json"), str(tmp_path / "nothing-here")]) == 2


def test_compares_table_prints_what_show_result_prints_with_the_success_rate_beside_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the per-domain table printed the success rate (chrome 50.0) under the words show_result.py uses for its
    mean score (83.33): each domain's and the overall figure of show_result.py, run here, are the table's mean score."""
    folder = write_results(tmp_path / "results")
    printed = show_result(tmp_path / "results")
    assert main(["compare", str(folder), str(folder), "--min-paired", "0.8", "--json", str(tmp_path / "cmp.json")]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("category"))
    assert header.split() == ["category", "value", "old", "mean", "score", "new", "mean", "score", "delta", "old", "success%", "new", "success%", "paired", "lost", "gained", "p", "verdict"]
    report = osworld_report(folder)
    domains = re.findall(r"Domain: (\S+) Runned: \d+ Success Rate: (\S+) %", printed)
    assert len(domains) == len(SCORES)
    for domain, rate in domains:
        cells = re.search(rf"^app\s+{domain}\s+(\S+)\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)\s", out, re.M)
        assert cells is not None, domain
        success = f"{100 * report['breakdown']['app'][domain]['accuracy']:.1f}"
        assert cells.groups() == (f"{float(rate):.2f}", f"{float(rate):.2f}", success, success), domain  # show_result's figure, then the success rate
    overall = float(re.search(r"Current Success Rate: (\S+) %", printed).group(1))  # type: ignore[union-attr]
    assert f"headline: mean score {overall:.2f} -> {overall:.2f} (x 100, as OSWorld's show_result.py prints it); success rate 43.8% -> 43.8%" in out
    assert re.search(rf"^overall\s+{overall:.2f}\s+{overall:.2f}\s+\+0\.00\s+43\.8\s+43\.8\s", out, re.M), out
    data = json.loads((tmp_path / "cmp.json").read_text("utf-8"))
    chrome = next(r for r in data["rows"] if r["value"] == "chrome")
    assert data["figure"] == "mean_score" and data["old"]["headline_figure"] == "mean_score"
    assert chrome["old"]["mean_score"] == pytest.approx(float(dict(domains)["chrome"]) / 100, abs=1e-6) and chrome["old"]["accuracy"] == 0.5 and chrome["mean_score_delta"] == 0


def test_a_folder_that_is_not_results_is_named(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    with pytest.raises(PublishedRunError, match="not an OSWorld results folder"):
        osworld_report(tmp_path)
    assert osworld_score("0.5\n") == 0.5 and osworld_score("True") == 1.0
    with pytest.raises(ValueError):
        osworld_score("oops")


def test_a_run_written_in_osworld_layout_reads_back_through_show_result(tmp_path: Path) -> None:
    """guitest's report written as OSWorld results: OSWorld's show_result.py prints the report's figures, and reading the
    folder back gives the same report figures."""
    from guitest.published_runs import write_osworld

    report = osworld_report(write_results(tmp_path / "published"))
    report["model"]["spec"] = "openai:my/model"
    folder = write_osworld(report, tmp_path / "ours")
    assert folder == tmp_path / "ours" / "pyautogui" / "screenshot" / "openai_my_model"
    assert (folder / "chrome" / "ch1" / "result.txt").read_text() == "0.6666666666666666\n"
    assert not (folder / "os" / "o3" / "result.txt").exists() and (folder / "os" / "o3" / "traj.jsonl").exists()
    printed = show_result(tmp_path / "ours", model="openai_my_model")
    runned, overall = re.search(r"Runned: (\d+) Current Success Rate: (\S+) %", printed).groups()  # type: ignore[union-attr]
    assert int(runned) == 16 and float(overall) / 100 == pytest.approx(report["overall"]["mean_score"], abs=1e-6)  # the report keeps 6 decimals
    again = osworld_report(folder)
    assert again["breakdown"] == report["breakdown"] and again["overall"] == report["overall"]
