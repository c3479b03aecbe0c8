"""The flow of one case, from sample to verdict, without pytest.

image -> truth in pixels of the image as found -> build_prompt -> preprocess ->
generate -> postprocess -> judge. Every failure of the harness or the endpoint
becomes an ``error`` result with a message; nothing here raises for bad input.
"""

from __future__ import annotations

import os
import time
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, ContextManager

from .attempts import Attempt, case_outcome, repeat
from ..cache import ResponseCache, Stored, image_digest
from ..reporting.manifest import prompt_digest
from ..errors import EndpointDown, GuitestError, PaidError
from ..exchange import Case, Prompt, Reply, SentImage
from ..models.base import Model
from ..sample import Sample
from ..cost.spending import BudgetReached, Meter, Spending
from ..tasks import Task, grounding
from ..cost.usage import FailedCall, Usage
from ..verdict import ERROR, CaseResult, case_result

if TYPE_CHECKING:
    from PIL import Image

#: the longest reply kept (parsed, cached, reported), in characters; a longer one keeps its first
#: REPLY_HEAD_CHARS and its last MAX_REPLY_CHARS - REPLY_HEAD_CHARS characters (answers come last)
MAX_REPLY_CHARS = 65_536
REPLY_HEAD_CHARS = 16_384
#: what stands where a reply was cut (no digits or brackets, so no answer parser reads a number from it)
CUT_MARKER = "\n... (guitest cut this reply here) ...\n"


@dataclass(frozen=True, eq=False)
class RunOptions:
    """How every case of a session runs, made once per session: ``repeats`` attempts per case with the
    ``strategy`` (``avg`` runs them all, ``pass`` stops at the first hit); ``thumbnail(path, image)`` makes
    the report's picture of a screenshot (None: none); ``cache``: the response cache (None: not used);
    ``slot``: held around each model call and nothing else (the semaphore of ``--concurrency``);
    ``max_steps``: the step budget of a live episode (None: the task's, else the suite's); ``spending``: prices each
    call and charges the run's budget (:mod:`guitest.cost.spending`); ``episode_tokens``: the most tokens a live episode
    may use before it is stopped and evaluated (``--max-episode-tokens``; None: no cap)."""

    repeats: int = 1
    strategy: str = "avg"
    thumbnail: Callable[[str, Image.Image | None], str] | None = None
    cache: ResponseCache | None = None
    slot: ContextManager[Any] | None = None
    max_steps: int | None = 15
    spending: Spending | None = None
    episode_tokens: int | None = None


DEFAULT_OPTIONS = RunOptions()


def run_case(sample: Sample, model: Model, task: Task | None = None, prompt_template: str | None = None, options: RunOptions = DEFAULT_OPTIONS) -> CaseResult:
    """Run one case of ``task`` (grounding when None) and return its result (see :func:`guitest.verdict.case_result`).

    With ``options.repeats`` > 1 the model is asked that many times (the image is still decoded
    and sent-prepared once): every attempt is recorded under ``attempts``; with the ``pass``
    strategy the attempts stop at the first hit. With a thumbnail maker the result carries the
    report's picture (key ``thumbnail``). With a cache, replies are looked up before and stored
    after each model call (result key ``cached``: True when the cache answered; ``cached_attempts``
    how many attempts it answered, with ``--repeats``; ``cached_recorded`` when the oldest of them
    was recorded). The slot is held around each model call only: the rest of the case (reading the
    screenshot, building the request, judging, caching) runs outside it, so a thread that has its
    request ready takes a freed slot at once.
    """
    task = task or grounding.TASK()
    notes = list(sample.notes)
    if not sample.image:  # a case with no screenshot of its own (a trajectory whose images the task opens)
        return _run_opened(_Opened(sample, model, task, None, tuple(sample.size or (0, 0)), notes), prompt_template, options)  # type: ignore[arg-type]
    if not model.needs_screenshot and sample.size is not None:  # the annotation's size is all such a model reads
        return _run_opened(_Opened(sample, model, task, None, (sample.size[0], sample.size[1]), notes, unread=True), prompt_template, options)
    from ..images import open_image  # PIL loads with the first screenshot read, not with the plugin

    try:
        image = open_image(sample.image)
    except FileNotFoundError:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file missing: {sample.image}", notes=notes, instruction=sample.instruction)
    except OSError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file unreadable: {sample.image}: {exc}", notes=notes, instruction=sample.instruction)
    with image:
        if sample.size is not None and tuple(sample.size) != image.size:
            notes.append("image_size_mismatch")
        return _run_opened(_Opened(sample, model, task, image, image.size, notes), prompt_template, options)


@dataclass(frozen=True)
class _Opened:
    """A case whose screenshot is open (``image`` None for a case without one, or ``unread``: left unread, its size the
    annotation's, for a model that reads no pixels), with the notes gathered so far."""

    sample: Sample
    model: Model
    task: Task
    image: Image.Image | None
    size: tuple[int, int]
    notes: list[str]
    unread: bool = False


def _run_opened(opened: _Opened, prompt_template: str | None, options: RunOptions) -> CaseResult:
    """The rest of :func:`run_case` once the screenshot is open."""
    sample, model, task, image, size, notes = opened.sample, opened.model, opened.task, opened.image, opened.size, opened.notes
    repeats = max(options.repeats, 1)
    truth, fixed, problem = task.truth(sample, size)
    notes.extend(fixed)
    common: dict[str, Any] = {"notes": notes, "instruction": sample.instruction, "truth": _shown(truth), "size": list(size), "image": os.path.basename(sample.image)}
    if problem is not None:
        return case_result(sample.id, ERROR, sample.tags, error=problem, **common)
    try:
        case = Case(sample=sample, original_size=size, truth=truth, sent_size=model.plan_size(size) if image is not None or opened.unread else size, task=task)
        decided = task.decide(case)
        if decided is not None:  # settled by a rule of the benchmark: the model is not asked
            verdict, prediction = decided
            return case_outcome(sample.id, sample.tags, [Attempt(verdict, prediction)] * repeats, repeats, common)
        prompt, sent = task.inputs(model, case, image, prompt_template)
        # a task that asks several variants of one question (circular evaluation) gets one prompt per variant
        prompts = [prompt] + [model.build_prompt(replace(case, variant=v), prompt_template) for v in range(1, task.variants(case))]
    except OSError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file unreadable: {exc}", **common)
    except GuitestError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=str(exc), **common)
    except Exception as exc:  # an adapter's bug must not stop the other cases
        return case_result(sample.id, ERROR, sample.tags, error=f"{type(exc).__name__}: {exc}", **common)
    if options.thumbnail is not None and (image is not None or (opened.unread and os.path.isfile(sample.image))):
        try:
            common["thumbnail"] = options.thumbnail(sample.image, image)
        except OSError:
            pass  # a picture for the report only: never a reason to fail the case
    common["sent_size"] = list(sent.size)
    common["prompt_digest"] = prompt_digest((p.system, p.user) for p in prompts)
    cache = options.cache
    use_cache = cache is not None and cache.mode != "off" and model.cacheable
    meter = Meter()
    asker = Asker(model, cache if use_cache else None, _digest(sample, sent, prompt) if use_cache else None, options.slot or nullcontext(), options.spending, meter)
    attempts = repeat(lambda index: _variants(replace(case, attempt=index), task, prompts, sent, asker, notes), repeats, options.strategy)
    return case_outcome(sample.id, sample.tags, attempts, repeats, {**common, **meter.fields()})


def _shown(truth: Any) -> Any:
    """The truth as the report shows it: a box rounded to 0.01 px, anything else as the task gave it."""
    if isinstance(truth, tuple) and len(truth) == 4 and all(isinstance(v, (int, float)) for v in truth):
        return [round(v, 2) for v in truth]
    return truth


def _digest(sample: Sample, sent: SentImage, prompt: Prompt) -> str:
    """The cache key's image part: the digest of the image sent, and of every further image of the prompt."""
    digest = image_digest(sent.data, sample.image, sent.size)
    if prompt.images:
        digest += ":" + ":".join(image_digest(i.data, f"{sample.image}#{n}", i.size) for n, i in enumerate(prompt.images))
    return digest


def key_parts(model: Model, identity: bool = True) -> dict[str, Any]:
    """The model's part of every cache key: spec, adapter, profile, the settings a reply depends on, and (with
    ``identity``) the endpoint with what it reports of the model it serves (:meth:`Model.identity`, asked once).
    Without ``identity`` (nothing asked of the endpoint), the scope of a run in the cache's ledger."""
    parts = {"model": model.name, "adapter": type(model).__name__, "profile": model.profile.name, "settings": model.generation_settings()}
    if identity:
        parts["endpoint"] = model.identity()
    return parts


def bound_reply(reply: Reply) -> tuple[Reply, int]:
    """The reply as it is parsed, cached and reported, and how many characters were cut from it: a reply over
    :data:`MAX_REPLY_CHARS` keeps its head and its tail (where the answer is) around :data:`CUT_MARKER`."""
    text = reply.text
    if len(text) <= MAX_REPLY_CHARS:
        return reply, 0
    tail = MAX_REPLY_CHARS - REPLY_HEAD_CHARS
    return replace(reply, text=text[:REPLY_HEAD_CHARS] + CUT_MARKER + text[-tail:]), len(text) - MAX_REPLY_CHARS


class Asker:
    """How a case asks its model: through the response cache when one is used (``digest``: the key's image
    part), each model call holding ``slot`` (the worker's semaphore of ``--concurrency``) and nothing else;
    ``spending`` prices each call and keeps to the run's budget, ``meter`` tallies the case's calls."""

    __slots__ = ("model", "cache", "digest", "slot", "spending", "meter")

    def __init__(self, model: Model, cache: ResponseCache | None, digest: str | None, slot: ContextManager[Any], spending: Spending | None = None, meter: Meter | None = None) -> None:
        self.model = model
        self.cache = cache
        self.digest = digest
        self.slot = slot
        self.spending = spending or Spending()
        self.meter = meter or Meter()

    def ask(self, case: Case, prompt: Prompt, sent: SentImage) -> tuple[Reply, Stored | None, int]:
        """The model's reply to ``prompt`` (bounded, :func:`bound_reply`), from the cache when it holds one this
        run may read; the stored record when it did; and how many characters were cut from a new reply.
        An empty reply is never stored: it is asked again next time. Once the run's budget is spent a reply
        the cache does not hold is not asked: :class:`~guitest.cost.spending.BudgetReached`."""
        model, cache = self.model, self.cache
        key = None
        if cache is not None:
            parts = key_parts(model)
            parts.update(system=prompt.system, user=prompt.user, image=self.digest, sent_size=list(sent.size), attempt=case.attempt)
            key = cache.key(parts)
            stored = cache.get(key)
            if stored is not None:
                if model.metered:
                    self.meter.add_reused(stored.usage)
                return Reply(text=stored.text, finish_reason=stored.finish_reason, usage=Usage.from_dict(stored.usage)), stored, 0
        tally = None
        metered = model.metered  # a model that spends no tokens (a baseline, replayed replies, OCR) is neither metered nor stopped
        with self.slot:  # the budget is checked holding the slot: a call waiting for one sees the calls before it paid
            if metered:
                self.spending.check()
            started, clock = time.time(), time.perf_counter()
            try:
                reply = model.generate(prompt, sent, case)
            except Exception as exc:
                if metered:
                    failing = self._failed(getattr(exc, "failed", ()), started)
                    if isinstance(exc, PaidError):  # a reply that cannot be used, paid for all the same
                        self.meter.add_paid(self.spending.call(exc.usage if isinstance(exc.usage, Usage) else None, max(time.perf_counter() - clock - failing, 0.0), started))
                raise
            if metered:
                failing = self._failed(reply.failed, started)
                tally = self.spending.call(reply.usage, max(time.perf_counter() - clock - failing, 0.0), started)
        if tally is not None:
            self.meter.add_paid(tally)
        scrubbed = model.scrub_reply(reply.text)
        if scrubbed != reply.text:  # a reply echoing a credential: never read, cached or reported with it
            reply = replace(reply, text=scrubbed)
        reply, cut = bound_reply(reply)
        if key is not None and reply.text.strip():
            cache.put(key, reply.text, reply.finish_reason, model.name, tally)  # type: ignore[union-attr]
        return reply, None, cut

    def _failed(self, calls: Any, when: float) -> float:
        """Count the calls an adapter made that gave no usable reply (:attr:`Reply.failed`, :attr:`ModelError.failed`);
        their seconds in all (not the answering call's)."""
        seconds = 0.0
        for call in calls if isinstance(calls, (tuple, list)) else ():
            if isinstance(call, FailedCall):
                self.meter.add_failed(self.spending.failed(call, when))
                seconds += call.seconds
        return seconds


def _variants(case: Case, task: Task, prompts: list[Prompt], sent: SentImage, asker: Asker, notes: list[str]) -> Attempt:
    """One attempt: the model asked each variant of the case (usually one), ``task`` (the case's) combining their verdicts."""
    if len(prompts) == 1:
        return _attempt(case, task, prompts[0], sent, asker, notes)
    outcomes = [_attempt(replace(case, variant=v), task, prompt, sent, asker, notes) for v, prompt in enumerate(prompts)]
    return Attempt.from_row(
        task.combine([o.row() for o in outcomes]),
        stored=tuple(s for o in outcomes for s in o.stored),
        cached=all(o.cached for o in outcomes),
        unreachable=next((o.unreachable for o in outcomes if o.unreachable is not None), None),
        not_asked=next((o.not_asked for o in outcomes if o.not_asked is not None), None),
    )


def _attempt(case: Case, task: Task, prompt: Prompt, sent: SentImage, asker: Asker, notes: list[str]) -> Attempt:
    """One model call (or its cached reply) and its verdict; the case's notes gain what the reply showed.

    When the task asks for a repair (:meth:`guitest.tasks.Task.repair_prompt`: a reply it
    cannot read, answered once more with a follow-up prompt), the second reply is judged and
    the first is kept as ``first_response``.
    """
    model = asker.model
    first: Reply | None = None
    records: list[Stored] = []
    try:
        reply, stored, cut = asker.ask(case, prompt, sent)
        records += [stored] if stored else []
        text = model.parse_response(model.postprocess(reply, case), case)
        repair = task.repair_prompt(text, reply.finish_reason, prompt, case) if reply.recorded is None else None
        if repair is not None:
            first = reply
            reply, again, more = asker.ask(case, repair, sent)
            records += [again] if again else []
            stored, cut = stored if again else None, cut + more
            text = model.parse_response(model.postprocess(reply, case), case)
    except EndpointDown as exc:
        return Attempt.failed(str(exc), first.text if first else None, unreachable=exc.describe())
    except BudgetReached as exc:
        return Attempt.failed(str(exc), first.text if first else None, not_asked=exc.why)
    except GuitestError as exc:
        return Attempt.failed(str(exc), first.text if first else None)
    except Exception as exc:  # an adapter's bug must not stop the other cases
        return Attempt.failed(f"{type(exc).__name__}: {exc}", first.text if first else None)
    if cut:
        notes.append("reply_cut")
    try:
        if reply.recorded is not None:  # another harness's answer as data: judged as it is, no text read
            verdict, prediction = task.judge_recorded(reply.recorded, case)
        else:
            verdict, prediction = task.judge(text, reply.finish_reason, case, model.profile, sent.size)
    except GuitestError as exc:
        if reply.recorded is None:
            return Attempt.failed(f"guitest bug: the {task.name} judge raised {type(exc).__name__}: {exc}", reply.text)
        return Attempt.failed(str(exc), reply.text)  # a recorded answer the case's task does not take
    except Exception as exc:  # a judge must never raise; if it does, the case says so instead of the run dying
        return Attempt.failed(f"guitest bug: the {task.name} judge raised {type(exc).__name__}: {exc}", reply.text)
    if prediction and prediction.get("space_guessed"):
        notes.append(f"auto_space={prediction['space']}")
    if prediction and prediction.get("outside_image"):
        notes.append("outside_image")
    if reply.recorded is None and prediction and "raw" in prediction and prediction.get("space") not in (None, "normalized") and max(abs(v) for v in prediction["raw"]) <= 1:
        notes.append("coordinates_look_normalized")  # a profile/model mismatch would score ~0 silently: say so
    for note in (prediction or {}).pop("notes", ()):
        notes.append(note)
    shown: dict[str, Any] = {"finish_reason": reply.finish_reason}
    if first is not None:
        shown["first_response"] = first.text
    return Attempt(verdict, prediction, reply.text, shown=shown, stored=tuple(records), cached=stored is not None)
