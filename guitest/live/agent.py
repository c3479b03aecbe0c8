"""Agents for live episodes, as :class:`~guitest.live.loop.Policy` objects over guitest's models.

- :class:`ModelPolicy`: any model adapter (``openai:``, ``hf:``, a custom one) answering one step per call, driven by
  its runner (:mod:`guitest.live.runners`: the runner of the model's profile, or ``--runner``): the runner sizes the
  screenshot, lays out the step's messages (system prompt, earlier screenshots, the model's own earlier replies),
  reads the reply into an ordered list of actions, applies its stop rules and maps the points to screen pixels.
  Each call holds a ``--concurrency`` slot and goes through the response cache, keyed by everything the step
  sends (every message, every image), so re-running a deterministic episode is free.
- :class:`GroundingPolicy`: a grounding model as a one-shot agent: it clicks where the model grounds the
  instruction on the first screen, then says done (the OCR baseline as a real, weak agent).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import ModelError
from ..exchange import Case
from ..images import decode_rgb, image_from_bytes, resized
from ..models.base import Model
from ..sample import Sample
from ..cost.usage import tokens_of
from ..tasks.live import Live
from .actions import CLICK, DONE, Action
from .loop import Decision, StepInput
from .runners import Past, Runner, for_model
from .runners.runner import action_line

#: a grounding reply that is read for :class:`GroundingPolicy`
GROUNDING_TASK = "grounding"
#: the task a step's case carries (a step's prompt is the convention's, not the task's)
STEP_TASK = Live()


class ModelPolicy:
    """A model's step-by-step agent (see the module docstring). ``sample`` is the episode's case (for adapters that
    look at it); ``asker(case, prompt, sent)`` is how a call is made (slot, cache, bounded reply); ``runner`` the
    runner (default: the model profile's); ``history_images`` the earlier screenshots a step sends (default: the
    runner's)."""

    def __init__(self, model: Model, sample: Sample, asker: Any, attempt: int = 0, runner: Runner | None = None, history_images: int | None = None) -> None:
        self.model = model
        self.sample = sample
        self.asker = asker
        self.attempt = attempt
        self.runner = runner if runner is not None else for_model(model)[0]
        self.images = self.runner.history_images if history_images is None else max(int(history_images), 0)
        self.space = self.runner.space_for(model)
        self.past: list[Past] = []  # the episode's earlier steps, as the runner sends them again

    def act(self, step: StepInput) -> Decision:
        """Ask the model for the next actions; a reply without readable actions uses the step (noted)."""
        obs = step.observation
        with image_from_bytes(obs.screenshot, f"{self.sample.id}, step {step.step + 1}") as image:
            size = self.runner.sizes(obs.size, self.model)
            case = Case(sample=self.sample, original_size=obs.size, truth=None, sent_size=size, task=STEP_TASK, attempt=self.attempt)
            source = resized(decode_rgb(image), size) if self.runner.resizes() and size != obs.size else image
            sent = self.model.preprocess(source, case)
        case = replace(case, sent_size=sent.size)
        prompt = self.runner.prompt(step.instruction, self.past, sent, self.images)
        reply, stored, cut = self.asker(case, prompt, sent)
        notes: tuple[str, ...] = ("reply_cut",) if cut else ()
        cached = stored is not None
        if reply.finish_reason == "length":  # never act on a reply cut off before its answer
            self.past.append(Past(reply.text, sent))
            return Decision(reply=reply.text, notes=notes + ("truncated",), finish_reason=reply.finish_reason, cached=cached, usage=tokens_of(reply.usage))
        text = self.model.parse_response(self.model.postprocess(reply, case), case)
        read = self.runner.read(text)
        actions, rules = self.runner.decide(read, self.past, step.step, step.budget)
        self.past.append(Past(reply.text, sent, actions, self.runner.line(text, actions)))
        screen = tuple(self.runner.to_screen(a, self.space, sent.size, obs.size) for a in actions)
        said = action_line(self.runner.render(actions)) if actions else ""
        return Decision(reply=reply.text, actions=screen, text=said, notes=notes + read.notes + rules, finish_reason=reply.finish_reason, cached=cached, usage=tokens_of(reply.usage))


class GroundingPolicy:
    """One click where ``model`` grounds the instruction on the first screen, then done (see the module docstring)."""

    def __init__(self, model: Model, sample: Sample, asker: Any) -> None:
        from ..tasks import grounding

        self.model = model
        self.sample = sample
        self.asker = asker
        self.task = grounding.TASK()

    def act(self, step: StepInput) -> Decision:
        if step.step > 0:
            return Decision(reply=None, actions=(Action(DONE),), notes=("one_shot",))
        obs = step.observation
        sample = replace(self.sample, instruction=step.instruction, image="", box=(0.0, 0.0, float(obs.size[0]), float(obs.size[1])))
        with image_from_bytes(obs.screenshot, f"{self.sample.id}, step 1") as image:
            case = Case(sample=sample, original_size=obs.size, truth=sample.box, sent_size=self.model.plan_size(obs.size), task=self.task)
            prompt, sent = self.task.inputs(self.model, case, image, None)
        reply, stored, _ = self.asker(case, prompt, sent)
        text = self.model.parse_response(self.model.postprocess(reply, case), case)
        _, prediction = self.task.judge(text, reply.finish_reason, case, self.model.profile, sent.size)
        if not prediction or "pixel" not in prediction:
            return Decision(reply=reply.text, notes=("no_point",), cached=stored is not None, usage=tokens_of(reply.usage))
        x, y = prediction["pixel"]
        return Decision(reply=reply.text, actions=(Action(CLICK, point=(float(x), float(y)), space="screen"),), cached=stored is not None, usage=tokens_of(reply.usage))


def not_an_agent(model: Model) -> ModelError:
    """The error for a model that cannot act in a live task."""
    return ModelError(f"--model={model.name} cannot act in live tasks: use an openai:/hf:/custom model, or the oracle, random or ocr baselines")
