"""Every report carries the run's manifest (guitest/manifest.py): versions, the suite file's and each data file's
digest, the prompt, system and runner texts as digests kept once; ``guitest compare`` says what two runs differ in
before the scores, serial and with -n 2."""

from __future__ import annotations

import hashlib
import json
import platform
import shutil

import pytest

from builders import write_suite
from guitest import manifest
from guitest.reporting import compare

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


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
    assert m["version"] == 1 and m["python"] == platform.python_version() and "pillow" in m["packages"]
    assert m["suite_file"] == {"sha256": sha((suite / "suite.yaml").read_bytes()), "bytes": (suite / "suite.yaml").stat().st_size}
    files = sorted(p.name for p in (suite / "data").glob("screenspot_*.json"))
    assert m["data"]["files"] == len(files) == 2 and sorted(m["data"]["digests"]) == files
    for name in files:
        assert m["data"]["digests"][name]["sha256"] == sha((suite / "data" / name).read_bytes())
    prompt = report["model"]["profile"]["prompt"]
    assert m["digests"]["prompt"] == sha(prompt.encode()) and m["texts"][m["digests"]["prompt"]] == prompt
    assert "runner" not in m["digests"]  # a grounding suite: no runner


def test_compare_names_what_differs_first(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(pytester.path / "suites" / "tiny")
    run(pytester, "a")
    run(pytester, "a2", "-n", "2")
    (suite / "prompt.txt").write_text("Where is {instruction}? Answer: [x, y]\n")
    (suite / "suite.yaml").write_text((suite / "suite.yaml").read_text() + "prompt: prompt.txt\n")
    run(pytester, "b")
    data = sorted((suite / "data").glob("screenspot_*.json"))[0]
    rows = json.loads(data.read_text())
    rows[0]["instruction"] += " (edited)"
    data.write_text(json.dumps(rows))
    run(pytester, "c")
    a, a2, b, c = (pytester.path / f"{n}.json" for n in ("a", "a2", "b", "c"))
    # serial and -n 2 of the same settings: nothing differs
    assert compare.main([str(a), str(a2)]) == 0
    assert "the runs differ in nothing the reports record" in capsys.readouterr().out
    # only the prompt (the suite file that names it changed too): named before the scores
    assert compare.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out.splitlines()
    differs = next(i for i, line in enumerate(out) if line.startswith("the runs differ in:"))
    assert out[differs] == "the runs differ in: prompt changed; suite file changed"
    assert differs < next(i for i, line in enumerate(out) if line.startswith("headline:"))
    # one annotation file edited: named, and warned of
    assert compare.main([str(b), str(c)]) == 0
    text = capsys.readouterr().out
    assert f"the runs differ in: data changed: 1 file(s) ({data.name})" in text
    assert "warning: data changed" in text


def test_differences_read_reports_without_a_manifest() -> None:
    old = {"model": {"spec": "openai:m", "profile": {"name": "generic", "prompt": "Find {instruction}"}, "settings": {"temperature": 0.0}}, "suite": {}, "run": {}}
    new = {"model": {"spec": "openai:m", "profile": {"name": "generic", "prompt": "Locate {instruction}"}, "settings": {"temperature": 0.6}}, "suite": {"runner": {"name": "qwen25vl"}}, "run": {}}
    old["suite"]["runner"] = {"name": "uitars15"}
    assert manifest.differences(old, new) == ["prompt changed", "runner uitars15 -> qwen25vl", "temperature 0 -> 0.6"]
    assert manifest.differences(old, old) == []
