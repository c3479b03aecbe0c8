"""A published OSWorld run (its results layout) read into a guitest report whose figures equal what OSWorld's own
show_result.py prints on the same folder, and compared task by task with a guitest run.

And the other way (--osworld-results): a live run written as a published run would be, against what OSWorld's own
code writes and reads, recorded by running it (tests/data/osworld_reference/results_layout.json, made by
tests/reference/record_osworld_results.py from mrwwk/DeskCraft at 3e11457c9f4d0cd81f27d961b98ae65f8b6ed309):
lib_run_single.py's lines for the same replies, its monitor's reading of every task folder, show_result.py's figures
(the report's headline, never a MiniWoB++ raw reward), and the folder read back pairing every case; a MiniWoB++ run
through pytest, serial and with two workers.

What show_result.py prints is recorded too, by running it (the same copy and commit) on every folder these tests make
(tests/reference/osworld_show_result_folders.py writes them; tests/reference/record_osworld_show_result.py records,
by hand, tests/data/osworld_reference/show_result.json): a test looks its folder's printout up by the digest of what
show_result.py reads of it, and a folder never recorded fails saying how to record it.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tracemalloc
from datetime import datetime
from pathlib import Path

import pytest

from guitest.cli import main
from guitest.published.runs import OSWorldExport, PublishedRunError, osworld_action, osworld_place, osworld_report, osworld_score, write_osworld
from guitest.reporting import report as report_mod
from guitest.reporting.compare import compare
from guitest.reporting.gate import DEFAULT_EXIT_CODE
from reference import osworld_results_case as results_case
from reference import osworld_show_result_folders as folders
from reference.osworld_show_result_folders import SCORES, write_results

#: what OSWorld's own code wrote and read, recorded by running it (tests/reference/record_osworld_results.py)
RECORDED = json.loads((Path(__file__).parent / "data" / "osworld_reference" / "results_layout.json").read_text("utf-8"))
MONITOR_TIME = "%Y%m%d@%H%M%S"  # what the monitor's get_task_status_with_config parses action_timestamp with


def show_result(root: Path, model: str = "some-model") -> str:
    """What OSWorld's show_result.get_result printed for the model's folder under ``root``, as recorded for a folder
    that reads the same (what it printed before it failed, when the folder lacks a domain its Office, Daily and
    Professional lines name: a KeyError there). A folder never recorded fails the test, naming the command that
    records it."""
    try:
        return folders.recorded(folders.model_folder(root, model)).printed
    except folders.NotRecorded as missing:
        pytest.fail(str(missing), pytrace=False)


def test_every_folder_the_tests_make_has_its_printout_recorded_and_no_other(tmp_path: Path) -> None:
    """The recording is of the folders the tests make now: a folder changed, added or dropped since it was made fails
    here, before any test reads a printout of another folder. Its header names the file run."""
    recording, missing, made = folders.recording(), [], set()
    for n, (name, write) in enumerate(folders.FOLDERS.items()):
        folder = write(tmp_path / str(n))
        made.add(folders.digest(folder))
        try:
            folders.recorded(folder)
        except folders.NotRecorded as why:
            missing.append(f"{name}: {why}")
    assert not missing, "\n".join(missing)
    stale = [entry["folders"] for key, entry in recording["printouts"].items() if key not in made]
    assert not stale, f"recorded for folders no test makes now, {stale}: re-record with tests/reference/record_osworld_show_result.py: {folders.RECORD_COMMAND}"
    assert (recording["repository"], recording["commit"], recording["files"]) == (folders.REPOSITORY, folders.COMMIT, {"show_result.py": "878968d1aefc33fc1cdf9c1d09d5e2e27fe72e69"})


def test_a_folder_never_recorded_fails_naming_the_command_that_records_it(tmp_path: Path) -> None:
    folder = folders.with_score(tmp_path, "0.9")  # no test's folder: no printout
    with pytest.raises(folders.NotRecorded) as missing:
        folders.recorded(folder)
    message = str(missing.value)
    assert message.startswith(
        f"{folder}: no recorded printout of OSWorld's show_result.py for this folder (what it reads, 9 domains and 19 task folders, has digest {folders.digest(folder)}; "
        "the nearest recorded, 'published', differs in chrome/ch2: result.txt '0.9\\n' here, result.txt '1.0\\n' recorded): "
    )
    assert message.endswith(f"re-record with tests/reference/record_osworld_show_result.py: {folders.RECORD_COMMAND}") and "\n" not in message
    (folder / "chrome" / "ch2" / "result.txt").write_text("1.0\n")  # back to the published run: recorded
    (folder / "chrome" / "ch2" / "step_9.png").write_bytes(b"")  # a file show_result.py does not read changes nothing
    assert folders.recorded(folder).printed.startswith("Domain: chrome Runned: 2 Success Rate: 83.33333333333333 %")


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
    # built by the builder every report goes through, with the shape its table is built by; no gate: guitest gates none of it
    assert report["suite"]["shape"] == {"tables": ["app"], "cross": [], "average": "micro", "macro_over": None} and report["gate"] == {}


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
    report, folder = folders.written_back(tmp_path)
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
    folder = folders.with_score(tmp_path, text)
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
    folder = folders.with_task_twice(tmp_path)
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


def export(tmp_path: Path, headline: str = "mean_score") -> tuple[dict, OSWorldExport]:
    """tests/reference/osworld_results_case.py's report, and its export under ``tmp_path / "osworld"``."""
    report = results_case.report(tmp_path / "reports", headline)
    return report, write_osworld(report, tmp_path / "osworld", tmp_path / "reports")


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_each_action_is_a_line_as_lib_run_single_writes_it(tmp_path: Path) -> None:
    """OSWorld's run_single_example, run on a reply of two actions and then DONE, writes a line per action (the reply's
    step number on both); guitest's export of the same replies writes the same lines, the fields in the same order,
    each screenshot named as OSWorld names it. Only the times differ, and the screen between two actions of one reply,
    which guitest does not keep. Before: one line per step, guitest's action dicts, no screenshot in the folder."""
    theirs = RECORDED["lib_run_single"]
    recorded = [dict(pairs) for pairs in theirs["traj"]]
    order = [key for key, _ in theirs["traj"][0]]
    _, exported = export(tmp_path)
    task = exported.folder / "chrome" / "t1"
    ours = lines(task / "traj.jsonl")

    def timeless(line: dict) -> dict:
        return {k: v for k, v in line.items() if k not in ("action_timestamp", "screenshot_file")}

    assert [timeless(line) for line in ours] == [timeless(line) for line in recorded]
    assert [line["screenshot_file"] is None for line in ours] == [True, False, False]
    for line in recorded + ours:
        assert line["screenshot_file"] in (None, f"step_{line['step_num']}_{line['action_timestamp']}.png")
    assert (task / "result.txt").read_text("utf-8") == theirs["result"] == "1.0\n"
    assert {re.sub(r"_\d{8}@\d+", "_T", p.name) for p in task.iterdir()} == {re.sub(r"_\d{8}@\d+", "_T", n) for n in theirs["files"]} - {"runtime.log"}
    for path in exported.folder.glob("*/*/traj.jsonl"):
        for line in lines(path):
            assert list(line) == order, path
            datetime.strptime(line["action_timestamp"], MONITOR_TIME)
            assert line["screenshot_file"] is None or (path.parent / line["screenshot_file"]).read_bytes()[:4] == b"\x89PNG"
    vlc = lines(exported.folder / "vlc" / "t2" / "traj.jsonl")  # a screenshot at twice the screen's resolution: the machine's code
    assert [line["action"] for line in vlc] == [
        "pyautogui.hotkey('ctrl', 's')",
        "pyautogui.moveTo(500, 600); pyautogui.scroll(-3)",
        "pyautogui.moveTo(10, 20); pyautogui.dragTo(30, 40, duration=0.3, button='left')",
    ]
    assert json.loads((exported.folder / "args.json").read_text("utf-8"))["max_steps"] == results_case.BUDGET
    assert exported.problems == ()


def test_osworlds_monitor_reads_every_task_of_the_export(tmp_path: Path) -> None:
    """The monitor's reading functions (its task page's and its list's), run on this very export (the digest says it
    is the folder they read), read every task: its lines, its last action's time, its result, done or not. OSWorld's own
    run_single_example stamps actions to the microsecond, which the task page cannot read: the export stamps them to
    the second, as lib_run_single.py's other loops do."""
    _, exported = export(tmp_path)
    recorded = RECORDED["monitor"]["guitest"]
    assert results_case.digest(exported.folder) == recorded["digest"], "the export changed since the monitor read it: run tests/reference/record_osworld_results.py"
    assert sorted(recorded["tasks"]) == sorted(f"{p.parent.parent.name}/{p.parent.name}" for p in exported.folder.glob("*/*/traj.jsonl"))
    for name, read in recorded["tasks"].items():
        task, (detail, brief) = exported.folder / name, (read["detail"], read["brief"])
        ours = lines(task / "traj.jsonl")
        assert detail["steps"] == ours and detail["progress"] == brief["progress"] == len(ours), name
        assert detail["last_update"] == brief["last_update"] == datetime.strptime(ours[-1]["action_timestamp"], MONITOR_TIME).strftime("%Y-%m-%d %H:%M:%S")
        if (task / "result.txt").exists():
            assert detail["status"].startswith("Done") and detail["result"] == brief["result"] == (task / "result.txt").read_text("utf-8").strip(), name
        else:  # the episode that errored: no result, as OSWorld leaves a task whose loop raised
            assert detail["status"] == "Running" and detail["result"] == "Task not completed", name
    assert RECORDED["monitor"]["osworld"]["chrome/t1"]["detail"]["raised"].startswith("ValueError: unconverted data remains")


@pytest.mark.parametrize("headline", ["success_rate", "mean_score"])
def test_show_result_prints_the_reports_headline_never_a_raw_reward(tmp_path: Path, headline: str) -> None:
    """result.txt is in OSWorld's 0..1: under a success-rate headline (MiniWoB++) the success by the suite's rule, so a
    raw reward of -1 is a 0 and a success at 0.97 (a continuous task's threshold) a 1; under a mean-score headline
    (OSWorld) the score. Before: the raw reward, and show_result.py printed a negative success rate."""
    report, folder = folders.results_case_export(tmp_path, headline)  # raw rewards (folders.RAW_REWARDS) under success_rate
    printed = show_result(tmp_path / "osworld", model=folder.name)
    # these domains lack those show_result.py's Office, Daily and Professional lines name: it stops after the domains
    domains = {m[1]: (int(m[2]), float(m[3]), float(m[4])) for m in re.finditer(r"Domain: (\S+) Runned: (\d+) Success Rate: (\S+) % Sum: (\S+)", printed)}
    figure = "accuracy" if headline == "success_rate" else "mean_score"
    assert {d: rate for d, (_, rate, _) in domains.items()} == {d: pytest.approx(100 * report["breakdown"]["app"][d][figure], abs=1e-4) for d in ("chrome", "gimp", "thunderbird", "vlc")}, printed
    overall = sum(total for _, _, total in domains.values()) / sum(n for n, _, _ in domains.values())  # what its overall line prints
    assert overall == pytest.approx(report["headline"]["accuracy"], abs=1e-6) and overall == (0.5 if headline == "success_rate" else 0.625)


def test_the_folder_read_back_pairs_every_case_it_holds(tmp_path: Path) -> None:
    """Each case goes to a <domain>/<task_id> folder that reads back as its id: a MiniWoB++ case under its task, an
    OSWorld one under its app. guitest compare pairs every case the export holds, with the same verdicts."""
    assert osworld_place("click-test-seed0", {"task": "click-test", "family": "click"}) == ("click-test", "seed0")
    assert osworld_place("chrome-abc-def", {"evaluator": "abc", "app": "chrome"}) == ("chrome", "abc-def")
    assert osworld_place("x-y-z", {"family": "click"}) == ("x", "y-z")
    assert [osworld_place(i, {"task": i}) for i in ("plain", "a/b-c", "..-c", "c-")] == [None] * 4
    report, exported = export(tmp_path)
    back = osworld_report(exported.folder)
    assert {c["id"]: c["verdict"] for c in back["cases"]} == {c["id"]: c["verdict"] for c in report["cases"] if c["verdict"] != "unsure"}
    result = compare(back, report)
    assert (result["paired"], result["only_in_old"], result["only_in_new"], result["excluded"]["error_in_old"]) == (4, [], ["libreoffice_calc-t6"], ["os-t3"])


def test_what_cannot_be_written_as_osworld_would_is_said_and_an_earlier_export_replaced(tmp_path: Path) -> None:
    report, first = export(tmp_path)
    before = sorted(p.name for p in (first.folder / "chrome" / "t1").glob("*.png"))
    report["run"]["started"] = "2026-03-04T06:00:00"  # a clock without its zone (strftime's %z can be empty)
    report["cases"][0]["id"] = "chrome_t1"  # no <domain>-<task_id> reading of it
    shutil.rmtree(tmp_path / "reports" / results_case.EPISODES / "gimp-t4")
    again = write_osworld(report, tmp_path / "osworld", tmp_path / "reports")
    assert again.problems == (
        "1 case ids are not <domain>-<task_id> with two folder names, so the folder read back does not pair them: chrome_t1",
        f"1 screenshots the report names were not found under {tmp_path / 'reports'}: their traj.jsonl lines have no screenshot_file",
    )
    assert (again.folder / "desktop" / "chrome_t1" / "result.txt").read_text("utf-8") == "1.0\n"
    assert [line["screenshot_file"] for line in lines(again.folder / "gimp" / "t4" / "traj.jsonl")] == [None]
    after = sorted(p.name for p in (again.folder / "vlc" / "t2").glob("*.png"))
    assert after == ["step_1_20260304@060000.png", "step_2_20260304@060001.png", "step_3_20260304@060002.png"] and not set(before) & set(after)
    assert not list((again.folder / "gimp" / "t4").glob("*.png"))


# a MiniWoB++ run: seeded random replies that succeed (click-widget seed 1), submit a wrong answer (click-widget seed 2:
# raw reward -1) and run out of steps (click-tab seed 0: 0)
MINIWOB_TASKS = [{"task": "click-widget", "family": "click", "seeds": [1, 2]}, {"task": "click-tab", "family": "click", "seeds": [0]}]


# two workers write the screenshots the controller exports; and a run that fails its gate with --keep-episodes=0
# prunes its own episodes once the report is written, so the export comes before
@pytest.mark.parametrize("mode", [[], ["-n", "2", "--keep-episodes=0", "--min-accuracy=0.9"]], ids=["serial", "xdist-pruned"])
def test_a_miniwob_run_exported_reads_back_as_its_report(pytester: pytest.Pytester, mode: list[str]) -> None:
    from test_live_browser import _require

    _require()
    folder = pytester.path / "suites" / "miniwob"
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parents[1] / "suites" / "miniwob" / "suite.yaml", folder / "suite.yaml")
    (folder / "tasks.json").write_text(json.dumps(MINIWOB_TASKS))
    result = pytester.runpytest_subprocess("suites/miniwob", "--model=random", "--seed=3", "--max-steps=4", "--cache=off", "--osworld-results=osworld", *mode)
    assert result.ret == (DEFAULT_EXIT_CODE if mode else 0), result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "reports" / "miniwob.json").read_text("utf-8"))
    scores = {c["id"]: (c["verdict"], c["score"]) for c in report["cases"]}
    assert scores == {"click-widget-seed1": ("hit", 1.0), "click-widget-seed2": ("miss", -1.0), "click-tab-seed0": ("miss", 0.0)}
    if mode:
        assert not list((pytester.path / "reports" / "runs" / "miniwob").glob("*/episodes")), "the run's episodes were not pruned"
    printed = show_result(pytester.path / "osworld", model="random")
    domains = {m[1]: float(m[2]) for m in re.finditer(r"Domain: (\S+) Runned: \d+ Success Rate: (\S+) %", printed)}
    assert domains == {"click-widget": 50.0, "click-tab": 0.0}, printed  # the success rate by the suite's rule, as the report's
    exported = pytester.path / "osworld" / "pyautogui" / "screenshot" / "random"
    for case in report["cases"]:
        task, seed = case["id"].rsplit("-", 1)
        ours = lines(exported / task / seed / "traj.jsonl")
        ran = [a for s in case["episode"]["trajectory"] for a in s["actions"][: s.get("executed", len(s["actions"]))]]
        assert len(ours) == len(ran) == case["steps"] and all(line["action"].startswith("pyautogui.") for line in ours), ours
        assert all((exported / task / seed / line["screenshot_file"]).read_bytes()[:4] == b"\x89PNG" for line in ours)
        assert [line["done"] for line in ours] == [False] * (len(ours) - 1) + [case["episode"]["end"] == "env_done"]
    out = pytester.path / "compare.json"
    assert main(["compare", str(pytester.path / "osworld"), str(pytester.path / "reports" / "miniwob.json"), "--json", str(out)]) == 0
    paired = json.loads(out.read_text("utf-8"))
    assert (paired["paired"], paired["only_in_old"], paired["only_in_new"]) == (3, [], [])


def test_an_action_is_the_code_the_machine_runs_for_it() -> None:
    """Text typed through the clipboard (UI-TARS's runner pastes) is pasted in the export too, as the machine ran it;
    points are mapped from the screenshot's pixels to the screen's; guitest's final and wait actions are OSWorld's
    strings; an action no code performs keeps its plain form."""
    from guitest.desktopenv.machine import typing_code

    assert osworld_action({"kind": "type", "text": "grüße", "paste": True}, (1920, 1080)) == typing_code("grüße", paste=True)
    assert osworld_action({"kind": "type", "text": "ab", "paste": True}, (1920, 1080)) == typing_code("ab", paste=True) != "pyautogui.write('ab')"
    assert osworld_action({"kind": "click", "point": [300.0, 401.0], "space": "screen"}, (1920, 1080), 2.0) == "pyautogui.click(150, 200)"
    assert [osworld_action({"kind": k}, (1920, 1080)) for k in ("done", "fail", "wait")] == ["DONE", "FAIL", "WAIT"]
    assert osworld_action({"kind": "move"}, (1920, 1080)) == {"kind": "move"}
