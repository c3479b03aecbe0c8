"""The flow of one case, from sample to verdict, without pytest.

image -> truth in pixels of the image as found -> build_prompt -> preprocess ->
generate -> postprocess -> judge. Every failure of the harness or the endpoint
becomes an ``error`` result with a message; nothing here raises for bad input.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import replace
from typing import Any, Callable, ContextManager

from PIL import Image

from .errors import GuitestError
from .images import open_image
from .cache import ResponseCache, image_digest
from .models.base import Case, Model, Prompt, Reply, SentImage
from .sample import Sample
from .tasks import Task, grounding
from .verdict import ERROR, HIT, PARTIAL, case_result


def run_case(
    sample: Sample,
    model: Model,
    prompt_template: str | None = None,
    repeats: int = 1,
    strategy: str = "avg",
    thumbnail: Callable[[str, Image.Image], str] | None = None,
    cache: ResponseCache | None = None,
    task: Task | None = None,
    slot: ContextManager[Any] | None = None,
) -> dict[str, Any]:
    """Run one case of ``task`` (grounding when None) and return its result (see :func:`guitest.verdict.case_result`).

    With ``repeats`` > 1 the model is asked that many times (the image is still decoded
    and sent-prepared once): every attempt is recorded under ``attempts``; with the
    ``pass`` strategy the attempts stop at the first hit. ``thumbnail(path, image)``, when
    given, makes the picture of the screenshot the HTML report shows (result key ``thumbnail``).
    With ``cache``, replies are looked up before and stored after each model call (result
    key ``cached``: how many attempts the cache answered). ``slot``, when given, is held
    around each model call and nothing else (a semaphore of ``--concurrency``): the rest of
    the case (reading the screenshot, building the request, judging, caching) runs outside it,
    so a thread that has its request ready takes a freed slot at once.
    """
    task = task or grounding.TASK()
    notes = list(sample.notes)
    if not sample.image:  # a case with no screenshot of its own (a trajectory whose images the task opens)
        size = tuple(sample.size or (0, 0))
        return _run_opened(sample, model, None, size, notes, prompt_template, repeats, strategy, None, cache, task, slot)  # type: ignore[arg-type]
    try:
        image = open_image(sample.image)
    except FileNotFoundError:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file missing: {sample.image}", notes=notes, instruction=sample.instruction)
    except OSError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file unreadable: {sample.image}: {exc}", notes=notes, instruction=sample.instruction)
    with image:
        if sample.size is not None and tuple(sample.size) != image.size:
            notes.append("image_size_mismatch")
        return _run_opened(sample, model, image, image.size, notes, prompt_template, repeats, strategy, thumbnail, cache, task, slot)


def _run_opened(
    sample: Sample,
    model: Model,
    image: Image.Image | None,
    size: tuple[int, int],
    notes: list[str],
    prompt_template: str | None,
    repeats: int,
    strategy: str,
    thumbnail: Callable[[str, Image.Image], str] | None,
    cache: ResponseCache | None,
    task: Task,
    slot: ContextManager[Any] | None = None,
) -> dict[str, Any]:
    """The rest of :func:`run_case` once the screenshot is open (``image`` None for a case without one)."""
    truth, fixed, problem = task.truth(sample, size)
    notes.extend(fixed)
    common: dict[str, Any] = {"notes": notes, "instruction": sample.instruction, "truth": _shown(truth), "size": list(size), "image": os.path.basename(sample.image)}
    if problem is not None:
        return case_result(sample.id, ERROR, sample.tags, error=problem, **common)
    try:
        case = Case(sample=sample, original_size=size, truth=truth, sent_size=model.plan_size(size) if image is not None else size, task=task)
        decided = task.decide(case)
        if decided is not None:  # settled by a rule of the benchmark: the model is not asked
            verdict, prediction = decided
            if repeats <= 1:
                return case_result(sample.id, verdict, sample.tags, prediction=prediction, **common)
            attempts = [{"verdict": verdict, "prediction": prediction, "response": None} for _ in range(repeats)]
            return case_result(sample.id, verdict, sample.tags, prediction=prediction, attempts=attempts, **common)
        prompt, sent = task.inputs(model, case, image, prompt_template)
        # a task that asks several variants of one question (circular evaluation) gets one prompt per variant
        prompts = [prompt] + [model.build_prompt(replace(case, variant=v), prompt_template) for v in range(1, task.variants(case))]
    except OSError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=f"image file unreadable: {exc}", **common)
    except GuitestError as exc:
        return case_result(sample.id, ERROR, sample.tags, error=str(exc), **common)
    except Exception as exc:  # an adapter's bug must not stop the other cases
        return case_result(sample.id, ERROR, sample.tags, error=f"{type(exc).__name__}: {exc}", **common)
    if thumbnail is not None and image is not None:
        try:
            common["thumbnail"] = thumbnail(sample.image, image)
        except OSError:
            pass  # a picture for the report only: never a reason to fail the case
    common["sent_size"] = list(sent.size)
    use_cache = cache is not None and cache.mode != "off" and model.cacheable
    asker = Asker(model, cache if use_cache else None, _digest(sample, sent, prompt) if use_cache else None, slot or nullcontext())
    attempts = []
    for index in range(max(repeats, 1)):
        attempt = _variants(replace(case, attempt=index), prompts, sent, asker, notes)
        attempts.append(attempt)
        if strategy == "pass" and attempt["verdict"] == HIT:
            break
    cached = sum(bool(a.pop("cached", False)) for a in attempts)
    if cached:
        common["cached"] = cached
    if repeats <= 1:
        return case_result(sample.id, attempts[0].pop("verdict"), sample.tags, **attempts[0], **common)
    return case_result(sample.id, case_verdict(attempts), sample.tags, **representative(attempts), attempts=attempts, **common)


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


class Asker:
    """How a case asks its model: through the response cache when one is used (``digest``: the key's image
    part), each model call holding ``slot`` (the worker's semaphore of ``--concurrency``) and nothing else."""

    __slots__ = ("model", "cache", "digest", "slot")

    def __init__(self, model: Model, cache: ResponseCache | None, digest: str | None, slot: ContextManager[Any]) -> None:
        self.model = model
        self.cache = cache
        self.digest = digest
        self.slot = slot

    def ask(self, case: Case, prompt: Prompt, sent: SentImage) -> tuple[Reply, bool]:
        """The model's reply to ``prompt``, from the cache when it holds one; and whether it did."""
        model, cache = self.model, self.cache
        key = None
        if cache is not None:
            key = cache.key(
                {
                    "model": model.name,
                    "adapter": type(model).__name__,
                    "profile": model.profile.name,
                    "system": prompt.system,
                    "user": prompt.user,
                    "image": self.digest,
                    "sent_size": list(sent.size),
                    "settings": model.generation_settings(),
                    "attempt": case.attempt,
                }
            )
            stored = cache.get(key)
            if stored is not None:
                return Reply(text=stored[0], finish_reason=stored[1]), True
        with self.slot:
            reply = model.generate(prompt, sent, case)
        if key is not None:
            cache.put(key, reply.text, reply.finish_reason, model.name)  # type: ignore[union-attr]
        return reply, False


def _variants(case: Case, prompts: list[Prompt], sent: SentImage, asker: Asker, notes: list[str]) -> dict[str, Any]:
    """One attempt: the model asked each variant of the case (usually one), the task combining their verdicts."""
    if len(prompts) == 1:
        return _attempt(case, prompts[0], sent, asker, notes)
    task = case.task or grounding.TASK()
    outcomes = [_attempt(replace(case, variant=v), prompt, sent, asker, notes) for v, prompt in enumerate(prompts)]
    cached = all([o.pop("cached", False) for o in outcomes])  # a list: every outcome loses the key
    out = task.combine(outcomes)
    if cached:
        out["cached"] = True
    return out


def _attempt(case: Case, prompt: Prompt, sent: SentImage, asker: Asker, notes: list[str]) -> dict[str, Any]:
    """One model call (or its cached reply) and its verdict: ``{verdict, prediction, response, finish_reason[, error][, cached]}``.

    When the task asks for a repair (:meth:`guitest.tasks.Task.repair_prompt`: a reply it
    cannot read, answered once more with a follow-up prompt), the second reply is judged and
    the first is kept as ``first_response``.
    """
    task = case.task or grounding.TASK()
    model = asker.model
    first: Reply | None = None
    try:
        reply, stored = asker.ask(case, prompt, sent)
        text = model.parse_response(model.postprocess(reply, case), case)
        repair = task.repair_prompt(text, reply.finish_reason, prompt, case)
        if repair is not None:
            first = reply
            reply, again = asker.ask(case, repair, sent)
            stored = stored and again
            text = model.parse_response(model.postprocess(reply, case), case)
    except GuitestError as exc:
        return {"verdict": ERROR, "prediction": None, "response": first.text if first else None, "error": str(exc)}
    except Exception as exc:  # an adapter's bug must not stop the other cases
        return {"verdict": ERROR, "prediction": None, "response": first.text if first else None, "error": f"{type(exc).__name__}: {exc}"}
    try:
        verdict, prediction = task.judge(text, reply.finish_reason, case, model.profile, sent.size)
    except Exception as exc:  # a judge must never raise; if it does, the case says so instead of the run dying
        return {"verdict": ERROR, "prediction": None, "response": reply.text, "error": f"guitest bug: the {task.name} judge raised {type(exc).__name__}: {exc}"}
    if prediction and prediction.get("space_guessed"):
        notes.append(f"auto_space={prediction['space']}")
    if prediction and prediction.get("outside_image"):
        notes.append("outside_image")
    if prediction and "raw" in prediction and prediction.get("space") not in (None, "normalized") and max(abs(v) for v in prediction["raw"]) <= 1:
        notes.append("coordinates_look_normalized")  # a profile/model mismatch would score ~0 silently: say so
    for note in (prediction or {}).pop("notes", ()):
        notes.append(note)
    out: dict[str, Any] = {"verdict": verdict, "prediction": prediction, "response": reply.text, "finish_reason": reply.finish_reason}
    if first is not None:
        out["first_response"] = first.text
    if stored:
        out["cached"] = True
    return out


def case_verdict(attempts: list[dict[str, Any]]) -> str:
    """The verdict of a repeated case: error if any attempt errored (so --lf re-runs it), the attempts'
    common verdict when they agree, ``partial`` when some hit and some did not, else the commonest miss-like one."""
    verdicts = [a["verdict"] for a in attempts]
    if ERROR in verdicts:
        return ERROR
    if len(set(verdicts)) == 1:
        return verdicts[0]
    if HIT in verdicts:
        return PARTIAL
    return max(sorted(set(verdicts)), key=verdicts.count)


def representative(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The prediction, response and error shown for a repeated case: its first error, else its first hit, else its last attempt."""
    chosen = next((a for a in attempts if a["verdict"] == ERROR), None) or next((a for a in attempts if a["verdict"] == HIT), attempts[-1])
    return {k: v for k, v in chosen.items() if k != "verdict"}
