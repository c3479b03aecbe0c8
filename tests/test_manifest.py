"""Every report carries the run's manifest (guitest/reporting/manifest.py): versions (Python, pytest, pytest-xdist and the
packages that touch a result), the suite file's and each data file's digest, the prompt, system and runner texts as
digests kept once; each case carries its prompt as sent.
``guitest compare`` says what two runs differ in before the scores, serial and with -n 2: a difference their results
could come from (the prompt as sent, the case selection, a setting whose value changed, a version), and only that; a
field one report lacks is not recorded, never a difference."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from builders import write_suite
from guitest.reporting import manifest
from guitest.models import load_model
from guitest.models.base import Prompt, Settings
from guitest.models.pipeline import with_stages
from guitest.reporting import compare
from guitest.reporting.document import from_json

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]
OLD_REPORTS = sorted((Path(__file__).parent / "data" / "old_reports").glob("*.json"))


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def run(pytester: pytest.Pytester, name: str, *args: str) -> dict:
    """Run the tiny suite with the centre baseline and keep its report as NAME.json."""
    result = pytester.runpytest_subprocess("suites/tiny", "--model=center", "-p", "no:cacheprovider", *args)
    assert result.ret in (0, 1), result.stdout.str()
    shutil.copy(pytester.path / "reports" / "tiny.json", pytester.path / f"{name}.json")
    return json.loads((pytester.path / f"{name}.json").read_text("utf-8"))


@pytest.mark.parametrize("mode", MODES)
def test_the_report_records_what_a_rerun_needs(pytester: pytest.Pytester, mode: list[str]) -> None:
    suite = write_suite(pytester.path / "suites" / "tiny")
    report = run(pytester, "a", *mode)
    m = report["manifest"]
    assert m["version"] == 2 and m["python"] == platform.python_version() and "pillow" in m["packages"]
    # what collects, selects and spreads the cases is recorded beside what answers them
    assert m["packages"]["pytest"] == pytest.__version__ and m["packages"]["pytest-xdist"] == metadata.version("pytest-xdist")
    assert m["suite_file"] == {"sha256": sha((suite / "suite.yaml").read_bytes()), "bytes": (suite / "suite.yaml").stat().st_size}
    files = sorted(p.name for p in (suite / "data").glob("screenspot_*.json"))
    assert m["data"]["files"] == len(files) == 2 and sorted(m["data"]["digests"]) == files
    for name in files:
        assert m["data"]["digests"][name]["sha256"] == sha((suite / "data" / name).read_bytes())
    prompt = report["model"]["profile"]["prompt"]
    assert m["digests"]["prompt"] == sha(prompt.encode()) and m["texts"][m["digests"]["prompt"]] == prompt
    assert "runner" not in m["digests"]  # a grounding suite: no runner
    # each case's prompt as sent: the SHA-256 of [[system, user]] of the text it asked, made in whichever process ran it
    for case in report["cases"]:
        sent = [[None, prompt.replace("{instruction}", case["instruction"])]]
        assert case["prompt_digest"] == sha(json.dumps(sent).encode())
    assert m["software"] == {}  # no environment was started: no browser recorded (tests/test_remote_browser.py: one that was)


def test_compare_names_what_differs_first(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(pytester.path / "suites" / "tiny")
    run(pytester, "a")
    run(pytester, "a2", "-n", "2")
    # a prompt replaced by a --model-config stage (the suite's template left as it was), on part of the suite: a -k
    # subset and a shard of it
    (pytester.path / "my_stages.py").write_text("from guitest.models.base import Prompt\n\n\ndef build_prompt(model, case, template):\n    return Prompt(user=f'click {case.sample.instruction}')\n")
    (pytester.path / "my_model.yaml").write_text("stages:\n  build_prompt: my_stages:build_prompt\n")
    part = run(pytester, "part", "--model-config=my_model.yaml", "-k", "not windows", "--shard=2/2")
    (suite / "prompt.txt").write_text("Where is {instruction}? Answer: [x, y]\n")
    (suite / "suite.yaml").write_text((suite / "suite.yaml").read_text() + "prompt: prompt.txt\n")
    run(pytester, "b")
    data = sorted((suite / "data").glob("screenspot_*.json"))[0]
    rows = json.loads(data.read_text())
    rows[0]["instruction"] += " (edited)"
    data.write_text(json.dumps(rows))
    run(pytester, "c")
    a, a2, b, c = (str(pytester.path / f"{n}.json") for n in ("a", "a2", "b", "c"))
    # serial and -n 2 of the same settings: nothing differs
    assert compare.main([a, a2]) == 0
    assert "the runs differ in nothing both reports record" in capsys.readouterr().out
    # the prompt as sent, changed by a stage, and the selection, with what made it, named before the scores: the stage
    # too, and no setting nobody changed
    n = part["n_selected"]
    assert 0 < n <= 4
    assert compare.main([a, str(pytester.path / "part.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    differs = next(i for i, line in enumerate(out) if line.startswith("the runs differ in:"))
    assert out[differs] == (
        f"the runs differ in: prompt as sent changed in {n} of {n} shared cases (template, system text and data unchanged: what builds the prompt changed); "
        f"case selection every case -> -k 'not windows' --shard 2/2 (6 -> {n} cases, {n} in both); build_prompt stage default -> my_stages:build_prompt"
    )
    assert differs < next(i for i, line in enumerate(out) if line.startswith("headline:"))
    # only the template (the suite file that names it changed too): named with it
    assert compare.main([a, b]) == 0
    assert "the runs differ in: prompt as sent changed in 6 of 6 shared cases (the template changed); suite file changed" in capsys.readouterr().out
    # one annotation file edited: named, and warned of; the edited instruction is sent too
    assert compare.main([b, c]) == 0
    text = capsys.readouterr().out
    assert f"the runs differ in: prompt as sent changed in 1 of 6 shared cases (the data changed); data changed: 1 file(s) ({data.name})" in text
    assert "warning: data changed" in text


def test_differences_read_reports_without_a_manifest() -> None:
    old = {"model": {"spec": "openai:m", "profile": {"name": "generic", "prompt": "Find {instruction}"}, "settings": {"temperature": 0.0}}, "suite": {}, "run": {}}
    new = {"model": {"spec": "openai:m", "profile": {"name": "generic", "prompt": "Locate {instruction}"}, "settings": {"temperature": 0.6}}, "suite": {"runner": {"name": "qwen25vl"}}, "run": {}}
    old["suite"]["runner"] = {"name": "uitars15"}
    assert manifest.differences(old, new) == ["prompt changed", "runner uitars15 -> qwen25vl", "temperature 0 -> 0.6"]
    assert manifest.differences(old, old) == []


# -- a field one report lacks is not recorded, never a difference -------------------------------------------------------


def this_version(old: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    """The report this version writes of ``old``'s run: the same cases, the model as it describes itself now, a suite
    record with its settings, a manifest, each case's prompt as sent."""
    new = {**old, "model": model, "suite": {**old["suite"], "settings": {}}, "run": {**old["run"], "shard": None}}
    new["manifest"] = manifest.build(suite_file=None, data=None, texts={"prompt": old["model"]["profile"]["prompt"]})
    new["cases"] = [{**case, "prompt_digest": manifest.prompt_digest([(None, case["instruction"])])} for case in old["cases"]]
    return new


@pytest.mark.parametrize("path", OLD_REPORTS, ids=lambda p: p.stem)
def test_what_an_old_report_does_not_record_is_no_difference(path: Path) -> None:
    """The first old report records all of the OCR model's settings and no suite settings; this version records the
    three the OCR model reads, and the suite's settings: none of that changed."""
    old = from_json(json.loads(path.read_text("utf-8")))
    new = this_version(old, load_model("ocr", Settings()).describe())
    assert manifest.differences(old, new) == []
    assert manifest.unrecorded(old, new) == ["the old report does not record a manifest (versions, data and prompt digests); the prompts as sent: not compared"]
    # what both record is still compared
    changed = {**new, "model": {**new["model"], "settings": {**new["model"]["settings"], "max_pixels": 1_000_000}}}
    assert manifest.differences(old, changed) == ["max_pixels - -> 1000000"]


def test_a_model_config_names_its_stages_and_no_setting_nobody_changed() -> None:
    """A --model-config pipeline records every setting (a replaced stage may read any); the model without one records
    the settings its adapter reads: the comparison reads what both record, and names the stage."""

    def build_prompt(model: Any, case: Any, template: str | None) -> Prompt:
        return Prompt(user=case.sample.instruction)

    plain = load_model("center", Settings())
    staged = with_stages(load_model("center", Settings()), build_prompt=build_prompt, generation={"temperature": 0.6})
    old, new = {"model": plain.describe()}, {"model": staged.describe()}
    assert set(new["model"]["settings"]) > set(old["model"]["settings"])  # what made the five settings nobody changed
    target = f"{build_prompt.__module__}:{build_prompt.__qualname__}"
    assert manifest.differences(old, new) == [f"build_prompt stage default -> {target}", "model config generation temperature - -> 0.6"]
    hotter = with_stages(load_model("center", Settings(temperature=0.2)), build_prompt=build_prompt, generation={"max_tokens": 64})
    assert manifest.differences(new, {"model": hotter.describe()}) == [
        "model config generation max_tokens - -> 64",
        "model config generation temperature 0.6 -> -",
        "max_tokens 512 -> 64",
        "temperature 0.6 -> 0.2",
    ]


def test_versions_of_python_pytest_xdist_and_the_browser_are_compared() -> None:
    def report(python: str, packages: dict[str, str | None], software: dict[str, list[str]]) -> dict[str, Any]:
        looked_up = {name: packages.get(name) for name in manifest.PACKAGES}  # a package not installed: null
        return {"manifest": {"version": 2, "guitest": {"version": "0.1.0", "commit": None}, "python": python, "packages": looked_up, "software": software}}

    old = report("3.11.2", {"pytest": "8.3.0", "pytest-xdist": None, "numpy": "2.4.6"}, {"browser": ["chromium 131.0.6778.85"]})
    new = report("3.12.1", {"pytest": "9.2.0", "pytest-xdist": "3.8.0", "numpy": "2.4.6"}, {"browser": ["chromium 156.0.8078.114"]})
    assert manifest.differences(old, new) == [
        "browser chromium 131.0.6778.85 -> chromium 156.0.8078.114",
        "Python 3.11.2 -> 3.12.1",
        "pytest 8.3.0 -> 9.2.0",
        "pytest-xdist absent -> 3.8.0",
    ]
    # a version 1 manifest looked up neither pytest nor pytest-xdist, nor any software: not recorded, not compared;
    # it recorded only the installed packages of its list: torch missing there was not installed
    v1 = {"manifest": {"version": 1, "guitest": {"version": "0.1.0", "commit": None}, "python": "3.12.1", "packages": {"numpy": "2.4.6"}}}
    assert manifest.differences(v1, new) == []
    new["manifest"]["packages"]["torch"] = "2.13.0+cpu"
    assert manifest.differences(v1, new) == ["torch absent -> 2.13.0+cpu"]
    assert manifest.unrecorded(v1, new) == ["the old report does not record the software its live environment ran on; the version of pytest, pytest-xdist: not compared"]
    # a suite without a browser (no software) beside one with: not recorded, not a difference
    assert manifest.differences(report("3.12.1", {}, {}), report("3.12.1", {}, {"browser": ["chromium 156.0.8078.114"]})) == []


# -- the prompt as sent ------------------------------------------------------------------------------------------------


def cases(*prompts: str | None) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "verdict": "hit", **({"prompt_digest": manifest.prompt_digest([(None, p)])} if p is not None else {})} for i, p in enumerate(prompts)]


def with_template(template: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"manifest": {"version": 2, "digests": {"prompt": manifest.digest(template)}}, "cases": rows}


def test_the_prompt_as_sent_decides_whatever_built_it() -> None:
    # a stage that ignores the template: the template changed, nothing sent did
    assert manifest.differences(with_template("Find {instruction}", cases("a", "b")), with_template("Locate {instruction}", cases("a", "b"))) == []
    # the same template, another text sent in one case of two (only the shared cases that record it count)
    old, new = with_template("T", cases("a", "b", "x")), with_template("T", cases("a", "B", None))
    assert manifest.differences(old, new) == ["prompt as sent changed in 1 of 2 shared cases (template, system text and data unchanged: what builds the prompt changed)"]
    # a report that records no prompt as sent: the templates are compared, the missing record named apart
    old = with_template("Find {instruction}", cases(None, None))
    assert manifest.differences(old, with_template("Locate {instruction}", cases("a", "b"))) == ["prompt changed"]
    assert manifest.unrecorded(old, with_template("Find {instruction}", cases("a", "b"))) == ["the old report does not record the prompts as sent: not compared"]


# -- the case selection ------------------------------------------------------------------------------------------------


def selected(ids: list[str], args: list[str] | None = None, shard: str | None = None, missing: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    run: dict[str, Any] = {"shard": shard}
    if args is not None:
        run["pytest_args"] = ["suites/s", "--model=m", *args]
    return {"cases": [{"id": i, "verdict": "hit"} for i in ids], "missing": list(missing), "run": run, **extra}


def test_the_case_selection_is_named_when_the_runs_selected_other_cases() -> None:
    every = selected(["a", "b", "c", "d"], [])
    # two shards of one run: no case in common
    assert manifest.differences(selected(["a", "c"], [], shard="1/2"), selected(["b", "d"], [], shard="2/2")) == ["case selection --shard 1/2 -> --shard 2/2 (2 -> 2 cases, 0 in both)"]
    # -m, --lf (not folded into the report before it), node ids and --deselect, as the command line gave them
    assert manifest.differences(every, selected(["a"], ["-m", "guitest(platform='ios')"])) == ["case selection every case -> -m 'guitest(platform='\"'\"'ios'\"'\"')' (4 -> 1 cases, 1 in both)"]
    assert manifest.differences(every, selected(["b"], ["--lf", "-kicon"])) == ["case selection every case -> --lf -k icon (4 -> 1 cases, 1 in both)"]
    assert manifest.differences(every, selected(["a", "b"], ["suites/s/suite.yaml::a", "suites/s/suite.yaml::b"])) == ["case selection every case -> node ids (2) (4 -> 2 cases, 2 in both)"]
    assert manifest.differences(every, selected(["a", "b", "c"], ["--deselect=suites/s/suite.yaml::d"])) == ["case selection every case -> --deselect (1) (4 -> 3 cases, 3 in both)"]
    # a case selected without a result (missing) was selected all the same
    assert manifest.differences(every, selected(["a", "b"], [], missing=("c", "d"))) == []
    # --lf folded into the report of the run before: it covers that run's cases
    folded = selected(["a", "b", "c", "d"], ["--lf"])
    folded["run"]["merged_into_report_of"] = "2026-12-05T10:00:00+0000"
    assert manifest.differences(every, folded) == []
    # other options that select the same cases cannot make a difference
    assert manifest.differences(every, selected(["a", "b", "c", "d"], ["-k", "not nothing"])) == []
    # the report's own record of its selection, where it has one (--limit with its seed, -k and -m as it says them)
    limited = selected(["a", "c"], ["--limit=2"], selection={"n_suite": 4, "subset": True, "by": ["-k 'icon'"], "limit": {"n": 2, "seed": 0, "strata": ["platform"]}})
    assert manifest.differences(every, limited) == ["case selection every case -> -k 'icon' --limit 2 (seed 0) (4 -> 2 cases, 2 in both)"]
    # a report that records nothing of how its cases were selected
    assert manifest.differences({"cases": [{"id": "a", "verdict": "hit"}]}, every) == ["case selection not recorded -> every case (1 -> 4 cases, 1 in both)"]
    assert manifest.unrecorded({"cases": [{"id": "a", "verdict": "hit"}]}, every) == ["the old report does not record what selected its cases: not compared"]
    # the same options, other cases (the data changed under them)
    assert manifest.differences(selected(["a", "b"], ["-k", "x"]), selected(["a", "c"], ["-k", "x"])) == ["cases selected (2 -> 2 cases, 1 in both), under the same selection (-k x)"]


def test_what_an_environment_says_it_runs_on_is_read_without_trusting_it() -> None:
    """An environment's optional ``software()`` (the browser backends': their browser's name and version) is read after
    each episode; one that lacks it, raises, or answers in another shape records nothing and loses no episode."""
    from guitest.run.live_case import software_record

    class Says:
        def __init__(self, answer: Any) -> None:
            self.answer = answer

        def software(self) -> Any:
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    assert software_record(Says({"browser": ["chromium 156.0.8078.114"]})) == {"browser": ["chromium 156.0.8078.114"]}
    assert software_record(object()) == {}
    assert software_record(Says(RuntimeError("no browser"))) == {}
    assert software_record(Says(["chromium"])) == {}
    assert software_record(Says({"browser": "chromium 156", "os": ("debian 12",)})) == {"os": ["debian 12"]}
    assert manifest.gather_software([{"browser": ["b 2"]}, None, {"browser": ["b 1", "b 2"]}]) == {"browser": ["b 1", "b 2"]}
