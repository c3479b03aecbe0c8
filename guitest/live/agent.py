"""Agents for live episodes, as :class:`~guitest.live.loop.Policy` objects over guitest's models.

- :class:`ModelPolicy`: any model adapter (``openai:``, ``hf:``, a custom one) answering one step per
  call: the step prompt of the profile's action convention (:mod:`guitest.live.prompts`) with the
  instruction and the history of earlier actions as text, the current screenshot (sized by the profile,
  as for grounding), and optionally the most recent earlier screenshots (``history_images``); the reply
  read by the convention's parser and mapped to screen pixels through the profile's coordinate space.
  Each call holds a ``--concurrency`` slot and goes through the response cache, keyed by the step's
  screenshot and the whole prompt (history included), so re-running a deterministic episode is free.
- :class:`ScriptedPolicy`: a fixed list of actions in screen pixels (the desktop tasks' oracle), then done.
- :class:`GroundingPolicy`: a grounding model as a one-shot agent: it clicks where the model grounds the
  instruction on the first screen, then says done (the OCR baseline as a real, weak agent).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import ModelError
from ..exchange import Case, Prompt, SentImage
from ..images import image_from_bytes
from ..models.base import Model
from ..sample import Sample
from ..tasks.live import Live
from .actions import CLICK, DONE, Action, to_screen
from .baselines import action_line
from .loop import Decision, StepInput
from .parsers import convention_of, read, render
from .prompts import step_prompt

#: a grounding reply that is read for :class:`GroundingPolicy`
GROUNDING_TASK = "grounding"
#: the task a step's case carries (a step's prompt is the convention's, not the task's)
STEP_TASK = Live()


def convention_and_space(model: Model) -> tuple[str, str]:
    """The action convention a model's profile speaks, and the coordinate space its replies are read in
    (guitest's own format is normalized by definition)."""
    convention = convention_of(model.profile.name)
    return convention, ("normalized" if convention == "guitest" else model.profile.space)


class ModelPolicy:
    """A model's step-by-step agent (see the module docstring). ``sample`` is the episode's case (for adapters
    that look at it); ``asker(case, prompt, sent)`` is how a call is made (slot, cache, bounded reply)."""

    def __init__(self, model: Model, sample: Sample, asker: Any, attempt: int = 0, history_images: int = 0) -> None:
        self.model = model
        self.sample = sample
        self.asker = asker
        self.attempt = attempt
        self.history_images = max(int(history_images), 0)
        self.convention, self.space = convention_and_space(model)
        self._seen: list[SentImage] = []  # earlier screenshots as sent, the most recent last

    def act(self, step: StepInput) -> Decision:
        """Ask the model for the next action; a reply without a readable action uses the step (noted)."""
        obs = step.observation
        with image_from_bytes(obs.screenshot, f"{self.sample.id}, step {step.step + 1}") as image:
            sent_size = self.model.plan_size(obs.size)
            case = Case(sample=self.sample, original_size=obs.size, truth=None, sent_size=sent_size, task=STEP_TASK, attempt=self.attempt)
            sent = self.model.preprocess(image, case)
        case = replace(case, sent_size=sent.size)
        version = "qwen3" if self.model.profile.name.startswith("qwen3") else "qwen2.5"
        text = step_prompt(self.convention, step.instruction, step.history_texts, sent.size, version=version, normalized=self.space == "normalized")
        prompt = self._prompt(text.system, text.user, sent)
        reply, stored, cut = self.asker(case, prompt, sent)
        if self.history_images:
            self._seen = (self._seen + [sent])[-self.history_images :]
        notes: tuple[str, ...] = ("reply_cut",) if cut else ()
        if reply.finish_reason == "length":  # never act on a reply cut off before its answer
            return Decision(reply=reply.text, action=None, notes=notes + ("truncated",), finish_reason=reply.finish_reason, cached=stored is not None)
        parsed = read(self.convention, self.model.parse_response(self.model.postprocess(reply, case), case))
        action = to_screen(parsed.action, self.space, sent.size, obs.size) if parsed.action is not None else None
        line = action_line(render(self.convention, parsed.action, 4)) if parsed.action is not None else ""
        return Decision(reply=reply.text, action=action, text=line, notes=notes + parsed.notes, finish_reason=reply.finish_reason, cached=stored is not None)

    def _prompt(self, system: str | None, user: str, sent: SentImage) -> Prompt:
        """The step's prompt: the current screenshot and the text, after the earlier screenshots kept (if any)."""
        if not self._seen:
            return Prompt(user=user, system=system)
        parts: list[str | int] = []
        for n, _ in enumerate(self._seen):
            parts += [f"Screenshot {len(self._seen) - n} step(s) ago:", n]
        parts += ["The current screenshot:", len(self._seen), user]
        return Prompt(user=user, system=system, parts=tuple(parts), images=(*self._seen, sent))


class ScriptedPolicy:
    """A fixed solution: ``actions`` (screen pixels) one per step, then ``done``."""

    def __init__(self, actions: list[Action]) -> None:
        self.actions = actions

    def act(self, step: StepInput) -> Decision:
        action = self.actions[step.step] if step.step < len(self.actions) else Action(DONE)
        return Decision(reply=None, action=action, notes=("scripted",))


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
            return Decision(reply=None, action=Action(DONE), notes=("one_shot",))
        obs = step.observation
        sample = replace(self.sample, instruction=step.instruction, image="", box=(0.0, 0.0, float(obs.size[0]), float(obs.size[1])))
        with image_from_bytes(obs.screenshot, f"{self.sample.id}, step 1") as image:
            case = Case(sample=sample, original_size=obs.size, truth=sample.box, sent_size=self.model.plan_size(obs.size), task=self.task)
            prompt, sent = self.task.inputs(self.model, case, image, None)
        reply, stored, _ = self.asker(case, prompt, sent)
        text = self.model.parse_response(self.model.postprocess(reply, case), case)
        _, prediction = self.task.judge(text, reply.finish_reason, case, self.model.profile, sent.size)
        if not prediction or "pixel" not in prediction:
            return Decision(reply=reply.text, action=None, notes=("no_point",), cached=stored is not None)
        x, y = prediction["pixel"]
        return Decision(reply=reply.text, action=Action(CLICK, point=(float(x), float(y)), space="screen"), cached=stored is not None)


def not_an_agent(model: Model) -> ModelError:
    """The error for a model that cannot act in a live task."""
    return ModelError(f"--model={model.name} cannot act in live tasks: use an openai:/hf:/custom model, or the oracle, random or ocr baselines")
