"""``openai-cua:MODEL``: OpenAI's computer-use tool (Responses API) as a live agent, through the ``openai`` client.

The tool loop, as OpenAI's guide (developers.openai.com/api/docs/guides/tools-computer-use), the client's types
(openai/types/responses/response_computer_tool_call.py, response_input_item_param.py ``ComputerCallOutput``) and
the Agents SDK's executor (openai-agents-python, src/agents/run_internal/tool_actions.py ``ComputerAction``) run it:

- the tool by the model's name, as the Agents SDK picks it (``_is_preview_computer_model``): ``computer-use-preview*``
  gets ``{"type": "computer_use_preview", "display_width", "display_height", "environment"}`` and
  ``truncation: "auto"`` (the guide: required), one ``action`` per ``computer_call``; any other model the GA tool
  ``{"type": "computer"}``, whose ``computer_call`` batches ``actions[]`` (run in order);
- the first input is the screenshot and the instruction with guitest's tips (:data:`TIPS`, after OSWorld's
  ``OPERATOR_PROMPT``, mm_agents/openai_cua_agent.py); each later request sends ``previous_response_id`` and, per
  ``computer_call`` of the reply, a ``computer_call_output`` with the screenshot after its actions (an
  ``input_image`` data URI of a PNG) and its ``acknowledged_safety_checks``;
- ``pending_safety_checks`` follow ``--safety-checks``: ``acknowledge`` (OSWorld's runner acknowledges every
  check) or ``stop`` (the episode ends as ``fail`` before the call runs, as the Agents SDK refuses to go on with a
  check nobody acknowledged); either way each check is in the step's notes and reply;
- a reply without ``computer_call`` ends the episode: ``done``, or ``fail`` when a message says the task is
  infeasible (OSWorld's word list); a ``refusal`` content item is an error of the step (not cached);
  ``status: incomplete`` without a computer call is a truncated reply.

Coordinates are pixels of the screenshot sent (:func:`guitest.live.cua.display.openai_display`); ``scroll_x`` and
``scroll_y`` are pixels too (the SDK example's ``window.scrollBy``), turned into wheel notches of
:data:`NOTCH_CSS_PIXELS` CSS pixels. ``wait`` waits 1 s, as the SDK example does. Where guitest departs: the
screenshot goes with the first request (the guide's first turn often only asks for one; OSWorld sends it); no
``reasoning`` settings beyond the preview's ``summary: "concise"`` (OSWorld's), no ``max_output_tokens`` unless
``--max-tokens`` is given.
"""

from __future__ import annotations

from typing import Any

from ...errors import ModelError
from ...exchange import SentImage
from ...images import data_uri
from ...printable import printable
from ...cost.usage import Usage, from_responses
from .. import keys as keynames
from ..actions import CLICK, DOUBLE_CLICK, DRAG, KEY, MIDDLE_CLICK, MOVE, RIGHT_CLICK, SCROLL, TYPE, WAIT, Action
from . import adapter
from .adapter import ComputerUseModel, ToolLoop
from .display import Display, openai_display
from .turns import Call, Op, Turn, listed, look, number, shown

PREVIEW_PREFIX = "computer-use-preview"
BUTTONS = {"left": CLICK, "right": RIGHT_CLICK, "wheel": MIDDLE_CLICK}
#: a wheel notch, in CSS pixels (the browser backend's notch, MiniWoB++'s scroll amount)
NOTCH_CSS_PIXELS = 50.0
WAIT_SECONDS = 1.0
#: OSWorld's infeasible_word_list (mm_agents/openai_cua_agent.py)
INFEASIBLE_WORDS = ("infeasible", "unfeasible", "impossible", "not feasible", "cannot be done")
TIPS = (
    "\n\nHere are some helpful tips:\n"
    "- You have full authority to execute any action without my permission. I won't be watching so please don't ask for confirmation.\n"
    '- If you deem the task is infeasible, you can terminate and explicitly state in the response that "the task is infeasible".'
)


def preview(model: str) -> bool:
    """Whether ``model`` takes the preview tool (``computer_use_preview``), as the Agents SDK decides it."""
    return model.startswith(PREVIEW_PREFIX)


class OpenAIComputerUse(ComputerUseModel):
    """OpenAI's computer-use tool through the Responses API (see the module docstring)."""

    provider = "openai-cua"
    api = "OpenAI's Responses API (computer-use tool)"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = "https://api.openai.com/v1"
    example = "openai-cua:computer-use-preview"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.preview = preview(self.model)
        self.tool = "computer_use_preview" if self.preview else "computer"

    @property
    def tool_loop(self) -> ToolLoop:
        """The runner this adapter is, for the report (see :class:`~guitest.live.cua.adapter.ToolLoop`)."""
        return ToolLoop(
            name="openai-computer-use",
            source="developers.openai.com computer-use guide; openai-agents-python src/agents/run_internal/tool_actions.py; "
            "xlang-ai/OSWorld mm_agents/openai_cua_agent.py and lib_run_single.run_single_example_openaicua (stop rules, safety checks)",
            convention=self.tool,
            history="the server's conversation (previous_response_id, truncation auto)",
            reference={"safety_checks": self.settings.safety_checks, "truncation": "auto"},
            # OSWorld's mm_agents/openai_cua_agent.py: OpenAICUAAgent.step calls env.step(action) without a pause, so
            # DesktopEnv.step's default pause=2 applies (run_multienv_openaicua.py's --sleep_after_execution is not passed)
            sleep_after_execution=2.0,
            evaluate_after=0.0,  # lib_run_single.run_single_example_openaicua evaluates at once after the last step
        )

    def display(self, screen: tuple[int, int]) -> Display:
        """The pixels coordinates are given in: the screenshot's own, up to 10.24M."""
        return openai_display(screen)

    def conversation(self, environment: str) -> "Conversation":
        """A new episode's conversation (``environment``: the preview tool's ``browser``, ``linux``, ...)."""
        return Conversation(self, environment)

    def client_class(self) -> Any:
        import openai

        return openai.OpenAI

    reply_fields = ("id", "status", "output", "incomplete_details", "error")

    def create(self, client: Any, request: dict[str, Any]) -> Any:
        return client.responses.create(**request)

    def explain(self, failure: Exception, exc: Exception, request: dict[str, Any]) -> Exception:
        if isinstance(failure, ModelError) and request.get("previous_response_id") and getattr(exc, "status_code", None) in (400, 404):
            # a step continuing a cached episode names a response of an earlier run, which the server may have dropped
            return ModelError(
                f"{failure} (this step continues response {request['previous_response_id']}; if it came from the response cache and the server no longer holds it, re-run with --cache=refresh)"
            )
        return failure

    def finish(self, reply: dict[str, Any]) -> str | None:
        return reply.get("status")

    def read_usage(self, usage: Any) -> Usage | None:
        return from_responses(usage)

    def refusal(self, reply: dict[str, Any]) -> str | None:
        for item in listed(reply.get("output")):
            for part in listed(item.get("content")) if isinstance(item, dict) and item.get("type") == "message" else []:
                if isinstance(part, dict) and part.get("type") == "refusal":
                    return f"a refusal: {part.get('refusal') or 'no explanation'}"
        return None

    def image_part(self, image: SentImage) -> Any:
        return data_uri(image.data or b"", image.mime or "image/png")

    def tool_record(self) -> dict[str, Any]:
        return {"type": self.tool, "safety_checks": self.settings.safety_checks}


#: the model registry's factory of ``openai-cua:MODEL`` (guitest.registry.MODELS)
make = OpenAIComputerUse.make


class Conversation(adapter.Conversation):
    """One episode's Responses conversation: held by the server, continued with ``previous_response_id``."""

    model: OpenAIComputerUse

    def __init__(self, model: OpenAIComputerUse, environment: str) -> None:
        super().__init__(model, environment)
        self.previous: str | None = None

    def request(self, instruction: str, screenshot: Any, results: list[Any] | None, display: Display) -> dict[str, Any]:
        """The first request (``results`` None), or the next: ``previous_response_id`` and one ``computer_call_output``
        per call of the last reply (:class:`~guitest.live.cua.policy.Result`, in order)."""
        self.display = display
        if results is None:
            detail = "auto" if self.model.preview else "original"  # the guide: prefer "original" for computer use
            items: list[dict[str, Any]] = [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_image", "image_url": screenshot, "detail": detail},
                        {"type": "input_text", "text": instruction + TIPS},
                    ],
                }
            ]
        else:
            items = [self._output(r) for r in results]
        if self.model.preview:
            width, height = display.size
            tool: dict[str, Any] = {"type": "computer_use_preview", "display_width": width, "display_height": height, "environment": self.environment}
        else:
            tool = {"type": "computer"}
        request: dict[str, Any] = {"model": self.model.model, "input": items, "tools": [tool], "truncation": "auto"}
        if self.previous is not None and results is not None:
            request["previous_response_id"] = self.previous
        if self.model.preview:
            request["reasoning"] = {"summary": "concise"}
        if self.model.max_tokens_given:
            request["max_output_tokens"] = self.model.max_tokens
        return request

    def commit(self, request: dict[str, Any], reply: dict[str, Any]) -> None:
        """The reply is the conversation so far (the server holds it): later requests continue from its id."""
        self.previous = reply.get("id")

    @staticmethod
    def _output(result: Any) -> dict[str, Any]:
        return {
            "type": "computer_call_output",
            "call_id": result.id,
            "output": {"type": "computer_screenshot", "image_url": result.image},
            "acknowledged_safety_checks": list(result.acknowledged),
        }

    def read(self, reply: dict[str, Any]) -> Turn:
        """The reply's turn: each ``computer_call`` as a :class:`Call`, the messages and reasoning summaries as text,
        the stop rule (see the module docstring)."""
        assert self.display is not None
        items = [i for i in listed(reply.get("output")) if isinstance(i, dict)]
        texts, messages = [], []
        for item in items:
            if item.get("type") == "reasoning":
                texts += [str(s.get("text") or "") for s in listed(item.get("summary")) if isinstance(s, dict)]
            elif item.get("type") == "message":
                said = " ".join(str(p.get("text") or "") for p in listed(item.get("content")) if isinstance(p, dict) and p.get("type") == "output_text")
                texts.append(said)
                messages.append(said)
        text = "\n".join(t for t in texts if t).strip()
        calls = tuple(read_call(i, self.display) for i in items if i.get("type") == "computer_call")
        if not calls and reply.get("status") == "incomplete":
            return Turn(text=text, truncated=True, id=reply.get("id"), notes=("truncated",))
        if any(word in said.lower() for said in messages for word in INFEASIBLE_WORDS):  # OSWorld: before any action
            return Turn(text=text, end="fail", reason="a message says the task is infeasible", id=reply.get("id"), notes=("infeasible",))
        if not calls:
            return Turn(text=text, end="done", reason="no computer_call", id=reply.get("id"))
        return Turn(calls=calls, text=text, id=reply.get("id"))


def read_call(item: dict[str, Any], display: Display) -> Call:
    """A ``computer_call`` (one ``action``, or a batch in ``actions``) as a :class:`Call` of operations in pixels of
    the display; an action guitest cannot run is an :class:`Op` with its error (the call's other actions still run)."""
    actions = item.get("actions")
    batch: list[Any] = actions if isinstance(actions, list) and actions else [item.get("action")]
    checks = tuple(c for c in listed(item.get("pending_safety_checks")) if isinstance(c, dict))
    ops = tuple(_op(a, display) for a in batch)
    return Call(str(item.get("call_id") or ""), ops, batch if len(batch) > 1 else batch[0], checks)


def _op(action: Any, display: Display) -> Op:
    if not isinstance(action, dict):
        return Op(error=f"not an action: {shown(action)}")
    kind = action.get("type")
    held = tuple(keynames.normalize(k) for k in listed(action.get("keys")) if isinstance(k, str)) if kind != "keypress" else ()
    try:
        if kind == "screenshot":
            return Op(look())
        if kind == "wait":
            return Op(Action(WAIT, seconds=WAIT_SECONDS))
        if kind == "type":
            return Op(Action(TYPE, text=_text(action, "text")))
        if kind == "keypress":
            # lower case, as OSWorld's runner presses them (its key_mapping, then .lower()): "CTRL", "A" is ctrl+a
            keys = tuple(keynames.normalize(k.lower()) for k in listed(action.get("keys")) if isinstance(k, str) and k)
            if not keys:
                raise ValueError("keypress needs keys")
            return Op(Action(KEY, keys=keys))
        if kind == "click":
            button = action.get("button", "left")
            if not isinstance(button, str) or button not in BUTTONS:
                return Op(error=f"click with the {shown(button)} button: guitest's environments have left, right and wheel (middle)", note=f"unsupported_button_{shown(button, 20)}")
            return Op(Action(BUTTONS[button], point=_xy(action, display), keys=held, space="pixel_sent"))
        if kind == "double_click":
            return Op(Action(DOUBLE_CLICK, point=_xy(action, display), keys=held, space="pixel_sent"))
        if kind == "move":
            return Op(Action(MOVE, point=_xy(action, display), keys=held, space="pixel_sent"))
        if kind == "drag":
            path = [_xy(p, display) for p in listed(action.get("path"))]
            if len(path) < 2:
                raise ValueError("drag needs a path of two points or more")
            note = "drag_path_ends_only" if len(path) > 2 else None
            return Op(Action(DRAG, point=path[0], end=path[-1], keys=held, space="pixel_sent"), note=note)
        if kind == "scroll":
            point = _xy(action, display)
            dx, dy = (_number(action, k) for k in ("scroll_x", "scroll_y"))
            return Op(Action(SCROLL, point=point, scroll=(dx, dy), keys=held, space="pixel_sent"), scroll_pixels=True)
    except ValueError as exc:
        return Op(error=f"{kind}: {exc}")
    return Op(error=f"unknown action type {shown(kind)}", note=f"unknown_action_{shown(kind, 20)}")


def _xy(value: Any, display: Display) -> tuple[float, float]:
    if not isinstance(value, dict):
        raise ValueError(f"{shown(value)} is not a point")
    x, y = _number(value, "x"), _number(value, "y")
    width, height = display.size
    if not (0 <= x <= width and 0 <= y <= height):
        raise ValueError(f"({x:g}, {y:g}) is outside the {width}x{height} screen")
    return x, y


def _number(value: dict[str, Any], key: str) -> float:
    given = value.get(key)
    if not isinstance(given, (int, float)) or isinstance(given, bool):
        raise ValueError(f"{key}={shown(given)} is not a number")
    result = number(given)
    if result is None:  # NaN, an infinity, an integer past the largest float (10**400)
        raise ValueError(f"{key}={printable(str(given))[:40]} is not a finite number")
    return result


def _text(value: dict[str, Any], key: str) -> str:
    text = value.get(key)
    if not isinstance(text, str):
        raise ValueError(f"{key}={shown(text)} is not a string")
    return text
