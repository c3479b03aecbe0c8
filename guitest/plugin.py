"""The pytest glue: suite files become items, verdicts ride on reports, the controller aggregates.

Hooks and option declarations only, each handing over to a plain module: the options and their checks are
:mod:`guitest.plan.runconfig`'s, the run is a :class:`guitest.run.session.Session` (one per process), the words of the
header and the summary are :mod:`guitest.reporting.summary`'s. This is the only module that imports pytest.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

from . import bundled
from .plan import limiting
from .plan import sharding
from .errors import SuiteError
from .run.gcpause import CollectorPause
from .models import SPECS
from .models.base import Model, Settings
from .printable import printable
from .plan.runconfig import OPTIONS, ConfigError, RunConfig, from_values
from .sample import Sample
from .scale.scheduling import make, queued
from .run.session import Session, exit_status
from .run.stopsignals import StopSignals, exit_code
from .suite import SUITE_FILENAMES
from .reporting.summary import Line, endpoint_down, nothing_selected
from .tasks import Task
from .verdict import ERROR, CaseResult, test_status

if TYPE_CHECKING:
    from .run.live_case import LiveSetup
    from .plan.pysuite import Point, Region  # guitest.plan.pysuite loads where a Python test asks for samples or the model


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("guitest", "guitest: GUI-agent benchmarks")
    for option in OPTIONS:  # declared once, as fields of guitest.plan.runconfig.RunConfig
        group.addoption(option.flag, **option.kwargs)


class GuitestHookSpecs:
    """Hooks guitest calls; implement them in a conftest.py or a plugin."""

    @pytest.hookspec(firstresult=True)
    def pytest_guitest_make_model(self, spec: str, settings: Settings, profile: Any, profile_reason: str) -> Model | None:
        """Return a guitest Model for ``--model=spec``, or None to leave it to guitest.

        The conftest-level way to plug in a custom adapter (docs/adapters.md).
        """


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(GuitestHookSpecs)


@contextmanager
def usage_errors() -> Iterator[None]:
    """A :class:`~guitest.plan.runconfig.ConfigError` becomes pytest's usage error: its message, no traceback."""
    try:
        yield
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None


def run_config(config: pytest.Config) -> RunConfig:
    """The run's configuration: guitest's options as pytest parsed them, and what it reads of pytest's own."""
    opt = config.option
    return from_values(
        vars(opt),
        rootdir=str(config.rootpath),
        last_failed=bool(config.getoption("lf", False)),
        collect_only=bool(opt.collectonly),
        workers=getattr(opt, "numprocesses", None) or 0,
        pytest_args=tuple(config.invocation_params.args),
        selected_by=limiting.narrowing(opt.keyword, opt.markexpr, getattr(opt, "deselect", None) or (), any("::" in str(a) for a in config.args)),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "guitest(**tags): a guitest benchmark case and its tags, e.g. -m \"guitest(platform='windows')\"")

    def make_model(spec: str, settings: Settings, profile: Any, reason: str) -> Model | None:
        made: Model | None = config.hook.pytest_guitest_make_model(spec=spec, settings=settings, profile=profile, profile_reason=reason)
        return made

    worker = getattr(config, "workerinput", None)
    with usage_errors():
        session = Session(run_config(config), make_model=make_model, worker=worker, pending=queued(config.pluginmanager.get_plugins) if worker is not None else None)
    hooks = config.stash[STATE] = GuitestHooks(config, session)
    config.pluginmanager.register(hooks, "guitest-state")
    config.pluginmanager.register(SummaryFirst(session), "guitest-summary-first")
    if distributing(config):
        config.pluginmanager.register(XdistHooks(session, hooks.stop), "guitest-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    hooks = config.stash.get(STATE, None)
    if hooks is not None:
        hooks.collector.resume(freeze=False)  # collection ended early (an error): never leave the collector off
        hooks.session.close()
        if (hooks.interrupted or hooks.session.budget_stopped) and not hooks.session.is_worker:  # after pytest wrote its record (sessionfinish)
            record_unfinished(config, hooks.session.suites.unfinished())
        hooks.stop.restore()


def record_unfinished(config: pytest.Config, nodeids: list[str]) -> None:
    """Add the cases a stopped run left without a result (interrupted, or kept from asking by its budget) to pytest's
    record of failed tests, so ``--lf`` runs them with the ones that failed. They have no test report, so pytest alone
    would not rerun them; the record is pytest's ``cache/lastfailed``, written through its cache's public API after
    pytest's own cacheprovider wrote it (its sessionfinish). Without the cache plugin (``-p no:cacheprovider``) there
    is no record."""
    cache = getattr(config, "cache", None)
    if cache is not None and nodeids:
        cache.set("cache/lastfailed", {**cache.get("cache/lastfailed", {}), **dict.fromkeys(nodeids, True)})


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name in SUITE_FILENAMES:
        parent.config.stash[STATE].collector.pause()
        # outside the rootdir (pytest --pyargs guitest.suites.NAME) pytest's own id would be a bare "suite.yaml"
        return SuiteFile.from_parent(parent, path=file_path, nodeid=bundled.nodeid(file_path, parent.config.rootpath))
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``@guitest.samples(...)`` test functions: one case per sample, parametrized as ``sample``."""
    spec = getattr(metafunc.function, "_guitest_samples", None)
    if spec is None:
        return
    if "sample" not in metafunc.fixturenames:
        pytest.fail(f"{metafunc.definition.nodeid}: @guitest.samples needs a 'sample' argument", pytrace=False)
    from .plan.pysuite import load_samples

    try:
        samples = load_samples(spec, Path(metafunc.definition.path).parent)
    except SuiteError as exc:
        pytest.fail(f"guitest: {exc}", pytrace=False)
    metafunc.parametrize("sample", [pytest.param(s, id=s.id, marks=pytest.mark.guitest(**s.tags)) for s in samples])


class ModelHandle:
    """The ``guitest_model`` fixture: the run's model, for test functions written in Python."""

    def __init__(self, session: Session, node: pytest.Item) -> None:
        self._session = session
        self._node = node

    @property
    def adapter(self) -> Model:
        """The model adapter itself (four stages, see docs/adapters.md)."""
        assert self._session.model is not None
        return self._session.model

    def click(self, sample: Sample) -> Point | None:
        """Ask the model where to click for ``sample``; the point in pixels of the original screenshot, or None
        when the reply had none. The case's verdict and evidence go into the run's report."""
        result = self._session.run_case(sample, None, None, None)
        self._node.guitest_result = result  # type: ignore[attr-defined]
        if result["verdict"] == ERROR:
            pytest.fail(f"{sample.id}: error: {result.get('error')}", pytrace=False)
        from .plan.pysuite import Point

        prediction = result.get("prediction")
        return Point(*prediction["pixel"]) if prediction else None

    @staticmethod
    def box(sample: Sample) -> Region:
        """The sample's truth box; ``point in box`` is a hit, edges included."""
        from .plan.pysuite import region

        return region(sample)


@pytest.fixture
def guitest_model(request: pytest.FixtureRequest) -> ModelHandle:
    """The model given with --model, for test functions written in Python (one adapter per worker)."""
    hooks = request.config.stash[STATE]
    if hooks.session.model is None:
        pytest.fail(f"no model given: pass --model=SPEC ({SPECS})", pytrace=False)
    hooks.stop.install()  # this process runs guitest cases: SIGTERM and SIGHUP end the run as Ctrl-C does
    return ModelHandle(hooks.session, request.node)


class CaseError(Exception):
    """A case ended in the ``error`` outcome; its message is the whole story."""


class SuiteFile(pytest.File):
    """A ``suite.yaml``: one item per sample of its data set."""

    strata: tuple[str, ...] = ()  # the tags --limit spreads the cases over (guitest.plan.limiting.strata)

    def collect(self) -> Iterator[pytest.Item]:
        session = self.config.stash[STATE].session
        try:
            plan, samples, live = session.read_suite(self.path, self.nodeid)
        except SuiteError as exc:  # may quote the data: an escape sequence in a row must not reach the terminal
            raise self.CollectError(printable(f"guitest: {exc}")) from None
        self.strata = plan.strata
        session.suites.note_total(self.nodeid, len(samples))
        template, task = plan.prompt, plan.task
        marks: dict[tuple[tuple[str, str], ...], pytest.MarkDecorator] = {}  # one marker per distinct set of tags
        for sample in samples:
            item = GuitestItem.from_parent(self, name=sample.id, sample=sample, prompt=template, task=task, live=live)
            reason = session.skip_reason(sample, live)
            if reason:  # a baseline that cannot run this case (the oracle without a scripted solution)
                item.add_marker(pytest.mark.skip(reason=reason))
            key = tuple(sample.tags.items())
            mark = marks.get(key)
            if mark is None:
                mark = marks[key] = pytest.mark.guitest(**sample.tags)
            item.add_marker(mark)
            item.extra_keyword_matches.update(sample.tags.values())
            yield item


class GuitestItem(pytest.Item):
    """One benchmark case."""

    def __init__(self, *, sample: Sample, prompt: str | None, task: Task, live: LiveSetup | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sample = sample
        self.prompt = prompt
        self.task = task
        self.live = live  # a live task's environment and budget (None: one screenshot, one reply)
        self.result: CaseResult | None = None
        self.position: int | None = None  # in session.items, set when collection is final

    def job(self) -> CaseResult:
        return self.config.stash[STATE].session.run_case(self.sample, self.task, self.prompt, self.live)

    def runtest(self) -> None:
        self.result = result = self.config.stash[STATE].session.result(self.position, self.job, self.nodeid)
        if getattr(self.config.option, "xmlpath", None):  # JUnit XML (--junitxml) shows the evidence per case
            self.user_properties.append(("guitest.verdict", result["verdict"]))
            self.user_properties.append(("guitest.prediction", json.dumps(result.get("prediction"))))
            self.user_properties.extend((f"guitest.tag.{k}", v) for k, v in sorted(self.sample.tags.items()))
        if result["verdict"] == ERROR:
            raise CaseError(result.get("error") or "error")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, CaseError):  # the message may quote an endpoint's or a machine's body
            return printable(f"{self.sample.id} ({self.sample.source}): error: {excinfo.value}")
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # a line number (0: the suite file) is needed by pytest's report of a skipped item
        return self.path, 0, printable(f"{self.sample.id}: {self.sample.instruction}")


def say_now(config: pytest.Config, line: Line) -> None:
    """Print a line while the run goes on (on a line of its own, between the progress characters)."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.ensure_newline()  # after a serial run's progress characters
        if getattr(getattr(tr, "_tw", None), "width_of_current_line", 0):  # after xdist's, which ensure_newline does not track
            tr.write("\n")
        write_lines(tr, [line])


def write_lines(terminalreporter: Any, lines: list[Line]) -> None:
    """Print summary lines (:class:`guitest.reporting.summary.Line`) on pytest's terminal."""
    for line in lines:
        markup = dict.fromkeys(line.markup, True)
        if line.sep:
            terminalreporter.write_sep(line.sep, line.text, **markup)
        else:
            terminalreporter.write_line(line.text, **markup)


class GuitestHooks:
    """The hooks of a run, each handing over to this process's :class:`~guitest.run.session.Session`."""

    def __init__(self, config: pytest.Config, session: Session) -> None:
        self.config = config
        self.session = session
        self.collector = CollectorPause()
        self.stop = StopSignals()  # SIGTERM and SIGHUP while this process runs cases: see guitest.run.stopsignals
        self.interrupted = False

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        return self.session.header_lines()

    def pytest_report_collectionfinish(self, config: pytest.Config, items: list[pytest.Item]) -> list[str]:
        """Where each collected suite reads its data (a suite with its own data names no data root)."""
        return [f"guitest data: {key}: {where}" for key, where in sorted(self.session.data_read.items())] + list(self.session.runner_lines)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # One pass over the items (there may be 100,000), each node id read once: every guitest item's
        # position and what runs its case, looked up by position for the lookahead (built here, since per
        # item it would cost more than the case); on the controller, the cases selected per suite.
        jobs: list[tuple[int, Callable[[], CaseResult]] | None] = [None] * len(session.items)
        names: list[str | None] = [None] * len(session.items)
        controller = not self.session.is_worker
        cases: list[str] = []
        python: list[tuple[str, str]] = []
        for n, item in enumerate(session.items):
            if isinstance(item, GuitestItem):
                item.position = n
                if item.get_closest_marker("skip") is None:  # a skipped case is never run, so never started ahead
                    jobs[n] = (n, item.job)
                    names[n] = item.nodeid
                if controller:
                    cases.append(item.nodeid)
            elif controller:
                callspec = getattr(item, "callspec", None)
                if callspec is not None and isinstance(callspec.params.get("sample"), Sample):
                    path = item.nodeid.partition("::")[0]
                    python.append((path, f"{path}::{callspec.params['sample'].id}"))
        self.collector.resume()
        with usage_errors():
            self.session.collected(jobs, cases, python, names)
        if any(jobs) and self.session.model is not None and not self.session.config.collect_only:
            self.stop.install()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        """With a budget: once it is spent the run stops at the first case that did not ask (no report for it or any
        after it: they are missing, one line of the summary, and --lf runs them), as -x stops a run (serial), and under
        xdist as a worker's -x does (every worker stops at its own first such case)."""
        if isinstance(item, GuitestItem):
            stop = self.session.budget_stop(item.position, item.job, item.nodeid)
            if stop is not None:
                item.session.shouldfail = stop
                return True
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        result = item.result if isinstance(item, GuitestItem) else getattr(item, "guitest_result", None)
        if call.when == "call" and result is not None:
            report.guitest = result
            if isinstance(item, GuitestItem):
                item.result = None  # the report carries it now; an item kept for the whole session need not
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
        result = getattr(report, "guitest", None)
        return test_status(result) if report.when == "call" and result and report.passed else None

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, "guitest", None)
        if self.session.is_worker:
            if result is not None:
                # xdist has sent it to the controller (trylast: after its own hook); the worker's terminal
                # reporter keeps every report for the session, so drop the result rather than hold them all
                del report.guitest
            return
        if report.skipped:
            self.session.suites.record_skip(report.nodeid)  # a case a baseline cannot run: skipped with its reason, never missing
        if report.when == "call" and result:
            self.stop.install()  # a Python suite's cases are known to the controller only by their results
            for news in self.session.record(report.nodeid, result):  # said at once, not at the end: the run goes on (docs/cache.md)
                say_now(self.config, Line(f"guitest: {news}", ("red", "bold")))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Cases end and the cache commits here, before the session's end is reported: an xdist worker says it
        # has finished from inside this hook, and the controller may then end the process at any moment (a
        # commit left for pytest_unconfigure was lost under load). A worker also sends what its endpoints did.
        # First of the hook's implementations: a stopped run's controller writes its reports before xdist waits
        # for the workers to end (up to 10 s); a stop signal from now on no longer cuts the run short. Under xdist a
        # worker's budget stop ends the controller's loop as an interruption: it is the budget's stop, not one.
        self.stop.finishing()
        interrupted = self.interrupted = session.exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR) and self.session.budget_stopped is None
        code = self.session.finish(interrupted=interrupted)
        if self.session.is_worker and self.session.model is not None:
            self.config.workeroutput["guitest_endpoints"] = self.session.model.endpoint_stats()  # type: ignore[attr-defined]
            self.config.workeroutput["guitest_cache"] = self.session.worker_cache()  # type: ignore[attr-defined]
            self.config.workeroutput["guitest_budget"] = [self.session.budget_stopped, self.session.abandoned, self.session.finished_ahead]  # type: ignore[attr-defined]
        if self.session.is_worker and self.session.suites.deselected:
            self.config.workeroutput["guitest_deselected"] = [self.session.suites.deselected, sorted(self.session.suites.deselected_tags)]  # type: ignore[attr-defined]
        if self.session.is_worker:
            self.config.workeroutput["guitest_totals"] = self.session.suites.totals  # type: ignore[attr-defined]
        session.exitstatus = exit_status(session.exitstatus, code)
        if self.stop.received is not None:  # SIGTERM or SIGHUP: what a shell reports for a process it killed
            session.exitstatus = exit_code(self.stop.received)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> Any:
        # After every other selection: -k, -m, --deselect, and --lf's, which is a wrapper too but registered before this
        # one, so inside it. --limit chooses among what they left, then --shard splits the choice; only guitest's cases.
        outcome = yield
        run = self.session.config
        if not run.limit and not run.shard:
            return outcome
        cases = [item for item in items if isinstance(item, GuitestItem)]
        chosen = None
        if run.limit:
            strata = [(item.nodeid, item.parent.nodeid, limiting.stratum(item.sample.tags, getattr(item.parent, "strata", ()))) for item in cases if item.parent is not None]
            chosen = limiting.choose(strata, run.limit, limiting.seed_of(run.seed))
        shard = sharding.parse(run.shard) if run.shard else None
        left = {id(item) for item in cases if (chosen is not None and item.nodeid not in chosen) or (shard is not None and sharding.part_of(item.nodeid, shard[1]) != shard[0])}
        if left:
            config.hook.pytest_deselected(items=[item for item in items if id(item) in left])
            items[:] = [item for item in items if id(item) not in left]
        return outcome

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        cases = [item for item in items if isinstance(item, GuitestItem)]
        if cases:  # -k, -m (or --lf) left these out; said when nothing is left (pytest_terminal_summary)
            self.session.suites.note_deselected(len(cases), {(str(k), str(v)) for item in cases for k, v in item.sample.tags.items()})

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        for key in sorted({*self.session.suites.reports, *self.session.suites.unreported}):
            write_lines(terminalreporter, self.session.suites.summary_lines(key))
        opt = self.config.option
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.session.suites.deselected and (opt.keyword or opt.markexpr):
            write_lines(terminalreporter, nothing_selected(opt.keyword, opt.markexpr, self.session.suites.deselected, self.session.suites.deselected_tags))


class SummaryFirst:
    """The part of the summary that comes before pytest's own sections (a plugin of its own: one class cannot hold
    two implementations of one hook)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        """Before pytest's own sections: say once that an endpoint was unreachable, and leave the cases that were
        therefore not asked out of the failures listed one by one (they are still failed, counted, and --lf runs them)."""
        tr = terminalreporter
        unsaid = self.session.unsaid_cache_failure()
        if unsaid is not None:
            write_lines(tr, [Line(f"guitest: {unsaid}", ("red", "bold"))])
        write_lines(tr, [Line(f"guitest: {news}", ("red", "bold")) for news in self.session.late_news])
        write_lines(tr, endpoint_down(self.session.suites.reports.values()))
        failed = tr.stats.get("failed", [])
        hidden = [r for r in failed if getattr(r, "guitest", None) and r.guitest.get("unreachable")]
        if hidden:
            tr.stats["failed"] = [r for r in failed if r not in hidden]
        try:
            return (yield)
        finally:
            if hidden:
                tr.stats["failed"] = failed


def distributing(config: pytest.Config) -> bool:
    """Whether xdist distributes this run's tests to workers from this process (its own test, ``_is_distribution_mode``)."""
    opt = config.option
    return config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput") and not opt.collectonly and getattr(opt, "dist", "no") != "no" and bool(getattr(opt, "tx", None))


class XdistHooks:
    """xdist's hooks on the controller, registered only when xdist distributes the run (as pytest's stepwise plugin
    exists only with ``--sw``)."""

    def __init__(self, session: Session, stop: StopSignals) -> None:
        self.session = session
        self.stop = stop

    def pytest_configure_node(self, node: Any) -> None:
        """Every worker runs as part of the controller's run (its folder; it reads and writes that run's replies), and
        a stop signal that reaches the controller alone reaches the workers on this machine too."""
        node.workerinput.update(self.session.worker_input())
        pid = local_worker_pid(node)
        if pid is not None:
            self.stop.pass_on_to(pid)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        pid = local_worker_pid(node)
        if pid is not None:
            self.stop.forget(pid)
        output = getattr(node, "workeroutput", {})
        if output.get("guitest_endpoints"):
            self.session.endpoint_stats.append(output["guitest_endpoints"])
        if output.get("guitest_cache"):
            self.session.worker_cache_received(output["guitest_cache"])
        if output.get("guitest_budget"):
            self.session.worker_ended(*output["guitest_budget"])
        if output.get("guitest_deselected"):
            n, tags = output["guitest_deselected"]
            self.session.suites.note_deselected(n, {(str(k), str(v)) for k, v in tags}, same_cases=True)
        for key, n in (output.get("guitest_totals") or {}).items():
            self.session.suites.note_total(key, n)

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under ``--dist load`` (what ``-n`` uses by default): xdist's scheduling with every worker's queue kept
        as deep as its lookahead, so each worker can keep ``--concurrency`` requests in flight (guitest.scale.scheduling)."""
        depth = self.session.scheduler_depth()
        if depth is None or config.getvalue("dist") != "load":
            return None
        return make(config, log, depth=depth)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        with usage_errors():
            self.session.worker_collected(ids)
        if self.session.suites.selected and self.session.model is not None and not self.session.config.collect_only:
            self.stop.install()


def local_worker_pid(node: Any) -> int | None:
    """The process id of an xdist worker started on this machine (a ``popen`` gateway), as execnet has it from the
    worker already (xdist asks for it as it sets the worker up, and execnet keeps it); None for a remote worker."""
    gateway = getattr(node, "gateway", None)
    spec = getattr(gateway, "spec", None)
    if spec is None or not spec.popen or spec.via:
        return None
    pid = getattr(getattr(gateway, "_cache_rinfo", None), "pid", None)
    return pid if isinstance(pid, int) else None


STATE = pytest.StashKey[GuitestHooks]()
