"""Tasks: what a case asks of the model and how its reply is scored, one module per task.

A suite names its task (``task:`` in suite.yaml) and may give it settings (``settings:``,
validated by ``schemas/tasks/<task>.schema.json`` when the task has one). The flow of a
case (:func:`guitest.run.case.run_case`) asks the task for four things:

- ``truth(sample, size)``: the truth in pixels of the image as found (clipped, checked);
- ``build_prompt(profile, case, template)``: the default prompt (a model may replace it);
- ``judge(text, finish_reason, case, profile, sent_size)``: the verdict and the prediction;
- ``summarize(cases)``: task metrics over all results (P/R/F1, weighted scores, ...),
  stored as ``task_metrics`` in the report, with ``summary_lines(metrics)`` to print them.

Tasks whose cases send more than one image (trajectories) override ``inputs``.

The task names are :data:`TASKS` (:data:`guitest.registry.TASKS`: the built-ins, each module's ``TASK``
imported when first named). A project adds its own with :func:`register` (a Task subclass, or a factory
``settings -> Task``), e.g. in its ``conftest.py``, or an installed package with an entry point in the
group ``guitest.tasks``; see docs/adapters.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping
from ..verdict import CaseResult
from ..reporting.document import Headline, Tallies

from .. import schema
from ..reporting import tallies
from ..errors import SuiteError, where
from ..registry import TASKS
from ..verdict import ERROR, HIT

if TYPE_CHECKING:
    from PIL import Image

    from ..exchange import Case, Prompt, Recorded, SentImage
    from ..models.base import Model
    from ..profiles import Profile
    from ..sample import Sample

register = TASKS.register


class Task:
    """The base task: one screenshot per case, its truth taken as is. Subclasses override what differs."""

    name = "task"
    #: the settings and their defaults; a suite's ``settings:`` overrides them
    defaults: dict[str, Any] = {}
    #: the verdicts left out of accuracy and counted apart (errors; a live task also leaves out undecided episodes)
    left_out: frozenset[str] = tallies.LEFT_OUT

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = {**self.defaults, **(settings or {})}

    def truth(self, sample: "Sample", size: tuple[int, int]) -> tuple[Any, list[str], str | None]:
        """``(truth, notes, error)`` for ``sample`` on an image of ``size``: the truth as the judge reads it,
        notes on what was fixed, and an error message when the sample cannot be scored."""
        return sample.box, [], None

    def build_prompt(self, profile: "Profile", case: "Case", template: str | None) -> "Prompt":
        """The default prompt of a case of this task."""
        raise NotImplementedError

    def decide(self, case: "Case") -> "tuple[str, dict[str, Any]] | None":
        """``(verdict, prediction)`` when a rule of the benchmark settles the case without asking the model
        (the WAA rule for a trajectory ending in FAIL), else None (the default: the model is asked)."""
        return None

    def inputs(self, model: "Model", case: "Case", image: "Image.Image | None", template: str | None) -> tuple["Prompt", "SentImage"]:
        """The prompt and the image sent, through the model's ``build_prompt`` and ``preprocess`` stages.

        ``image`` is the sample's screenshot, opened lazily; None when the sample names none
        (``Sample.image == ""``), which only tasks that open their own images accept, or when the model reads no
        pixels (``needs_screenshot`` False) and the annotation gives the size (the file is then not read). Raise
        :class:`~guitest.errors.GuitestError` for a case that cannot be asked (an error outcome).
        """
        if image is None:
            if model.needs_screenshot or not case.sample.image:
                raise SuiteError(f"{case.sample.source}: the sample names no screenshot, which a {self.name} case needs")
            from ..exchange import SentImage  # a model that reads no pixels, and the screenshot left unread: its size only

            return model.build_prompt(case, template), SentImage(image=None, size=case.sent_size)
        return model.build_prompt(case, template), model.preprocess(image, case)

    def judge(self, text: str, finish_reason: str | None, case: "Case", profile: "Profile", sent_size: tuple[int, int]) -> tuple[str, dict[str, Any] | None]:
        """The verdict of a reply and the prediction behind it (None when there is none), in plain builtins.

        Never raises for any reply. A ``notes`` list in the prediction is moved to the case's
        notes (counted in the report), e.g. ``["truncated_element_dropped"]``.
        """
        raise NotImplementedError

    def judge_recorded(self, recorded: "Recorded", case: "Case") -> tuple[str, dict[str, Any] | None]:
        """The verdict of an answer another harness recorded as data (:class:`guitest.exchange.Recorded`) and the
        prediction behind it, judged as it is: no text read, no profile. A task that takes no recorded answer (the
        default) raises :class:`~guitest.errors.SuiteError` saying so, which the case reports as its error."""
        raise SuiteError(f"task {self.name} judges replies only; a recorded point answers grounding cases")

    #: whether :meth:`recheck` re-derives a report's verdicts from the evidence its rows keep (``guitest merge`` does
    #: it for every part; of a task that cannot, the parts' verdicts are taken as they are, and the merge says so)
    rechecks: bool = False

    def recheck(self, row: Mapping[str, Any]) -> str | None:
        """Why a report row's verdict is not the one this task gives the evidence the row keeps (one short reason), or
        None when it is or when that evidence cannot settle it. ``row``: a case of a report as guitest writes it, or
        one attempt of a repeated case with the case's own fields (its truth). Never raises, whatever the row holds.
        The base task re-derives nothing (:attr:`rechecks` False): None."""
        return None

    def variants(self, case: "Case") -> int:
        """How many variants of the question one attempt asks (``case.variant`` 0..n-1 reach ``build_prompt`` and
        ``judge``); 1 by default. Circular evaluation asks every rotation of the options."""
        return 1

    def combine(self, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
        """One attempt's outcome from its variants' (each ``{verdict, prediction, response, ...}``, in variant order):
        by default a hit only when every variant is a hit; an error when any errored (so ``--lf`` re-runs the case);
        else the first variant's wrong verdict. Every variant's verdict, prediction and reply are kept."""
        verdicts = [o["verdict"] for o in outcomes]
        failed = next((o for o in outcomes if o["verdict"] == ERROR), None)
        wrong = next((o for o in outcomes if o["verdict"] != HIT), None)
        chosen = failed or wrong or outcomes[-1]
        out = {
            "verdict": chosen["verdict"],
            "prediction": {"variants": [{k: o.get(k) for k in ("verdict", "prediction", "response", "finish_reason")} for o in outcomes], "hits": verdicts.count(HIT)},
            "response": chosen.get("response"),
            "finish_reason": chosen.get("finish_reason"),
        }
        if failed is not None:
            out["error"] = failed.get("error")
        return out

    def repair_prompt(self, text: str, finish_reason: str | None, prompt: "Prompt", case: "Case") -> "Prompt | None":
        """A follow-up prompt when ``text`` cannot be read and asking once more is part of the task's protocol
        (e.g. a judge's invalid JSON), else None. The follow-up reply is judged; the first is kept."""
        return None

    def oracle_text(self, case: "Case", profile: "Profile") -> str | None:
        """A reply in the profile's syntax that answers ``case`` right (the ``oracle`` baseline), or None when
        the task has no right answer to give (the baseline then answers the truth box's centre)."""
        return None

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None:
        """Task metrics over the report's cases (sorted by id), or None when the task has none beyond accuracy."""
        return None

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]:
        """Plain-text lines showing :meth:`summarize`'s metrics in the terminal and the Markdown summary."""
        return []

    def headline(self, agg: Tallies, task_metrics: dict[str, Any] | None, average: str, macro_over: str | None) -> Headline:
        """The report's headline: the figure the benchmark reports (by default the suite's declared average of
        accuracy, micro or macro over ``macro_over``), with the other beside it."""
        return tallies.headline(agg, average, macro_over)

    @property
    def gate_metric(self) -> str:
        """What a gate threshold applies to when neither ``--gate-metric`` nor the suite's ``gate.metric`` says."""
        return "accuracy"

    def describe(self) -> dict[str, Any]:
        """What the report records about the task: its name and settings."""
        return {"name": self.name, "settings": dict(self.settings)}


def load_task(name: str, settings: dict[str, Any] | None = None, suite_path: str = "suite.yaml") -> Task:
    """The task called ``name`` with a suite's ``settings``; SuiteError naming the field when the name is unknown
    or the settings are invalid.

    A built-in task's settings are checked by its schema (``schemas/tasks/<name>.schema.json``); a task without
    one accepts the keys of its ``defaults`` (its own constructor checks their values).
    """
    if name not in TASKS:
        raise SuiteError(f"{where(suite_path, field='task')}: {TASKS.unknown(name)}")
    try:
        make = TASKS.get(name)
    except SuiteError as exc:
        raise SuiteError(f"{where(suite_path, field='task')}: {exc}") from None
    settings = settings or {}
    if schema.has_schema(f"tasks/{name}"):
        problems = [f"{where(suite_path, field='settings.' + f if f else 'settings')}: {m}" for f, m in schema.iter_problems(f"tasks/{name}", settings)]
        if problems:
            raise SuiteError(f"invalid settings for task {name}:\n  " + "\n  ".join(problems))
    elif settings:
        known = sorted(getattr(make, "defaults", None) or {})
        if not known:
            raise SuiteError(f"{where(suite_path, field='settings')}: task {name} takes no settings, got {', '.join(sorted(settings))}")
        extra = sorted(set(settings) - set(known))
        if extra:
            raise SuiteError(f"{where(suite_path, field='settings.' + extra[0])}: task {name} has no such setting; its settings: {', '.join(known)}")
    task = make(settings)
    if not isinstance(task, Task):
        raise SuiteError(f"{where(suite_path, field='task')}: task {name!r} made a {type(task).__name__}, not a guitest.tasks.Task")
    return task


def task_named(name: str, settings: dict[str, Any] | None = None) -> Task | None:
    """The task of a report (by name, with its recorded settings), or None when it is unknown or its settings no longer load."""
    try:
        return load_task(name, settings)
    except (SuiteError, ImportError):
        return None
