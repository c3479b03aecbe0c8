"""``anthropic:MODEL``: Claude as a live agent through Anthropic's computer-use tool (Messages API, beta).

The tool loop, as Anthropic's documentation (platform.claude.com/docs/en/agents-and-tools/tool-use/
computer-use-tool) and its reference implementation (anthropics/anthropic-quickstarts,
computer-use-demo/computer_use_demo/loop.py and tools/computer.py) run it:

- the request declares the ``computer`` tool in the version the model takes (:func:`tool_version`:
  ``computer_20251124`` with zoom enabled for Claude Opus 4.5 and later, Sonnet 4.6 and later;
  ``computer_20250124`` for the others, as the documentation's beta-header list pairs them;
  ``--computer-tool`` overrides) with ``display_width_px``/``display_height_px`` (:mod:`guitest.live.cua.display`),
  and sends the beta header of that version (``computer-use-2025-11-24`` or ``computer-use-2025-01-24``);
- the first user message is the instruction, then the screenshot (the documentation's prompting tip: the text
  before the image);
- every ``tool_use`` block of a reply runs, in order, in one step; the next request answers each with a
  ``tool_result`` holding the screenshot after it (its zoom, or its cursor position), or ``is_error`` with
  what was wrong with it (the demo's ``ToolError``: a coordinate off the display, a missing field, an action
  the tool version lacks);
- a reply without ``tool_use`` ends the episode: ``done``, or ``fail`` when it says ``[INFEASIBLE]``
  (OSWorld's rule, mm_agents/anthropic/main.py, whose system prompt asks for that marker; so does guitest's
  :data:`SYSTEM`);
- tool-result screenshots older than the 10 most recent are dropped in chunks of ``--screenshot-chunk`` (10), as
  OSWorld's ``_maybe_filter_to_n_most_recent_images`` does (``only_n_most_recent_images=10``): its Claude runner
  builds ``AnthropicAgent`` without a provider, whose default is Bedrock, where ``image_truncation_threshold`` stays
  10; its Anthropic API branch (and the demo's prompt-caching default) make it 20;
- ``stop_reason`` ``refusal`` is an error of the step (not cached, ``--lf`` asks again); ``max_tokens`` is a
  truncated reply: nothing runs and the same request is asked at the next step.

Where guitest departs: no ``thinking`` setting is sent, so each model thinks as it does by default (OSWorld enables a
2048-token budget), and no sampling setting (the ``anthropic`` client 2.x takes none: ``--temperature`` does not
apply); no prompt caching (it changes cost, not replies); no bash or text-editor tool (guitest's environments take
GUI actions only).
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import ModelError
from ...exchange import SentImage
from ...cost.usage import Usage, from_anthropic
from .. import keys as keynames
from ..actions import (
    CLICK,
    DOUBLE_CLICK,
    DRAG,
    HOLD_KEY,
    KEY,
    MIDDLE_CLICK,
    MOUSE_DOWN,
    MOUSE_UP,
    MOVE,
    RIGHT_CLICK,
    SCROLL,
    TRIPLE_CLICK,
    TYPE,
    WAIT,
    Action,
)
from . import adapter
from .adapter import ComputerUseModel, ToolLoop
from .display import Display, anthropic_display
from .turns import CURSOR, ZOOM, Call, Op, Turn, listed, look, number, shown

V20250124, V20251124 = "computer_20250124", "computer_20251124"
#: the beta header each tool version needs (the computer-use tool page's list)
BETAS = {V20250124: "computer-use-2025-01-24", V20251124: "computer-use-2025-11-24"}
#: actions of each version (tools/computer.py's Action_20250124; the documentation adds zoom in 20251124)
ACTIONS_20250124 = frozenset(
    {
        "key",
        "type",
        "mouse_move",
        "left_click",
        "left_click_drag",
        "right_click",
        "middle_click",
        "double_click",
        "screenshot",
        "cursor_position",
        "left_mouse_down",
        "left_mouse_up",
        "scroll",
        "hold_key",
        "wait",
        "triple_click",
    }
)
ACTIONS = {V20250124: ACTIONS_20250124, V20251124: ACTIONS_20250124 | {"zoom"}}
CLICKS = {"left_click": CLICK, "right_click": RIGHT_CLICK, "middle_click": MIDDLE_CLICK, "double_click": DOUBLE_CLICK, "triple_click": TRIPLE_CLICK}
SCROLLS = {"up": (0.0, -1.0), "down": (0.0, 1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0)}
MAX_DURATION = 100  # seconds: the demo's limit for wait and hold_key
#: models from this version on answer the classic tool with a 400 on the Claude API (Opus 5.5, Sonnet 5.5, Haiku 5.5:
#: their migration notes), taking the computer toolset instead
TOOLSET_ONLY = (5, 5)
IMAGES_KEPT = 10  # OSWorld: only_n_most_recent_images=10; the chunk is --screenshot-chunk (image_truncation_threshold)
INFEASIBLE = "[INFEASIBLE]"
SYSTEM = (
    "You are operating {what} through the computer tool; its screen is {width}x{height} pixels. Complete the user's "
    "task on your own: nobody is watching, so do not ask for confirmation or clarification. When the task is done, "
    'reply without calling a tool. If the task cannot be done, reply with exactly "' + INFEASIBLE + '" (with the '
    "square brackets) and why."
)
_NAME = re.compile(r"claude-(?:(?P<family>opus|sonnet|haiku|fable|mythos)-(?P<major>\d+)(?:-(?P<minor>\d{1,2})(?!\d))?|(?P<major2>\d+)-(?P<minor2>\d{1,2})-(?P<family2>opus|sonnet|haiku))")


def model_version(name: str) -> tuple[str, tuple[int, int]] | None:
    """``(family, (major, minor))`` of a Claude model name (``claude-sonnet-4-5-20250929``, ``claude-opus-4-7``,
    ``claude-3-7-sonnet-20250219``; ``claude-opus-4-20250514`` is 4.0), or None for a name that is not one."""
    match = _NAME.search(name.lower())
    if match is None:
        return None
    if match["family"]:
        return match["family"], (int(match["major"]), int(match["minor"] or 0))
    return match["family2"], (int(match["major2"]), int(match["minor2"]))


def tool_version(name: str, chosen: str = "auto") -> str:
    """The computer tool's version for model ``name``: ``chosen`` unless it is ``auto``; else ``computer_20251124`` for
    Claude Opus 4.5+ and Sonnet 4.6+ (and any model of a later major version, or a name guitest cannot read),
    ``computer_20250124`` for the rest (Sonnet 4.5, Haiku 4.5, Opus 4.1, Sonnet 4, Opus 4, Sonnet 3.7); a
    :class:`ModelError` for the models that take only the computer toolset (:data:`TOOLSET_ONLY`)."""
    if chosen != "auto":
        return chosen
    version = model_version(name)
    if version is None:
        return V20251124
    family, number = version
    if number >= TOOLSET_ONLY:
        raise ModelError(
            f"--model=anthropic:{name}: on the Claude API this model takes computer use only as the computer toolset "
            "(computer_toolset_20260801), which guitest does not speak yet; --computer-tool=computer_20251124 sends the "
            "classic tool anyway (for a platform that still serves it to this model)"
        )
    newest = number >= (5, 0) or (family == "opus" and number >= (4, 5)) or (family == "sonnet" and number >= (4, 6))
    return V20251124 if newest else V20250124


def high_resolution(name: str) -> bool:
    """Whether the model sees images up to 2576 pixels on the long edge: Claude Opus 4.7 and later (the vision page);
    a name guitest cannot read gets the smaller limits, which every model takes."""
    version = model_version(name)
    return version is not None and (version[1] >= (5, 0) or (version[0] == "opus" and version[1] >= (4, 7)))


class AnthropicComputerUse(ComputerUseModel):
    """Claude through the Messages API's computer-use tool (see the module docstring), with the ``anthropic`` package."""

    provider = "anthropic"
    api = "Anthropic's Messages API (computer-use tool)"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com"
    example = "anthropic:claude-sonnet-4-5"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool = tool_version(self.model, self.settings.computer_tool)
        if self.tool not in BETAS:
            raise ModelError(f"--computer-tool={self.tool}: expected auto or one of {', '.join(BETAS)}")
        self.high_resolution = high_resolution(self.model)
        try:
            import anthropic  # noqa: F401
        except ImportError:
            raise ModelError("--model=anthropic: needs the anthropic package: pip install 'guitest[anthropic]'") from None

    @property
    def tool_loop(self) -> ToolLoop:
        """The runner this adapter is, for the report (see :class:`~guitest.live.cua.adapter.ToolLoop`)."""
        return ToolLoop(
            name="anthropic-computer-use",
            source="platform.claude.com computer-use tool page; anthropics/anthropic-quickstarts computer-use-demo (loop.py, "
            "tools/computer.py); xlang-ai/OSWorld mm_agents/anthropic/main.py and utils.py (stop rules, screenshots kept)",
            convention=f"{self.tool} ({BETAS[self.tool]})",
            history=f"the whole conversation, its {IMAGES_KEPT} most recent tool-result screenshots and up to {self.settings.screenshot_chunk - 1} more",
            reference={"only_n_most_recent_images": IMAGES_KEPT, "image_truncation_threshold": self.settings.screenshot_chunk, "max_tokens": 4096},
            # OSWorld's runners/run_multienv_claude.py: --sleep_after_execution 0.0, which lib_run_single.run_single_example
            # passes to DesktopEnv.step(action, pause)
            sleep_after_execution=0.0,
            evaluate_after=20.0,  # lib_run_single.run_single_example: time.sleep(20) before env.evaluate
        )

    def display(self, screen: tuple[int, int]) -> Display:
        """The display the tool declares for screenshots of ``screen`` pixels."""
        return anthropic_display(screen, self.high_resolution)

    def conversation(self, environment: str) -> "Conversation":
        """A new episode's conversation (``environment``: ``browser`` or ``linux``, what the system prompt says is operated)."""
        return Conversation(self, "a web page in a browser" if environment == "browser" else "a computer's desktop")

    def client_class(self) -> Any:
        import anthropic

        return anthropic.Anthropic

    reply_fields = ("id", "content", "stop_reason", "stop_details")

    def create(self, client: Any, request: dict[str, Any]) -> Any:
        return client.beta.messages.create(**request)

    def finish(self, reply: dict[str, Any]) -> str | None:
        return reply.get("stop_reason")

    def read_usage(self, usage: Any) -> Usage | None:
        return from_anthropic(usage)

    def refusal(self, reply: dict[str, Any]) -> str | None:
        if reply.get("stop_reason") != "refusal":
            return None
        details = reply.get("stop_details") or {}
        text = " ".join(str(b.get("text") or "") for b in listed(reply.get("content")) if isinstance(b, dict) and b.get("type") == "text").strip()
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return f"stop_reason refusal{' (' + str(details.get('category')) + ')' if isinstance(details, dict) and details.get('category') else ''}: {explanation or text or 'no explanation'}"

    def image_part(self, image: SentImage) -> Any:
        return {"type": "base64", "media_type": image.mime or "image/png", "data": _base64(image)}

    def tool_record(self) -> dict[str, Any]:
        return {
            "type": self.tool,
            "beta": BETAS[self.tool],
            "zoom": self.tool == V20251124,
            "image_limits": "2576 px long edge, 4784 visual tokens" if self.high_resolution else "1568 px long edge, 1.15 megapixels",
        }


#: the model registry's factory of ``anthropic:MODEL`` (guitest.registry.MODELS)
make = AnthropicComputerUse.make


class Conversation(adapter.Conversation):
    """One episode's Messages conversation: the system prompt, the tool, the messages so far (see the module docstring)."""

    model: AnthropicComputerUse

    def __init__(self, model: AnthropicComputerUse, environment: str) -> None:
        super().__init__(model, environment)
        self.messages: list[dict[str, Any]] = []

    def request(self, instruction: str, screenshot: Any, results: list[Any] | None, display: Display) -> dict[str, Any]:
        """The next request: the first (``results`` None: the instruction and the screenshot), or one answering the last
        reply's tool calls with ``results`` (:class:`~guitest.live.cua.policy.Result`, one per call, in order)."""
        self.display = display
        if results is None:
            messages = [{"role": "user", "content": [{"type": "text", "text": instruction}, {"type": "image", "source": screenshot}]}]
        else:
            messages = self.messages + [{"role": "user", "content": [self._tool_result(r) for r in results]}]
        messages = _keep_recent_images(messages, IMAGES_KEPT, self.model.settings.screenshot_chunk)
        width, height = display.size
        tool: dict[str, Any] = {"type": self.model.tool, "name": "computer", "display_width_px": width, "display_height_px": height}
        if self.model.tool == V20251124:
            tool["enable_zoom"] = True
        return {
            "model": self.model.model,
            "max_tokens": self.model.max_tokens,
            "system": SYSTEM.format(what=self.environment, width=width, height=height),
            "tools": [tool],
            "messages": messages,
            "betas": [BETAS[self.model.tool]],
        }

    def commit(self, request: dict[str, Any], reply: dict[str, Any]) -> None:
        """Keep the request's messages and the reply as the conversation so far (a reply that was read, not truncated)."""
        self.messages = list(request["messages"]) + [{"role": "assistant", "content": reply.get("content") or []}]

    @staticmethod
    def _tool_result(result: Any) -> dict[str, Any]:
        if result.error is not None:
            return {"type": "tool_result", "tool_use_id": result.id, "content": result.error, "is_error": True}
        content: list[dict[str, Any]] = []
        if result.text:
            content.append({"type": "text", "text": result.text})
        if result.image is not None:
            content.append({"type": "image", "source": result.image})
        return {"type": "tool_result", "tool_use_id": result.id, "content": content, "is_error": False}

    def read(self, reply: dict[str, Any]) -> Turn:
        """The reply's turn: each ``tool_use`` block as a :class:`Call` (see :func:`read_call`), the text, the stop rule."""
        assert self.display is not None
        blocks = [b for b in listed(reply.get("content")) if isinstance(b, dict)]
        text = "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text").strip()
        stop = reply.get("stop_reason")
        if stop == "max_tokens":
            return Turn(text=text, truncated=True, id=reply.get("id"), notes=("truncated",))
        calls = tuple(read_call(b, self.display, self.model.tool) for b in blocks if b.get("type") == "tool_use")
        if INFEASIBLE in text:  # OSWorld's AnthropicAgent: the marker anywhere in the reply is FAIL, its actions dropped
            return Turn(text=text, end="fail", reason=f"the reply says {INFEASIBLE}", id=reply.get("id"), notes=("infeasible",))
        if not calls:
            return Turn(text=text, end="done", reason=f"no tool call (stop_reason {stop})", id=reply.get("id"))
        return Turn(calls=calls, text=text, id=reply.get("id"))


def read_call(block: dict[str, Any], display: Display, version: str) -> Call:
    """A ``tool_use`` block of the ``computer`` tool as one :class:`Op`, its points in pixels of the declared display;
    what the demo's ``ComputerTool20250124`` refuses (a ``ToolError``) is an :class:`Op` with the error it states."""
    given = block.get("input")
    raw: dict[str, Any] = given if isinstance(given, dict) else {}
    call_id = str(block.get("id") or "")
    if block.get("name") != "computer":
        return Call(call_id, (Op(error=f"Unknown tool {shown(block.get('name'))}: only the computer tool is available"),), {"name": block.get("name"), "input": raw})
    try:
        op = _op(raw, display, version)
    except _ToolError as exc:
        op = Op(error=str(exc))
    return Call(call_id, (op,), raw)


class _ToolError(Exception):
    """What the tool says back for a call it cannot run (the demo's ToolError)."""


def _op(raw: dict[str, Any], display: Display, version: str) -> Op:
    action = raw.get("action")
    if not isinstance(action, str) or action not in ACTIONS[version]:
        raise _ToolError(f"Invalid action: {shown(action)}" + (f" (the {version} tool has no zoom)" if action == "zoom" else ""))
    text = raw.get("text")
    if text is not None and not isinstance(text, str):
        raise _ToolError(f"{shown(text)} must be a string")
    key = raw.get("key")
    held = keynames.combo(text or (key if isinstance(key, str) else "")) if action in CLICKS or action == "scroll" else ()
    if action == "screenshot":
        return Op(look())
    if action == "cursor_position":
        return Op(shows=CURSOR)
    if action == "zoom":
        region = raw.get("region")
        if not isinstance(region, list) or len(region) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) for v in region):
            raise _ToolError(f"region={shown(region)} must be [x1, y1, x2, y2], four integers")
        x1, y1, x2, y2 = region
        width, height = display.size
        if not (0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height):
            raise _ToolError(f"region {shown(region, 80)} is not a box inside the {width}x{height} display")
        return Op(shows=ZOOM, region=(x1, y1, x2, y2))
    if action in ("key", "type", "hold_key"):
        if text is None:
            raise _ToolError(f"text is required for {action}")
        if action == "type":
            return Op(Action(TYPE, text=text))
        combo = keynames.combo(text)
        if not combo:
            raise _ToolError(f"text={shown(text)} names no key")
        if action == "key":
            return Op(Action(KEY, keys=combo))
        return Op(Action(HOLD_KEY, keys=combo, seconds=_duration(raw, action)))
    if action == "wait":
        return Op(Action(WAIT, seconds=_duration(raw, action)))
    point = _point(raw.get("coordinate"), display, "coordinate", required=action in ("mouse_move", "left_click_drag"))
    if action == "mouse_move":
        return Op(Action(MOVE, point=point, space="pixel_sent"))
    if action in ("left_mouse_down", "left_mouse_up"):
        return Op(Action(MOUSE_DOWN if action == "left_mouse_down" else MOUSE_UP, point=point, space="pixel_sent"))
    if action == "left_click_drag":  # from start_coordinate (documented), else from where the pointer is (the demo)
        start = _point(raw.get("start_coordinate"), display, "start_coordinate", required=False)
        return Op(Action(DRAG, point=start, end=point, space="pixel_sent"))
    if action == "scroll":
        direction, amount = raw.get("scroll_direction"), raw.get("scroll_amount")
        if not isinstance(direction, str) or direction not in SCROLLS:
            raise _ToolError(f"scroll_direction={shown(direction)} must be 'up', 'down', 'left', or 'right'")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
            raise _ToolError(f"scroll_amount={shown(amount)} must be a non-negative int")
        notches = number(amount)
        if notches is None:  # an int past the largest float (the demo would pass it to xdotool's --repeat)
            raise _ToolError(f"scroll_amount={shown(amount)} is too large a number")
        dx, dy = SCROLLS[direction]
        return Op(Action(SCROLL, point=point, scroll=(dx * notches, dy * notches), keys=held, space="pixel_sent"))
    return Op(Action(CLICKS[action], point=point, keys=held, space="pixel_sent"))


def _point(value: Any, display: Display, field: str, required: bool) -> tuple[float, float] | None:
    """A coordinate of the display (the demo's validate_and_get_coordinates: two non-negative ints, within the display)."""
    if value is None:
        if required:
            raise _ToolError(f"{field} is required")
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise _ToolError(f"{shown(value)} must be a tuple of length 2")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise _ToolError(f"{shown(value)} must be a tuple of non-negative ints")
    x, y = value
    width, height = display.size
    if x > width or y > height:
        raise _ToolError(f"Coordinates {shown(x)}, {shown(y)} are out of bounds")
    return float(x), float(y)


def _duration(raw: dict[str, Any], action: str) -> float:
    duration = raw.get("duration")
    if not isinstance(duration, (int, float)) or isinstance(duration, bool):
        raise _ToolError(f"duration={shown(duration)} must be a number")
    seconds = number(duration)
    if seconds is None:  # NaN (the demo's two comparisons are both false for it), an infinity, an int of 400 digits
        raise _ToolError(f"duration={shown(duration)} must be a finite number")
    if seconds < 0:
        raise _ToolError(f"duration={shown(duration)} must be non-negative")
    if seconds > MAX_DURATION:
        raise _ToolError(f"duration={shown(duration)} is too long.")
    return seconds


def _keep_recent_images(messages: list[dict[str, Any]], keep: int, chunk: int) -> list[dict[str, Any]]:
    """``messages`` with all but the ``keep`` most recent tool-result images removed, in chunks of ``chunk`` (the demo's
    ``_maybe_filter_to_n_most_recent_images``); the messages given are not changed."""
    results = [
        (m, i, block)
        for m, message in enumerate(messages)
        for i, block in enumerate(message.get("content") or [])
        if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block.get("content"), list)
    ]
    total = sum(1 for _, _, block in results for part in block["content"] if isinstance(part, dict) and part.get("type") == "image")
    remove = total - keep
    remove -= remove % chunk
    if remove <= 0:
        return messages
    out = [dict(message, content=list(message.get("content") or [])) if isinstance(message.get("content"), list) else message for message in messages]
    for m, i, block in results:
        kept = []
        for part in block["content"]:
            if isinstance(part, dict) and part.get("type") == "image" and remove > 0:
                remove -= 1
                continue
            kept.append(part)
        out[m]["content"][i] = dict(block, content=kept)
    return out


def _base64(image: SentImage) -> str:
    import base64

    if image.data is None:
        raise ModelError("no image to send: the screenshot was not encoded")
    return base64.b64encode(image.data).decode("ascii")
