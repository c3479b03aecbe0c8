"""Replaceable model stages (guitest.models.pipeline): config checks, and runs through a loopback endpoint."""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace
from pathlib import Path
from typing import Any

import pytest

import fakeserver
from mmbench_gui_data import copy_suites, l2_rows, write_data

from guitest.errors import ModelError
from guitest.models import load_model
from guitest.models.base import Prompt, Reply, Settings
from guitest.models.pipeline import apply_config, load_config, with_stages

MODES = pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])

# A model with its own output format ("pick #N", the option's 1-based number), its own prompt, a preprocess and a generate
# that take generation settings as keyword arguments.
STAGES = """
import re
from dataclasses import replace

from guitest.models.base import Prompt


def build_prompt(model, case, template):
    data = case.sample.data
    options = " | ".join(f"{k}={v}" for k, v in sorted(data["options"].items()))
    return Prompt(user=f"<<Q>> {data['question']} <<OPTIONS>> {options} <<REPLY AS pick #N>>")


def preprocess(model, image, case, *, shrink):
    width, height = case.sent_size
    return model.preprocess(image, replace(case, sent_size=(width // shrink, height // shrink)))


def generate(model, prompt, sent, case, *, style, temperature):
    return model.generate(replace(prompt, user=f"{prompt.user} [style={style} t={temperature}]"), sent, case)


def parse_response(model, answer, case):
    match = re.search(r"pick #([1-6])", answer)
    return f"Answer: {'ABCDEF'[int(match.group(1)) - 1]}" if match else answer
"""

CONFIG = """\
description: a model that answers pick #N
stages:
  build_prompt: mystages:build_prompt
  preprocess: mystages:preprocess
  generate: mystages:generate
  parse_response: mystages:parse_response
generation:
  temperature: 0.7
  max_tokens: 77
  shrink: 2
  style: terse
"""


def write_config(folder: Path, config: str = CONFIG, stages: str = STAGES, name: str = "my_model.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mystages.py").write_text(stages)
    path = folder / name
    path.write_text(config)
    return path


def oracle() -> Any:
    return load_model("oracle", Settings())


# -- loading and checking ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("stages: [", "(line 1, column 10): not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        ("stages:\n  genrate: mystages:generate\n", "field 'stages': Additional properties are not allowed ('genrate' was unexpected)"),
        ("stages:\n  generate: mystages.generate\n", "field 'stages.generate'"),
        ("generation:\n  max_tokens: many\n", "field 'generation.max_tokens'"),
        ("generation:\n  temperature: -1\n", "field 'generation.temperature'"),
    ],
)
def test_an_invalid_config_file_is_named_by_file_and_field(tmp_path: Path, config: str, says: str) -> None:
    path = write_config(tmp_path, config)
    with pytest.raises(ModelError) as info:
        load_config(path)
    assert str(path) in str(info.value) and says in str(info.value), str(info.value)


def test_a_missing_config_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="cannot read the file"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("stages_line", "module", "says"),
    [
        ("parse_response: nosuchmodule:parse", STAGES, "field 'stages.parse_response': no module named 'nosuchmodule'"),
        ("parse_response: mystages:parse", STAGES, "field 'stages.parse_response': module 'mystages' ("),
        ("parse_response: mystages:parse", STAGES, "has no 'parse'; its functions: build_prompt, generate, parse_response, preprocess"),
        ("parse_response: mystages:build_prompt.x", STAGES, "has no 'build_prompt.x'"),
        ("parse_response: mystages:re", STAGES, "'mystages:re' is a module, not a function"),
        ("postprocess: mystages:preprocess", STAGES, "cannot be called as guitest calls a postprocess(model, reply, case): missing a required argument: 'shrink'"),
        ("generate: mystages:parse_response", STAGES, "mystages:parse_response(model, answer, case) cannot be called as guitest calls a generate(model, prompt, sent, case, **generation)"),
        ("parse_response: mystages:parse_response", STAGES + "\n1 / 0\n", "importing module 'mystages' raised ZeroDivisionError"),
        ("generate: mystages:agen", STAGES + "\nasync def agen(model, prompt, sent, case):\n    pass\n", "is an async function"),
    ],
)
def test_a_stage_that_does_not_resolve_or_fit_fails_when_the_config_loads(tmp_path: Path, stages_line: str, module: str, says: str) -> None:
    # a fresh module name per case, so an earlier import of "mystages" cannot answer for this one
    fresh = f"mystages_{uuid.uuid4().hex}"
    (tmp_path / f"{fresh}.py").write_text(module)
    path = tmp_path / "c.yaml"
    path.write_text(f"stages:\n  {stages_line.replace('mystages', fresh)}\n")
    with pytest.raises(ModelError) as info:
        apply_config(oracle(), path)
    message = str(info.value).replace(fresh, "mystages")
    assert str(path) in message and says in message, message


def test_a_generation_setting_that_no_stage_takes_is_an_error(tmp_path: Path) -> None:
    path = write_config(tmp_path, "stages:\n  parse_response: mystages:parse_response\ngeneration:\n  top_p: 0.9\n", name="g.yaml")
    with pytest.raises(ModelError) as info:
        apply_config(oracle(), path)
    assert "field 'generation': 'top_p' reach(es) no stage" in str(info.value)


def test_each_stage_gets_the_generation_settings_its_signature_names() -> None:
    calls: dict[str, dict[str, Any]] = {}

    def generate(model, prompt, sent, case, *, top_p):  # names one setting
        calls["generate"] = {"top_p": top_p}
        return "Answer: A"

    def preprocess(model, image, case, **kwargs):  # takes them all
        calls["preprocess"] = kwargs
        return model.preprocess(image, case)

    model = with_stages(oracle(), generate=generate, preprocess=preprocess, generation={"top_p": 0.5, "temperature": 0.3, "beam": 2})
    model.preprocess(None, SimpleNamespace(sent_size=(4, 3)))  # type: ignore[arg-type]  # the oracle never looks at the image
    assert model.generate(Prompt(user="q"), None, None) == Reply(text="Answer: A")  # type: ignore[arg-type]
    assert calls == {"generate": {"top_p": 0.5}, "preprocess": {"top_p": 0.5, "temperature": 0.3, "beam": 2}}
    # temperature is also the adapter's own setting: the report and the cache key see it
    assert model.settings.temperature == 0.3 and model.describe()["settings"]["temperature"] == 0.3
    assert model.generation_settings()["temperature"] == 0.3
    assert model.generation_settings()["stages"] == {
        "generate": f"{__name__}:test_each_stage_gets_the_generation_settings_its_signature_names.<locals>.generate",
        "preprocess": f"{__name__}:test_each_stage_gets_the_generation_settings_its_signature_names.<locals>.preprocess",
    }


def test_a_stage_returning_the_wrong_type_is_an_error_outcome_not_a_crash() -> None:
    model = with_stages(oracle(), postprocess=lambda model, reply, case: 42)
    with pytest.raises(ModelError, match="stage postprocess .* returned int, not str"):
        model.postprocess(Reply(text="x"), None)  # type: ignore[arg-type]


# -- whole runs through a loopback OpenAI-compatible server --------------------------------------

SCRIPT = {
    "Which application is open?": [{"content": "pick #1"}] * 2,
    "Where is the colour palette?": [{"content": "I see it on the left. pick #3"}] * 2,
    "Which screen is shown?": [{"content": "pick #1"}] * 2,  # wrong: B
}


def run(pytester: pytest.Pytester, server: Any, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites/mmbench_gui/l1", f"--base-url={server.base_url}", "--data-root=data", "--cache=off", "-p", "no:cacheprovider", *args)


@MODES
def test_config_stages_run_end_to_end(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path)
    config = write_config(pytester.path / "cfg")
    with fakeserver.serve(tmp_path, script=SCRIPT) as server:
        result = run(pytester, server, "--model=openai:fake-vl", f"--model-config={config}", *mode)
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "mmbench_gui_l1.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in report["cases"]}
    assert verdicts["os_windows-easy-0-0"] == "hit" and verdicts["os_windows-hard-0-1"] == "hit" and verdicts["os_ios-medium-1-0"] == "miss"
    # the custom prompt, with the generation settings passed to generate, reached the endpoint
    paint = next(r for r in requests if "Which application is open?" in r["user_text"])
    assert paint["user_text"] == "<<Q>> Which application is open? <<OPTIONS>> A=Paint | B=Word | C=Excel <<REPLY AS pick #N>> [style=terse t=0.7]"
    assert all(r["params"]["temperature"] == 0.7 and r["params"]["max_tokens"] == 77 for r in requests)
    # preprocess got shrink=2: the 200 x 100 screenshot went out at 100 x 50
    assert paint["image_size"] == [100, 50]
    case = next(c for c in report["cases"] if c["id"] == "os_windows-easy-0-0")
    assert case["sent_size"] == [100, 50] and case["size"] == [200, 100]
    # the report records which code produced the replies
    assert report["model"]["pipeline"]["stages"]["parse_response"] == "mystages:parse_response"
    assert report["model"]["pipeline"]["generation"] == {"temperature": 0.7, "max_tokens": 77, "shrink": 2, "style": "terse"}
    assert report["model"]["settings"]["max_tokens"] == 77


@MODES
def test_without_the_custom_parser_the_same_replies_are_unparsed(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path)
    with fakeserver.serve(tmp_path, script=SCRIPT) as server:
        result = run(pytester, server, "--model=openai:fake-vl", *mode)
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "mmbench_gui_l1.json").read_text())
    assert {c["verdict"] for c in report["cases"]} == {"unparsed"}
    assert "pipeline" not in report["model"]


@MODES
def test_a_broken_config_stops_the_run_before_any_request(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path)
    config = write_config(pytester.path / "cfg", CONFIG.replace("mystages:generate", "mystages:generat"))
    with fakeserver.serve(tmp_path, script=SCRIPT) as server:
        result = run(pytester, server, "--model=openai:fake-vl", f"--model-config={config}", *mode)
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 4
    err = result.stderr.str()
    assert f"{config}, field 'stages.generate': module 'mystages'" in err and "has no 'generat'" in err, err
    assert "Traceback" not in err + result.stdout.str()
    assert requests == []


CONFTEST = """
import re

from guitest.models import load_model
from guitest.models.pipeline import with_stages


def parse(model, answer, case):
    match = re.search(r"pick #([1-6])", answer)
    return f"Answer: {'ABCDEF'[int(match.group(1)) - 1]}" if match else answer


def pytest_guitest_make_model(spec, settings, profile, profile_reason):
    if spec == "mine":
        return with_stages(load_model("openai:fake-vl", settings), parse_response=parse, generation={"max_tokens": 33})
    return None
"""


@MODES
def test_stages_replaced_from_python(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path)
    pytester.makeconftest(CONFTEST)
    with fakeserver.serve(tmp_path, script=SCRIPT) as server:
        result = run(pytester, server, "--model=mine", *mode)
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "mmbench_gui_l1.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in report["cases"]}
    assert verdicts["os_windows-hard-0-1"] == "hit" and verdicts["os_ios-medium-1-0"] == "miss"
    assert {r["params"]["max_tokens"] for r in requests} == {33}
    assert report["model"]["pipeline"]["source"] == "python"


def doc_block(first_line: str) -> str:
    """The fenced code block of docs/pipeline.md whose first line is ``first_line``."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "pipeline.md").read_text()
    blocks = [b.split("\n", 1)[1].rsplit("```", 1)[0] for b in text.split("```")[1::2] if "\n" in b]
    return next(b for b in blocks if b.startswith(first_line))


def loc_tokens(box: list[float]) -> str:
    x1, y1, x2, y2 = (round(v * 1023) for v in box)
    return f"<loc{y1:04d}><loc{x1:04d}><loc{y2:04d}><loc{x2:04d}> target"


@MODES
def test_the_documented_example_runs(pytester: pytest.Pytester, tmp_path: Path, mode: list[str]) -> None:
    write_data(pytester.path / "data")
    copy_suites(pytester.path)
    (pytester.path / "my_stages.py").write_text(doc_block("# my_stages.py"))
    (pytester.path / "my_model.yaml").write_text(doc_block("# my_model.yaml"))
    rows = {r["instruction"]: r["bbox"] for r in l2_rows()}
    script = {f"detect {instruction}": [{"content": loc_tokens(box)}] for instruction, box in rows.items()}
    script["detect undo the last stroke"] = [{"content": "a stroke"}]
    with fakeserver.serve(tmp_path, script=script) as server:
        result = pytester.runpytest_subprocess(
            "suites/mmbench_gui/l2",
            "--model=openai:my-detector",
            "--model-profile=generic",
            "--model-config=my_model.yaml",
            f"--base-url={server.base_url}",
            "--data-root=data",
            "--cache=off",
            "-p",
            "no:cacheprovider",
            *mode,
        )
        requests = [r for r in server.requests() if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()
    report = json.loads((pytester.path / "reports" / "mmbench_gui_l2.json").read_text())
    verdicts = {c["instruction"]: c["verdict"] for c in report["cases"]}
    assert verdicts.pop("undo the last stroke") == "unparsed"  # no <loc> tokens: nothing to read
    assert set(verdicts.values()) == {"hit"}
    assert sorted(r["user_text"] for r in requests) == sorted(f"detect {i}" for i in rows)
    assert all(r["params"]["max_tokens"] == 64 and len(r["roles"]) == 1 for r in requests)  # no system prompt
