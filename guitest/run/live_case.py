"""The flow of one live case, from sample to verdict, without pytest: the live counterpart of :func:`guitest.run.case.run_case`.

One case is one (task, seed) episode, or ``--repeats`` K of them: an environment from this process's pool
(:class:`Environments`), the agent for the model (:func:`make_policy`), :func:`guitest.live.loop.run_episode`,
then the verdict: ``hit`` when the environment's own check says success, ``miss`` when the episode ended
without it (the agent said done or fail, or the step budget ran out), ``unsure`` when the task has no check
guitest implements (the trajectory is for the judge, ``decided_by: judge``), ``error`` when the environment
or the endpoint failed (so ``--lf`` runs it again). Screenshots and the trajectory of each episode are
written under the suite's episode folder beside the report; the result carries their paths relative to
the report folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .. import strictjson
from ..cache import Stored
from .attempts import Attempt, case_outcome, repeat
from .case import DEFAULT_OPTIONS, Asker, RunOptions
from ..errors import GuitestError, ModelError
from ..exchange import Case, Prompt, Reply, SentImage
from ..models.base import Blind, Model
from ..report_parts import LiveSuiteRecord
from ..sample import Sample
from ..cost.spending import BudgetReached, Meter
from ..verdict import ERROR, HIT, MISS, UNSURE, CaseResult, case_result
from ..live import runners
from ..live.agent import GroundingPolicy, ModelPolicy, not_an_agent
from ..live.baseline_policies import OraclePolicy, RandomPolicy, oracle_reason
from ..live.loop import ERROR as ENDED_IN_ERROR, Episode, run_episode
from ..live.protocol import EnvFailure, TaskSpec
from ..live.record import to_trajectory

DEFAULT_MAX_STEPS = 15  # the budget MMBench-GUI reports at
_DIGESTED = re.compile(r"-[0-9a-f]{12}$")  # the end of a folder name _safe made: an id ending so is digested too


@dataclass(frozen=True)
class LiveSetup:
    """What a live suite says about running its cases: the backend (``env``) and its ``env_options``, the suite's
    folder (``base_dir``: relative paths in the options), its step budget, where episodes are written
    (``episodes_dir``, under ``report_dir``), the model's runner (``runner``: ``--runner``; None: its profile's) and how
    many earlier screenshots a step sends (``history_images``: ``--history-images`` or the suite's setting; None: the
    runner's own), and the success rule the backend judges by (``success_rule``: the rule a suite's backend lets a
    run choose; None for a backend with one check)."""

    env: str
    env_options: Mapping[str, Any] = field(default_factory=dict)
    base_dir: str = "."
    max_steps: int | None = None
    episodes_dir: str = "episodes"
    report_dir: str = "."
    history_images: int | None = None
    success_rule: str | None = None
    runner: str | None = None

    def options(self, runner: Any = None) -> dict[str, Any]:
        """The backend's options: ``env_options``, the success rule when there is one (the backend applies it), and
        with ``runner`` (the runner driving the agent) what its reference sets for the environment: its name
        (``runner_name``), the seconds it waits after each action (``runner_settle``: its ``sleep_after_execution``) and
        from the last action to the evaluation (``runner_evaluate_after``: its ``evaluate_after``), each absent when it
        sets none, which a backend takes where its options say so (a backend option such as ``settle: runner``)."""
        out = dict(self.env_options)
        if self.success_rule:
            out["success_rule"] = self.success_rule
        if runner is not None:
            out["runner_name"] = runner.name
            for key, attribute in (("runner_settle", "sleep_after_execution"), ("runner_evaluate_after", "evaluate_after")):
                seconds = getattr(runner, attribute, None)
                if seconds is not None:
                    out[key] = seconds
        return out

    def key(self, runner: Any = None) -> str:
        """One pool per backend and options (:meth:`options`) in a process."""
        return json.dumps([self.env, self.options(runner), self.base_dir], sort_keys=True, default=str)


class Environments:
    """This process's environments: one :class:`~guitest.envs.pool.EnvPool` per (backend, options), each holding up to
    ``size`` environments (one per concurrent episode), reused across episodes and closed at the end of the session."""

    def __init__(self, size: int) -> None:
        self.size = max(size, 1)
        self._pools: dict[str, Any] = {}
        self._closed = False
        self._lock = threading.Lock()

    def pool(self, setup: LiveSetup, runner: Any = None) -> Any:
        """The pool of ``setup``'s backend with its options for ``runner`` (:meth:`LiveSetup.options`), made on first use."""
        from ..envs.pool import EnvPool

        key = setup.key(runner)
        with self._lock:
            if self._closed:  # the session is ending (Ctrl-C): no episode starts a backend again
                raise EnvFailure("the run is ending: its environments were closed")
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = EnvPool(setup.env, setup.options(runner), setup.base_dir, size=self.size)
            return pool

    def close(self) -> None:
        """Close every pool, then what the backends share in this process; no
        pool is made after it."""
        from .. import envs

        with self._lock:
            self._closed = True
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
        envs.shutdown()


def live_record(suite: Any, max_steps: int | None, model: Model | None = None, runner: str | None = None, history_images: int | None = None) -> LiveSuiteRecord:
    """What a report records of a live suite's run beside its task settings: the backend, its options (URLs without
    credentials), the step budget in force (``--max-steps``, else the suite's, else 15; a task row may set its own,
    recorded per case), with a model the runner that drives it (``--runner`` or the profile's; its source, and the
    earlier screenshots a step sends: ``history_images``, else the runner's own), and what the backend says of its
    settings in force (:func:`guitest.envs.settings`, such as its ``waits``); empty for a suite that is not live."""
    from .. import envs

    if getattr(suite, "task", None) != "live":
        return {}
    options = {k: _redacted(v) for k, v in suite.env_options.items()}
    out: LiveSuiteRecord = {"env": suite.env, "env_options": options, "max_steps": int(max_steps or suite.max_steps or DEFAULT_MAX_STEPS)}
    chosen = None
    if model is not None:
        chosen, why = runners.for_model(model, runner)
        out["runner"] = {**chosen.describe(history_images), "chosen": why}
    try:
        out.update(envs.settings(suite.env or "", LiveSetup(env=suite.env or "", env_options=suite.env_options).options(chosen)))
    except EnvFailure as exc:  # a bad option: every episode says so; the report records why there is no figure
        out["settings_error"] = str(exc)
    return out


def _redacted(value: Any) -> Any:
    """An option's value without URL credentials, in a string or a list of them (browser endpoints)."""
    from ..secrets import redact_urls

    if isinstance(value, str):
        return redact_urls(value)
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    return value


def settings_lines(suite: Any, model: Model | None, runner: str | None) -> list[str]:
    """The run header's lines on a live suite's backend settings in force (:func:`guitest.envs.settings_text`), each
    naming the suite: ``waits (SUITE): 60 s after the set-up ...``."""
    from .. import envs

    chosen = runners.for_model(model, runner)[0] if model is not None else None
    try:
        record = envs.settings(suite.env or "", LiveSetup(env=suite.env or "", env_options=suite.env_options).options(chosen))
    except EnvFailure as exc:
        return [f"{suite.name}: {exc}"]
    return envs.settings_text(suite.env or "", record, suite.name)


def budget(sample: Sample, setup: LiveSetup, options: RunOptions) -> int:
    """The episode's step budget: ``--max-steps`` when given, else the task row's, else the suite's, else 15."""
    return int(options.max_steps or sample.data.get("max_steps") or setup.max_steps or DEFAULT_MAX_STEPS)


def skip_reason(model: Model, sample: Sample) -> str | None:
    """Why a baseline cannot run this case (the oracle without a scripted solution), or None."""
    from ..models.baselines import Oracle

    if not isinstance(model, Oracle) or sample.data.get("invalid"):
        return None
    return oracle_reason(TaskSpec.from_dict(sample.data["task"]), sample.data)


def make_policy(model: Model, env: Any, sample: Sample, task: TaskSpec, ask: Callable[..., Any], attempt: int, setup: "LiveSetup") -> Any:
    """The agent of ``model`` for one episode: the scripted oracle, seeded random actions, the OCR model as a one-shot
    grounding agent, or the model itself step by step, through its runner (``setup.runner`` or the profile's, with
    ``setup.history_images`` earlier screenshots or the runner's own); ModelError for a model that cannot act."""
    from ..models.baselines import Oracle, Random
    from ..models.ocr import OCRModel

    runner, _ = runners.for_model(model, setup.runner)
    if isinstance(model, Oracle):
        return OraclePolicy(env, runner, data=sample.data)
    if isinstance(model, Random):
        return RandomPolicy(model.settings.seed or 0, runner)
    if isinstance(model, OCRModel):
        return GroundingPolicy(model, sample, ask)
    if isinstance(model, Blind):
        raise not_an_agent(model)
    from ..live.cua.adapter import ComputerUseModel

    if isinstance(model, ComputerUseModel):  # a computer-use API speaks its own tool loop (guitest.live.cua)
        from ..live.cua.policy import ComputerUsePolicy

        return ComputerUsePolicy(model, sample, ask, attempt, task)
    return ModelPolicy(model, sample, ask, attempt, runner, setup.history_images)


def run_live_case(sample: Sample, model: Model, setup: LiveSetup, envs: Environments, options: RunOptions = DEFAULT_OPTIONS) -> CaseResult:
    """Run the case's episode(s) and return its result (see the module docstring); never raises for a failure of the
    environment or the model."""
    common: dict[str, Any] = {"notes": list(sample.notes), "instruction": sample.instruction}
    try:
        task = TaskSpec.from_dict(sample.data["task"])
    except (KeyError, TypeError, ValueError) as exc:
        return case_result(sample.id, ERROR, sample.tags, error=f"{sample.source}: not a live task ({exc})", **common)
    if sample.data.get("invalid"):  # a task file the reader could read but nobody can score (an empty evaluator func)
        return case_result(sample.id, ERROR, sample.tags, error=str(sample.data["invalid"]), **common)
    steps = budget(sample, setup, options)
    repeats = max(options.repeats, 1)
    meter = Meter()  # the case's calls, over its attempts

    def attempt(index: int) -> Attempt:
        try:
            return _attempt(sample, model, task, setup, envs, options, index, steps, repeats, common["notes"], meter)
        except BudgetReached as exc:  # the run's budget is spent: the episode stops before its next step; --lf runs it
            return Attempt.failed(str(exc), not_asked=exc.why)
        except Exception as exc:  # a bug of an adapter, a backend or guitest must not lose the case: it errs, --lf runs it
            return Attempt.failed(f"{type(exc).__name__}: {exc}")

    attempts = repeat(attempt, repeats, options.strategy)
    if not common["instruction"]:  # a task that makes its instruction per seed (a page's utterance)
        common["instruction"] = next((a.shown["episode"]["instruction"] for a in attempts if a.shown.get("episode")), "")
    return case_outcome(sample.id, sample.tags, attempts, repeats, {**common, **meter.fields()})


def _attempt(sample: Sample, model: Model, task: TaskSpec, setup: LiveSetup, envs: Environments, options: RunOptions, index: int, steps: int, repeats: int, notes: list[str], meter: Meter) -> Attempt:
    """One episode and its verdict (the report shows its ``success``, ``score``, ``steps``, ``seconds``, ``trajectory``
    and ``episode``); the case's ``notes`` gain the episode's."""
    folder = os.path.join(setup.episodes_dir, _safe(sample.id) + (f"/attempt-{index + 1}" if repeats > 1 else ""))
    down = model.unavailable()
    if down is not None:  # the endpoint is out: no environment is started for an episode that cannot ask it
        return Attempt.failed(str(down), unreachable=down.describe())
    stored: list[Stored] = []
    asker = _asker(model, options, stored, meter)
    pool = envs.pool(setup, runners.for_model(model, setup.runner)[0])
    try:
        env = pool.acquire(affinity=task.name)
    except EnvFailure as exc:
        return Attempt.failed(f"environment {setup.env} failed to start: {exc}")
    except GuitestError as exc:
        return Attempt.failed(str(exc))
    episode: Episode | None = None
    try:
        policy = make_policy(model, env, sample, task, asker, index, setup)
        episode = run_episode(env, task, sample.data.get("seed"), policy, steps, save_screenshot=_sink(folder, setup.report_dir), max_tokens=options.episode_tokens)
        reset = reset_record(env)  # read before the environment goes back to the pool and another episode resets it
        software = software_record(env)
    except ModelError as exc:
        return Attempt.failed(str(exc))
    finally:
        # an episode that did not end in an evaluation (an error, of either side) may hold what it leased (a
        # machine, a page mid-action): the environment is closed rather than reused
        pool.release(env, broken=episode is None or episode.end == ENDED_IN_ERROR, affinity=task.name)
    return _outcome(sample, episode, folder, setup, steps, stored, reset, notes, software)


def reset_record(env: Any) -> dict[str, Any]:
    """How the environment brought its machine into shape for the episode just run: ``reset`` (``reverted``,
    ``reset`` or ``none``; an environment that does not say is taken at its protocol's word, ``reset``),
    ``wait_seconds`` (waiting for a free machine, not part of the episode's time) and ``setup_notes``."""
    info = getattr(env, "reset_info", None)
    info = info if isinstance(info, dict) else {}
    return {
        "reset": info.get("reset", "reset") if info else "reset",
        "wait_seconds": float(info.get("wait_seconds") or 0.0),
        "setup_notes": [str(n) for n in info.get("setup_notes") or ()],
    }


def software_record(env: Any) -> dict[str, list[str]]:
    """What the environment says it runs on (its optional ``software()``: the browser's name and version), for the
    run's manifest; {} for an environment that does not say, or says it in another shape."""
    said = getattr(env, "software", None)
    try:
        record = said() if callable(said) else {}
    except Exception:  # noqa: BLE001 - a backend's bug here must not lose the episode: its software is not recorded
        return {}
    if not isinstance(record, dict):
        return {}
    return {str(kind): [str(v) for v in versions] for kind, versions in record.items() if isinstance(versions, (list, tuple))}


def _outcome(
    sample: Sample, episode: Episode, folder: str, setup: LiveSetup, steps: int, stored: list[Stored], reset: dict[str, Any], notes: list[str], software: dict[str, list[str]] | None = None
) -> Attempt:
    record = episode.to_dict()
    trajectory = _write_trajectory(episode, sample.id, folder, setup)
    decided_by = record.get("decided_by")
    if episode.end == ENDED_IN_ERROR:
        verdict = ERROR
    elif decided_by == "judge":
        verdict = UNSURE  # no check of guitest's own: the trajectory is for the judge, never silently scored
    else:
        verdict = HIT if episode.success else MISS
    prediction = {
        "success": episode.success,
        "score": episode.score,
        "end": episode.end,
        "steps": len(episode.steps),
        "budget": steps,
        "reason": record.get("reason"),
        "decided_by": decided_by,
        "reset": reset["reset"],
        "wait_seconds": reset["wait_seconds"],
    }
    if setup.success_rule:
        prediction["success_rule"] = setup.success_rule
    last = next((s.reply for s in reversed(episode.steps) if s.reply is not None), None)
    shown = {
        "success": episode.success,
        "score": episode.score,
        "steps": len(episode.steps),
        "seconds": round(max(episode.wall_seconds - reset["wait_seconds"], 0.0), 3),
        "trajectory": trajectory,
        "episode": record,
    }
    found = sorted({n for s in episode.steps for n in s.notes if n in ("unreadable_action", "reply_cut", "truncated")}) + reset["setup_notes"]
    notes.extend(n for n in found + (["decided_by_judge"] if decided_by == "judge" else []) if n not in notes)
    return Attempt(
        verdict,
        prediction,
        last,
        episode.error or None,
        shown,
        stored=tuple(stored),
        cached=bool(stored) and all(s.cached for s in episode.steps if s.reply is not None),
        unreachable=episode.unreachable,
        software=software or None,
    )


def _asker(model: Model, options: RunOptions, stored: list[Stored], meter: Meter | None = None) -> Callable[[Case, Prompt, SentImage], tuple[Reply, Stored | None, int]]:
    """How the agent asks the model at each step: through the response cache (keyed by the step's screenshot, the
    prompt with its history, and the attempt), holding the ``--concurrency`` slot around the call only."""
    from ..cache import image_digest

    cache = options.cache if options.cache is not None and options.cache.mode != "off" and model.cacheable else None
    slot = options.slot or nullcontext()

    def ask(case: Case, prompt: Prompt, sent: SentImage) -> tuple[Reply, Stored | None, int]:
        digest = None
        if cache is not None:
            digest = ":".join(image_digest(i.data, "", i.size) for i in (*prompt.images, sent) if i.data is not None) or None
        reply, record, cut = Asker(model, cache if digest else None, digest, slot, options.spending, meter).ask(case, prompt, sent)
        if record is not None:
            stored.append(record)
        return reply, record, cut

    return ask


def _sink(folder: str, report_dir: str) -> Callable[[str, bytes], str]:
    """Screenshots as ``<folder>/<name>.png``, a large one's thumbnail beside it for the report's viewer
    (:func:`guitest.reporting.thumbnails.save_step_thumbnail`); the reference kept is the path relative to the report folder."""
    from ..reporting.thumbnails import save_step_thumbnail

    def save(name: str, png: bytes) -> str:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{name}.png")
        with open(path, "wb") as f:
            f.write(png)
        save_step_thumbnail(path, png)
        return os.path.relpath(path, report_dir)

    return save


def _write_trajectory(episode: Episode, case_id: str, folder: str, setup: LiveSetup) -> str | None:
    """The episode in guitest's ``trajectory`` format (a JSON list of one trajectory) as ``<folder>/trajectory.json``,
    labelled with the environment's outcome, its screenshots relative to the suite's episode folder (so a
    trajectory-judge suite with ``data: {dir: <that folder>, annotations: "*/trajectory.json"}`` reads every
    episode); its path relative to the report folder (None when it cannot be written)."""
    trajectory = to_trajectory(episode, case_id).to_dict()

    def relative(ref: str) -> str:
        return os.path.relpath(os.path.join(setup.report_dir, ref), setup.episodes_dir)

    for step in trajectory.get("steps", []):
        if step.get("screenshot"):
            step["screenshot"] = relative(step["screenshot"])
    if trajectory.get("final_screenshot"):
        trajectory["final_screenshot"] = relative(trajectory["final_screenshot"])
    try:
        path = os.path.join(folder, "trajectory.json")
        strictjson.write_text(Path(path), strictjson.dumps([trajectory], indent=1))
    except OSError:
        return None
    return os.path.relpath(path, setup.report_dir)


def _safe(case_id: str) -> str:
    """A case id as a folder name of its own: the id itself when it is one (letters, digits, ``-_.=``), else its
    safe characters with a digest of the whole id (``x y`` and ``x/y`` no longer share ``x_y``; ``.`` and ``..``
    never name a folder outside the episodes folder)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_.=") else "_" for c in case_id)
    if safe == case_id and safe.strip(".") and len(safe) <= 120 and not _DIGESTED.search(safe):
        return safe
    return f"{safe.strip('.')[:80]}-{hashlib.sha256(case_id.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
