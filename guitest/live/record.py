"""An episode as evidence: screenshots as files beside the report, the episode in guitest's trajectory format.

:func:`folder_sink` gives :func:`guitest.live.loop.run_episode` a sink that writes each screenshot as
``<folder>/<name>.png``; :func:`to_trajectory` turns the episode into a
:class:`~guitest.trajectory.Trajectory` labelled with the environment's outcome (``labels.score`` = 1
for a success, 0 otherwise, ``source`` naming the environment), so ``suites/trajectory_judge`` can judge
live runs and be measured against the environment's own reward.
"""

from __future__ import annotations

import os

from ..trajectory import Labels, Step, Trajectory
from .loop import Episode, ScreenshotSink


def folder_sink(folder: str) -> ScreenshotSink:
    """A screenshot sink writing ``<folder>/<name>.png`` (the folder made when needed); it returns the file's path."""

    def save(name: str, png: bytes) -> str:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{name}.png")
        with open(path, "wb") as f:
            f.write(png)
        return path

    return save


def to_trajectory(episode: Episode, case_id: str) -> Trajectory:
    """The episode in the trajectory format: one step per decision (its actions as the reply wrote them, ``FAIL`` for a
    step whose actions ended in fail, the reply as
    the thought, notes as the comment, the screenshot seen), the final screenshot, and the environment's verdict as
    its label. Screenshots kept as bytes (no sink) are not embedded: their steps have no screenshot reference."""
    steps = tuple(
        Step(
            number=s.number,
            action="FAIL" if any(a.get("kind") == "fail" for a in s.actions[: s.executed]) else s.text,
            thought=s.reply or "",
            comment=", ".join(s.notes),
            screenshot=s.screenshot or "",
        )
        for s in episode.steps
    )
    score = None if episode.evaluation is None else (1.0 if episode.evaluation.success else 0.0)
    return Trajectory(
        id=case_id,
        request=episode.instruction,
        steps=steps,
        final_screenshot=episode.final_screenshot or "",
        app=episode.task,
        evaluator=f"{episode.env}:{episode.task}",
        infeasible=False,
        labels=Labels(score=score, source=f"environment {episode.env} (raw score {episode.score})" if episode.evaluation else ""),
    )
