"""A computer-use API as a live agent: one model call per step, every tool call of its reply run in order in that step.

:class:`ComputerUsePolicy` is the :class:`~guitest.live.loop.Policy` of the ``anthropic:`` and ``openai-cua:``
adapters (:mod:`guitest.live.cua.anthropic`, :mod:`guitest.live.cua.openai_responses`). Per step it:

1. answers the last reply's tool calls, one result per call in order, from the screens the environment showed after
   each of that step's actions: the screenshot after the call's last action (or, for a call that runs nothing, the
   latest screen: a ``screenshot``), a zoom into it, the cursor position, or the call's error;
2. sends the provider's next request (the first: the instruction and the screenshot) through the case's asker, so it
   holds a ``--concurrency`` slot and goes through the response cache, keyed by the whole request (its images by
   digest; OpenAI's ``previous_response_id`` included, so a cached episode replays its own chain of responses);
3. reads the reply (:class:`~guitest.live.cua.turns.Turn`) and hands the loop every action of it, in order, mapped
   from the declared display to screenshot pixels (:func:`~guitest.live.actions.to_screen`, space ``pixel_sent``), or
   ``done``/``fail`` by the provider's stop rule. An action with a number out of range (:func:`~guitest.live.actions.problem`)
   and every action past the :data:`~guitest.live.actions.MAX_ACTIONS` of a step is not run: its call's result is the
   tool's error saying why, as for a point off the display.

Screenshots are sent at the declared display's size (:mod:`guitest.live.cua.display`): the PNG as the environment
made it when no resize is needed, else resized once and encoded as PNG.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from PIL import Image

from ... import backends
from ...errors import ModelError
from ...exchange import Case, Prompt, SentImage
from ...images import encode, image_from_bytes, resized
from ...sample import Sample
from ...cost.usage import tokens_of
from ..actions import DONE, FAIL, MAX_ACTIONS, Action, from_screen, problem, to_screen
from ..agent import STEP_TASK
from ..loop import Decision, StepInput, describe
from ..protocol import Observation, TaskSpec
from .adapter import REQUEST_MARKER
from .display import Display, anthropic_display
from .turns import CURSOR, ZOOM, Turn, look

#: a wheel notch in CSS pixels, for scrolls given in pixels (OpenAI): the browser backend's notch
NOTCH_CSS_PIXELS = 50.0


@dataclass(frozen=True)
class ImageRef:
    """A screenshot in a request being built (becomes ``{"$image": n}`` in the prompt, the provider's form when sent)."""

    image: SentImage


@dataclass(frozen=True)
class Result:
    """The result of one tool call: ``image`` (an :class:`ImageRef`) and/or ``text``, or ``error`` (with ``image`` the
    screen as it stands, for a tool whose every result is a screenshot: OpenAI's); the safety checks acknowledged for it
    (OpenAI)."""

    id: str
    image: ImageRef | None = None
    text: str = ""
    error: str | None = None
    acknowledged: tuple[dict[str, Any], ...] = ()


@dataclass
class _Ran:
    """What the last decision ran, kept until its results are made: the turn, the screen it was decided on, the index
    of each operation's action among the decision's actions, the cursor each cursor operation reports (screen pixels),
    and why an operation's action was refused (a number out of range, past the cap of actions a step runs)."""

    turn: Turn
    before: Observation
    index: dict[tuple[int, int], int] = field(default_factory=dict)
    refused: dict[tuple[int, int], str] = field(default_factory=dict)
    cursor: dict[tuple[int, int], tuple[float, float] | None] = field(default_factory=dict)
    acknowledged: dict[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)


def environment_of(task: TaskSpec) -> str:
    """``browser`` for the web backends, ``linux`` for desktops (OpenAI's preview ``environment`` values)."""
    return "browser" if backends.backend(task.env).web else "linux"


class ComputerUsePolicy:
    """A computer-use adapter's agent for one episode (see the module docstring). ``asker(case, prompt, sent)`` makes a
    call as :func:`guitest.run.live_case._asker` does (slot, cache, bounded reply)."""

    def __init__(self, model: Any, sample: Sample, asker: Callable[..., Any], attempt: int, task: TaskSpec) -> None:
        self.model = model
        self.sample = sample
        self.asker = asker
        self.attempt = attempt
        self.conversation = model.conversation(environment_of(task))
        self.display: Display | None = None
        self.results: list[Result] | None = None  # the last reply's results, until a reply to them is read
        self.ran: _Ran | None = None
        self.pointer: tuple[float, float] | None = None  # screen pixels, where the last pointer action left it
        self._sent: dict[bytes, ImageRef] = {}

    def act(self, step: StepInput) -> Decision:
        """Answer the last reply's calls, ask for the next reply, and hand the loop its actions (see the module docstring)."""
        obs = step.observation
        if self.display is None:
            self.display = self.model.display(obs.size)
        if self.ran is not None:
            self.results = self._results(self.ran, after_each_action(step))
            self.ran = None
        first = self.results is None
        request = self.conversation.request(step.instruction, self._image(obs) if first else None, self.results, self.display)
        prompt, sent = encode_request(request, self.display.size)
        case = Case(sample=self.sample, original_size=obs.size, truth=None, sent_size=self.display.size, task=STEP_TASK, attempt=self.attempt)
        reply, stored, cut = self.asker(case, prompt, sent)
        try:
            data = json.loads(reply.text)
        except ValueError:
            raise ModelError(f"{self.model.model}: the reply is not the JSON guitest stored ({'cut at ' + str(len(reply.text)) + ' characters' if cut else 'malformed'})") from None
        turn = self.conversation.read(data)
        cached = stored is not None
        shown = render(turn)
        if turn.truncated:  # nothing runs; the same request goes again at the next step
            return Decision(reply=shown, actions=(), notes=turn.notes, finish_reason="length", cached=cached, usage=tokens_of(reply.usage))
        self.conversation.commit(request, data)
        self.results = None
        if turn.end is not None:
            final = Action(DONE if turn.end == "done" else FAIL, text=turn.reason)
            return Decision(reply=shown, actions=(final,), notes=turn.notes, finish_reason=reply.finish_reason, cached=cached, usage=tokens_of(reply.usage))
        return replace(self._decision(turn, obs, shown, reply.finish_reason, cached), usage=tokens_of(reply.usage))

    def _decision(self, turn: Turn, obs: Observation, shown: str, finish: str | None, cached: bool) -> Decision:
        notes = list(turn.notes)
        checked = [(n, call) for n, call in enumerate(turn.calls) if call.safety_checks]
        for _, call in checked:
            notes += [f"safety_check:{c.get('code') or c.get('id')}" for c in call.safety_checks]
        if checked and self.model.settings.safety_checks == "stop":
            said = "; ".join(f"{c.get('code')}: {c.get('message')}" for _, call in checked for c in call.safety_checks)
            return Decision(
                reply=shown, actions=(Action(FAIL, text=f"pending safety check, --safety-checks=stop: {said}"),), notes=tuple(notes + ["safety_check_stopped"]), finish_reason=finish, cached=cached
            )
        ran = _Ran(turn, obs, acknowledged={n: call.safety_checks for n, call in checked})
        actions: list[Action] = []
        pointer = self.pointer
        for n, call in enumerate(turn.calls):
            for k, op in enumerate(call.ops):
                if op.note:
                    notes.append(op.note)
                if op.error is not None:
                    notes.append("tool_error")
                    continue
                if op.shows == CURSOR:
                    ran.cursor[(n, k)] = pointer
                if op.action is None:
                    continue
                action = self._screen(op.action, op.scroll_pixels, obs)
                why = problem(action)
                if why is None and len(actions) >= MAX_ACTIONS:
                    why = f"not run: a step runs at most {MAX_ACTIONS} actions, and this reply asked for more"
                if why is not None:  # refused as the tool refuses a point off the display: the call's result says why
                    ran.refused[(n, k)] = why
                    notes.append("over_cap" if len(actions) >= MAX_ACTIONS else "action_out_of_range")
                    notes.append("tool_error")
                    continue
                ran.index[(n, k)] = len(actions)
                actions.append(action)
                pointer = action.end or action.point or pointer
        if not actions and any(op.error is None for _, op in turn.ops()):  # looks only (zoom, cursor): one screenshot runs
            actions.append(look())
        self.pointer = pointer
        self.ran = ran
        line = "; ".join(describe(a) for a in actions)
        return Decision(reply=shown, actions=tuple(actions), text=line, notes=tuple(dict.fromkeys(notes)), finish_reason=finish, cached=cached)

    def _screen(self, action: Action, scroll_pixels: bool, obs: Observation) -> Action:
        """An operation's action in screenshot pixels (scrolls given in display pixels become wheel notches)."""
        assert self.display is not None
        if scroll_pixels:
            per_notch = NOTCH_CSS_PIXELS * (obs.scale or 1.0) * self.display.size[0] / obs.size[0]  # display pixels a notch
            action = replace(action, scroll=(action.scroll[0] / per_notch, action.scroll[1] / per_notch))
        return to_screen(action, "pixel_sent", self.display.size, obs.size)

    def _results(self, ran: _Ran, after: list[Observation]) -> list[Result]:
        """One result per call of ``ran``'s turn, in order (see the module docstring)."""
        out = []
        latest = ran.before
        for n, call in enumerate(ran.turn.calls):
            error = None
            for k, op in enumerate(call.ops):
                index = ran.index.get((n, k))
                if index is not None and index < len(after):
                    latest = after[index]
                error = error or op.error or ran.refused.get((n, k))
            last = call.ops[-1] if call.ops else None
            acknowledged = ran.acknowledged.get(n, ())
            if error is not None and len(call.ops) == 1:  # a call that is one refused operation: its error is its result
                out.append(Result(call.id, image=self._image(latest), error=error, acknowledged=acknowledged))
            elif last is not None and last.shows == ZOOM and last.region is not None:
                out.append(Result(call.id, image=self._zoom(latest, last.region), acknowledged=acknowledged))
            elif last is not None and last.shows == CURSOR:
                out.append(self._cursor(call.id, ran.cursor.get((n, len(call.ops) - 1)), latest))
            else:
                out.append(Result(call.id, image=self._image(latest), acknowledged=acknowledged))
        return out

    def _cursor(self, call_id: str, pointer: tuple[float, float] | None, obs: Observation) -> Result:
        """The demo's ``cursor_position`` answer, ``X=..,Y=..`` in display pixels, from where guitest's own actions left
        the pointer (an environment does not report it)."""
        if pointer is None:
            return Result(call_id, error="The cursor position is not known: no pointer action has run in this episode yet.")
        assert self.display is not None
        x, y = from_screen(Action("move", point=pointer, space="screen"), "pixel_sent", self.display.size, obs.size).point or pointer
        return Result(call_id, text=f"X={round(x)},Y={round(y)}")

    def _image(self, obs: Observation) -> ImageRef:
        """The screenshot at the display's size: the PNG itself when it already is, else resized and encoded once."""
        assert self.display is not None
        ref = self._sent.get(obs.screenshot)
        if ref is None:
            if tuple(obs.size) == self.display.size and obs.screenshot.startswith(b"\x89PNG"):
                sent = SentImage(image=None, size=self.display.size, data=obs.screenshot, mime="image/png")
            else:
                with image_from_bytes(obs.screenshot, f"{self.sample.id} screenshot") as image:
                    data, mime, final = encode(resized(image.convert("RGB"), self.display.size))
                sent = SentImage(image=None, size=final.size, data=data, mime=mime)
            ref = self._sent[obs.screenshot] = ImageRef(sent)
        return ref

    def _zoom(self, obs: Observation, region: tuple[int, int, int, int]) -> ImageRef:
        """The region (display pixels) cut from the screenshot at its own resolution, scaled down only as far as the
        provider's image limits need (the documentation: a zoom shows the region at full resolution)."""
        assert self.display is not None
        sx, sy = obs.size[0] / self.display.size[0], obs.size[1] / self.display.size[1]
        x1, y1, x2, y2 = region
        box = (math.floor(x1 * sx), math.floor(y1 * sy), max(math.ceil(x2 * sx), math.floor(x1 * sx) + 1), max(math.ceil(y2 * sy), math.floor(y1 * sy) + 1))
        with Image.open(io.BytesIO(obs.screenshot)) as image:
            crop = image.convert("RGB").crop(box)
        size = anthropic_display(crop.size, getattr(self.model, "high_resolution", False)).size
        data, mime, final = encode(resized(crop, size))
        return ImageRef(SentImage(image=None, size=final.size, data=data, mime=mime))


def after_each_action(step: StepInput) -> list[Observation]:
    """The screens the environment showed after each action of the previous decision that ran, in order."""
    return list(step.results)


def encode_request(request: Any, size: tuple[int, int]) -> tuple[Prompt, SentImage]:
    """A request being built as a :class:`~guitest.exchange.Prompt`: its JSON in ``user`` (sorted keys, each image as
    ``{"$image": n}``), its images in ``images`` (each once), :data:`~guitest.live.cua.adapter.REQUEST_MARKER` as
    ``system``; and the image the call counts as sent (the last one)."""
    images: list[SentImage] = []
    seen: dict[int, int] = {}

    def walk(value: Any) -> Any:
        if isinstance(value, ImageRef):
            key = id(value.image)
            if key not in seen:
                seen[key] = len(images)
                images.append(value.image)
            return {"$image": seen[key]}
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    user = json.dumps(walk(request), sort_keys=True, ensure_ascii=False)
    sent = images[-1] if images else SentImage(image=None, size=size)
    return Prompt(user=user, system=REQUEST_MARKER, images=tuple(images)), sent


def render(turn: Turn) -> str:
    """A reply as the report shows it: the model's text, then each tool call's input as JSON (and its safety checks)."""
    lines = [turn.text] if turn.text else []
    for call in turn.calls:
        lines.append("computer: " + json.dumps(call.raw, ensure_ascii=False, sort_keys=True))
        if call.safety_checks:
            lines.append("pending_safety_checks: " + json.dumps(list(call.safety_checks), ensure_ascii=False, sort_keys=True))
    return "\n".join(lines)
