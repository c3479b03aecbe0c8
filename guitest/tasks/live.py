"""Live tasks (``task: live``): an agent acts step by step in a real environment, and the environment's own check
scores the episode (:mod:`guitest.live`; the flow of a case is :func:`guitest.live.flow.run_live_case`).

Settings (``schemas/tasks/live.schema.json``): ``include_flagged`` (the ``miniwob`` reader runs tasks with
these flags too) and ``history_images`` (earlier screenshots each step sends, the most recent ones; 0 by
default: the history goes as text). The suite names the backend (``env``, ``env_options``) and the step
budget (``max_steps``). Task metrics (:func:`guitest.live.metrics.summarize`): success rate with its 95%
interval per task and family, steps of successful episodes, EQA, and success by budget.
"""

from __future__ import annotations

from typing import Any

from ..live import metrics
from . import Task


class Live(Task):
    """One (task, seed) episode per case; see the module docstring."""

    name = "live"
    defaults: dict[str, Any] = {"include_flagged": [], "history_images": 0}

    def truth(self, sample: Any, size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        return None, [], None

    def summarize(self, cases: list[dict[str, Any]]) -> dict[str, Any] | None:
        episodes = list(_episodes(cases))
        budget = max((e["budget"] for e in episodes), default=1)
        return metrics.summarize(episodes, budget)

    def summary_lines(self, m: dict[str, Any]) -> list[str]:
        overall = m["success"]["overall"]
        if not overall["n"]:
            return ["live episodes: none scored"]
        low, high = overall["ci95"]
        steps = m["steps_of_successes"]
        lines = [
            f"live episodes: success {100 * overall['success_rate']:.1f}% ({overall['successes']}/{overall['n']}, 95% CI {100 * low:.1f}-{100 * high:.1f})"
            + (f"; {m['errors']} errored, left out" if m["errors"] else ""),
            f"  EQA {m['eqa']:.4f} (MMBench-GUI's efficiency-quality area, t_max {m['eqa_t_max']}; {m['eqa_order']})",
        ]
        if steps["n"]:
            spread = f", sd {steps['std']:.2f}" if steps["std"] is not None else ""
            lines.append(f"  steps of successful episodes: mean {steps['mean']:.2f}{spread}, median {steps['median']}, {steps['min']}-{steps['max']}")
        budgets = m["success_by_budget"]
        shown = [b for b in budgets if int(b) in (1, 2, 3, 5, 10) or int(b) == m["eqa_t_max"]]
        lines.append("  success had the budget been: " + ", ".join(f"{b} steps {100 * budgets[b]:.1f}%" for b in shown if budgets[b] is not None))
        families = m["success"]["by"].get("family", {})
        if len(families) > 1:
            lines.append("  by family: " + ", ".join(f"{k} {100 * v['success_rate']:.0f}% ({v['successes']}/{v['n']})" for k, v in families.items()))
        return lines


def _episodes(cases: list[dict[str, Any]]):
    """Every episode of the report's cases as the metrics read them (attempts of a repeated case apart)."""
    for case in cases:
        runs = case.get("attempts") or [case]
        for n, run in enumerate(runs):
            prediction = run.get("prediction") or {}
            yield {
                "id": case["id"] if len(runs) == 1 else f"{case['id']}#{n:03d}",
                "success": bool(prediction.get("success")),
                "steps": int(prediction.get("steps") or 0),
                "budget": int(prediction.get("budget") or 1),
                "error": run.get("verdict") == "error",
                "tags": case.get("tags", {}),
            }


TASK = Live
