"""One process's part of a guitest run, without pytest: the model, the cache's ledger, the environments of live
tasks, the cases run ahead of pytest, the results, and at the end each suite's report (built, compared with
``--baseline``, gated, written with its history).

The plugin makes one :class:`Session` per process from the run's :class:`~guitest.plan.runconfig.RunConfig` and
hands it what pytest collected and reported; on the xdist controller (or a serial run) the session collects the
results and ends the run, on a worker it runs cases and sends what its endpoints did.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from .. import backends, bundled
from ..cost import usage as usage_mod
from .. import cache as cache_mod
from ..reporting import history, summary
from ..reporting.document import CacheRecord, RunRecord
from ..datapath import resolve_root
from ..errors import GuitestError, ModelError, SuiteError
from ..formats import read_suite_samples
from ..models import SPECS, choose_profile, load_model
from ..models.base import Model, Settings
from ..models.endpoints import merged_stats
from ..profiles import Profile
from ..plan.runconfig import ConfigError, RunConfig
from .prefetch import Prefetcher
from ..sample import Sample
from ..cost.pricing import PricesError
from ..cost.spending import Priced, Spending, abandoned_of, add_abandoned, make_spending, not_asked, stop_message, usage_warning_message, worker_slot
from ..plan.suite_plan import LivePart, RunInputs, SuitePlan, plan_suite
from ..suite import Suite
from .suite_reports import SuiteReports, suite_key
from ..tasks import Task
from ..verdict import ERROR, CaseResult, case_result
from ..reporting.thumbnails import picture

if TYPE_CHECKING:  # the live modules load when a live suite is read, never for a grounding run (start-up, every worker)
    from .case import RunOptions  # guitest.run.case loads where a case runs or the cache's ledger is opened
    from .live_case import Environments, LiveSetup

#: exit status of a run that ended with fewer results than cases selected
INCOMPLETE_EXIT_CODE = 11
#: exit status of a run whose report could not be written (a full disk, a folder it may not write): its results are not saved
UNSAVED_EXIT_CODE = 12
#: exit status of a run that stopped asking the model at its budget (--max-cost, --max-tokens): --lf finishes it
BUDGET_EXIT_CODE = 13
#: exit status of a run whose report was written but not this run's copies of it (runs/, .passed): nothing else failed
UNCOPIED_EXIT_CODE = 14
# Cases run ahead of pytest in a pool of --concurrency threads plus a few spare ones, which
# read screenshots, build requests, judge replies and write the cache while the others
# hold the --concurrency request slots; at most LOOKAHEAD x --concurrency results are
# started and not yet taken (docs/bench.md: fewer spare threads or a shorter lookahead
# leave slots empty at 100 ms replies; more threads cost more in interpreter-lock hand-offs).
SPARE_THREADS = 8
LOOKAHEAD = 4

#: a model made by a plugin (pytest's hook ``pytest_guitest_make_model``): (spec, settings, profile, reason) -> model or None
ModelMaker = Callable[[str, Settings, Profile, str], "Model | None"]
#: what runs one case and returns its result
Job = Callable[[], CaseResult]


class Session:
    """One process's run. ``worker``: what the xdist controller sent (:meth:`worker_input`), None on the controller
    or in a serial run; ``make_model``: a plugin's model maker, asked before guitest's own; ``pending(limit)``: the
    positions of the items this worker will run next, as xdist has queued them (for the lookahead)."""

    def __init__(self, config: RunConfig, *, make_model: ModelMaker | None = None, worker: Mapping[str, Any] | None = None, pending: Callable[[int], list[int]] | None = None) -> None:
        self.config = config
        self.is_worker = worker is not None
        self.data_root, self.data_root_source = resolve_root(config.data_root)
        self.concurrency = config.in_flight  # requests in flight in this process: --concurrency per endpoint
        self.model = self._make_model(make_model)
        self.report_dir = config.report_folder
        self.cache_folder = Path(config.cache_dir) if config.cache_dir else self.report_dir
        self._run_lock: cache_mod.RunLock | None = None  # held for the run's life by the controller (or a serial run)
        self.run = self._open_run(worker)
        self.started = time.time()
        self.ended = self.started  # set when the run ends: what the hours of a self-hosted endpoint are counted to
        # this run's folder under runs/<suite>/ (the controller's, so workers write live episodes into the same one)
        self.run_stamp: str = worker["guitest_stamp"] if worker is not None else history.stamp(self.started)
        self._budget_folder: str | None = None  # the controller's folder of the budget's spending files (removed at the end)
        self.spending = self._make_spending(worker)
        self.pending = pending or (lambda limit: [])
        self._cache: cache_mod.ResponseCache | None = None
        self._lock = threading.Lock()
        self._prefetcher: Prefetcher | None = None
        self._options: RunOptions | None = None
        self._environments: Environments | None = None
        self.slots = threading.BoundedSemaphore(self.concurrency)  # model calls in flight in this process
        self.jobs: list[tuple[int, Job] | None] = []  # by position among the session's items: what runs that case
        self.names: Sequence[str | None] = ()  # ... and its node id
        self._finished = False
        # controller side: the suites' cases, results and reports
        self.suites = SuiteReports(config, self.model, started=self.started, run_stamp=self.run_stamp, data_root=self.data_root, data_root_source=self.data_root_source)
        self.cache_failure: str | None = None  # the first reason the response cache could not store replies, in any process
        self.cache_not_stored = 0  # replies the response cache could not store, all processes
        self._cache_failure_said = False  # said during the run (once); else said in the summary
        self.data_read: dict[str, str] = {}  # per suite file collected here: where its data came from
        self.runner_lines: dict[str, None] = {}  # the runners the collected live suites drive the model with, for the header
        self.endpoint_stats: list[list[dict[str, Any]]] = []  # per worker (or this process), what each endpoint did
        # the run's budget: why it stopped the run (None: it did not), in this process or (controller) any worker;
        # the results a budgeted case had before pytest ran it; what the run spent, read once at its end
        self.budget_stopped: str | None = None
        self._ready: dict[int, CaseResult] = {}
        self.spent: tuple[float, int] | None = None
        self.unasked: list[str] = []  # the controller's: the node ids the budget left unasked, for --lf
        # the calls of cases started ahead of pytest whose results no report holds (this process's, or on the
        # controller every worker's): their tallies and how many cases
        self.abandoned: dict[str, Any] = {}
        # the results of cases started ahead that finished after pytest stopped (a budget's stop, Ctrl-C), as (node id,
        # result): a worker sends them to the controller, which records those no test reported once every process ended
        self.finished_ahead: list[tuple[str, CaseResult]] = []
        self.late_news: list[str] = []  # what those results had to say at once (record), said in the summary instead
        self.usage_warning: str | None = None  # the first numbers of a call's usage set aside (guitest.cost.usage), any process

    # -- start ---------------------------------------------------------------------------------

    def _make_model(self, make_model: ModelMaker | None) -> Model | None:
        config = self.config
        if not config.model:
            return None
        try:
            profile, reason = choose_profile(config.model, config.model_profile)
            settings = config.model_settings()
            custom = make_model(config.model, settings, profile, reason) if make_model is not None else None
            if custom is not None and not isinstance(custom, Model):
                raise GuitestError(f"pytest_guitest_make_model returned {type(custom).__name__}, not a guitest.models.base.Model")
            model = custom or load_model(config.model, settings, profile=config.model_profile, backoff=config.retry_backoff)
            if config.model_config:
                from ..models.pipeline import apply_config

                model = apply_config(model, config.model_config)
        except GuitestError as exc:
            raise ConfigError(f"--model={config.model}: {exc}") from None
        return model

    def _open_run(self, worker: Mapping[str, Any] | None) -> cache_mod.Run | None:
        """This run in the cache's ledger (None when no cache is used): a worker takes the controller's; the
        controller resumes the previous run of this model and settings (--lf, or after an incomplete run) or starts one."""
        config = self.config
        if self.model is None or not self.model.cacheable or config.cache == "off" or config.collect_only:
            return None
        if worker is not None:
            given = worker.get("guitest_run")
            return cache_mod.Run(given["id"], given.get("resumes")) if given else None
        from .case import key_parts

        scope = cache_mod.ResponseCache.key({**key_parts(self.model, identity=False), "base_urls": self.model.settings.public()["base_urls"]})
        try:
            run, self._run_lock = cache_mod.open_run(self.cache_folder, scope, resume=config.last_failed)
            return run
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"--cache-dir={self.cache_folder}: cannot open the response cache ({exc}); give a writable folder or pass --cache=off") from None

    def _make_spending(self, worker: Mapping[str, Any] | None) -> Spending | None:
        """How this process prices its calls and keeps to the run's budget (None for a model that costs nothing)."""
        config, model = self.config, self.model
        if model is None or not model.metered or config.collect_only:
            return None
        given = worker.get("guitest_budget") if worker is not None else None

        def folder() -> tuple[str, float]:  # the run's budget folder: the controller's, made when a budget needs one
            if given:
                return given, float(worker["guitest_started"])  # type: ignore[index]  # given only by a worker's input
            self._budget_folder = tempfile.mkdtemp(prefix="guitest-budget-")
            return self._budget_folder, self.started

        priced = Priced(model.name, priced_name(model), getattr(getattr(model, "inner", model), "base_url", None), config.prices)
        try:
            return make_spending(priced, config.max_cost, config.max_total_tokens, folder, worker_slot(worker.get("workerid") if worker is not None else None))
        except PricesError as exc:
            raise ConfigError(str(exc)) from None

    def worker_input(self) -> dict[str, Any]:
        """What each xdist worker is given, so that it runs as part of this run (its folder, the cache's run, the budget's folder)."""
        out: dict[str, Any] = {"guitest_stamp": self.run_stamp}
        if self.run is not None:
            out["guitest_run"] = {"id": self.run.id, "resumes": self.run.resumes}
        if self._budget_folder is not None:
            out["guitest_budget"] = self._budget_folder
            out["guitest_started"] = self.started
        return out

    def header_lines(self) -> list[str]:
        """The run header (:func:`guitest.reporting.summary.header_lines`)."""
        return summary.header_lines(self.model, self.config, self.run, self.cache_folder)

    def read_suite(self, path: Path, nodeid: str) -> tuple[SuitePlan, list[Sample], LiveSetup | None]:
        """A suite file's plan (:func:`guitest.plan.suite_plan.plan_suite`: the suite, its task, its data; kept for its
        report on the controller or in a serial run), its samples and (for a live suite) how its cases run here;
        SuiteError for a bad suite or missing data. Where its data came from is kept for the header (``data_read``)."""
        plan = plan_suite(path, nodeid, self.plan_inputs(reads_data=True), self.live_part)
        suite, data_dir = plan.suite, plan.data_dir
        assert suite is not None and data_dir is not None
        samples = read_suite_samples(suite, data_dir)
        if self.model is not None:  # a model answering from a file of its own (replay:) matches it to the samples
            try:
                self.model.read_samples(samples, os.path.normpath(os.path.join(data_dir, suite.data.get("images", ""))))
            except ModelError as exc:
                raise SuiteError(f"{path}: {exc}") from None
        live = None
        if suite.task == "live":
            from . import live_setup as setup

            live, lines = setup.setup(self.config, self.model, suite, plan.task, self.report_dir, self.run_stamp)
            self.runner_lines.update(dict.fromkeys(lines))
        self.data_read[nodeid] = plan.data or ""
        if not self.is_worker:
            self.suites.add_plan(plan)
        return plan, samples, live

    @property
    def writes_reports(self) -> bool:
        """Whether this process writes the suites' reports: the xdist controller or a serial run, with a model, not listing cases."""
        return not self.is_worker and self.model is not None and not self.config.collect_only

    def plan_inputs(self, reads_data: bool) -> RunInputs:
        """What of this run a suite's plan depends on (:class:`guitest.plan.suite_plan.RunInputs`); ``reads_data``:
        this process reads the suite's data (it collects the suite's cases)."""
        config = self.config
        return RunInputs(str(self.data_root), self.data_root_source, config.success_rule, reads_data=reads_data, writes_report=self.writes_reports)

    def live_part(self, suite: Suite, task: Task) -> LivePart:
        """What a live suite's report records of how this run drives it, and its runner's source (for the manifest)."""
        from . import live_setup as setup

        source = setup.runner_source(self.config, self.model) if self.model is not None else None
        return LivePart(setup.record(self.config, self.model, suite, task), source)

    def skip_reason(self, sample: Sample, live: LiveSetup | None) -> str | None:
        """Why this run's model cannot run a live case (the oracle without a scripted solution), or None."""
        if live is None or self.model is None:
            return None
        from .live_case import skip_reason

        return skip_reason(self.model, sample)

    def collected(self, jobs: list[tuple[int, Job] | None], cases: Iterable[str], python: Iterable[tuple[str, str]] = (), names: Sequence[str | None] = ()) -> None:
        """Collection is final: ``jobs`` by item position (None: not a case to start ahead) and their node ids
        (``names``); on the controller, the node ids of the suite files' ``cases`` and the ``(module, case id)`` of
        Python tests over samples. ConfigError when cases are selected without a model, or live desktop cases without
        a machine."""
        self.jobs = jobs
        self.names = names
        if self.is_worker:
            return
        for path, node in python:
            self.suites.note_python(path, node)
        self.suites.note_selected(cases)
        n = sum(j is not None for j in jobs)
        if n and self.model is None and not self.config.collect_only:
            raise ConfigError(no_model_message(n))
        self._check_machines()

    def worker_collected(self, ids: Sequence[str]) -> None:
        """xdist: a worker's collection (the controller collects nothing itself): the cases selected, checked as in :meth:`collected`."""
        selected = self.suites.selected
        if selected:
            return
        self.suites.note_selected(i for i in ids if suite_key(i) is not None)
        if selected and self.model is None:
            raise ConfigError(no_model_message(sum(map(len, selected.values()))))
        self._plan_selected()
        self._check_machines()

    def _plan_selected(self) -> None:
        """xdist: the controller collects nothing, so it reads each selected suite file into its plan here, once, as the
        workers did (:func:`guitest.plan.suite_plan.plan_suite`, its data not read). One it cannot read gets no report,
        which says why (a task or format a worker's conftest.py registers)."""
        for key in self.suites.selected:
            if key.endswith(".py") or key in self.suites.plans:
                continue
            try:
                self.suites.add_plan(plan_suite(bundled.resolve_key(self.config.rootdir, key), key, self.plan_inputs(reads_data=False), self.live_part))
            except SuiteError as exc:
                self.suites.plan_failed(key, exc)

    def _check_machines(self) -> None:
        """Live desktop suites run on machines given by --env-url (or on a desktop guitest starts, desktop_local):
        selecting their cases without one is a usage error that says how to get a machine; listing them is not."""
        config = self.config
        if config.collect_only or config.env_url or config.env_provider or self.model is None:
            return
        for key in self.suites.selected:
            plan = self.suites.plans.get(key)
            suite = plan.suite if plan is not None else None
            missing = backends.backend(suite.env).missing_machine(suite.env_options, config) if suite is not None and suite.task == "live" else None
            if missing:
                raise ConfigError(f"{key}: {missing}")

    def scheduler_depth(self) -> int | None:
        """How many cases xdist should keep queued per worker (its lookahead), or None to leave xdist's scheduling alone."""
        return None if self.model is None else LOOKAHEAD * self.concurrency + 1

    # -- running -------------------------------------------------------------------------------

    @property
    def options(self) -> RunOptions:
        """How every case of this session runs (made once, on first use)."""
        if self._options is None:
            from .case import RunOptions

            self._options = RunOptions(
                repeats=self.config.repeats,
                strategy=self.config.attempt_strategy,
                thumbnail=self.thumbnail if self.model is not None else None,  # a picture never decodes on the request path
                cache=self.cache,
                slot=self.slots,
                max_steps=self.config.max_steps,
                spending=self.spending,
                episode_tokens=self.config.max_episode_tokens,
            )
        return self._options

    @property
    def cache(self) -> cache_mod.ResponseCache | None:
        """This process's response cache (opened on first use), or None when it is off or the model costs nothing."""
        if self.config.cache == "off" or self.model is None or not self.model.cacheable:
            return None
        with self._lock:
            if self._cache is None:
                self._cache = cache_mod.ResponseCache(self.cache_folder, self.config.cache, self.run.id if self.run else "")
            return self._cache

    @property
    def environments(self) -> Environments:
        """This process's environments of live tasks (one per concurrent episode, made on first use)."""
        with self._lock:
            if self._environments is None:
                from .live_case import Environments

                self._environments = Environments(self.concurrency)
            return self._environments

    def thumbnail(self, path: str, image: Any) -> str:
        """The report's picture of a screenshot: its path, or a thumbnail when --report-images=embed and the pixels are decoded already."""
        return picture(path, image, self.config.report_images)

    def run_case(self, sample: Sample, task: Task | None, prompt: str | None, live: LiveSetup | None) -> CaseResult:
        """Run one case with this session's model and options: an episode when ``live`` is given, else one screenshot."""
        assert self.model is not None
        budget = self.spending.budget if self.spending is not None else None
        spent = budget.reached() if budget is not None else None
        if spent is not None:  # no new case starts once the run's budget is spent: --lf runs it
            return case_result(sample.id, ERROR, sample.tags, error=not_asked(spent), not_asked=spent, instruction=sample.instruction)
        if live is not None:
            from .live_case import run_live_case

            result = run_live_case(sample, self.model, live, self.environments, self.options)
        else:
            from .case import run_case

            result = run_case(sample, self.model, task, prompt, self.options)
        self._carry_cache_failure(result)
        warning = self.spending.take_warning() if self.spending is not None else None
        if warning is not None:  # once per process, to the process that prints the run's progress
            result["usage_warning"] = warning
        return result

    def budget_stop(self, position: int | None, job: Job, name: str) -> str | None:
        """Before pytest runs the case at ``position`` in a run with a budget: why the run stops here (the budget is
        spent and this case did not ask: it is missing from the report, and the plugin ends the run at once rather
        than report every case left as a failure), or None to run it as usual, its result held for :meth:`result`
        (a case started ahead still finishes: a call in flight is paid, a reply the cache holds is read)."""
        budget = self.spending.budget if self.spending is not None else None
        if budget is None or (budget.max_cost is None and budget.max_tokens is None):
            return None
        if position is None or not (0 <= position < len(self.jobs)) or self.jobs[position] is None:
            return None  # not a case this session starts (a skipped one)
        result = self.result(position, job, name)
        why = result.get("not_asked")
        if why is None:
            self._ready[position] = result
            return None
        self.budget_stopped = self.budget_stopped or why
        return stop_message(why)

    def _carry_cache_failure(self, result: CaseResult) -> None:
        """The first case to end after the response cache failed to store replies carries the reason to the process
        that prints the run's progress (once per process), so the run says it at once."""
        cache = self._cache
        if cache is None or cache.failure is None or self._cache_failure_said:
            return
        with self._lock:
            if self._cache_failure_said:
                return
            self._cache_failure_said = True
        result["cache_failure"] = cache.failure

    def result(self, position: int | None, job: Job, name: str = "") -> CaseResult:
        """The result of the case at ``position`` among the session's items (started now unless it runs already),
        after starting the next few ahead; a case at no position (``name`` names it) runs without lookahead."""
        if position is not None and position in self._ready:
            return self._ready.pop(position)
        if self._prefetcher is None:
            c = self.concurrency
            self._prefetcher = Prefetcher(c + min(c, SPARE_THREADS), window=LOOKAHEAD * c)
        if position is None:
            return self._prefetcher.result(("item", name), job)
        return self._prefetcher.result(position, job, self._upcoming(position, self._prefetcher.window))

    def _upcoming(self, position: int, window: int) -> list[tuple[int, Job]]:
        """``(position, job)`` of the next ``window`` cases this process will run, as far as it knows."""
        jobs = self.jobs
        if self.is_worker:
            return [jobs[i] for i in self.pending(window) if 0 <= i < len(jobs) and jobs[i] is not None]  # type: ignore[misc]
        return [j for j in jobs[position + 1 : position + 1 + window] if j is not None]

    def record(self, nodeid: str, result: CaseResult) -> list[str]:
        """A case's result as the controller received it (a suite file's case, or a Python test's). Returns what to
        say at once, the first time a result says it: that the response cache cannot store replies, that an endpoint
        reported token counts that cannot be counts."""
        failure = result.pop("cache_failure", None)
        warning = result.pop("usage_warning", None)
        stopped = result.pop("not_asked", None)
        if stopped is not None:  # the budget kept it from asking (a Python test's case): missing from the report
            self.budget_stopped = self.budget_stopped or stopped
        else:
            self.suites.record(nodeid, result)
        news = []
        if warning is not None and self.usage_warning is None:
            self.usage_warning = warning
            news.append(usage_warning_message(warning))
        if failure is not None and self.cache_failure is None:
            self.cache_failure = failure
            self._cache_failure_said = True
            news.append(cache_mod.failure_message(failure))
        return news

    def worker_cache(self) -> dict[str, Any] | None:
        """What a worker's response cache could not store (sent to the controller at its end), or None when it stored all."""
        cache = self._cache
        if cache is None or not cache.write_errors:
            return None
        return {"failure": cache.failure, "not_stored": cache.write_errors}

    def worker_cache_received(self, stats: Mapping[str, Any]) -> None:
        """A worker's :meth:`worker_cache`, as the controller received it."""
        self.cache_not_stored += int(stats.get("not_stored") or 0)
        if self.cache_failure is None and stats.get("failure"):
            self.cache_failure = str(stats["failure"])

    def unsaid_cache_failure(self) -> str | None:
        """The response cache's failure when no line of the run said it yet (it failed in the last commit), once."""
        if self.cache_failure is None or self._cache_failure_said:
            return None
        self._cache_failure_said = True
        return cache_mod.failure_message(self.cache_failure)

    # -- the end -------------------------------------------------------------------------------

    def finish_work(self, interrupted: bool = False) -> None:
        """Let running cases end, close the environments and commit the cache (once); ``interrupted`` (Ctrl-C, SIGTERM):
        close the environments first, so running episodes end at once and what the backends started (VMs) is stopped,
        and wait for no model call in flight (its reply would be in no report)."""
        if self._finished:
            return
        self._finished = True
        if interrupted and self._environments is not None:
            self._environments.close()
        self.close(model=False, wait=not interrupted)

    def finish(self, interrupted: bool = False) -> int:
        """End this process's part: on the controller, build, compare and write every suite's report and close this
        run in the cache's ledger. The exit status the run should end with when pytest's own is 0: 0, the gate's
        exit code, :data:`INCOMPLETE_EXIT_CODE` when fewer results arrived than cases were selected,
        :data:`UNSAVED_EXIT_CODE` when a report could not be written (:func:`exit_status` says which wins), or, when
        nothing else is wrong, :data:`UNCOPIED_EXIT_CODE` when a report was written without this run's copies of it."""
        self.finish_work(interrupted)
        if self.is_worker or self.model is None or self.config.collect_only:
            return 0
        self.ended = time.time()
        if not self.endpoint_stats:  # serial: this process asked the endpoints itself
            self.endpoint_stats.append(self.model.endpoint_stats())
        own = self.worker_cache()  # serial: this process's own cache (under xdist the workers sent theirs)
        if own is not None:
            self.worker_cache_received(own)
        self._record_finished_ahead()
        budget = self.spending.budget if self.spending is not None else None
        if budget is not None:  # every process has ended: its slots hold what the whole run spent
            self.spent = budget.spent(self.ended)
        if self.budget_stopped is not None:
            self.unasked = self.suites.unfinished()
        self.suites.resumable, self.suites.cache_failed = self.run is not None, self.cache_failure is not None
        incomplete, gate_failed = self.suites.finish(self.cache_record, self.endpoint_record)
        if self.run is not None:  # a run whose report (or its copies) was not saved is resumed by the next one, as an incomplete run is
            done = not incomplete and not interrupted and bool(self.suites.reports) and not self.suites.unsaved and not self.suites.copies_failed
            cache_mod.close_run(self.cache_folder, self.run.id, complete=done)
            self.release_run()
        if self.suites.unsaved:
            return UNSAVED_EXIT_CODE
        if self.budget_stopped is not None:
            return BUDGET_EXIT_CODE
        if incomplete:
            return INCOMPLETE_EXIT_CODE
        if gate_failed:
            return self.config.gate_exit_code
        return UNCOPIED_EXIT_CODE if self.suites.copies_failed else 0

    def cache_record(self, results: list[CaseResult]) -> CacheRecord:
        """What a suite's report says of the response cache (:func:`guitest.reporting.builder.cache_record`)."""
        from ..reporting import builder  # the report's modules load where a report is built (suite_reports.py)

        assert self.model is not None
        config = self.config
        return builder.cache_record(
            results,
            cacheable=self.model.cacheable,
            mode=config.cache,
            path=str(self.cache_folder / cache_mod.FILENAME) if config.cache != "off" else None,
            run_id=self.run.id if self.run else None,
            resumes=self.run.resumes if self.run else None,
            passed_over=[other["id"] for other in self.run.running] if self.run is not None else None,
            failure=self.cache_failure,
            not_stored=self.cache_not_stored,
        )

    def endpoint_record(self, results: list[CaseResult]) -> RunRecord:
        """Per endpoint, the replies, failures, mean reply seconds and rests every process saw
        (:func:`~guitest.models.endpoints.merged_stats`), the one that was unreachable (if any), the model as served."""
        from ..reporting import builder

        assert self.model is not None
        out: RunRecord = {}
        endpoints = merged_stats(self.endpoint_stats)
        if endpoints:
            out["endpoints"] = endpoints
        unreachable = builder.unreachable_record(results)
        if unreachable:
            out["unreachable"] = unreachable
        if self.run is not None and self.model.identity():
            out["served_model"] = self.model.identity()
        out.update(self.spend_record(results))  # type: ignore[typeddict-item]  # usage, price, budget: RunRecord's
        return out

    def spend_record(self, results: list[CaseResult]) -> dict[str, Any]:
        """What the run record says of spending: this run's own ``usage`` (paid, answered by the cache, the calls that
        failed, and the run's calls no report holds: ``abandoned``), where the prices came from (``price``), and the
        ``budget`` it ran under: whether it was reached, and what the run spent (the one figure of it)."""
        out: dict[str, Any] = {}
        spending = self.spending
        if spending is None:
            return out
        usage: dict[str, Any] = {"paid": usage_mod.total(r.get("usage") for r in results), "cached": usage_mod.total(r.get("cached_usage") for r in results)}
        failed = usage_mod.total(r.get("failed_usage") for r in results)
        if failed:
            usage["failed"] = failed
        if self.abandoned:
            usage["abandoned"] = self.abandoned
        if self.usage_warning is not None:
            usage["warning"] = self.usage_warning
        per_hour = spending.pricer.per_hour if spending.pricer is not None else None
        if per_hour:  # a self-hosted endpoint's rate: the run's wall time, not the calls'
            seconds = round(self.ended - self.started, 3)
            usage["endpoint"] = {"seconds": seconds, "per_hour": per_hour, "cost": round(seconds / 3600 * per_hour, 6)}
        if per_hour or any(usage[k] for k in ("paid", "cached")) or len(usage) > 2:
            out["usage"] = usage
        if spending.pricer is not None:
            out["price"] = dict(spending.pricer.source)
        config = self.config
        if config.max_cost is not None or config.max_total_tokens is not None:
            priced = spending.pricer is not None and (spending.pricer.source.get("source") != "none" or bool(per_hour))
            cost, tokens = self.spent or (0.0, 0)
            out["budget"] = {
                "max_cost": config.max_cost,
                "max_total_tokens": config.max_total_tokens,
                "reached": self.budget_stopped,
                "spent": {"cost": round(cost, 9) if priced else None, "tokens": tokens},
                "cases_not_asked": len(self.unasked),
            }
        return out

    def _keep_finished(self, left: list[tuple[Any, CaseResult]]) -> None:
        """The cases started ahead that finished but were never taken by pytest (it stopped before their tests).
        After the budget's stop, an answer is kept for the report (:meth:`_record_finished_ahead`): the run stopped
        only for want of money, and its answer is paid. After a stop asked for (``-x``, Ctrl-C) the report holds
        what pytest ran, as before, and a run resumed from the cache reads the answer back. Either way an error, or a
        case the budget kept from asking, is not kept (it has no test report: --lf runs it again), and what the calls
        of every case not kept spent is counted as ``abandoned``."""
        lost = []
        for position, result in left:
            name = self.names[position] if isinstance(position, int) and 0 <= position < len(self.names) else None
            if self.budget_stopped is None or name is None or result.get("verdict") == ERROR or result.get("not_asked") is not None:
                lost.append(result)
            else:
                self.finished_ahead.append((name, result))
        self.abandoned = add_abandoned(self.abandoned, abandoned_of(lost))

    def worker_ended(self, stopped: str | None, abandoned: Mapping[str, Any], finished: list[Any]) -> None:
        """What a worker said at its end of the budget (why it stopped the run, or None), of the calls of cases no
        report holds, and the results of cases it started ahead that finished after its tests stopped."""
        self.budget_stopped = self.budget_stopped or stopped
        self.abandoned = add_abandoned(self.abandoned, abandoned)
        self.finished_ahead += [(str(name), result) for name, result in finished]

    def _record_finished_ahead(self) -> None:
        """Record the answers of cases started ahead that no test reported (every process has ended, so a case another
        worker ran has its result already: that one stands, and the calls of this second answer are abandoned)."""
        if not self.finished_ahead:
            return
        done = self.suites.recorded()
        for name, result in self.finished_ahead:
            if name in done:
                self.abandoned = add_abandoned(self.abandoned, abandoned_of([result]))
            else:
                done.add(name)
                self.late_news += self.record(name, result)
        self.finished_ahead = []

    def close(self, model: bool = True, wait: bool = True) -> None:
        """Close what this process opened: the case threads (``wait``: once their running cases end), the environments,
        the cache (each closes again safely); with ``model``, the model and this run's lock too."""
        if self._prefetcher is not None:
            self._keep_finished(self._prefetcher.close(wait=wait) + [(k, self._ready.pop(k)) for k in list(self._ready)])
        if self._environments is not None:
            self._environments.close()
        if self._cache is not None:
            self._cache.close()  # a second close only closes this thread's connection
        if model:  # the end of the process (pytest_unconfigure); finish_work leaves the lock to finish
            if self.model is not None:
                self.model.close()
            self.release_run()
            if self.spending is not None and self.spending.budget is not None:
                self.spending.budget.close()
            if self._budget_folder is not None and not self.is_worker:
                shutil.rmtree(self._budget_folder, ignore_errors=True)

    def release_run(self) -> None:
        """Release this run's lock in the cache's ledger (once its end is recorded, or the process ends): another run
        may then resume it. Safe to call more than once."""
        if self._run_lock is not None:
            self._run_lock.release()


def exit_status(pytest_status: int, guitest_status: int) -> int:
    """The run's exit status from pytest's and :meth:`Session.finish`'s: pytest's own unless it is 0; but a report that
    could not be written (:data:`UNSAVED_EXIT_CODE`) wins over pytest's "tests failed" (1) too, since nothing of the run
    is saved, and so does a run stopped at its budget (:data:`BUDGET_EXIT_CODE`), also over the "interrupted" (2) that
    its stop is to pytest-xdist's controller."""
    if guitest_status in (UNSAVED_EXIT_CODE, BUDGET_EXIT_CODE) and pytest_status in (0, 1):
        return guitest_status
    if guitest_status == BUDGET_EXIT_CODE and pytest_status == 2:
        return guitest_status
    return guitest_status if pytest_status == 0 and guitest_status else pytest_status


def no_model_message(n: int) -> str:
    """The usage error of a run that selects ``n`` guitest cases without ``--model``."""
    return f"{n} guitest case(s) selected but no model given: pass --model=SPEC ({SPECS})"


def priced_name(model: Model) -> str:
    """The name a model is priced by: the model an API adapter asks for (``openai:gpt-4o`` asks for ``gpt-4o``; through a
    ``--model-config`` pipeline, the wrapped adapter's), else its spec's argument."""
    asked = getattr(getattr(model, "inner", model), "model", None)
    return asked if isinstance(asked, str) and asked else model.name.partition(":")[2] or model.name
