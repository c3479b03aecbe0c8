"""One process's part of a guitest run, without pytest: the model, the cache's ledger, the environments of live
tasks, the cases run ahead of pytest, the results, and at the end each suite's report (built, compared with
``--baseline``, gated, written with its history).

The plugin makes one :class:`Session` per process from the run's :class:`~guitest.runconfig.RunConfig` and
hands it what pytest collected and reported; on the xdist controller (or a serial run) the session collects the
results and ends the run, on a worker it runs cases and sends what its endpoints did.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from . import bundled
from . import cache as cache_mod
from .reporting import builder, history, summary, writer
from .reporting import compare as compare_mod
from .reporting import gate as gate_mod
from .reporting import report as report_mod
from .reporting.document import Report, RunRecord, SuiteRecord
from .case import RunOptions, key_parts, run_case
from .datapath import describe_data, locate, resolve_root
from .miniwob import rules as miniwob_rules
from .errors import GuitestError, SuiteError
from .formats import read_suite_samples
from .models import SPECS, choose_profile, load_model
from .models.base import Model, Settings
from .models.endpoints import merged_stats
from .profiles import Profile
from .runconfig import ConfigError, RunConfig
from .prefetch import Prefetcher
from .sample import Sample
from .secrets import scrub_args
from .suite import SUITE_FILENAMES, Suite, load_suite
from .tasks import Task, load_task
from .verdict import CaseResult
from .reporting.thumbnails import picture

if TYPE_CHECKING:  # the live modules load when a live suite is read, never for a grounding run (start-up, every worker)
    from .live.flow import Environments, LiveSetup

#: exit status of a run that ended with fewer results than cases selected
INCOMPLETE_EXIT_CODE = 11
#: exit status of a run whose report could not be written (a full disk, a folder it may not write): its results are not saved
UNSAVED_EXIT_CODE = 12
# Cases run ahead of pytest in a pool of --concurrency threads plus a few spare ones, which
# read screenshots, build requests, judge replies and write the cache while the others
# hold the --concurrency request slots; at most LOOKAHEAD x --concurrency results are
# started and not yet taken (docs/bench.md: fewer spare threads or a shorter lookahead
# leave slots empty at 100 ms replies; more threads cost more in interpreter-lock hand-offs).
SPARE_THREADS = 8
LOOKAHEAD = 4

#: tag values kept for the hint of a selection that left no case (more are not shown anyway)
MAX_KEYWORDS = 200

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
        # this run's folder under runs/<suite>/ (the controller's, so workers write live episodes into the same one)
        self.run_stamp: str = worker["guitest_stamp"] if worker is not None else history.stamp(self.started)
        self.pending = pending or (lambda limit: [])
        self._cache: cache_mod.ResponseCache | None = None
        self._lock = threading.Lock()
        self._prefetcher: Prefetcher | None = None
        self._options: RunOptions | None = None
        self._environments: Environments | None = None
        self.slots = threading.BoundedSemaphore(self.concurrency)  # model calls in flight in this process
        self.jobs: list[tuple[int, Job] | None] = []  # by position among the session's items: what runs that case
        self._finished = False
        # controller side
        self.selected: dict[str, list[str]] = {}  # per suite (its file, or a Python test module): node ids selected
        self.results: dict[str, list[CaseResult]] = {}
        self.skipped: set[str] = set()  # guitest cases a baseline cannot run (skipped, not missing)
        self.reports: dict[str, Report] = {}
        self.tasks: dict[str, Task] = {}  # per suite reported: its task (the report's own metrics as text)
        self.unreported: dict[str, str] = {}  # per suite: why it has no report (its suite file could not be read here)
        self.unsaved: dict[str, str] = {}  # per suite: why its report could not be written
        self.uncopied: dict[str, str] = {}  # per suite: why the copies of its report (runs/, .passed) could not be made
        self.cache_failure: str | None = None  # the first reason the response cache could not store replies, in any process
        self.cache_not_stored = 0  # replies the response cache could not store, all processes
        self._cache_failure_said = False  # said during the run (once); else said in the summary
        self.paths: dict[str, list[Path]] = {}
        self.kept: dict[str, list[str]] = {}  # per suite: this run's copies (history)
        self.data_read: dict[str, str] = {}  # per suite file collected here: where its data came from
        self.runner_lines: dict[str, None] = {}  # the runners the collected live suites drive the model with, for the header
        self.baseline_text: dict[str, str] = {}
        self.deselected = 0  # guitest cases -k, -m (or --lf) left out
        self.deselected_tags: set[tuple[str, str]] = set()  # their (tag, value)s (each value a keyword), for the hint when none is left
        self.endpoint_stats: list[list[dict[str, Any]]] = []  # per worker (or this process), what each endpoint did

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
                from .models.pipeline import apply_config

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
        scope = cache_mod.ResponseCache.key({**key_parts(self.model, identity=False), "base_urls": self.model.settings.public()["base_urls"]})
        try:
            run, self._run_lock = cache_mod.open_run(self.cache_folder, scope, resume=config.last_failed)
            return run
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"--cache-dir={self.cache_folder}: cannot open the response cache ({exc}); give a writable folder or pass --cache=off") from None

    def worker_input(self) -> dict[str, Any]:
        """What each xdist worker is given, so that it runs as part of this run (its folder, and the cache's run)."""
        out: dict[str, Any] = {"guitest_stamp": self.run_stamp}
        if self.run is not None:
            out["guitest_run"] = {"id": self.run.id, "resumes": self.run.resumes}
        return out

    def header_lines(self) -> list[str]:
        """The run header (:func:`guitest.reporting.summary.header_lines`)."""
        return summary.header_lines(self.model, self.config, self.run, self.cache_folder)

    def read_suite(self, path: Path, nodeid: str) -> tuple[Suite, list[Sample], Task, LiveSetup | None]:
        """A suite file's suite, samples, task and (for a live suite) how its cases run here; SuiteError for a bad
        suite or missing data. Where its data came from is kept for the header (``data_read``)."""
        suite = load_suite(path)
        data_dir = locate(str(suite.folder), suite.data, str(self.data_root), self.data_root_source, str(path))
        samples = read_suite_samples(suite, data_dir)
        task = load_task(suite.task, suite.settings, str(suite.path))
        live = self.live_setup(suite, task) if suite.task == "live" else None
        self.data_read[nodeid] = describe_data(str(suite.folder), suite.data, str(self.data_root), self.data_root_source)
        return suite, samples, task, live

    def live_setup(self, suite: Suite, task: Task) -> LiveSetup:
        """How a live suite's cases run here: its backend and options (``--env-url`` machines and ``--env-provider`` added), its budget, and
        the folder its episodes are written to (in this run's folder beside the report)."""
        from .desktopenv import provider as provider_mod
        from .live.flow import LiveSetup, settings_lines

        config = self.config
        options = provider_mod.with_command_line(suite.env_options, config.env_provider, config.env_provider_option) if suite.env == "desktop" else dict(suite.env_options)
        if config.env_url:
            options["urls"] = list(config.env_url)
        if config.lease_dir and suite.env == "desktop":
            options["lease_dir"] = config.lease_dir
        if suite.env != "desktop":  # the web backends' browser and page servers (docs/live.md, Remote browsers)
            browser = {"browser_endpoints": list(config.browser_endpoint), "episodes_per_endpoint": config.browser_episodes, "serve_bind": config.serve_bind, "serve_host": config.serve_host}
            options.update({k: v for k, v in browser.items() if v})
        keep = config.keep_runs > 0
        folder = history.run_folder(self.report_dir, suite.name, self.run_stamp) if keep else self.report_dir / "episodes" / suite.name
        rule = miniwob_rules.choose(suite.env or "", task.settings, config.success_rule, str(suite.path))
        self._say_runner(self.history_images(task))
        if self.model is not None:  # the backend's settings in force (a desktop suite's waits), in the header
            self.runner_lines.update(dict.fromkeys("guitest " + line for line in settings_lines(suite, self.model, config.runner)))
        return LiveSetup(
            env=suite.env or "",
            env_options=options,
            base_dir=str(suite.folder),
            max_steps=suite.max_steps,
            episodes_dir=str(folder / "episodes" if keep else folder),
            report_dir=str(self.report_dir),
            history_images=self.history_images(task),
            success_rule=rule.name if rule else None,
            runner=config.runner,
        )

    def _say_runner(self, history_images: int | None) -> None:
        """Remember the header line naming the runner a live suite drives the model with."""
        if self.model is None:
            return
        from .live import runners as live_runners

        runner, why = live_runners.for_model(self.model, self.config.runner)
        self.runner_lines["guitest " + summary.runner_line({**runner.describe(history_images), "chosen": why})] = None

    def _live_record(self, suite: Suite, task: Task) -> dict[str, Any]:
        """What the report records of a live suite's backend and runner (:func:`guitest.live.flow.live_record`); {} for
        another suite, without loading the live modules."""
        if suite.task != "live":
            return {}
        from .live.flow import live_record

        return live_record(suite, self.config.max_steps, self.model, self.config.runner, self.history_images(task))

    def history_images(self, task: Task) -> int | None:
        """The earlier screenshots a live step sends: ``--history-images``, else the suite's setting, else None (the runner's own)."""
        chosen = self.config.history_images
        if chosen is None:
            chosen = task.settings.get("history_images")
        return None if chosen is None else int(chosen)

    def skip_reason(self, sample: Sample, live: LiveSetup | None) -> str | None:
        """Why this run's model cannot run a live case (the oracle without a scripted solution), or None."""
        if live is None or self.model is None:
            return None
        from .live.flow import skip_reason

        return skip_reason(self.model, sample)

    def collected(self, jobs: list[tuple[int, Job] | None], cases: Iterable[str], python: Iterable[tuple[str, str]] = ()) -> None:
        """Collection is final: ``jobs`` by item position (None: not a case to start ahead); on the controller, the
        node ids of the suite files' ``cases`` and the ``(module, case id)`` of Python tests over samples. ConfigError
        when cases are selected without a model, or live desktop cases without a machine."""
        self.jobs = jobs
        if self.is_worker:
            return
        for path, node in python:
            self.selected.setdefault(path, []).append(node)
        self._note_selected(cases)
        n = sum(j is not None for j in jobs)
        if n and self.model is None and not self.config.collect_only:
            raise ConfigError(no_model_message(n))
        self._check_machines()

    def worker_collected(self, ids: Sequence[str]) -> None:
        """xdist: a worker's collection (the controller collects nothing itself): the cases selected, checked as in :meth:`collected`."""
        if self.selected:
            return
        self._note_selected(i for i in ids if suite_key(i) is not None)
        if self.selected and self.model is None:
            raise ConfigError(no_model_message(sum(map(len, self.selected.values()))))
        self._check_machines()

    def _note_selected(self, nodeids: Iterable[str]) -> None:
        for nodeid in nodeids:
            key = suite_key(nodeid)
            if key is not None:
                self.selected.setdefault(key, []).append(nodeid)

    def _check_machines(self) -> None:
        """Live desktop suites run on machines given by --env-url (or on a desktop guitest starts, desktop_local):
        selecting their cases without one is a usage error that says how to get a machine; listing them is not."""
        config = self.config
        if config.collect_only or config.env_url or config.env_provider or self.model is None:
            return
        for key in self.selected:
            suite = _load_suite_quietly(bundled.resolve_key(config.rootdir, key))
            if suite is not None and suite.task == "live" and suite.env == "desktop" and not suite.env_options.get("local_desktop") and not suite.env_options.get("provider"):
                from .envs.machine import NO_MACHINE

                raise ConfigError(f"{key}: {NO_MACHINE}")

    def scheduler_depth(self) -> int | None:
        """How many cases xdist should keep queued per worker (its lookahead), or None to leave xdist's scheduling alone."""
        return None if self.model is None else LOOKAHEAD * self.concurrency + 1

    # -- running -------------------------------------------------------------------------------

    @property
    def options(self) -> RunOptions:
        """How every case of this session runs (made once, on first use)."""
        if self._options is None:
            self._options = RunOptions(
                repeats=self.config.repeats,
                strategy=self.config.attempt_strategy,
                thumbnail=self.thumbnail if self.model is not None else None,  # a picture never decodes on the request path
                cache=self.cache,
                slot=self.slots,
                max_steps=self.config.max_steps,
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
                from .live.flow import Environments

                self._environments = Environments(self.concurrency)
            return self._environments

    def thumbnail(self, path: str, image: Any) -> str:
        """The report's picture of a screenshot: its path, or a thumbnail when --report-images=embed and the pixels are decoded already."""
        return picture(path, image, self.config.report_images)

    def run_case(self, sample: Sample, task: Task | None, prompt: str | None, live: LiveSetup | None) -> CaseResult:
        """Run one case with this session's model and options: an episode when ``live`` is given, else one screenshot."""
        assert self.model is not None
        if live is not None:
            from .live.flow import run_live_case

            result = run_live_case(sample, self.model, live, self.environments, self.options)
        else:
            result = run_case(sample, self.model, task, prompt, self.options)
        self._carry_cache_failure(result)
        return result

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

    def record(self, nodeid: str, result: CaseResult) -> str | None:
        """A case's result as the controller received it (a suite file's case, or a Python test's). Returns what to
        say at once: that the response cache cannot store replies, the first time a result says so, else None."""
        key = suite_key(nodeid) or nodeid.partition("::")[0]
        failure = result.pop("cache_failure", None)
        self.results.setdefault(key, []).append(result)
        if failure is None or self.cache_failure is not None:
            return None
        self.cache_failure = failure
        self._cache_failure_said = True
        return cache_mod.failure_message(failure)

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

    def note_deselected(self, n: int, tags: Iterable[tuple[str, str]], same_cases: bool = False) -> None:
        """``n`` guitest cases left out of the run, with their ``(tag, value)`` pairs; ``same_cases``: another xdist worker's
        count of the cases every worker collects (the largest count is kept, not their sum)."""
        self.deselected = max(self.deselected, n) if same_cases else self.deselected + n
        if len(self.deselected_tags) < MAX_KEYWORDS:
            self.deselected_tags.update(tags)

    def record_skip(self, nodeid: str) -> None:
        """A suite file's case was skipped (a baseline cannot run it): reported as skipped, never as missing."""
        if suite_key(nodeid):
            self.skipped.add(nodeid)

    # -- the end -------------------------------------------------------------------------------

    def finish_work(self, interrupted: bool = False) -> None:
        """Let running cases end, close the environments and commit the cache (once); ``interrupted`` (Ctrl-C): close
        the environments first, so running episodes end at once and what the backends started (VMs) is stopped."""
        if self._finished:
            return
        self._finished = True
        if interrupted and self._environments is not None:
            self._environments.close()
        self.close(model=False)

    def finish(self, interrupted: bool = False) -> int:
        """End this process's part: on the controller, build, compare and write every suite's report and close this
        run in the cache's ledger. The exit status the run should end with when pytest's own is 0: 0, the gate's
        exit code, :data:`INCOMPLETE_EXIT_CODE` when fewer results arrived than cases were selected, or
        :data:`UNSAVED_EXIT_CODE` when a report could not be written (:func:`exit_status` says which wins)."""
        self.finish_work(interrupted)
        if self.is_worker or self.model is None or self.config.collect_only:
            return 0
        incomplete = gate_failed = False
        if not self.endpoint_stats:  # serial: this process asked the endpoints itself
            self.endpoint_stats.append(self.model.endpoint_stats())
        own = self.worker_cache()  # serial: this process's own cache (under xdist the workers sent theirs)
        if own is not None:
            self.worker_cache_received(own)
        for key in sorted(set(self.selected) | set(self.results)):
            try:
                report = self.build_report(key)
            except SuiteError as exc:  # this process cannot read a suite file the workers ran: no report, never a wrong one
                self.unreported[key] = unreadable_suite_message(key, exc)
                incomplete = True
                continue
            self.compare_baseline(report)
            self.reports[key] = report
            pictures = {r["id"]: r["thumbnail"] for r in self.results.get(key, []) if r.get("thumbnail")}
            try:
                self.paths[key] = self.write(report, pictures)
            except writer.ReportNotSaved as exc:
                self.unsaved[key] = str(exc)
            incomplete |= not report["complete"]
            gate_failed |= bool(report["gate"]["failures"])
        if self.run is not None:  # a run whose report was not saved is resumed by the next one, as an incomplete run is
            done = not incomplete and not interrupted and bool(self.reports) and not self.unsaved
            cache_mod.close_run(self.cache_folder, self.run.id, complete=done)
            self.release_run()
        if self.unsaved:
            return UNSAVED_EXIT_CODE
        return INCOMPLETE_EXIT_CODE if incomplete else self.config.gate_exit_code if gate_failed else 0

    def build_report(self, key: str) -> Report:
        """The report of suite ``key`` (its file, or a Python test module) from this run's results, gated; with --lf,
        merged into the previous report of the same suite, model and success rule (:mod:`guitest.reporting.builder`)."""
        assert self.model is not None
        config = self.config
        results = self.results.get(key, [])
        selected = [nodeid.split("::", 1)[1] for nodeid in self.selected.get(key, []) if nodeid not in self.skipped]
        python_suite = key.endswith(".py")
        if python_suite:  # selection by results: under -n the controller sees no collected samples (README)
            selected = sorted(set(selected) | {r["id"] for r in results})
        suite = None if python_suite else load_suite(bundled.resolve_key(config.rootdir, key))
        task = load_task(suite.task, suite.settings) if suite else load_task("grounding")
        self.tasks[key] = task
        model = self.model.describe()
        rule = miniwob_rules.record(suite.env if suite and suite.task == "live" else None, task.settings, config.success_rule)
        previous = None
        if config.last_failed:
            previous = builder.same_run_kind(builder.read_previous(self.report_paths(suite.name if suite else Path(key).parent.name)[0][0]), model, key, rule)
        record: SuiteRecord = {
            "name": suite.name if suite else (Path(key).stem if python_suite else Path(key).parent.name),
            "path": key,
            "format": suite.format if suite else ("python" if python_suite else ""),
            "task": suite.task if suite else "grounding",
            "settings": task.settings,
        }
        if suite:
            record.update(self._live_record(suite, task))  # type: ignore[typeddict-item]  # live_record's keys are SuiteRecord's
        shape = (
            builder.SuiteShape(record, list(suite.tables), [list(c) for c in suite.cross], suite.average, suite.macro_over, suite.gate)
            if suite
            else builder.SuiteShape(record, sorted({t for r in results for t in r.get("tags", {})}))
        )
        run: RunRecord = {
            "data_root": str(self.data_root),
            "data_root_source": self.data_root_source,
            "data": describe_data(str(suite.folder), suite.data, str(self.data_root), self.data_root_source) if suite else None,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "seconds": round(time.time() - self.started, 3),
            "workers": config.workers,
            "pytest_args": scrub_args(config.pytest_args),
            "merged_into_report_of": None,
            "shard": config.shard,
            "cache": builder.cache_record(
                results,
                cacheable=self.model.cacheable,
                mode=config.cache,
                path=str(self.cache_folder / cache_mod.FILENAME) if config.cache != "off" else None,
                run_id=self.run.id if self.run else None,
                resumes=self.run.resumes if self.run else None,
                passed_over=[other["id"] for other in self.run.running] if self.run is not None else None,
                failure=self.cache_failure,
                not_stored=self.cache_not_stored,
            ),
        }
        run.update(self.endpoint_record(results))
        run.update(rule)  # type: ignore[typeddict-item]  # {"success_rule": ...} or nothing
        limits = gate_mod.thresholds(suite.gate if suite else {}, config.min_accuracy, config.gate_metric, task.gate_metric)
        return builder.suite_report(shape, task, model=model, results=results, selected=selected, run=run, limits=limits, allow_unknown_state=config.allow_unknown_state, previous=previous)

    def endpoint_record(self, results: list[CaseResult]) -> RunRecord:
        """Per endpoint, the replies, failures, mean reply seconds and rests every process saw
        (:func:`~guitest.models.endpoints.merged_stats`), the one that was unreachable (if any), the model as served."""
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
        return out

    def compare_baseline(self, report: Report) -> None:
        """With --baseline: compare, keep the table for the summary, and turn significant regressions into gate failures."""
        path = self.config.baseline
        if not path:
            return
        try:
            old = compare_mod.load_report(path)
        except compare_mod.ReportError as exc:
            report["gate"]["failures"].append(f"--baseline: {exc}")
            return
        result = compare_mod.compare(old, report, min_drop=self.config.baseline_min_drop, min_paired=self.config.baseline_min_paired)
        report["baseline"] = {"path": str(path), "regressions": result["regressions"], "improvements": result["improvements"], "comparable": result["comparable"]}
        self.baseline_text[report["suite"]["path"]] = compare_mod.format_text(result)
        for row in result["regressions"]:
            report["gate"]["failures"].append(f"regression against {path}: {row}")
        unfit = compare_mod.not_comparable(result)
        if unfit is not None:
            report["gate"]["failures"].append(f"not comparable with {path}: {unfit}")
        if result["regressions"] or unfit is not None:
            report["gate"]["passed"] = False

    def report_paths(self, name: str) -> tuple[list[Path], list[Path], list[Path]]:
        """Where the JSON, Markdown and HTML reports of suite ``name`` go: the report folder, then the exact paths asked for."""
        config = self.config
        json_paths = [self.report_dir / f"{name}.json"]
        md_paths = [self.report_dir / f"{name}.md"]
        html_paths = [self.report_dir / f"{name}.html"]
        several = len(set(self.selected) | set(self.results)) > 1
        for option, paths in ((config.report_json, json_paths), (config.report_md, md_paths), (config.report_html, html_paths)):
            if option:
                paths.append(Path(_per_suite(option, name, several)))
        return json_paths, md_paths, html_paths

    def write(self, report: Report, pictures: dict[str, str]) -> list[Path]:
        """Write the report where :meth:`report_paths` says and keep this run's copies (:func:`guitest.reporting.writer.write`);
        the paths written. Raises :class:`~guitest.reporting.writer.ReportNotSaved` when it could not be written."""
        config = self.config
        key = report["suite"]["path"]
        task = self.tasks.get(key)
        written = writer.write(
            report,
            pictures,
            self.report_paths(report["suite"]["name"]),
            report_dir=self.report_dir,
            task_lines=report_mod.task_lines(report, task),
            images=config.report_images,
            keep_runs=config.keep_runs,
            keep_episodes=config.keep_episodes,
            stamp=self.run_stamp,
            resumable=self.run is not None,
            cache_failed=self.cache_failure is not None,
        )
        self.kept[key] = written.kept
        if written.uncopied:
            self.uncopied[key] = written.uncopied
        return written.paths

    def summary_lines(self, key: str) -> list[summary.Line]:
        """Suite ``key``'s part of the terminal summary (:func:`guitest.reporting.summary.suite_summary`), or the reason it has no report."""
        if key in self.unreported:
            return summary.unreported(key, self.unreported[key])
        report = self.reports[key]
        return summary.suite_summary(
            report,
            key,
            report_mod.text_table(report, report_mod.task_lines(report, self.tasks.get(key))),
            baseline=self.baseline_text.get(key),
            baseline_path=self.config.baseline,
            paths=self.paths.get(key, []),
            kept=self.kept.get(key),
            unsaved=self.unsaved.get(key),
            uncopied=self.uncopied.get(report["suite"]["path"]),
        )

    def close(self, model: bool = True) -> None:
        """Close what this process opened: the case threads, the environments, the cache (each closes again safely);
        with ``model``, the model and this run's lock too."""
        if self._prefetcher is not None:
            self._prefetcher.close()
        if self._environments is not None:
            self._environments.close()
        if self._cache is not None:
            self._cache.close()  # a second close only closes this thread's connection
        if model:  # the end of the process (pytest_unconfigure); finish_work leaves the lock to finish
            if self.model is not None:
                self.model.close()
            self.release_run()

    def release_run(self) -> None:
        """Release this run's lock in the cache's ledger (once its end is recorded, or the process ends): another run
        may then resume it. Safe to call more than once."""
        if self._run_lock is not None:
            self._run_lock.release()


def exit_status(pytest_status: int, guitest_status: int) -> int:
    """The run's exit status from pytest's and :meth:`Session.finish`'s: pytest's own unless it is 0; but a report that
    could not be written (:data:`UNSAVED_EXIT_CODE`) wins over pytest's "tests failed" (1) too, since nothing of the run is saved."""
    if guitest_status == UNSAVED_EXIT_CODE and pytest_status in (0, 1):
        return guitest_status
    return guitest_status if pytest_status == 0 and guitest_status else pytest_status


def suite_key(nodeid: str) -> str | None:
    """The suite file part of a guitest node id, or None for other tests."""
    path, sep, _ = nodeid.partition("::")
    return path if sep and os.path.basename(path) in SUITE_FILENAMES else None


def unreadable_suite_message(key: str, exc: Exception) -> str:
    """Why suite ``key`` has no report: the process that writes reports could not read its suite file."""
    return (
        f"{key}: no report was written: the process writing the reports cannot read this suite file ({exc}). Under "
        "pytest-xdist that process imports only the conftest.py files of the rootdir and of the paths given to pytest: "
        "register a custom task or format in the rootdir's conftest.py or in an installed package (docs/adapters.md), "
        "then run again"
    )


def no_model_message(n: int) -> str:
    """The usage error of a run that selects ``n`` guitest cases without ``--model``."""
    return f"{n} guitest case(s) selected but no model given: pass --model=SPEC ({SPECS})"


def _load_suite_quietly(path: Path) -> Suite | None:
    try:
        return load_suite(path)
    except SuiteError:
        return None


def _per_suite(template: str, name: str, several: bool) -> str:
    if "{suite}" in template:
        return template.replace("{suite}", name)
    if several:
        root, ext = os.path.splitext(template)
        return f"{root}-{name}{ext}"
    return template
