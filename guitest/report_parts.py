"""The typed parts of a report that modules below the reporting build: a live suite's record of its backend, the
success rule, the endpoints' figures, the shards a merged report was made from, the run's spending and the manifest.

They live here, importing only :mod:`guitest.cost.usage`, so that the modules that build them (the live flow, the
backends, MiniWoB++'s rules, merge, the session) and :mod:`guitest.reporting.document`, which puts them together
into the report's shape, import one way (docs/design.md, "Import rules"). Each is a part of ``schemas/report.schema.json``;
``tests/test_report_shape.py`` keeps the two equal (see :mod:`guitest.reporting.document`).
"""

from __future__ import annotations

from typing import Any, Required, TypedDict

from .cost.usage import Tally


class Waits(TypedDict):
    """A live desktop suite's waits in force, in seconds, and where each came from (:func:`guitest.desktopenv.machine.waits`)."""

    ready_after: float
    settle: float
    evaluate_after: float
    sources: dict[str, str]


class RunnerRecord(TypedDict, total=False):
    """The runner that drove a live suite's model, as the report records it (:meth:`guitest.live.runners.runner.Runner.describe`,
    a computer-use loop's :meth:`~guitest.live.cua.adapter.ToolLoop.describe`): its name, the reference it follows
    (``source``), the syntax of its replies, the coordinate space they are read in (None: the model profile's), the
    earlier screenshots a step sends (a count; a computer-use loop says in words what it keeps), the reference's own
    settings (open: each reference has its own), and why it was chosen."""

    name: Required[str]
    source: Required[str]
    convention: Required[str]
    space: str | None
    history_images: int | str
    reference: dict[str, Any]
    chosen: str


class LiveSuiteRecord(TypedDict, total=False):
    """What a report records of a live suite beside its task settings (:func:`guitest.run.live_case.live_record`): the
    backend and its options (URLs without credentials), the step budget, the runner (its own description), why the
    backend's options are wrong, and the backend's settings in force (:func:`guitest.envs.settings`: the waits)."""

    env: str | None
    env_options: dict[str, Any]
    max_steps: int
    runner: RunnerRecord
    settings_error: str
    waits: Waits


class SuccessRule(TypedDict):
    """MiniWoB++ suites: the rule that turned raw rewards into successes (:meth:`guitest.miniwob.rules.Chosen.to_dict`)."""

    name: str
    source: str
    meaning: str
    thresholds: dict[str, float]


class EndpointRecord(TypedDict, total=False):
    """One endpoint's figures over the run (:func:`guitest.models.endpoints.merged_stats`)."""

    url: Required[str]
    replies: Required[int]
    failures: Required[int]
    down: str | None
    latency_s: float | None
    rested: int


class MergedShard(TypedDict, total=False):
    """A shard's report a merged report was rebuilt from (:mod:`guitest.scale.merge`)."""

    path: Required[str]
    shard: Required[str]
    started: str | None
    verdicts_rechecked: bool


class Unreachable(TypedDict):
    """The endpoint that could not be reached, as the first case not asked says it, and how many cases were not asked."""

    url: str
    state: str
    reason: str
    cases_not_asked: int


class EndpointHours(TypedDict):
    """``--prices`` per_hour: a self-hosted endpoint's dollars for the run's wall time."""

    seconds: float
    per_hour: float
    cost: float


class Spent(TypedDict):
    """What the whole run spent as its budget counted it: dollars (None without a price) and tokens."""

    cost: float | None
    tokens: int


class UsageRecord(TypedDict, total=False):
    """The report's ``usage`` (:func:`guitest.reporting.costs.record`): the cases' calls paid, answered by the cache,
    both, failed; per case and per attempt (means, so not whole numbers); per tag value; a live suite's per episode
    and per success figures."""

    paid: Required[Tally]
    cached: Required[Tally]
    all: Required[Tally]
    cases: Required[int]
    per_case: Required[dict[str, float]]
    per_attempt: dict[str, float]
    failed: Tally
    by: dict[str, dict[str, Tally]]
    tokens_per_episode: float
    tokens_per_success: float | None
    cost_per_success: float | None


class Manifest(TypedDict, total=False):
    """What a re-run needs and two runs may differ by (:func:`guitest.reporting.manifest.build`)."""

    version: Required[int]
    guitest: Required[dict[str, Any]]
    python: Required[str]
    packages: Required[dict[str, str | None]]
    suite_file: dict[str, Any] | None
    data: dict[str, Any] | None
    digests: Required[dict[str, str]]
    texts: Required[dict[str, str]]
    software: dict[str, list[str]]
