"""The run's configuration: every guitest option declared once, and the typed, checked configuration built from them.

Each option is a field of :class:`RunConfig` made with :func:`option`: its flag is the field's name
(``--base-url`` for ``base_url``), its parser the field's type (``int``, ``float``; a ``tuple`` is a
repeatable option, a ``bool`` a switch), and its ``check`` says which values are wrong and why. The
plugin hands :data:`OPTIONS` to pytest as they are (``pytest --help`` lists them in field order), and
:func:`from_values` turns what pytest parsed into a :class:`RunConfig`, or a :class:`ConfigError` that
names the option. To add an option, add a field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from ..cache import DEFAULT_MODE, FILENAME, MODES
from .. import backends
from ..errors import GuitestError
from ..reporting.gate import DEFAULT_EXIT_CODE, DEFAULT_MIN_PAIRED
from ..models import SPECS
from ..models.base import Settings
from ..reporting.thumbnails import MODES as PICTURE_MODES
from ..secrets import redact_urls
from . import sharding

#: a check: the option's flag and its value -> what is wrong with the value, or None
Check = Callable[[str, Any], "str | None"]


class ConfigError(GuitestError):
    """The run cannot start as asked: an option's value, the model, the cache folder, a missing machine. The message
    names the option and says what to do; the plugin shows it as pytest's usage error."""


def option(default: Any = None, *, help: str, metavar: str | None = None, choices: tuple[str, ...] | None = None, check: Check | None = None) -> Any:  # noqa: A002
    """A field of :class:`RunConfig` that is also a command-line option (see the module docstring)."""
    return field(default=default, metadata={"option": (help, metavar, choices, check)})


def _at_least_one(flag: str, value: int) -> str | None:
    return None if value >= 1 else f"{flag} must be at least 1"


def _shard(flag: str, value: str) -> str | None:
    try:
        sharding.parse(value)
    except sharding.ShardError as exc:
        return str(exc)
    return None


def _browser_endpoints(flag: str, value: tuple[str, ...]) -> str | None:
    bad = [v for v in value if not v.strip().startswith(("http://", "https://", "ws://", "wss://"))]
    return None if not bad else f"{flag}={redact_urls(bad[0])}: expected http://HOST:PORT (a Chromium's DevTools endpoint) or a ws:// URL (a Playwright browser server's)"


def _not_negative(flag: str, value: int) -> str | None:
    return None if value >= 0 else f"{flag} must be 0 or more"


def _fraction(flag: str, value: float) -> str | None:
    return None if 0 <= value <= 1 else f"{flag}={value} is not between 0 and 1 (accuracy is a fraction: 0.85, not 85)"


def _positive(flag: str, value: float) -> str | None:
    return None if value > 0 else f"{flag} must be more than 0"


def _prices(flag: str, value: str) -> str | None:
    return None if value == "off" or Path(value).is_file() else f"{flag}={value}: no such file (give a YAML or JSON file of prices, docs/costs.md, or off)"


def _a_file(flag: str, value: str) -> str | None:
    return None if Path(value).is_file() else f"{flag}={value}: no such file (give the JSON report of an earlier run)"


def _not_pytests_own(flag: str, value: int) -> str | None:
    return f"{flag}={value} collides with pytest's own exit codes 0-5; pick another" if value in range(0, 6) else None


def _backend_option(flag: str, value: Any) -> str | None:
    return backends.check_option(flag, value)  # the backend that reads the option checks it (its modules load only then)


def _known_runner(flag: str, value: str) -> str | None:
    from ..registry import RUNNERS

    return None if value in RUNNERS else f"{flag}={value}: {RUNNERS.unknown(value)}"


@dataclass(frozen=True)
class RunConfig:
    """How a run was asked for: guitest's options (the fields made with :func:`option`), then what pytest itself
    was told that the run depends on (the last fields, filled by the plugin)."""

    model: str | None = option(help=f"model under test: {SPECS}", metavar="SPEC")
    base_url: tuple[str, ...] = option(
        (),
        metavar="URL",
        help="base URL of an OpenAI-compatible endpoint (openai: models), e.g. http://host:8000/v1; give it several times to spread the run over several servers of the same model (--concurrency applies per endpoint)",
    )
    api_key_env: str = option("OPENAI_API_KEY", metavar="NAME", help="environment variable holding the API key (default OPENAI_API_KEY); the key is never printed")
    http_client: str = option(
        "stdlib",
        choices=("stdlib", "openai"),
        help="openai: models: send requests through guitest's lean standard-library client (default: about a quarter of the CPU per request, which keeps one process ahead of a fast endpoint at high --concurrency, docs/bench.md) or through the official openai client",
    )
    timeout: float = option(120.0, metavar="SECONDS", help="deadline of one model request, connect to last byte (default 120): a server that drips its reply cannot stretch it")
    retries: int = option(3, metavar="N", help="retries of a failed model request: 429, 5xx, timeouts, broken replies (default 3)")
    retry_backoff: float = option(0.5, metavar="SECONDS", help="first retry delay, doubled on each retry (default 0.5)")
    concurrency: int = option(8, metavar="N", check=_at_least_one, help="model requests in flight per worker (default 8)")
    temperature: float = option(0.0, help="sampling temperature (default 0)")
    max_tokens: int = option(512, metavar="N", help="reply token limit (default 512)")
    seed: int | None = option(help="seed for the random baseline and for endpoints that take one")
    model_config: str | None = option(
        metavar="FILE",
        help="a model config (YAML, schemas/model_config.schema.json): replace any of the stages build_prompt, preprocess, generate, postprocess, parse_response by a module:function, and pass generation settings to them (docs/pipeline.md)",
    )
    model_profile: str | None = option(
        metavar="NAME", help="the model family's conventions (prompt, image sizing, answer syntax, coordinate space); default: picked from the model name, see docs/profiles.md"
    )
    min_pixels: int | None = option(metavar="N", help="upscale screenshots below N pixels before sending (for smart_resize profiles: its min_pixels)")
    max_pixels: int | None = option(metavar="N", help="downscale screenshots above N pixels before sending (for smart_resize profiles: its max_pixels)")
    resize: str = option(
        "auto",
        choices=("auto", "client"),
        help="openai: models with a smart_resize profile (Qwen2.5-VL, UI-TARS-1.5): 'auto' sends the screenshot file as it is and lets the model server's processor make the smart_resize size (as it would anyway; recorded as sent_size) unless --min-pixels/--max-pixels ask for other limits; 'client' always resizes here first",
    )
    safety_checks: str = option(
        "acknowledge",
        choices=("acknowledge", "stop"),
        help="openai-cua: models: a computer_call with pending_safety_checks is run with the checks acknowledged (default, as OSWorld's runner does) or ends the episode as fail (stop); each check is in the step's notes and the policy in the report",
    )
    computer_tool: str = option(
        "auto",
        choices=("auto", "computer_20250124", "computer_20251124"),
        help="anthropic: models: the computer tool's version (and beta header); auto picks it from the model's name as Anthropic's documentation lists them (docs/live_cua.md)",
    )
    screenshot_chunk: int = option(
        10,
        metavar="N",
        check=_at_least_one,
        help="anthropic: models: tool-result screenshots beyond the 10 most recent are dropped N at a time (default 10, as OSWorld's Claude runner does on its default provider, Bedrock; 20 as on Anthropic's API, docs/live_cua.md)",
    )
    max_image_bytes: int | None = option(metavar="N", help="re-encode a screenshot whose PNG is over N bytes as JPEG, then downscale until it fits")
    data_root: str | None = option(metavar="DIR", help="folder holding the data sets (else $GUITEST_DATA, else $LMUData (MMBench-GUI's tooling), else ~/.local/share/guitest)")
    report_dir: str | None = option(
        metavar="DIR",
        help="folder for reports (default: reports/ under the rootdir): <suite>.json|md|html are the latest run's; every run's are also kept under runs/<suite>/<time>/, and the last run that passed under <suite>.passed.*",
    )
    keep_runs: int = option(20, metavar="N", check=_not_negative, help="earlier runs' reports kept per suite under <report-dir>/runs/ (default 20; 0 keeps none; the last passed run is always kept)")
    osworld_results: str | None = option(
        None,
        metavar="DIR",
        help="live suites: also write each episode as a published OSWorld run holds it under DIR (pyautogui/screenshot/MODEL/DOMAIN/TASK/: result.txt in 0..1, traj.jsonl a line per action, its screenshots), which OSWorld's show_result.py and monitor read (docs/live_reports.md)",
    )
    keep_episodes: int = option(
        3,
        metavar="N",
        check=_not_negative,
        help="live suites: the newest N kept runs keep their episodes (screenshots, trajectories; a MiniWoB++ run's take about 200-300 MB); older kept runs keep their reports only (default 3; the last passed run keeps its episodes)",
    )
    report_json: str | None = option(metavar="PATH", help="also write the JSON report here ('{suite}' in PATH is replaced by the suite name)")
    report_md: str | None = option(metavar="PATH", help="also write the Markdown summary here ('{suite}' is replaced too)")
    report_html: str | None = option(metavar="PATH", help="also write the HTML report here ('{suite}' is replaced too)")
    report_images: str = option(
        "link",
        choices=PICTURE_MODES,
        help="the HTML report's screenshots: 'link' shows the screenshot files where the run read them (default: costs nothing per case), 'embed' puts a thumbnail of each into the page, one self-contained file for a CI artifact (made when the report is written: a 4K PNG costs 100-200 ms of CPU to decode, docs/bench.md)",
    )
    baseline: str | None = option(metavar="OLD.json", check=_a_file, help="compare with an earlier JSON report at the end (exact McNemar per category) and fail the gate on a significant regression")
    baseline_min_drop: float = option(0.0, metavar="X", check=_fraction, help="with --baseline: only a drop of at least X (0..1) counts as a regression")
    baseline_min_paired: float = option(
        DEFAULT_MIN_PAIRED,
        metavar="X",
        check=_fraction,
        help=f"with --baseline: the share (0..1) of the cases both runs selected that must be scored in both (not an error, a result in each); below it the runs are not comparable and the gate fails (default {DEFAULT_MIN_PAIRED})",
    )
    device: str = option("cpu", help="hf: models: cpu, cuda, cuda:N, mps or auto (default cpu)")
    dtype: str = option("auto", help="hf: models: auto (the checkpoint's own), float32, float16, bfloat16")
    batch_size: int = option(1, metavar="N", help="hf: models: generate up to N cases in one batch per worker (needs --concurrency >= N)")
    cache: str = option(
        DEFAULT_MODE,
        choices=MODES,
        help="the response cache: resume (default: store every reply, read back only the replies of the run this one resumes: --lf, or after an incomplete run), on (also reuse replies recorded by earlier runs of the same model, endpoint and settings), off, read (reuse, never write), write (never read), refresh (call the model and overwrite)",
    )
    cache_dir: str | None = option(metavar="DIR", help=f"folder of the response cache ({FILENAME}); default: the report folder")
    repeats: int = option(1, metavar="K", check=_at_least_one, help="ask the model K times per case (each attempt its own call); reports avg@k, pass@k, spread and flakiness")
    attempt_strategy: str = option("avg", choices=("avg", "pass"), help="with --repeats: 'avg' runs all K attempts, 'pass' stops at the first hit (pass@k)")
    min_accuracy: float | None = option(metavar="X", check=_fraction, help="gate: fail the run when overall accuracy is below X (0..1); replaces the suite's gate accuracy")
    gate_metric: str | None = option(
        choices=("accuracy", "pass@k", "mean_score"),
        help="what the gate thresholds apply to: accuracy (avg@k with --repeats; for live suites the success rate), pass@k, or mean_score (live suites: the mean of the episodes' scores). Default: the suite's gate.metric, else its headline figure",
    )
    max_steps: int | None = option(metavar="N", help="live tasks: the step budget of an episode (default: the suite's max_steps, else 15)")
    runner: str | None = option(
        metavar="NAME",
        check=_known_runner,
        help="live tasks: drive the model as this runner does (its prompt, history, reading, stop rules; docs/live_agents.md, Runners); default: the runner of the model's profile, else guitest",
    )
    history_images: int | None = option(
        metavar="N",
        check=_not_negative,
        help="live tasks: earlier screenshots each step sends besides the current one (default: the suite's settings.history_images, else the runner's own: 4 for uitars15 and the Qwen runners, 3 for prompt-agent, 0 for guitest)",
    )
    success_rule: str | None = option(
        choices=backends.success_rules(),
        help="MiniWoB++ suites: when an episode is a success (default: the suite's settings.success_rule, else binary): binary (raw reward 1, or the task's threshold for the 5 continuous tasks; Farama's miniwob) or browsergym (raw reward > 0, as BrowserGym counts it); docs/live_miniwob.md",
    )
    env_url: tuple[str, ...] = option(
        (),
        metavar="URL",
        help="live desktop tasks: a machine speaking the OSWorld / Windows Agent Arena server protocol, e.g. http://HOST:5000; repeat it for a pool (one episode per machine at a time)",
    )
    env_provider: str | None = option(
        metavar="NAME",
        help="live desktop tasks: revert the machine to its snapshot before each episode through desktop-env's provider NAME (vmware, virtualbox, docker, aws, azure, ...; or module:Class), as OSWorld's harness does (docs/live_desktops.md)",
    )
    env_provider_option: tuple[str, ...] = option(
        (),
        metavar="KEY=VALUE",
        check=_backend_option,
        help="an option of --env-provider as DesktopEnv takes it: path_to_vm, snapshot_name, region, headless, os_type, screen_size, ready_timeout; the deadlines of its calls: start_timeout, revert_timeout, address_timeout, stop_timeout, manager_timeout, create_timeout (making the provider); machines=N: up to N VMs per pytest process, made as episodes need them (repeatable)",
    )
    browser_endpoint: tuple[str, ...] = option(
        (),
        metavar="URL",
        check=_browser_endpoints,
        help="live web tasks (MiniWoB++, webapp): run the episodes on this browser rather than on a Chromium launched here: a Chromium's DevTools endpoint (http://HOST:9222, from --remote-debugging-port) or a Playwright browser server's ws:// URL; repeat it for several (docs/live_envs.md, Remote browsers)",
    )
    browser_episodes: int | None = option(metavar="N", check=_at_least_one, help="with --browser-endpoint: episodes at once on each remote browser, per pytest process (default 4)")
    serve_bind: str | None = option(
        metavar="ADDR", help="live web tasks: the address guitest's page servers listen on (default 127.0.0.1; a remote browser needs one it can reach, e.g. 0.0.0.0 with --serve-host)"
    )
    serve_host: str | None = option(metavar="HOST", help="live web tasks: the host name or address remote browsers reach this host's page servers by (default: --serve-bind)")
    lease_dir: str | None = option(
        metavar="DIR",
        help="live desktop tasks: lease the machines with lease files in DIR, a folder every host of the run mounts (NFS, a cluster file system), so guitest runs on several hosts sharing --env-url machines never drive one at once (docs/live_desktops.md, Fleets); default: locks on this host's disk, which hold between the processes of one host only",
    )
    allow_unknown_state: bool = option(False, help="let the gate pass on live episodes that ran on a machine nothing reset before them (reset: none); by default such a run fails the gate")
    shard: str | None = option(
        metavar="K/N",
        check=_shard,
        help="run part K of N of the selected cases, the same part on every run and machine (each case's part is a hash of its id); merge the parts' reports with `guitest merge` (docs/scale.md, Shards)",
    )
    limit: int | None = option(
        metavar="N",
        check=_at_least_one,
        help="a first try: run N cases of each suite, spread over its categories in proportion (stratified by its first cross breakdown, then its other breakdown tags; chosen by --seed, 0 when not given), "
        "among what -k, -m and --lf left, before --shard; every report says it is a subset, and guitest leaderboard refuses it (docs/selection.md)",
    )
    gate_exit_code: int = option(DEFAULT_EXIT_CODE, metavar="N", check=_not_pytests_own, help=f"exit status of a failed gate (default {DEFAULT_EXIT_CODE})")
    max_cost: float | None = option(
        metavar="DOLLARS",
        check=_positive,
        help="stop asking the model once the run has spent this many dollars (all workers together; the model needs a price, --prices): calls in flight finish, no new case or live step asks the model, the report says so, the run exits 13, and --lf finishes it from the response cache",
    )
    max_total_tokens: int | None = option(
        metavar="N",
        check=_positive,
        help="stop asking the model once the run's calls have used N tokens (input plus output, all workers together), as --max-cost does (--max-tokens is a reply's length)",
    )
    max_episode_tokens: int | None = option(
        metavar="N",
        check=_positive,
        help="live tasks: stop an episode once its calls have used N tokens (input plus output) and evaluate it as it stands (end: token_cap); a looping agent cannot run up the bill",
    )
    prices: str | None = option(
        metavar="FILE",
        check=_prices,
        help="dollars per million tokens of your own models or negotiated rates (YAML or JSON, docs/costs.md); a model it does not name is priced by genai-prices; off: tokens only",
    )

    # what pytest was told: the rootdir, --lf, --collect-only, -n, the command line (for the report), and its own
    # selections (-k, -m, --deselect, node ids: guitest.plan.limiting.narrowing)
    rootdir: str = "."
    last_failed: bool = False
    collect_only: bool = False
    workers: int = 0
    pytest_args: tuple[str, ...] = ()
    selected_by: tuple[str, ...] = ()

    @property
    def in_flight(self) -> int:
        """Model requests in flight in one process: ``--concurrency`` per endpoint."""
        return self.concurrency * max(len(self.base_url), 1)

    @property
    def report_folder(self) -> Path:
        """Where reports go: ``--report-dir``, else ``reports/`` under the rootdir."""
        return Path(self.report_dir) if self.report_dir else Path(self.rootdir, "reports")

    def model_settings(self) -> Settings:
        """The generation and transport settings a model is built with."""
        urls = self.base_url
        return Settings(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            retries=max(self.retries, 0),
            concurrency=self.concurrency,
            seed=self.seed,
            base_url=urls[0] if urls else None,
            base_urls=urls,
            api_key_env=self.api_key_env,
            min_pixels=self.min_pixels,
            max_pixels=self.max_pixels,
            max_image_bytes=self.max_image_bytes,
            device=self.device,
            dtype=self.dtype,
            batch_size=self.batch_size,
            http_client=self.http_client,
            resize=self.resize,
            safety_checks=self.safety_checks,
            computer_tool=self.computer_tool,
            screenshot_chunk=self.screenshot_chunk,
        )


@dataclass(frozen=True)
class Option:
    """One command-line option as the parser takes it: ``flag``, and the keywords of ``parser.addoption``."""

    name: str
    flag: str
    kwargs: Mapping[str, Any]
    check: Check | None


def _declare(f: Any) -> Option:
    help_text, metavar, choices, check = f.metadata["option"]
    kind = str(f.type).split("|")[0].strip()
    flag = "--" + f.name.replace("_", "-")
    if kind == "bool":
        return Option(f.name, flag, {"action": "store_true", "default": False, "help": help_text}, check)
    kwargs: dict[str, Any] = {"action": "append", "default": None} if kind.startswith("tuple") else {"default": f.default}
    kwargs.update((k, v) for k, v in (("metavar", metavar), ("choices", choices), ("type", {"int": int, "float": float}.get(kind))) if v is not None)
    kwargs["help"] = help_text
    return Option(f.name, flag, kwargs, check)


#: every guitest option, in the order ``pytest --help`` lists them
OPTIONS: tuple[Option, ...] = tuple(_declare(f) for f in fields(RunConfig) if "option" in f.metadata)


def from_values(values: Mapping[str, Any], **context: Any) -> RunConfig:
    """The run's configuration from parsed option values (by field name; a missing one takes its default) and
    ``context`` (the fields after the options); ConfigError for the first value an option's check rejects."""
    given: dict[str, Any] = {}
    for opt in OPTIONS:
        value = values.get(opt.name)
        if opt.kwargs.get("action") == "append":
            value = tuple(value or ())
        elif value is None and opt.name not in values:
            value = opt.kwargs["default"]
        if opt.check is not None and value is not None:
            problem = opt.check(opt.flag, value)
            if problem:
                raise ConfigError(problem)
        given[opt.name] = value
    return RunConfig(**given, **context)
