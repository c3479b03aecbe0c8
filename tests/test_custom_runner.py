"""A live-task runner of a project's own: docs/adapters.md's ``TapRunner``, registered from a conftest.py as it is
written there, chosen with ``--runner`` and driving a model of the conftest's own on an environment of its own (no
browser), through pytester, serial and with ``-n 2``."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "adapters.md"
MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]


def doc_block(first_line: str) -> str:
    """The fenced code block of docs/adapters.md whose first line is ``first_line``."""
    blocks = re.findall(r"```\w*\n(.*?)```", DOC.read_text("utf-8"), re.S)
    found = [b for b in blocks if b.startswith(first_line + "\n")]
    assert len(found) == 1, f"docs/adapters.md has {len(found)} code blocks starting {first_line!r}"
    return found[0]


# The agent answers in the runner's syntax only; the board is a success when a click lands on the target
# (20, 7.5): the centre-top quarter of its 40x30 screenshot, where the reply's TAP 0.5 0.25 maps to.
HARNESS = textwrap.dedent(
    """
    import io
    from PIL import Image
    import guitest.envs
    import guitest.models
    from guitest.live.protocol import Evaluation, Observation
    from guitest.models.base import Model, Reply

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buffer, format="PNG")
    PNG = buffer.getvalue()


    class TapAgent(Model):
        def generate(self, prompt, sent, case):
            return Reply(text="Thinking about it. TAP 0.5 0.25")


    class Board:
        def __init__(self, options, base_dir):
            self.clicks = []

        def reset(self, task, seed):
            self.clicks = []
            return Observation(PNG, (40, 30), task.instruction)

        def step(self, action):
            if action.kind == "click":
                self.clicks.append(action.point)
            return Observation(PNG, (40, 30), "")

        def evaluate(self):
            hit = any(abs(x - 20) < 0.5 and abs(y - 7.5) < 0.5 for x, y in self.clicks)
            return Evaluation(hit, 1.0 if hit else 0.0, f"clicks {self.clicks}")

        def close(self):
            pass


    guitest.envs.register("board", lambda options, base_dir: Board(options, base_dir))
    guitest.models.register("tapper", lambda spec, arg, settings, profile, reason: TapAgent(spec, settings, profile, reason))
    """
)

SUITE = """
name: board
format: webtask
data: {dir: ., base: suite, annotations: tasks.yaml}
task: live
env: board
max_steps: 1
id: "{task}-seed{seed}"
"""

TASKS = "- {id: top, instruction: tap the top, success: 'true'}\n- {id: again, instruction: tap the top again, success: 'true'}\n"


@pytest.mark.parametrize("mode", MODES)
def test_a_runner_registered_in_a_conftest_reads_the_replies_of_the_run(pytester: pytest.Pytester, mode: list[str]) -> None:
    pytester.makeconftest(doc_block("# conftest.py: a runner of your own") + HARNESS)
    folder = pytester.path / "suites" / "board"
    folder.mkdir(parents=True)
    (folder / "suite.yaml").write_text(SUITE)
    (folder / "tasks.yaml").write_text(TASKS)
    result = pytester.runpytest_subprocess("suites/board", "--model=tapper", "--runner=tap", "-p", "no:cacheprovider", *mode)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    report = json.loads((pytester.path / "reports" / "board.json").read_text())
    # every episode's reply was read by the registered runner (guitest's own runner reads no action in it)
    assert {c["id"]: c["verdict"] for c in report["cases"]} == {"top-seed0": "hit", "again-seed0": "hit"}
    assert {c["prediction"]["reason"] for c in report["cases"]} == {"clicks [(20.0, 7.5)]"}  # one click each, mapped from 0..1
    runner = report["suite"]["runner"]
    assert (runner["name"], runner["source"], runner["convention"], runner["chosen"]) == ("tap", "our agent's TAP replies", "tap", "--runner")
    result.stdout.fnmatch_lines(["*runner: tap*"])


def test_an_unknown_runner_names_the_known_ones_and_how_to_add_one(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--runner=tapp", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stderr.fnmatch_lines(
        [
            "*--runner=tapp: unknown runner 'tapp'; known: guitest, uitars15, uitars15-qwen2vl, qwen25vl, qwen3vl, prompt-agent, aguvis. Add one with guitest.live.runners.register(name, runner) in a conftest.py or an entry point in the group 'guitest.runners'*"
        ]
    )
