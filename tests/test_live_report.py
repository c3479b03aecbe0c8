"""A live suite's report: episodes no check decided (unsure) and errored ones counted apart, the mean score beside the
success rate, the headline the benchmark uses (and the gate on it), live columns in the terminal, Markdown and HTML.

The pytest runs use a scripted environment a conftest registers (no browser): one task succeeds, one scores 0.5
without success (an OSWorld fuzzy match), one has no check of guitest's (decided_by judge: unsure), and one breaks at
reset (an error). So the success rate is 1/2, the mean score 0.75, and 2 episodes are left out, counted apart.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from guitest.reporting import gate, report
from guitest.reporting.html import render
from guitest.tasks import load_task

CONFTEST = """
import io
from PIL import Image
import guitest.envs as envs
from guitest.live.protocol import EnvFailure, Evaluation, Observation

buffer = io.BytesIO()
Image.new("RGB", (40, 30), "white").save(buffer, format="PNG")
PNG = buffer.getvalue()
OUTCOMES = {"full": Evaluation(True, 1.0, "done"), "partial": Evaluation(False, 0.5, "fuzzy match 0.5"),
            "judged": Evaluation(False, 0.0, "no check", decided_by="judge")}


class Scripted:
    def __init__(self, options, base_dir):
        self.task = None

    def reset(self, task, seed):
        if task.name == "broken":
            raise EnvFailure("the machine did not answer")
        self.task = task.name
        return Observation(PNG, (40, 30), task.instruction)

    def step(self, action):
        return Observation(PNG, (40, 30), "")

    def evaluate(self):
        return OUTCOMES[self.task]

    def close(self):
        pass


envs.register("scripted", lambda options, base_dir: Scripted(options, base_dir))
"""

SUITE = """
name: scripted
format: webtask
data: {dir: ., base: suite, annotations: tasks.yaml}
task: live
env: scripted
max_steps: 2
id: "{task}-seed{seed}"
tags: [task, family, seed]
breakdown: [task]
settings:
  headline: HEADLINE
"""

TASKS = "\n".join(f"- {{id: {name}, instruction: do {name}, success: 'true'}}" for name in ("full", "partial", "judged", "broken"))


def write(pytester: pytest.Pytester, headline: str) -> None:
    folder = pytester.path / "suites" / "scripted"
    folder.mkdir(parents=True)
    (folder / "suite.yaml").write_text(SUITE.replace("HEADLINE", headline))
    (folder / "tasks.yaml").write_text(TASKS + "\n")
    (pytester.path / "conftest.py").write_text(textwrap.dedent(CONFTEST))


def load(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "scripted.json").read_text())


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_unsure_and_errors_apart_and_the_mean_score_as_the_headline(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write(pytester, "mean_score")
    result = pytester.runpytest_subprocess("suites/scripted", "--model=random", "--min-accuracy=0.7", *xdist)
    out = result.stdout.str()
    rep = load(pytester)
    overall = rep["overall"]
    assert (overall["n"], overall["hit"], overall["unsure"], overall["error"]) == (4, 1, 1, 1)
    assert overall["accuracy"] == 0.5 and overall["mean_score"] == 0.75  # unsure and error are not failures
    assert rep["breakdown"]["task"]["partial"]["mean_score"] == 0.5 and rep["breakdown"]["task"]["judged"]["accuracy"] is None
    assert list(rep["breakdown"]) == ["task"]  # breakdown: names the tables; family and seed only select cases
    h = rep["headline"]
    assert (h["figure"], h["accuracy"], h["success_rate"], h["mean_score"]) == ("mean_score", 0.75, 0.5, 0.75)
    metrics = rep["task_metrics"]
    assert (metrics["unsure"], metrics["errors"], metrics["success"]["overall"]["n"]) == (1, 1, 2)
    # the gate applies to the headline figure: mean score 0.75 >= 0.7, where the success rate 0.5 would fail
    assert rep["gate"]["thresholds"]["metric"] == "mean_score" and rep["gate"]["passed"] is True
    assert "headline: mean score 0.750" in out and "1 unsure (no check of guitest's: for the judge) and 1 errored, left out" in out
    assert "unparsed" not in out.split("guitest: scripted")[1]  # the live table has its own columns
    assert rep["suite"]["env"] == "scripted" and rep["suite"]["max_steps"] == 2
    assert "temperature" not in rep["model"]["settings"] and rep["model"]["settings"]["seed"] is None  # only what the random agent reads
    # the exit status is pytest's own for the errored case, not the gate's
    assert result.ret == 1


def test_a_success_rate_headline_gates_on_the_success_rate(pytester: pytest.Pytester) -> None:
    write(pytester, "success_rate")
    result = pytester.runpytest_subprocess("suites/scripted", "--model=random", "--min-accuracy=0.7", "-k", "not broken")
    rep = load(pytester)
    assert rep["headline"]["figure"] == "success_rate" and rep["headline"]["accuracy"] == 0.5
    assert rep["gate"]["thresholds"]["metric"] == "accuracy" and rep["gate"]["passed"] is False
    assert "overall accuracy 0.5000 < 0.7000" in " ".join(rep["gate"]["failures"])
    assert result.ret == 10


def case(id_: str, verdict: str, score: float | None, task: str = "t") -> dict:
    prediction = {"success": verdict == "hit", "score": score, "steps": 3, "budget": 10}
    return {"id": id_, "verdict": verdict, "tags": {"task": task}, "prediction": prediction, "response": None, "score": score, "success": verdict == "hit", "steps": 3}


def build(cases: list[dict], headline: str = "success_rate") -> dict:
    task = load_task("live", {"headline": headline})
    return report.build(
        suite={"name": "s", "path": "s/suite.yaml", "format": "webtask", "task": "live", "settings": task.settings, "env": "x", "max_steps": 10},
        model={"spec": "m", "adapter": "A", "space": "normalized", "settings": {}},
        results=cases,
        n_selected=len(cases),
        missing=[],
        tags=["task"],
        cross=[],
        gate={},
        run={},
        task=task,
    )


def test_the_report_module_leaves_unsure_out_and_writes_live_tables() -> None:
    rep = build([case("a", "hit", 1.0), case("b", "miss", -1.0), case("c", "unsure", 0.0, task="u"), case("d", "miss", 0.9717)])
    assert report.validate(rep) == []
    assert rep["overall"]["accuracy"] == round(1 / 3, 6) and rep["overall"]["mean_score"] == round((1 - 1 + 0.9717) / 3, 6)
    lines = report.text_table(rep)
    assert lines[0].split() == ["category", "value", "n", "success", "SR%", "95%", "CI", "mean", "score", "unsure", "error"]
    assert any(line.split()[:2] == ["task", "u"] and line.split()[-2:] == ["1", "0"] for line in lines)
    assert "headline: success rate 33.3%" in "\n".join(lines) and "macro average" not in "\n".join(lines)
    md = report.markdown(rep)
    assert "| category | value | n | success | SR% | 95% CI | mean score | unsure | error |" in md and "Success rate = successes / (n - unsure - error)" in md
    page = render(rep)
    assert "mean score 0.324" in page and "0.32390000" not in page and "1 unsure" in page and 'id="budget-chart"' in page
    assert '<th class="num">SR %</th>' in page and "unparsed" not in page.split('id="tables"')[1].split("</section>")[0]
    # the gate on a mean-score suite reads each row's mean score
    failures, _ = gate.check(gate.thresholds({"by": {"task=t": 0.5}}, None, None, "mean_score"), rep)
    assert failures == [f"task=t mean_score {round((1 - 1 + 0.9717) / 3, 6):.4f} < 0.5000"]
