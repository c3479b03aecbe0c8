"""A published OSWorld run (its results layout) read into a guitest report whose figures equal what OSWorld's own
show_result.py prints on the same folder (tests/reference/osworld_show_result.py, the fork mrwwk/DeskCraft at
3e11457, run here as it ships), and compared task by task with a guitest run."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import re
import shutil
import tracemalloc
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


def _rates(printed: str) -> dict[str, float]:
    return {m[1]: float(m[2]) for m in re.finditer(r"Domain: (\S+) Runned: \d+ Success Rate: (\S+) %", printed)}


@pytest.mark.parametrize(("text", "why"), [("inf", "not a finite number"), ("nan", "not a finite number"), ("1e308", "outside 0..1"), ("1.5", "outside 0..1"), ("-0.5", "outside 0..1")])
def test_a_score_outside_0_to_1_refuses_the_folder_naming_the_task_and_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, why: str) -> None:
    folder = write_results(tmp_path)
    (folder / "chrome" / "ch2" / "result.txt").write_text(f"{text}\n")
    # OSWorld's own reader takes the score as it is: chrome's rate is (0.666... + score) / 2 x 100, whatever the score
    printed = _rates(show_result(tmp_path))["chrome"]
    expected = (0.6666666666666666 + float(text)) / 2 * 100
    assert (math.isnan(printed) and math.isnan(expected)) or printed == pytest.approx(expected)
    with pytest.raises(PublishedRunError) as refused:
        osworld_report(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / 'chrome' / 'ch2' / 'result.txt'}: the score of task chrome/ch2 is {text!r}, {why}") and "\n" not in message
    assert main(["compare", str(folder), str(folder)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_task_under_two_domains_is_refused_where_show_result_counts_it_twice(tmp_path: Path) -> None:
    folder = write_results(tmp_path)
    shutil.copytree(folder / "chrome" / "ch1", folder / "vlc" / "ch1")
    assert re.search(r"Runned: 17 Current", show_result(tmp_path))  # 16 finished tasks, one of them counted twice
    with pytest.raises(PublishedRunError, match=rf"^{re.escape(str(folder))}: task ch1 is in chrome/ch1 and in vlc/ch1: a task is counted once"):
        osworld_report(folder)


def test_traj_jsonl_is_read_line_by_line_in_bounded_memory(tmp_path: Path) -> None:
    folder = write_results(tmp_path)
    traj = folder / "os" / "o1" / "traj.jsonl"
    first = json.dumps({"step_num": 1, "action": "pyautogui.click(1, 2)", "response": "first"})
    with open(traj, "wb") as f:  # a step, a 40 MiB line of NUL bytes (sparse), 100,000 nested brackets, a step
        f.write(first.encode() + b"\n")
        f.seek(f.tell() + (40 << 20))
        f.write(b"\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n" + json.dumps({"step_num": 2, "response": "last"}).encode() + b"\n")
    tracemalloc.start()
    try:
        report = osworld_report(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    case = next(c for c in report["cases"] if c["id"] == "os-o1")
    assert case["steps"] == 2 and case["response"] == "last"  # the long line and the deep one are not steps
    assert peak < 16 << 20, f"{peak >> 20} MiB"  # the whole file was read at once before: 80 MiB and more


def test_unreadable_files_of_a_task_are_named(tmp_path: Path) -> None:
    folder = write_results(tmp_path)
    (folder / "vlc" / "v1" / "result.txt").write_text("0" * 10_000)  # a result.txt that is no score: the task is an error
    report = osworld_report(folder)
    assert next(c for c in report["cases"] if c["id"] == "vlc-v1")["error"] == f"{folder / 'vlc' / 'v1' / 'result.txt'}: not a score: more than 4096 bytes"
    (folder / "gimp" / "g1" / "traj.jsonl").unlink()
    (folder / "gimp" / "g1" / "traj.jsonl").mkdir()  # a folder where a file should be: the whole run cannot be read
    with pytest.raises(PublishedRunError, match=rf"^{re.escape(str(folder / 'gimp' / 'g1' / 'traj.jsonl'))}: cannot read: Is a directory$"):
        osworld_report(folder)


RECORDED = Path(__file__).parent / "data" / "screenspot_pro_reference"
REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_screenspot_pros_official_results_replay_to_its_own_figures(pytester: pytest.Pytester, mode: list[str]) -> None:
    """The results ScreenSpot-Pro's eval_screenspot_pro.py wrote (recorded at bd8bbbb, README there) replayed as they are
    through guitest's own screenspot_pro suite: its report gives the script's own overall, text and icon accuracies."""
    from PIL import Image

    official = json.loads((RECORDED / "results.json").read_text())
    shutil.copytree(REPO / "suites" / "screenspot_pro", pytester.path / "suites" / "screenspot_pro")
    data = pytester.path / "data-root" / "ScreenSpot-Pro"  # where the suite file says its data is, under the data root
    shutil.copytree(RECORDED / "annotations", data / "annotations")
    for path in (RECORDED / "annotations").glob("*.json"):
        for row in json.loads(path.read_text()):
            image = data / "images" / row["img_filename"]
            image.parent.mkdir(parents=True, exist_ok=True)
            Image.new("L", tuple(row["img_size"])).save(image)  # the replay looks at no pixel; its size is the row's
    result = pytester.runpytest_subprocess("suites/screenspot_pro", f"--model=replay:{RECORDED / 'results.json'}", "--data-root=data-root", "-p", "no:cacheprovider", *mode)
    assert result.ret in (0, 1), result.stdout.str()
    report = json.loads((pytester.path / "reports" / "screenspot_pro.json").read_text())
    metrics = official["metrics"]["overall"]
    assert report["overall"]["n"] == metrics["num_total"] == 12 and report["overall"]["hit"] == metrics["num_correct_action"] == 4
    assert report["overall"]["accuracy"] == pytest.approx(metrics["action_acc"], abs=1e-6)
    assert report["breakdown"]["ui_type"]["text"]["accuracy"] == pytest.approx(metrics["text_acc"], abs=1e-6)
    assert report["breakdown"]["ui_type"]["icon"]["accuracy"] == pytest.approx(metrics["icon_acc"], abs=1e-6)
    wrong_format = {f"{d['group']}-{d['application']}-{d['platform']}-{d['ui_type']}-{d['id']}" for d in official["details"] if d["correctness"] == "wrong_format"}
    assert {c["id"] for c in report["cases"] if c["verdict"] == "unparsed"} == wrong_format and len(wrong_format) == 4
    # the same run as a leaderboard entry: its overall record is the script's own three figures
    from guitest.reporting import leaderboard

    overall = leaderboard.entry(report, "screenspot_pro")[report["model"]["spec"]]["results"]["overall"]
    assert overall == pytest.approx({"icon": metrics["icon_acc"], "text": metrics["text_acc"], "avg": metrics["action_acc"]}, abs=1e-6)
