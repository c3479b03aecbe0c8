"""The pytest glue: suite files become items, verdicts ride on reports, the controller aggregates.

Everything else is plain modules; this is the only one that imports pytest.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from . import __version__, history, html_report
from . import compare as compare_mod
from . import gate as gate_mod
from . import report as report_mod
from . import cache as cache_mod
from .osworld import provider as provider_mod
from .cache import DEFAULT_MODE, FILENAME, MODES, ResponseCache
from .case import RunOptions, key_parts, run_case
from .datapath import describe_data, locate, resolve_root
from .envs import miniwob_rules
from .errors import GuitestError, SuiteError
from .formats import read_suite_samples
from .models import SPECS, choose_profile, load_model
from .thumbnails import MODES as PICTURE_MODES, embed, picture
from .models.base import Model, Settings
from .live import runners as live_runners
from .live.flow import Environments, LiveSetup, live_record, run_live_case, runner_line, skip_reason
from .runner import Prefetcher
from .secrets import scrub_args
from .printable import printable
from .pysuite import Point, Region, load_samples, region
from .sample import Sample
from .suite import SUITE_FILENAMES, Suite, load_suite, prompt_text
from .tasks import Task, load_task
from .verdict import ERROR, HIT, STATUS

INCOMPLETE_EXIT_CODE = 11


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("guitest", "guitest: GUI-agent benchmarks")
    add = group.addoption
    add("--model", metavar="SPEC", help=f"model under test: {SPECS}")
    add("--base-url", metavar="URL", action="append", default=None, help="base URL of an OpenAI-compatible endpoint (openai: models), e.g. http://host:8000/v1; give it several times to spread the run over several servers of the same model (--concurrency applies per endpoint)")
    add("--api-key-env", metavar="NAME", default="OPENAI_API_KEY", help="environment variable holding the API key (default OPENAI_API_KEY); the key is never printed")
    add("--http-client", choices=("stdlib", "openai"), default="stdlib", help="openai: models: send requests through guitest's lean standard-library client (default: about a quarter of the CPU per request, which keeps one process ahead of a fast endpoint at high --concurrency, docs/bench.md) or through the official openai client")
    add("--timeout", metavar="SECONDS", type=float, default=120.0, help="deadline of one model request, connect to last byte (default 120): a server that drips its reply cannot stretch it")
    add("--retries", metavar="N", type=int, default=3, help="retries of a failed model request: 429, 5xx, timeouts, broken replies (default 3)")
    add("--retry-backoff", metavar="SECONDS", type=float, default=0.5, help="first retry delay, doubled on each retry (default 0.5)")
    add("--concurrency", metavar="N", type=int, default=8, help="model requests in flight per worker (default 8)")
    add("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    add("--max-tokens", metavar="N", type=int, default=512, help="reply token limit (default 512)")
    add("--seed", type=int, default=None, help="seed for the random baseline and for endpoints that take one")
    add("--model-config", metavar="FILE", default=None, help="a model config (YAML, schemas/model_config.schema.json): replace any of the stages build_prompt, preprocess, generate, postprocess, parse_response by a module:function, and pass generation settings to them (docs/pipeline.md)")
    add("--model-profile", metavar="NAME", default=None, help="the model family's conventions (prompt, image sizing, answer syntax, coordinate space); default: picked from the model name, see docs/profiles.md")
    add("--min-pixels", metavar="N", type=int, default=None, help="upscale screenshots below N pixels before sending (for smart_resize profiles: its min_pixels)")
    add("--max-pixels", metavar="N", type=int, default=None, help="downscale screenshots above N pixels before sending (for smart_resize profiles: its max_pixels)")
    add("--resize", choices=("auto", "client"), default="auto", help="openai: models with a smart_resize profile (Qwen2.5-VL, UI-TARS-1.5): 'auto' sends the screenshot file as it is and lets the model server's processor make the smart_resize size (as it would anyway; recorded as sent_size) unless --min-pixels/--max-pixels ask for other limits; 'client' always resizes here first")
    add("--max-image-bytes", metavar="N", type=int, default=None, help="re-encode a screenshot whose PNG is over N bytes as JPEG, then downscale until it fits")
    add("--data-root", metavar="DIR", help="folder holding the data sets (else $GUITEST_DATA, else $LMUData (MMBench-GUI's tooling), else ~/.local/share/guitest)")
    add("--report-dir", metavar="DIR", default=None, help="folder for reports (default: reports/ under the rootdir): <suite>.json|md|html are the latest run's; every run's are also kept under runs/<suite>/<time>/, and the last run that passed under <suite>.passed.*")
    add("--keep-runs", metavar="N", type=int, default=20, help="earlier runs' reports kept per suite under <report-dir>/runs/ (default 20; 0 keeps none; the last passed run is always kept)")
    add("--keep-episodes", metavar="N", type=int, default=3, help="live suites: the newest N kept runs keep their episodes (screenshots, trajectories; a MiniWoB++ run's take about 200-300 MB); older kept runs keep their reports only (default 3; the last passed run keeps its episodes)")
    add("--report-json", metavar="PATH", default=None, help="also write the JSON report here ('{suite}' in PATH is replaced by the suite name)")
    add("--report-md", metavar="PATH", default=None, help="also write the Markdown summary here ('{suite}' is replaced too)")
    add("--report-html", metavar="PATH", default=None, help="also write the HTML report here ('{suite}' is replaced too)")
    add("--report-images", choices=PICTURE_MODES, default="link", help="the HTML report's screenshots: 'link' shows the screenshot files where the run read them (default: costs nothing per case), 'embed' puts a thumbnail of each into the page, one self-contained file for a CI artifact (made when the report is written: a 4K PNG costs 100-200 ms of CPU to decode, docs/bench.md)")
    add("--baseline", metavar="OLD.json", default=None, help="compare with an earlier JSON report at the end (exact McNemar per category) and fail the gate on a significant regression")
    add("--baseline-min-drop", metavar="X", type=float, default=0.0, help="with --baseline: only a drop of at least X (0..1) counts as a regression")
    add("--device", default="cpu", help="hf: models: cpu, cuda, cuda:N, mps or auto (default cpu)")
    add("--dtype", default="auto", help="hf: models: auto (the checkpoint's own), float32, float16, bfloat16")
    add("--batch-size", metavar="N", type=int, default=1, help="hf: models: generate up to N cases in one batch per worker (needs --concurrency >= N)")
    add("--cache", choices=MODES, default=DEFAULT_MODE, help="the response cache: resume (default: store every reply, read back only the replies of the run this one resumes: --lf, or after an incomplete run), on (also reuse replies recorded by earlier runs of the same model, endpoint and settings), off, read (reuse, never write), write (never read), refresh (call the model and overwrite)")
    add("--cache-dir", metavar="DIR", default=None, help=f"folder of the response cache ({FILENAME}); default: the report folder")
    add("--repeats", metavar="K", type=int, default=1, help="ask the model K times per case (each attempt its own call); reports avg@k, pass@k, spread and flakiness")
    add("--attempt-strategy", choices=("avg", "pass"), default="avg", help="with --repeats: 'avg' runs all K attempts, 'pass' stops at the first hit (pass@k)")
    add("--min-accuracy", metavar="X", type=float, default=None, help="gate: fail the run when overall accuracy is below X (0..1); replaces the suite's gate accuracy")
    add("--gate-metric", choices=("accuracy", "pass@k", "mean_score"), default=None, help="what the gate thresholds apply to: accuracy (avg@k with --repeats; for live suites the success rate), pass@k, or mean_score (live suites: the mean of the episodes' scores). Default: the suite's gate.metric, else its headline figure")
    add("--max-steps", metavar="N", type=int, default=None, help="live tasks: the step budget of an episode (default: the suite's max_steps, else 15)")
    add("--runner", choices=tuple(live_runners.RUNNERS), default=None, help="live tasks: drive the model as this runner does (its prompt, history, reading, stop rules; docs/live.md, Runners); default: the runner of the model's profile, else guitest")
    add("--history-images", metavar="N", type=int, default=None, help="live tasks: earlier screenshots each step sends besides the current one (default: the suite's settings.history_images, else the runner's own: 4 for uitars15 and the Qwen runners, 3 for prompt-agent, 0 for guitest)")
    add("--success-rule", choices=miniwob_rules.RULES, default=None, help="MiniWoB++ suites: when an episode is a success (default: the suite's settings.success_rule, else binary): binary (raw reward 1, or the task's threshold for the 5 continuous tasks; Farama's miniwob) or browsergym (raw reward > 0, as BrowserGym counts it); docs/live.md")
    add("--env-url", metavar="URL", action="append", default=None, help="live desktop tasks: a machine speaking the OSWorld / Windows Agent Arena server protocol, e.g. http://HOST:5000; repeat it for a pool (one episode per machine at a time)")
    add("--env-provider", metavar="NAME", default=None, help="live desktop tasks: revert the machine to its snapshot before each episode through desktop-env's provider NAME (vmware, virtualbox, docker, aws, azure, ...; or module:Class), as OSWorld's harness does (docs/live.md)")
    add("--env-provider-option", metavar="KEY=VALUE", action="append", default=None, help="an option of --env-provider as DesktopEnv takes it: path_to_vm, snapshot_name, region, headless, os_type, screen_size, ready_timeout (repeatable)")
    add("--allow-unknown-state", action="store_true", default=False, help="let the gate pass on live episodes that ran on a machine nothing reset before them (reset: none); by default such a run fails the gate")
    add("--gate-exit-code", metavar="N", type=int, default=gate_mod.DEFAULT_EXIT_CODE, help=f"exit status of a failed gate (default {gate_mod.DEFAULT_EXIT_CODE})")


class GuitestHookSpecs:
    """Hooks guitest calls; implement them in a conftest.py or a plugin."""

    @pytest.hookspec(firstresult=True)
    def pytest_guitest_make_model(self, spec: str, settings: Settings, profile: Any, profile_reason: str) -> Model | None:
        """Return a guitest Model for ``--model=spec``, or None to leave it to guitest.

        The conftest-level way to plug in a custom adapter (docs/adapters.md).
        """


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(GuitestHookSpecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "guitest(**tags): a guitest benchmark case and its tags, e.g. -m \"guitest(platform='windows')\"")
    state = GuitestState(config)
    config.stash[STATE] = state
    config.pluginmanager.register(state, "guitest-state")
    config.pluginmanager.register(SummaryFirst(state), "guitest-summary-first")


def pytest_unconfigure(config: pytest.Config) -> None:
    _resume_gc(config, freeze=False)  # collection ended early (an error): never leave the collector off
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name in SUITE_FILENAMES:
        _pause_gc(parent.config)
        return SuiteFile.from_parent(parent, path=file_path)
    return None


GC_PAUSED = pytest.StashKey[bool]()


def _pause_gc(config: pytest.Config) -> None:
    """Pause Python's cyclic garbage collector from the first suite file until collection ends.

    A suite makes hundreds of thousands of long-lived objects (rows, samples, items), and
    the collector traverses all of them again and again while they are made: about a
    third of the time it takes to collect 100,000 cases (docs/bench.md). Sessions without
    suite files are left alone, and so is a collector the user switched off.
    """
    if not config.stash.get(GC_PAUSED, False) and gc.isenabled():
        gc.disable()
        config.stash[GC_PAUSED] = True


def _resume_gc(config: pytest.Config, freeze: bool = True) -> None:
    """Switch the collector back on; with ``freeze``, first move every object so far into the permanent
    generation (:func:`gc.freeze`): the collected items live as long as the session, so later collections
    during the run need not traverse them either."""
    if config.stash.get(GC_PAUSED, False):
        config.stash[GC_PAUSED] = False
        if freeze:
            gc.freeze()
        gc.enable()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``@guitest.samples(...)`` test functions: one case per sample, parametrized as ``sample``."""
    spec = getattr(metafunc.function, "_guitest_samples", None)
    if spec is None:
        return
    if "sample" not in metafunc.fixturenames:
        pytest.fail(f"{metafunc.definition.nodeid}: @guitest.samples needs a 'sample' argument", pytrace=False)
    try:
        samples = load_samples(spec, Path(metafunc.definition.path).parent)
    except SuiteError as exc:
        pytest.fail(f"guitest: {exc}", pytrace=False)
    metafunc.parametrize("sample", [pytest.param(s, id=s.id, marks=pytest.mark.guitest(**s.tags)) for s in samples])


class ModelHandle:
    """The ``guitest_model`` fixture: the run's model, for test functions written in Python."""

    def __init__(self, state: "GuitestState", node: pytest.Item) -> None:
        self._state = state
        self._node = node

    @property
    def adapter(self) -> Model:
        """The model adapter itself (four stages, see docs/adapters.md)."""
        assert self._state.model is not None
        return self._state.model

    def click(self, sample: Sample) -> Point | None:
        """Ask the model where to click for ``sample``; the point in pixels of the original screenshot, or None
        when the reply had none. The case's verdict and evidence go into the run's report."""
        result = run_case(sample, self.adapter, None, None, self._state.options)
        self._node.guitest_result = result  # type: ignore[attr-defined]
        if result["verdict"] == ERROR:
            pytest.fail(f"{sample.id}: error: {result.get('error')}", pytrace=False)
        prediction = result.get("prediction")
        return Point(*prediction["pixel"]) if prediction else None

    @staticmethod
    def box(sample: Sample) -> Region:
        """The sample's truth box; ``point in box`` is a hit, edges included."""
        return region(sample)


@pytest.fixture
def guitest_model(request: pytest.FixtureRequest) -> ModelHandle:
    """The model given with --model, for test functions written in Python (one adapter per worker)."""
    state = request.config.stash[STATE]
    if state.model is None:
        pytest.fail(f"no model given: pass --model=SPEC ({SPECS})", pytrace=False)
    return ModelHandle(state, request.node)


class CaseError(Exception):
    """A case ended in the ``error`` outcome; its message is the whole story."""


class SuiteFile(pytest.File):
    """A ``suite.yaml``: one item per sample of its data set."""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        try:
            suite = load_suite(self.path)
            data_dir = locate(str(suite.folder), suite.data, str(state.data_root), state.data_root_source, str(self.path))
            samples = read_suite_samples(suite, data_dir)
            task = load_task(suite.task, suite.settings, str(suite.path))
            live = state.live_setup(suite, task) if suite.task == "live" else None
        except SuiteError as exc:  # may quote the data: an escape sequence in a row must not reach the terminal
            raise self.CollectError(printable(f"guitest: {exc}")) from None
        state.data_read[self.nodeid] = describe_data(str(suite.folder), suite.data, str(state.data_root), state.data_root_source)
        template = prompt_text(suite)
        marks: dict[tuple[tuple[str, str], ...], pytest.MarkDecorator] = {}  # one marker per distinct set of tags
        for sample in samples:
            item = GuitestItem.from_parent(self, name=sample.id, sample=sample, prompt=template, task=task, live=live)
            reason = skip_reason(state.model, sample) if live is not None and state.model is not None else None
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
        self.result: dict[str, Any] | None = None
        self.position: int | None = None  # in session.items, set when collection is final

    def job(self) -> dict[str, Any]:
        state = self.config.stash[STATE]
        if self.live is not None:
            return run_live_case(self.sample, state.model, self.live, state.environments, state.options)
        return run_case(self.sample, state.model, self.task, self.prompt, state.options)

    def runtest(self) -> None:
        self.result = self.config.stash[STATE].result_for(self)
        if getattr(self.config.option, "xmlpath", None):  # JUnit XML (--junitxml) shows the evidence per case
            self.user_properties.append(("guitest.verdict", self.result["verdict"]))
            self.user_properties.append(("guitest.prediction", json.dumps(self.result.get("prediction"))))
            self.user_properties.extend((f"guitest.tag.{k}", v) for k, v in sorted(self.sample.tags.items()))
        if self.result["verdict"] == ERROR:
            raise CaseError(self.result.get("error") or "error")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, CaseError):  # the message may quote an endpoint's or a machine's body
            return printable(f"{self.sample.id} ({self.sample.source}): error: {excinfo.value}")
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # a line number (0: the suite file) is needed by pytest's report of a skipped item
        return self.path, 0, printable(f"{self.sample.id}: {self.sample.instruction}")


class SummaryFirst:
    """The part of the summary that comes before pytest's own sections (a plugin of its own: one class cannot hold
    two implementations of one hook)."""

    def __init__(self, state: "GuitestState") -> None:
        self.state = state

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        """Before pytest's own sections: say once that an endpoint was unreachable, and leave the cases that were
        therefore not asked out of the failures listed one by one (they are still failed, counted, and --lf runs them)."""
        tr = terminalreporter
        down = next((r["run"]["unreachable"] for r in self.state.reports.values() if r["run"].get("unreachable")), None)
        failed = tr.stats.get("failed", [])
        hidden = [r for r in failed if getattr(r, "guitest", None) and r.guitest.get("unreachable")]
        if down is not None:
            n = sum(r["run"]["unreachable"]["cases_not_asked"] for r in self.state.reports.values() if r["run"].get("unreachable"))
            state = down.get("state", "unreachable")
            tr.write_sep("=", f"guitest: endpoint {state}", red=True, bold=True)
            tr.write_line(printable(f"{down['url']} is {state} ({down['reason']})."), red=True, bold=True)
            tr.write_line(f"{n} case(s) were not asked and are errors: start the endpoint (or check --base-url), then re-run them with --lf.")
        if hidden:
            tr.stats["failed"] = [r for r in failed if r not in hidden]
        try:
            return (yield)
        finally:
            if hidden:
                tr.stats["failed"] = failed


STATE = pytest.StashKey["GuitestState"]()
# Cases run ahead of pytest in a pool of --concurrency threads plus a few spare ones, which
# read screenshots, build requests, judge replies and write the cache while the others
# hold the --concurrency request slots; at most LOOKAHEAD x --concurrency results are
# started and not yet taken (docs/bench.md: fewer spare threads or a shorter lookahead
# leave slots empty at 100 ms replies; more threads cost more in interpreter-lock hand-offs).
SPARE_THREADS = 8
LOOKAHEAD = 4


class GuitestState:
    """Per-process state: the model, the case runner, and (on the controller) the results."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        opt = config.option
        self.data_root, self.data_root_source = resolve_root(opt.data_root)
        urls = tuple(opt.base_url or ())
        self.settings = Settings(
            temperature=opt.temperature,
            max_tokens=opt.max_tokens,
            timeout=opt.timeout,
            retries=max(opt.retries, 0),
            concurrency=opt.concurrency,
            seed=opt.seed,
            base_url=urls[0] if urls else None,
            base_urls=urls,
            api_key_env=opt.api_key_env,
            min_pixels=opt.min_pixels,
            max_pixels=opt.max_pixels,
            max_image_bytes=opt.max_image_bytes,
            device=opt.device,
            dtype=opt.dtype,
            batch_size=opt.batch_size,
            http_client=opt.http_client,
            resize=opt.resize,
        )
        if opt.concurrency < 1:
            raise pytest.UsageError("--concurrency must be at least 1")
        if opt.keep_episodes < 0:
            raise pytest.UsageError("--keep-episodes must be 0 or more")
        if opt.keep_runs < 0:
            raise pytest.UsageError("--keep-runs must be 0 or more")
        # requests in flight in this process: --concurrency per endpoint
        self.concurrency = opt.concurrency * max(len(urls), 1)
        if opt.baseline and not Path(opt.baseline).is_file():
            raise pytest.UsageError(f"--baseline={opt.baseline}: no such file (give the JSON report of an earlier run)")
        if opt.repeats < 1:
            raise pytest.UsageError("--repeats must be at least 1")
        if opt.history_images is not None and opt.history_images < 0:
            raise pytest.UsageError("--history-images must be 0 or more")
        if opt.min_accuracy is not None and not 0 <= opt.min_accuracy <= 1:
            raise pytest.UsageError(f"--min-accuracy={opt.min_accuracy} is not between 0 and 1 (accuracy is a fraction: 0.85, not 85)")
        if opt.gate_exit_code in range(0, 6):
            raise pytest.UsageError(f"--gate-exit-code={opt.gate_exit_code} collides with pytest's own exit codes 0-5; pick another")
        try:
            provider_mod.parse_pairs(opt.env_provider_option)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.model: Model | None = None
        if opt.model:
            try:
                profile, reason = choose_profile(opt.model, opt.model_profile)
                custom = config.hook.pytest_guitest_make_model(spec=opt.model, settings=self.settings, profile=profile, profile_reason=reason)
                if custom is not None and not isinstance(custom, Model):
                    raise GuitestError(f"pytest_guitest_make_model returned {type(custom).__name__}, not a guitest.models.base.Model")
                self.model = custom or load_model(opt.model, self.settings, profile=opt.model_profile, backoff=opt.retry_backoff)
                if opt.model_config:
                    from .models.pipeline import apply_config

                    self.model = apply_config(self.model, opt.model_config)
            except GuitestError as exc:
                raise pytest.UsageError(f"--model={opt.model}: {exc}") from None
        self.cache_folder = Path(opt.cache_dir) if opt.cache_dir else self._report_dir()
        self.run: cache_mod.Run | None = self._open_run()
        self.want_thumbnails = self.model is not None  # a picture never decodes on the request path (guitest.thumbnails)
        self._cache: ResponseCache | None = None
        self._cache_lock = threading.Lock()
        self._prefetcher: Prefetcher | None = None
        self._options: RunOptions | None = None
        self._environments: Environments | None = None
        self.slots = threading.BoundedSemaphore(self.concurrency)  # model calls in flight in this process
        self._jobs: list[tuple[int, Any] | None] = []
        self._session: pytest.Session | None = None
        self._xdist_queue: Any = None
        # controller side
        self.selected: dict[str, list[str]] = {}
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.reports: dict[str, dict[str, Any]] = {}
        self.paths: dict[str, list[Path]] = {}
        self.kept: dict[str, list[str]] = {}  # per suite: this run's copies (history)
        self.data_read: dict[str, str] = {}  # per suite file collected here: where its data came from
        self.runner_lines: dict[str, None] = {}  # the runners the collected live suites drive the model with, for the header
        self.baseline_text: dict[str, str] = {}
        self.endpoint_stats: list[list[dict[str, Any]]] = []  # per worker (or this process), what each endpoint did
        self.started = time.time()
        # this run's folder under runs/<suite>/ (the controller's, so workers write live episodes into the same one)
        self.run_stamp = config.workerinput["guitest_stamp"] if self.is_worker else history.stamp(self.started)  # type: ignore[attr-defined]
        self.skipped: set[str] = set()  # guitest cases a baseline cannot run (skipped, not missing)
        self._finished = False

    def _open_run(self) -> "cache_mod.Run | None":
        """This run in the cache's ledger (None when no cache is used): a worker takes the controller's; the
        controller resumes the previous run of this model and settings (--lf, or after an incomplete run) or starts one."""
        opt = self.config.option
        if self.model is None or not self.model.cacheable or opt.cache == "off" or opt.collectonly:
            return None
        if self.is_worker:
            given = self.config.workerinput.get("guitest_run")  # type: ignore[attr-defined]
            return cache_mod.Run(given["id"], given.get("resumes")) if given else None
        scope = ResponseCache.key({**key_parts(self.model, identity=False), "base_urls": self.model.settings.public()["base_urls"]})
        try:
            return cache_mod.open_run(self.cache_folder, scope, resume=bool(self.config.getoption("lf", False)))
        except (OSError, sqlite3.Error) as exc:
            raise pytest.UsageError(f"--cache-dir={self.cache_folder}: cannot open the response cache ({exc}); give a writable folder or pass --cache=off") from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: every worker runs as part of the controller's run (it reads and writes that run's replies)."""
        node.workerinput["guitest_stamp"] = self.run_stamp
        if self.run is not None:
            node.workerinput["guitest_run"] = {"id": self.run.id, "resumes": self.run.resumes}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        stats = getattr(node, "workeroutput", {}).get("guitest_endpoints")
        if stats:
            self.endpoint_stats.append(stats)

    @property
    def options(self) -> RunOptions:
        """How every case of this session runs (made once, on first use)."""
        if self._options is None:
            opt = self.config.option
            self._options = RunOptions(
                repeats=opt.repeats,
                strategy=opt.attempt_strategy,
                thumbnail=self.thumbnail if self.want_thumbnails else None,
                cache=self.cache,
                slot=self.slots,
                max_steps=opt.max_steps,
            )
        return self._options

    @property
    def environments(self) -> Environments:
        """This process's environments of live tasks (one per concurrent episode, made on first use)."""
        with self._cache_lock:
            if self._environments is None:
                self._environments = Environments(self.concurrency)
            return self._environments

    def live_setup(self, suite: Suite, task: Task) -> LiveSetup:
        """How a live suite's cases run here: its backend and options (``--env-url`` machines and ``--env-provider`` added), its budget, and
        the folder its episodes are written to (in this run's folder beside the report)."""
        opt = self.config.option
        options = provider_mod.with_command_line(suite.env_options, opt.env_provider, opt.env_provider_option) if suite.env == "desktop" else dict(suite.env_options)
        if opt.env_url:
            options["urls"] = list(opt.env_url)
        report_dir = self._report_dir()
        folder = history.run_folder(report_dir, suite.name, self.run_stamp) if opt.keep_runs > 0 else report_dir / "episodes" / suite.name
        rule = miniwob_rules.choose(suite.env or "", task.settings, opt.success_rule, str(suite.path))
        self._say_runner(self.history_images(task))
        return LiveSetup(
            env=suite.env or "",
            env_options=options,
            base_dir=str(suite.folder),
            max_steps=suite.max_steps,
            episodes_dir=str(folder / "episodes" if opt.keep_runs > 0 else folder),
            report_dir=str(report_dir),
            history_images=self.history_images(task),
            success_rule=rule.name if rule else None,
            runner=opt.runner,
        )

    def _say_runner(self, history_images: int | None) -> None:
        """Remember the header line naming the runner a live suite drives the model with."""
        if self.model is None:
            return
        runner, why = live_runners.for_model(self.model, self.config.option.runner)
        self.runner_lines["guitest " + runner_line({**runner.describe(history_images), "chosen": why})] = None

    def history_images(self, task: Task) -> int | None:
        """The earlier screenshots a live step sends: ``--history-images``, else the suite's setting, else None (the runner's own)."""
        chosen = self.config.option.history_images
        if chosen is None:
            chosen = task.settings.get("history_images")
        return None if chosen is None else int(chosen)

    # -- start ---------------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        model = self.model.describe() if self.model else None
        lines = [f"guitest {__version__}"]
        if model:
            extra = "".join(f", {k} {model[k]}" for k in ("base_url", "api_key") if k in model)
            s = self.model.settings  # a --model-config may have changed them
            shown = [("temperature", f"temperature {s.temperature:g}"), ("max_tokens", f"max tokens {s.max_tokens}"), ("timeout", f"timeout {s.timeout:g} s"),
                     ("retries", f"retries {s.retries}"), ("seed", f"seed {s.seed}"), ("concurrency", f"concurrency {s.concurrency}")]
            used = self.model.uses
            lines.append(
                f"guitest model: {model['spec']} ({model['adapter']}{extra}); "
                + ", ".join(text for name, text in shown if (used is None and name != "seed") or (used is not None and name in used))
            )
            profile = self.model.profile
            sizing = profile.sizing
            size_rule = (
                f"smart_resize(factor {sizing.factor}, min_pixels {s.min_pixels or sizing.min_pixels}, max_pixels {s.max_pixels or sizing.max_pixels})"
                if sizing.kind == "smart_resize"
                else f"as is{f', at most {s.max_pixels} pixels' if s.max_pixels else ''}{f', at least {s.min_pixels} pixels' if s.min_pixels else ''}"
            )
            lines.append(
                f"guitest profile: {profile.name} ({self.model.profile_reason}): answers in {profile.space} coordinates, "
                f"read as {', '.join(style for style, _ in profile.styles)}; screenshots sent {size_rule}"
                + (f", at most {s.max_image_bytes} bytes" if s.max_image_bytes else "")
                + (" (by the model server's processor: files sent as they are, --resize=auto)" if model.get("image_sizing") else "")
            )
            cache_line = self._cache_header()
            if cache_line:
                lines.append(cache_line)
            if (config.option.env_url or config.option.env_provider) and not config.option.collectonly:
                from .envs.desktop import machines_header

                lines.append(machines_header(config.option.env_url or [], config.option.env_provider))
        if self.config.option.success_rule:
            lines.append(miniwob_rules.header_line(self.config.option.success_rule))
        return lines

    def _cache_header(self) -> str | None:
        opt = self.config.option
        if self.model is None or not self.model.cacheable:
            return None
        if opt.cache == "off":
            return "guitest cache: off: every case asks the model"
        where = self.cache_folder / FILENAME
        if self.run is not None and self.run.resumes:
            r = self.run.resumes
            started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["started"]))
            return f"guitest cache: {opt.cache}: this run resumes run {r['id']} (started {started}; {r['why']}): the replies it recorded in {where} are read back, not asked again"
        if opt.cache in ("on", "read"):
            return f"guitest cache: {opt.cache}: replies recorded by earlier runs of this model, endpoint and settings in {where} are REUSED, not asked again"
        run = f" (run {self.run.id})" if self.run else ""
        return f"guitest cache: {opt.cache}: a fresh run{run}: every case asks the model; replies are stored in {where} (read back only when this run is resumed)"

    def pytest_report_collectionfinish(self, config: pytest.Config, items: list[pytest.Item]) -> list[str]:
        """Where each collected suite reads its data (a suite with its own data names no data root)."""
        return [f"guitest data: {key}: {where}" for key, where in sorted(self.data_read.items())] + list(self.runner_lines)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._session = session
        # One pass over the items (there may be 100,000), each node id read once: every guitest item's
        # position and what runs its case, looked up by position for the lookahead (built here, since per
        # item it would cost more than the case); on the controller, the cases selected per suite.
        self._jobs = jobs = [None] * len(session.items)
        controller = not self.is_worker
        case_ids: list[str] = []
        for n, item in enumerate(session.items):
            if isinstance(item, GuitestItem):
                item.position = n
                if item.get_closest_marker("skip") is None:  # a skipped case is never run, so never started ahead
                    jobs[n] = (n, item.job)
                if controller:
                    case_ids.append(item.nodeid)
            elif controller:
                callspec = getattr(item, "callspec", None)
                if callspec is not None and isinstance(callspec.params.get("sample"), Sample):
                    path = item.nodeid.partition("::")[0]
                    self.selected.setdefault(path, []).append(f"{path}::{callspec.params['sample'].id}")
        self._note_selected(case_ids)
        _resume_gc(self.config)
        cases = sum(j is not None for j in jobs)
        if cases and self.model is None and not self.config.option.collectonly and controller:
            raise pytest.UsageError(_no_model_message(cases))
        if controller:
            self._check_machines()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under ``--dist load`` (what ``-n`` uses by default): xdist's scheduling with every worker's queue kept
        as deep as its lookahead, so each worker can keep ``--concurrency`` requests in flight (guitest.scheduling)."""
        if self.model is None or config.getvalue("dist") != "load":
            return None
        from .scheduling import make

        return make(config, log, depth=LOOKAHEAD * self.concurrency + 1)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.selected:
            self._note_selected(i for i in ids if _suite_key(i) is not None)
            if self.selected and self.model is None:
                raise pytest.UsageError(_no_model_message(sum(map(len, self.selected.values()))))
            self._check_machines()

    def _check_machines(self) -> None:
        """Live desktop suites run on machines given by --env-url (or on a desktop guitest starts, desktop_local):
        selecting their cases without one is a usage error that says how to get a machine; listing them is not."""
        from .envs.desktop import NO_MACHINE

        opt = self.config.option
        if opt.collectonly or opt.env_url or opt.env_provider or self.model is None:
            return
        for key in self.selected:
            suite = _load_suite_quietly(Path(self.config.rootpath, key))
            if suite is not None and suite.task == "live" and suite.env == "desktop" and not suite.env_options.get("local_desktop") and not suite.env_options.get("provider"):
                raise pytest.UsageError(f"{key}: {NO_MACHINE}")

    def _note_selected(self, nodeids: Any) -> None:
        for nodeid in nodeids:
            key = _suite_key(nodeid)
            if key is not None:
                self.selected.setdefault(key, []).append(nodeid)

    # -- running -------------------------------------------------------------------------------

    @property
    def cache(self) -> ResponseCache | None:
        """This process's response cache (opened on first use), or None when it is off or the model costs nothing."""
        opt = self.config.option
        if opt.cache == "off" or self.model is None or not self.model.cacheable:
            return None
        with self._cache_lock:
            if self._cache is None:
                self._cache = ResponseCache(self.cache_folder, opt.cache, self.run.id if self.run else "")
            return self._cache

    def _report_dir(self) -> Path:
        opt = self.config.option
        return Path(opt.report_dir) if opt.report_dir else Path(self.config.rootpath, "reports")

    def thumbnail(self, path: str, image: Any) -> str:
        """The report's picture of a screenshot: its path, or a thumbnail when --report-images=embed and the pixels are decoded already."""
        return picture(path, image, self.config.option.report_images)

    def result_for(self, item: GuitestItem) -> dict[str, Any]:
        """Run ``item``'s case (and start the next few in the background); its result."""
        if self._prefetcher is None:
            c = self.concurrency
            self._prefetcher = Prefetcher(c + min(c, SPARE_THREADS), window=LOOKAHEAD * c)
        if item.position is None:  # not among the session's items (a plugin ran it on its own): no lookahead
            return self._prefetcher.result(("item", item.nodeid), item.job)
        return self._prefetcher.result(item.position, item.job, self._upcoming(item.position, self._prefetcher.window))

    def _upcoming(self, position: int, window: int) -> list[tuple[int, Any]]:
        """``(position, job)`` of the next ``window`` guitest items this process will run, as far as it knows."""
        jobs = self._jobs
        if self.is_worker:
            return [jobs[i] for i in self._xdist_pending(window) if 0 <= i < len(jobs) and jobs[i] is not None]  # type: ignore[misc]
        return [j for j in jobs[position + 1 : position + 1 + window] if j is not None]

    def _xdist_pending(self, limit: int) -> list[int]:
        """Indices xdist has queued on this worker (its ``WorkerInteractor``); empty if that cannot be read."""
        if self._xdist_queue is None:
            self._xdist_queue = next(
                (p for p in self.config.pluginmanager.get_plugins() if hasattr(p, "torun") and hasattr(p, "nextitem_index")),
                False,
            )
        interactor = self._xdist_queue
        if not interactor:
            return []
        try:
            with interactor.torun.lock() as queue:
                pending = [interactor.nextitem_index, *list(queue)[:limit]]
        except Exception:  # xdist internals changed: run without lookahead rather than fail
            return []
        return [i for i in pending if isinstance(i, int)]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        result = item.result if isinstance(item, GuitestItem) else getattr(item, "guitest_result", None)
        if call.when == "call" and result is not None:
            report.guitest = result
            if isinstance(item, GuitestItem):
                item.result = None  # the report carries it now; an item kept for the whole session need not
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> tuple[str, Any, Any] | None:
        result = getattr(report, "guitest", None)
        if report.when != "call" or not result or not report.passed:
            return None
        verdict = result["verdict"]
        category, letter, word = STATUS.get(verdict, ("passed", ".", "PASSED"))
        attempts = result.get("attempts")
        if attempts:  # the verbose word shows the attempts, e.g. "PARTIAL 2/3"
            hits = sum(a["verdict"] == HIT for a in attempts)
            return category, letter, f"{word} {hits}/{len(attempts)}"
        if verdict in STATUS:
            return category, letter, word
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, "guitest", None)
        if self.is_worker and result is not None:
            # xdist has sent it to the controller (trylast: after its own hook); the worker's terminal
            # reporter keeps every report for the session, so drop the result rather than hold them all
            del report.guitest
            return
        if not self.is_worker and report.skipped and _suite_key(report.nodeid):
            self.skipped.add(report.nodeid)  # a case a baseline cannot run: skipped with its reason, never missing
        if self.is_worker or report.when != "call" or not result:
            return
        key = _suite_key(report.nodeid) or report.nodeid.partition("::")[0]  # a suite file, or a Python test module
        self.results.setdefault(key, []).append(result)

    # -- the end -------------------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._finish_work()
        if self.is_worker or self.model is None or self.config.option.collectonly:
            return
        incomplete = gate_failed = False
        if not self.endpoint_stats:  # serial: this process asked the endpoints itself
            self.endpoint_stats.append(self.model.endpoint_stats())
        for key in sorted(set(self.selected) | set(self.results)):
            report = self._build(key)
            self._compare_baseline(report)
            self.reports[key] = report
            pictures = {r["id"]: r["thumbnail"] for r in self.results.get(key, []) if r.get("thumbnail")}
            self.paths[key] = self._write(report, pictures)
            incomplete |= not report["complete"]
            gate_failed |= bool(report["gate"]["failures"])
        if self.run is not None:
            interrupted = session.exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
            cache_mod.close_run(self.cache_folder, self.run.id, complete=not incomplete and not interrupted and bool(self.reports))
        if session.exitstatus == 0:
            if incomplete:
                session.exitstatus = INCOMPLETE_EXIT_CODE
            elif gate_failed:
                session.exitstatus = self.config.option.gate_exit_code

    def _finish_work(self) -> None:
        """Let running cases end and commit the cache, before the session's end is reported: an xdist worker
        says it has finished from inside this hook, and the controller may then end the process at any moment
        (a commit left for pytest_unconfigure was lost under load). A worker also sends what its endpoints did."""
        if self._finished:
            return
        self._finished = True
        if self._prefetcher is not None:
            self._prefetcher.close()
        if self._environments is not None:
            self._environments.close()
        if self._cache is not None:
            self._cache.close()
        if self.is_worker and self.model is not None:
            self.config.workeroutput["guitest_endpoints"] = self.model.endpoint_stats()  # type: ignore[attr-defined]

    def _build(self, key: str) -> dict[str, Any]:
        results = self.results.get(key, [])
        selected = [nodeid.split("::", 1)[1] for nodeid in self.selected.get(key, []) if nodeid not in self.skipped]
        python_suite = key.endswith(".py")
        if python_suite:  # selection by results: under -n the controller sees no collected samples (README)
            selected = sorted(set(selected) | {r["id"] for r in results})
        suite = None if python_suite else _load_suite_quietly(Path(self.config.rootpath, key))
        task = load_task(suite.task, suite.settings) if suite else load_task("grounding")
        model = self.model.describe()  # type: ignore[union-attr]
        merged_from = None
        rule = miniwob_rules.record(suite.env if suite and suite.task == "live" else None, task.settings, self.config.option.success_rule)
        if self.config.getoption("lf", False):
            previous = _previous_report(self._report_paths(suite.name if suite else Path(key).parent.name)[0][0])
            same_rule = previous is not None and previous.get("run", {}).get("success_rule") == rule.get("success_rule")  # never a report of two rules
            if previous and previous.get("model") == model and previous.get("suite", {}).get("path") == key and same_rule:
                results, selected = report_mod.merge_previous(previous, results, selected)
                merged_from = previous.get("run", {}).get("started")
        got = {r["id"] for r in results}
        missing = sorted(i for i in selected if i not in got)
        limits = gate_mod.thresholds(suite.gate if suite else {}, self.config.option.min_accuracy, self.config.option.gate_metric, task.gate_metric)
        report = report_mod.build(
            suite={"name": suite.name if suite else (Path(key).stem if python_suite else Path(key).parent.name), "path": key, "format": suite.format if suite else ("python" if python_suite else ""), "task": suite.task if suite else "grounding", "settings": task.settings,
                   **(live_record(suite, self.config.option.max_steps, self.model, self.config.option.runner, self.history_images(task)) if suite else {})},
            model=model,
            results=results,
            n_selected=len(selected),
            missing=missing,
            tags=list(suite.tables) if suite else sorted({t for r in results for t in r.get("tags", {})}),
            cross=[list(c) for c in suite.cross] if suite else [],
            average=suite.average if suite else "micro",
            macro_over=suite.macro_over if suite else None,
            gate={},
            task=task,
            run={
                "data_root": str(self.data_root),
                "data_root_source": self.data_root_source,
                "data": describe_data(str(suite.folder), suite.data, str(self.data_root), self.data_root_source) if suite else None,
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
                "seconds": round(time.time() - self.started, 3),
                "workers": getattr(self.config.option, "numprocesses", None) or 0,
                "pytest_args": scrub_args(self.config.invocation_params.args),
                "merged_into_report_of": merged_from,
                "cache": self._cache_record(results),
                **self._endpoint_record(results),
                **rule,
            },
        )
        failures, notes = gate_mod.check(limits, report, self.config.option.allow_unknown_state)
        report["gate"] = {"thresholds": limits, "failures": failures, "notes": notes, "passed": (not failures) if (limits["accuracy"] is not None or limits["by"]) else None}
        return report

    def _cache_record(self, results: list[dict[str, Any]]) -> dict[str, Any]:
        """What the report says of the cache: the mode, the file, this run (and the one it resumes), and how many
        attempts and cases were answered from it, recorded when and by which runs."""
        assert self.model is not None
        if not self.model.cacheable:
            return {"mode": "not used (this model costs nothing)", "attempts_answered_from_cache": 0, "cases_answered_from_cache": 0}
        cached = [r for r in results if r.get("cached")]
        record: dict[str, Any] = {
            "mode": self.config.option.cache,
            "path": str(self.cache_folder / FILENAME) if self.config.option.cache != "off" else None,
            "run": self.run.id if self.run else None,
            "resumes": self.run.resumes if self.run else None,
            "attempts_answered_from_cache": sum(r.get("cached_attempts", 1) for r in cached),
            "cases_answered_from_cache": len(cached),
        }
        if cached:
            times = sorted(r["cached_recorded"] for r in cached if r.get("cached_recorded"))
            record["recorded"] = {"first": times[0], "last": times[-1]} if times else None
            record["recorded_by_runs"] = sorted({run for r in cached for run in r.get("cached_runs", ()) if run})
        return record

    def _endpoint_record(self, results: list[dict[str, Any]]) -> dict[str, Any]:
        """Per endpoint, the replies and failures every process saw, and the one that was unreachable (if any)."""
        assert self.model is not None
        merged: dict[str, dict[str, Any]] = {}
        for stats in self.endpoint_stats:
            for e in stats:
                row = merged.setdefault(e["url"], {"url": e["url"], "replies": 0, "failures": 0, "down": None})
                row["replies"] += e["replies"]
                row["failures"] += e["failures"]
                row["down"] = row["down"] or e["down"]
        out: dict[str, Any] = {}
        if merged:
            out["endpoints"] = [merged[url] for url in sorted(merged)]
        not_asked = [r["unreachable"] for r in results if r.get("unreachable")]
        if not_asked:
            out["unreachable"] = {**not_asked[0], "cases_not_asked": len(not_asked)}
        if self.run is not None and self.model.identity():
            out["served_model"] = self.model.identity()
        return out

    def _compare_baseline(self, report: dict[str, Any]) -> None:
        """With --baseline: compare, keep the table for the summary, and turn significant regressions into gate failures."""
        path = self.config.option.baseline
        if not path:
            return
        try:
            old = compare_mod.load_report(path)
        except compare_mod.ReportError as exc:
            report["gate"]["failures"].append(f"--baseline: {exc}")
            return
        result = compare_mod.compare(old, report, min_drop=self.config.option.baseline_min_drop)
        report["baseline"] = {"path": str(path), "regressions": result["regressions"], "improvements": result["improvements"]}
        self.baseline_text[report["suite"]["path"]] = compare_mod.format_text(result)
        for row in result["regressions"]:
            report["gate"]["failures"].append(f"regression against {path}: {row}")
        if result["regressions"]:
            report["gate"]["passed"] = False

    def _report_paths(self, name: str) -> tuple[list[Path], list[Path], list[Path]]:
        """Where the JSON, Markdown and HTML reports of suite ``name`` go: the report folder, then the exact paths asked for."""
        opt = self.config.option
        report_dir = self._report_dir()
        json_paths = [report_dir / f"{name}.json"]
        md_paths = [report_dir / f"{name}.md"]
        html_paths = [report_dir / f"{name}.html"]
        several = len(set(self.selected) | set(self.results)) > 1
        for option, paths in ((opt.report_json, json_paths), (opt.report_md, md_paths), (opt.report_html, html_paths)):
            if option:
                paths.append(Path(_per_suite(option, name, several)))
        return json_paths, md_paths, html_paths

    def _write(self, report: dict[str, Any], pictures: dict[str, str]) -> list[Path]:
        json_paths, md_paths, html_paths = self._report_paths(report["suite"]["name"])
        problems = report_mod.validate(report)
        if problems:  # a bug in guitest, not in the user's input: say so loudly, still write the data
            report["schema_problems"] = problems
        written = []
        for path in json_paths:
            report_mod.write_json(report, path)
            written.append(path)
        text = report_mod.markdown(report)
        for path in md_paths:
            report_mod.write_text(path, text)
            written.append(path)
        if self.config.option.report_images == "embed":
            pictures = embed(pictures)
        files_dir = self._report_dir().resolve()  # the episodes' screenshots are named relative to the report folder

        def page(folder: Path) -> str:
            return html_report.render(report, pictures, folder, files_dir)

        pages: dict[Path, str] = {}  # one page per folder: linked screenshots are relative to it
        for path in html_paths:
            folder = path.parent.resolve()
            if folder not in pages:
                pages[folder] = page(folder)
            report_mod.write_text(path, pages[folder])
            written.append(path)
        good = history.passed(report)
        kept = history.keep(
            [json_paths[0], md_paths[0], html_paths[0]], self._report_dir(), report["suite"]["name"], self.run_stamp, good,
            self.config.option.keep_runs, page=page, keep_episodes=self.config.option.keep_episodes,
        )
        folders = sorted({str(p.parent) for p in kept if p.parent != self._report_dir()})
        self.kept[report["suite"]["path"]] = folders + ([f"{self._report_dir() / report['suite']['name']}.passed.*"] if good else [])
        return written

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        for key, report in self.reports.items():
            tr = terminalreporter
            tr.write_sep("=", f"guitest: {report['suite']['name']} ({key})")
            tr.write_line(f"model {report['model']['spec']}: {report['n_results']} results of {report['n_selected']} selected cases")
            if report["run"].get("data"):
                tr.write_line(f"data: {report['run']['data']}")
            if report["suite"].get("runner"):
                tr.write_line(runner_line(report["suite"]["runner"]))
            if report["run"].get("success_rule"):
                tr.write_line(miniwob_rules.summary_line(report["run"]["success_rule"]))
            cached = report_mod.cache_sentence(report)
            if cached:
                tr.write_line(cached, yellow=True, bold=True)
            for line in report_mod.text_table(report):
                tr.write_line(line)
            if not report["complete"]:
                shown = ", ".join(report["missing"][:5]) + (" ..." if len(report["missing"]) > 5 else "")
                tr.write_line(
                    f"INCOMPLETE: {report['n_selected'] - report['n_results']} selected case(s) produced no result "
                    f"(a worker crashed or the run stopped early): {shown}. Re-run them with --lf.",
                    red=True,
                    bold=True,
                )
            suspicious = report["notes"].get("coordinates_look_normalized", 0)
            if suspicious:
                tr.write_line(
                    f"warning: {suspicious} answer(s) gave coordinates within [0, 1] although profile {report['model']['profile']['name']} "
                    f"reads {report['model']['space']} coordinates: if the model answers normalized points, pass --model-profile "
                    "(e.g. generic) so they are not scored as pixels near the top-left corner",
                    yellow=True,
                )
            unknown = gate_mod.unknown_state_line(report)
            if unknown:
                tr.write_line(f"warning: {unknown}", yellow=True)
            gate = report["gate"]
            for note in gate["notes"]:
                tr.write_line(f"gate note: {note}", yellow=True)
            if gate["failures"]:
                tr.write_line("GATE FAILED: " + "; ".join(gate["failures"]) + (f" ({report_mod.cache_note(report)})" if cached else ""), red=True, bold=True)
            elif gate["passed"]:
                tr.write_line("gate passed: " + _describe_limits(gate["thresholds"]) + (f" ({report_mod.cache_note(report)})" if cached else ""), green=True)
            for problem in report.get("schema_problems", []):
                tr.write_line(f"guitest bug: the report does not match its schema: {problem}", red=True)
            if key in self.baseline_text:
                tr.write_sep("-", f"compared with --baseline {self.config.option.baseline}")
                for line in self.baseline_text[key].splitlines():
                    tr.write_line(line)
            tr.write_line("reports: " + ", ".join(str(p) for p in self.paths.get(key, [])))
            if self.kept.get(key):
                tr.write_line("kept: " + ", ".join(self.kept[key]) + " (each run's reports under runs/; *.passed.* is the last run that passed)")

    def close(self) -> None:
        if self._prefetcher is not None:
            self._prefetcher.close()
        if self._environments is not None:
            self._environments.close()
        if self._cache is not None:
            self._cache.close()  # a second close only closes this thread's connection
        if self.model is not None:
            self.model.close()


def _no_model_message(n: int) -> str:
    return f"{n} guitest case(s) selected but no model given: pass --model=SPEC ({SPECS})"


def _suite_key(nodeid: str) -> str | None:
    """The suite file part of a guitest node id, or None for other tests."""
    path, sep, _ = nodeid.partition("::")
    return path if sep and os.path.basename(path) in SUITE_FILENAMES else None


def _load_suite_quietly(path: Path) -> Suite | None:
    try:
        return load_suite(path)
    except SuiteError:
        return None


def _previous_report(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _per_suite(template: str, name: str, several: bool) -> str:
    if "{suite}" in template:
        return template.replace("{suite}", name)
    if several:
        root, ext = os.path.splitext(template)
        return f"{root}-{name}{ext}"
    return template


def _describe_limits(limits: dict[str, Any]) -> str:
    metric = limits.get("metric", "accuracy")
    parts = [f"{metric} >= {limits['accuracy']:.4f}"] if limits.get("accuracy") is not None else []
    parts += [f"{k} >= {v:.4f}" for k, v in sorted(limits.get("by", {}).items())]
    return ", ".join(parts)
