"""How a live suite's cases run in this run: its backend's options with the command line's machines, browsers and
providers added, its budget, where its episodes are written, the runner that drives the model, and what the report
and the run's header say of them. Read from the run's options (:class:`guitest.plan.runconfig.RunConfig`); loaded only
when a live suite is read, never for a grounding run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import backends
from ..reporting import history, summary
from ..live import runners
from .live_case import LiveSetup, live_record, settings_lines

if TYPE_CHECKING:
    from ..models.base import Model
    from ..report_parts import LiveSuiteRecord
    from ..plan.runconfig import RunConfig
    from ..suite import Suite
    from ..tasks import Task


def history_images(config: RunConfig, task: Task) -> int | None:
    """The earlier screenshots a live step sends: ``--history-images``, else the suite's setting, else None (the runner's own)."""
    chosen = config.history_images
    if chosen is None:
        chosen = task.settings.get("history_images")
    return None if chosen is None else int(chosen)


def setup(config: RunConfig, model: Model | None, suite: Suite, task: Task, report_dir: Path, run_stamp: str) -> tuple[LiveSetup, list[str]]:
    """How a live suite's cases run here, and the header's lines naming its runner and its backend's settings in force:
    its backend and options (``--env-url`` machines and ``--env-provider`` added), its budget, and the folder its
    episodes are written to (in this run's folder beside the report)."""
    options = backends.backend(suite.env).options(suite.env_options, config)
    keep = config.keep_runs > 0
    folder = history.run_folder(report_dir, suite.name, run_stamp) if keep else report_dir / "episodes" / suite.name
    rule = backends.success_rule(suite.env or "", task.settings, config.success_rule, str(suite.path))
    images = history_images(config, task)
    lines = []
    if model is not None:  # the runner, and the backend's settings in force (a desktop suite's waits)
        runner, why = runners.for_model(model, config.runner)
        lines.append("guitest " + summary.runner_line({**runner.describe(images), "chosen": why}))
        lines += ["guitest " + line for line in settings_lines(suite, model, config.runner)]
    live = LiveSetup(
        env=suite.env or "",
        env_options=options,
        base_dir=str(suite.folder),
        max_steps=suite.max_steps,
        episodes_dir=str(folder / "episodes" if keep else folder),
        report_dir=str(report_dir),
        history_images=images,
        success_rule=rule.name if rule else None,
        runner=config.runner,
    )
    return live, lines


def runner_source(config: RunConfig, model: Model) -> str | None:
    """The source file of the runner that drives ``model`` (``--runner`` or its profile's), or None when it cannot be read."""
    import inspect

    runner, _ = runners.for_model(model, config.runner)
    try:
        path = inspect.getsourcefile(type(runner))
        return Path(path).read_text("utf-8") if path else None
    except (OSError, TypeError):
        return None


def record(config: RunConfig, model: Model | None, suite: Suite, task: Task) -> LiveSuiteRecord:
    """What the report records of a live suite's backend and runner (:func:`guitest.run.live_case.live_record`)."""
    return live_record(suite, config.max_steps, model, config.runner, history_images(config, task))
