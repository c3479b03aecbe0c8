"""Live tasks (``task: live``): an agent acts step by step in a real environment, and the environment's own check
scores the episode (:mod:`guitest.live`; the flow of a case is :func:`guitest.run.live_case.run_live_case`).

Settings (``schemas/tasks/live.schema.json``): ``include_flagged`` (the ``miniwob`` reader runs tasks with
these flags too), ``history_images`` (earlier screenshots each step sends, the most recent ones; by
default the runner's own, :mod:`guitest.live.runners`; ``--history-images`` overrides it) and ``headline`` (``success_rate`` or ``mean_score``: the figure the
benchmark's leaderboard uses, docs/live_reports.md). The suite names the backend (``env``, ``env_options``) and
the step budget (``max_steps``). Task metrics (:func:`guitest.reporting.episodes.summarize`): success rate with
its 95% interval and mean score per task and family, steps of successful episodes, EQA, and success by
budget. Episodes that no check of guitest's decided (``unsure``) are left out of every rate, like errors,
and counted apart; so are, in the count, episodes on a machine in an unknown state.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence
from ..verdict import CaseResult
from ..reporting.document import Headline, Tallies

from ..reporting.episodes import summarize as summarize_episodes
from ..reporting.tallies import LEFT_OUT
from ..verdict import UNSURE
from . import Task

FIGURES = {
    "success_rate": "successful episodes over the episodes an environment's check decided",
    "mean_score": "the mean of the decided episodes' scores (an episode without one counts 0)",
}


class Live(Task):
    """One (task, seed) episode per case; see the module docstring."""

    name = "live"
    defaults: dict[str, Any] = {"include_flagged": [], "headline": "success_rate"}
    left_out = LEFT_OUT | {UNSURE}

    def truth(self, sample: Any, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        return None, [], None

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None:
        episodes = list(_episodes(cases))
        budget = max((e["budget"] for e in episodes), default=1)
        return summarize_episodes(episodes, budget, headline=self.settings["headline"])

    def headline(self, agg: Tallies, task_metrics: dict[str, Any] | None, average: str, macro_over: str | None) -> Headline:
        """The figure the benchmark's leaderboard uses (``settings.headline``), the other beside it."""
        figure = self.settings["headline"]
        h = (task_metrics or {}).get("headline") or {}
        return {
            "average": "micro",
            "over": None,
            "figure": figure,
            "accuracy": h.get("value"),
            "micro": agg["overall"]["accuracy"],
            "macro": None,
            "success_rate": h.get("success_rate"),
            "ci95": h.get("ci95", [0.0, 0.0]),
            "mean_score": h.get("mean_score"),
            "what": f"{figure.replace('_', ' ')}: {FIGURES[figure]} (the suite's headline, the figure its benchmark reports)",
        }

    @property
    def gate_metric(self) -> str:
        """A gate applies to the headline figure: the success rate (accuracy) or the mean score."""
        return "mean_score" if self.settings["headline"] == "mean_score" else "accuracy"

    def summary_lines(self, m: dict[str, Any]) -> list[str]:
        overall = m["success"]["overall"]
        apart = [f"{m['unsure']} unsure (no check of guitest's: for the judge)" if m.get("unsure") else "", f"{m['errors']} errored" if m["errors"] else ""]
        apart_text = " and ".join(a for a in apart if a)
        if not overall["n"]:
            return ["live episodes: none scored" + (f" ({apart_text}, left out)" if apart_text else "")]
        low, high = overall["ci95"]
        steps = m["steps_of_successes"]
        lines = [
            f"live episodes: success {100 * overall['success_rate']:.1f}% ({overall['successes']}/{overall['n']}, 95% CI {100 * low:.1f}-{100 * high:.1f})"
            + f"; mean score {overall['mean_score']:.3f}"
            + (f"; {apart_text}, left out" if apart_text else ""),
            f"  EQA {m['eqa']:.3f} (MMBench-GUI's efficiency-quality area, t_max {m['eqa_t_max']}; {m['eqa_order']})",
        ]
        if steps["n"]:
            spread = f", sd {steps['std']:.2f}" if steps["std"] is not None else ""
            lines.append(f"  steps of successful episodes: mean {steps['mean']:.2f}{spread}, median {steps['median']}, {steps['min']}-{steps['max']}")
        budgets = m["success_by_budget"]
        shown = [b for b in budgets if int(b) in (1, 2, 3, 5, 10) or int(b) == m["eqa_t_max"]]
        lines.append("  success had the budget been: " + ", ".join(f"{b} steps {100 * budgets[b]:.1f}%" for b in shown if budgets[b] is not None))
        return lines


def _episodes(cases: list[CaseResult]):
    """Every episode of the report's cases as the metrics read them (attempts of a repeated case apart)."""
    for case in cases:
        runs: Sequence[Mapping[str, Any]] = case["attempts"] if case.get("attempts") else (case,)
        for n, run in enumerate(runs):
            prediction = run.get("prediction") or {}
            yield {
                "id": case["id"] if len(runs) == 1 else f"{case['id']}#{n:03d}",
                "success": bool(prediction.get("success")),
                "steps": int(prediction.get("steps") or 0),
                "budget": int(prediction.get("budget") or 1),
                "score": prediction.get("score"),
                "error": run.get("verdict") == "error",
                "unsure": run.get("verdict") == UNSURE,
                "reset": prediction.get("reset"),
                "tags": case.get("tags", {}),
            }


TASK = Live
