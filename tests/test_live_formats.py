"""Readers of live suites (miniwob task lists, web-task files), their schemas, and the two suites in the repository."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from guitest.errors import SuiteError
from guitest.miniwob import reader as miniwob_reader
from guitest.formats import webtask
from guitest.live.protocol import TaskSpec
from guitest.registry import READERS, TASKS
from guitest.suite import Suite

REPO = Path(__file__).resolve().parents[1]
MINIWOB = REPO / "suites" / "miniwob"
WEBAPP = REPO / "suites" / "my_webapp"


def suite(folder: Path, fmt: str, annotations: str, settings: dict | None = None, tags: tuple[str, ...] = ("task", "family")) -> Suite:
    return Suite(
        path=folder / "suite.yaml",
        name=folder.name,
        format=fmt,
        data={"dir": ".", "base": "suite", "images": ".", "annotations": annotations},
        task="live",
        prompt="default",
        id_template="{task}-seed{seed}",
        tags=tags,
        cross=(),
        average="micro",
        settings=settings or {},
    )


def test_miniwob_default_selection_leaves_the_flagged_tasks_out() -> None:
    samples = miniwob_reader.read(suite(MINIWOB, "miniwob", "tasks.json", tags=("task", "family", "nondeterministic", "select_dropdown")), str(MINIWOB))
    rows = json.loads((MINIWOB / "tasks.json").read_text())
    unflagged = [r for r in rows if not r.get("flags")]
    assert len(unflagged) == 101 and len(samples) == 5 * 101
    first = next(s for s in samples if s.id == "click-button-seed3")
    assert TaskSpec.from_dict(first.data["task"]) == TaskSpec(env="miniwob", name="click-button")
    assert first.data["seed"] == 3 and first.image == "" and first.box is None
    assert first.tags == {"task": "click-button", "family": "click", "nondeterministic": "no", "select_dropdown": "no"}
    assert not any(s.id.startswith(("click-dialog-", "choose-list-", "simon-says-")) for s in samples)
    assert len({s.id for s in samples}) == len(samples)


def test_miniwob_include_flagged() -> None:
    more = miniwob_reader.read(suite(MINIWOB, "miniwob", "tasks.json", {"include_flagged": ["nondeterministic"]}), str(MINIWOB))
    ids = {s.id for s in more}
    assert "click-dialog-seed0" in ids and "choose-list-seed0" not in ids and "click-scroll-list-seed0" not in ids  # needs both flags
    everything = miniwob_reader.read(suite(MINIWOB, "miniwob", "tasks.json", {"include_flagged": ["nondeterministic", "select_dropdown", "unregistered"]}), str(MINIWOB))
    assert len(everything) == 5 * 130
    dialog = next(s for s in more if s.id == "click-dialog-seed0")
    assert dialog.data["flags"] == ["nondeterministic"]
    with pytest.raises(SuiteError, match="include_flagged"):
        miniwob_reader.read(suite(MINIWOB, "miniwob", "tasks.json", {"include_flagged": ["flaky"]}), str(MINIWOB))


def test_miniwob_task_list_agrees_with_the_installed_package() -> None:
    pytest.importorskip("miniwob")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_tasks", MINIWOB / "make_tasks.py")
    assert spec is not None and spec.loader is not None
    make_tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_tasks)
    package = make_tasks.package_dir()
    assert make_tasks.rows(package) == json.loads((MINIWOB / "tasks.json").read_text())
    nondeterministic = [t for t, note in make_tasks.registered(package).items() if note is not None]
    assert len(nondeterministic) == 25  # the package's own count; 3 of them are flight tasks outside html/miniwob/


def test_miniwob_row_problems_name_the_file_row_and_field(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(
        json.dumps(
            [
                {"task": "click-button", "seeds": [0, 1]},
                {"task": "click-link", "seeds": []},
                {"task": "Click Link", "seeds": [0]},
                {"task": "enter-text", "seeds": [0], "flags": ["sometimes"]},
            ]
        )
    )
    with pytest.raises(SuiteError) as info:
        miniwob_reader.read(suite(tmp_path, "miniwob", "tasks.json"), str(tmp_path))
    message = str(info.value)
    assert "3 invalid annotation row(s)" in message
    assert "tasks.json, row 1, field 'seeds'" in message and "tasks.json, row 2, field 'task'" in message and "row 3, field 'flags[0]'" in message


def test_miniwob_duplicate_seeds_across_rows_are_refused(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([{"task": "click-button", "seeds": [0]}, {"task": "click-button", "seeds": [0, 1]}]))
    with pytest.raises(SuiteError, match="click-button-seed0"):
        miniwob_reader.read(suite(tmp_path, "miniwob", "tasks.json"), str(tmp_path))


def test_the_example_web_suite_reads() -> None:
    samples = webtask.read(suite(WEBAPP, "webtask", "tasks.yaml"), str(WEBAPP))
    assert len(samples) == 15 and samples[0].id == "add-todo-seed0"
    spec = TaskSpec.from_dict(samples[0].data["task"])
    assert spec.env == "webapp" and spec.name == "add-todo" and spec.instruction == samples[0].instruction
    assert spec.config["start"] == "index.html?seed={seed}" and "Buy milk" in spec.config["success"]
    assert spec.config["solution"][0] == {"click": "#new-title"}
    rename = next(s for s in samples if s.id == "rename-seed2")
    assert "score" in rename.data["task"]["config"] and rename.tags == {"task": "rename", "family": "settings"}


def test_web_tasks_in_json_with_defaults(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "open", "instruction": "Open it", "success": "true", "max_steps": 3}]))
    [sample] = webtask.read(suite(tmp_path, "webtask", "tasks.json"), str(tmp_path))
    assert sample.id == "open-seed0" and sample.data["max_steps"] == 3 and sample.data["task"]["config"] == {"start": "/", "success": "true"}
    assert sample.tags["family"] == "web"


def test_web_task_problems_are_named(tmp_path: Path) -> None:
    (tmp_path / "tasks.yaml").write_text(
        "- id: ok\n  instruction: Do it\n  success: 'true'\n- id: no-check\n  instruction: Do it\n- id: bad step\n  instruction: Do it\n  success: 'true'\n  solution: [{tap: '#x'}]\n"
    )
    with pytest.raises(SuiteError) as info:
        webtask.read(suite(tmp_path, "webtask", "tasks.yaml"), str(tmp_path))
    message = str(info.value)
    assert "tasks.yaml, row 1 (id no-check), field 'success'" in message
    assert "row 2 (id bad step), field 'id'" in message and "field 'solution[0]" in message
    (tmp_path / "tasks.yaml").write_text("- id: x\n  instruction: [unclosed\n")
    with pytest.raises(SuiteError, match=r"tasks.yaml \(line \d+, column \d+\): not valid YAML"):
        webtask.read(suite(tmp_path, "webtask", "tasks.yaml"), str(tmp_path))
    (tmp_path / "tasks.yaml").write_text("id: x\n")
    with pytest.raises(SuiteError, match="expected a list of tasks"):
        webtask.read(suite(tmp_path, "webtask", "tasks.yaml"), str(tmp_path))


def proposed_suite_schema() -> dict:
    """schemas/suite.schema.json with the keys this branch proposes (docs/live.md, the report to the lead)."""
    schema = copy.deepcopy(json.loads((REPO / "guitest" / "schemas" / "suite.schema.json").read_text()))
    props = schema["properties"]
    props["env"] = {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"}
    props["env_options"] = {"type": "object"}
    props["max_steps"] = {"type": "integer", "minimum": 1}
    return schema


@pytest.mark.parametrize("folder", [MINIWOB, WEBAPP], ids=["miniwob", "my_webapp"])
def test_the_suite_files_validate_against_the_proposed_keys(folder: Path) -> None:
    raw = yaml.safe_load((folder / "suite.yaml").read_text())
    jsonschema.validate(raw, proposed_suite_schema())
    assert raw["format"] in READERS and raw["task"] in TASKS  # the schema takes any name; the registries know these
    live_settings = json.loads((REPO / "guitest" / "schemas" / "tasks" / "live.schema.json").read_text())
    jsonschema.validate(raw.get("settings", {}), live_settings)
    assert raw["task"] == "live" and raw["max_steps"] >= 1 and raw["env"] in ("miniwob", "webapp")
