"""The osworld format reader on the 154 Windows Agent Arena task files, on suites/desktop_local, and on bad input."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from builders import REPO, SHARED_DATA
from guitest.errors import SuiteError
from guitest.desktopenv.reader import count_runnable, read
from guitest.live.actions import KINDS
from guitest.desktopenv.getters import supported_getters
from guitest.desktopenv.metrics import supported_metrics
from guitest.desktopenv.task import oracle_actions, task_spec
from guitest.suite import Suite
from guitest.formats.waa import count_by_app, count_evaluators, tasks_in_list

WAA = SHARED_DATA / "windows_agent_arena"
README = SHARED_DATA / "README.md"
LOCAL = REPO / "suites" / "desktop_local"
needs_data = pytest.mark.skipif(not (WAA / "examples").is_dir() or not README.is_file(), reason=f"the shared WAA task files are not at {WAA}")


def suite(annotations: str, folder: Path, id_template: str | None = None, tags: tuple[str, ...] = ("app", "feasibility", "evaluated_by")) -> Suite:
    return Suite(
        path=folder / "suite.yaml",
        name="t",
        format="osworld",
        data={"dir": ".", "base": "suite", "annotations": annotations, "images": "."},
        task="live",
        prompt="default",
        id_template=id_template,
        tags=tags,
        cross=(),
        average="micro",
    )


def readme_app_counts() -> tuple[int, dict[str, int]]:
    match = re.search(r"`test_all.json`[^(]*\((\d+) tasks: ([^)]*)\)", README.read_text())
    assert match, "the shared README no longer states the counts of test_all.json"
    return int(match.group(1)), {name: int(n) for name, n in re.findall(r"(\w+) (\d+)", match.group(2))}


@needs_data
def test_the_154_waa_tasks_through_their_task_list() -> None:
    total, per_app = readme_app_counts()
    samples = read(suite("test_all.json", WAA), str(WAA))
    assert len(samples) == total == 154
    assert dict(sorted(Counter(s.tags["app"] for s in samples).items())) == dict(sorted(per_app.items()))
    # the same tasks as the WAA reader guitest already has, in list order
    listed = tasks_in_list(str(WAA / "examples"), str(WAA / "test_all.json"))
    assert [s.id for s in samples] == [f"{t.app}-{t.id}" for t in listed]
    assert count_by_app(listed) == dict(sorted(per_app.items()))
    infeasible = [s for s in samples if s.data["infeasible"]]
    assert len(infeasible) == count_evaluators(listed)["infeasible"] == 13
    assert all(s.data["evaluated_by"] == "environment" and s.tags["feasibility"] == "infeasible" for s in infeasible)


@needs_data
def test_the_glob_reads_the_same_tasks_as_the_list() -> None:
    by_glob = read(suite("examples/*/*.json", WAA), str(WAA))
    by_list = read(suite("test_all.json", WAA), str(WAA))
    assert sorted(s.id for s in by_glob) == sorted(s.id for s in by_list)
    full = read(suite("test_full.json", WAA), str(WAA))
    assert len(full) == 90 and not {"libreoffice_calc", "libreoffice_writer", "vlc"} & {s.tags["app"] for s in full}


@needs_data
def test_each_waa_task_is_marked_for_the_environment_or_the_judge() -> None:
    samples = {s.id: s for s in read(suite("test_all.json", WAA), str(WAA))}
    draft = samples["notepad-366de66e-cbae-4d72-b042-26390db2b145-WOS"]
    assert draft.data["evaluated_by"] == "environment" and not draft.notes
    evaluator = draft.data["task"]["config"]["evaluator"]
    assert evaluator["func"] == ["exact_match", "compare_text_file"] and evaluator["expected"][1]["path"].startswith("https://")
    spec = task_spec(draft.data)
    assert (spec.env, spec.name, spec.instruction) == ("desktop", "notepad/366de66e-cbae-4d72-b042-26390db2b145-WOS", draft.instruction)
    profile = next(s for s in samples.values() if (s.data["task"]["config"]["evaluator"].get("result") or [{}]) == {"type": "profile_name"})
    assert profile.data["evaluated_by"] == "judge" and profile.tags["evaluated_by"] == "judge"
    assert profile.notes == ("evaluated by the trajectory judge: guitest does not implement getter profile_name",)
    tabs = [s for s in samples.values() if "chrome_open_tabs" in s.data["unsupported"]]
    assert len(tabs) == 9 and all("cannot run here" in " ".join(s.notes) for s in tabs)
    # every environment-evaluated feasible task uses only what guitest documents as implemented
    for s in samples.values():
        evaluator = s.data["task"]["config"]["evaluator"]
        funcs = evaluator["func"] if isinstance(evaluator["func"], list) else [evaluator["func"]]
        getters = [g.get("type") for k in ("result", "expected") for g in (evaluator.get(k) if isinstance(evaluator.get(k), list) else [evaluator.get(k)]) if g]
        implemented = set(funcs) <= set(supported_metrics()) and set(getters) <= set(supported_getters())
        assert (s.data["evaluated_by"] == "environment") == (implemented or s.data["infeasible"]), s.id
    counts = count_runnable(list(samples.values()))
    assert sum(counts.values()) == 154 and counts["environment"] > 30


def test_the_local_suite_reads_with_an_oracle_for_every_task() -> None:
    samples = read(suite("examples/*/*.json", LOCAL, "{app}-{task_id}", ("app", "evaluator", "feasibility")), str(LOCAL))
    assert len(samples) >= 12
    assert len({s.id for s in samples}) == len(samples)
    for s in samples:
        assert s.data["evaluated_by"] == "environment" and not s.data["unsupported"] and not s.notes, s.id
        actions = oracle_actions(s.data)
        assert actions and actions[-1].final and all(a.kind in KINDS for a in actions), s.id
        assert actions[-1].kind == ("fail" if s.data["infeasible"] else "done"), s.id
        for step in s.data["task"]["config"]["config"]:
            for entry in step.get("parameters", {}).get("files", []):
                if "local_path" in entry:
                    assert Path(entry["local_path"]).is_file(), (s.id, entry)  # made absolute against the task file
        evaluator = s.data["task"]["config"]["evaluator"]
        for config in evaluator["expected"] if isinstance(evaluator.get("expected"), list) else [evaluator.get("expected")]:
            if config and config["type"] == "cloud_file":
                assert Path(config["path"]).is_file(), (s.id, config)
    assert {s.tags["app"] for s in samples} >= {"mousepad", "terminal", "settings", "notes", "chromium"}
    assert any(s.data["task"]["config"]["evaluator"].get("conj") == "or" for s in samples)
    assert sum(s.data["infeasible"] for s in samples) >= 1


def write_task(folder: Path, app: str, name: str, data: object) -> None:
    (folder / "examples" / app).mkdir(parents=True, exist_ok=True)
    (folder / "examples" / app / f"{name}.json").write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_bad_task_files_are_named_by_file_and_field(tmp_path: Path) -> None:
    write_task(tmp_path, "a", "no-instruction", {"evaluator": {"func": "exact_match"}})
    write_task(tmp_path, "a", "bad-conj", {"instruction": "x", "evaluator": {"func": ["exact_match"], "conj": "xor"}})
    write_task(tmp_path, "a", "bad-oracle", {"instruction": "x", "evaluator": {"func": "infeasible"}, "oracle": [{"kind": "jump"}]})
    write_task(tmp_path, "b", "columns", {"instruction": "x", "evaluator": {"func": ["exact_match", "exact_match"], "result": [{"type": "rule"}]}})
    with pytest.raises(SuiteError) as info:
        read(suite("examples/*/*.json", tmp_path), str(tmp_path))
    message = str(info.value)
    assert "examples/b/columns.json, field 'evaluator': evaluator.result has 1 entries for 2 metrics" in message
    with pytest.raises(SuiteError) as info:
        (tmp_path / "examples" / "b" / "columns.json").unlink()
        read(suite("examples/*/*.json", tmp_path), str(tmp_path))
    message = str(info.value)
    assert "examples/a/no-instruction.json, row 0, field 'instruction': is required but missing" in message
    assert "examples/a/bad-conj.json, row 0, field 'evaluator.conj'" in message
    assert "examples/a/bad-oracle.json, row 0, field 'oracle[0].kind'" in message
    write_task(tmp_path, "c", "broken", '{"instruction": ')
    with pytest.raises(SuiteError, match=r"examples/c/broken.json \(line 1, column"):
        read(suite("examples/c/*.json", tmp_path), str(tmp_path))


def test_a_listed_task_without_a_file_is_named(tmp_path: Path) -> None:
    write_task(tmp_path, "notepad", "x", {"instruction": "type", "evaluator": {"func": "exact_match"}})
    (tmp_path / "test_all.json").write_text(json.dumps({"notepad": ["x", "y"]}))
    with pytest.raises(SuiteError, match=r"test_all.json, field 'notepad': task y has no file examples/notepad/y.json"):
        read(suite("test_all.json", tmp_path), str(tmp_path))


def test_the_docs_list_every_getter_and_metric_guitest_implements() -> None:
    text = (REPO / "docs" / "live_desktops.md").read_text()
    getters = text[text.index("## Getters") : text.index("## Metrics")]
    metrics = text[text.index("## Metrics") : text.index("## How a task is scored")]
    assert set(re.findall(r"^\| `(\w+)` \|", getters, re.M)) == set(supported_getters())
    assert set(re.findall(r"^\| `(\w+)` \|", metrics, re.M)) == set(supported_metrics())


@needs_data
def test_the_docs_counts_of_waa_tasks_are_the_readers() -> None:
    text = " ".join((REPO / "docs" / "live_desktops.md").read_text().split())
    match = re.search(r"Of WAA's 154 tasks, guitest scores (\d+) itself \((\d+) of them infeasible\) and the judge decides (\d+); (\d+) have a set-up step", text)
    assert match, "docs/live_desktops.md no longer states the WAA counts"
    own, infeasible, judged, not_runnable = map(int, match.groups())
    samples = read(suite("test_all.json", WAA), str(WAA))
    assert Counter(s.data["evaluated_by"] for s in samples) == {"environment": own, "judge": judged}
    assert sum(s.data["infeasible"] for s in samples) == infeasible
    assert sum(bool(s.data["unsupported"]) for s in samples) == not_runnable
