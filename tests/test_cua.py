"""The computer-use APIs as live agents, without a browser: the declared display and its mapping, every action of both
tools read as the references read them, the stop rules, and whole episodes through the real ``anthropic`` and
``openai`` clients against the loopback fake of both APIs (tests/fakecua.py) with a scripted environment.

References named per row: Anthropic's computer-use tool page and vision page (platform.claude.com/docs), its demo
(anthropics/anthropic-quickstarts computer-use-demo, tools/computer.py and loop.py), OpenAI's computer-use guide
(developers.openai.com/api/docs/guides/tools-computer-use), OSWorld's agents (mm_agents/anthropic/main.py,
mm_agents/openai_cua_agent.py; read in a fork copy).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import fakecua
import fakeserver
from propbudget import examples
from guitest.cache import ResponseCache
from guitest.run.case import DEFAULT_OPTIONS, RunOptions
from guitest.errors import ModelError
from guitest.exchange import Case, Prompt, SentImage
from guitest.live.actions import Action, problem, to_screen
from guitest.live.cua import anthropic as cua_anthropic, openai_responses as cua_openai, policy as cua_policy
from guitest.live.cua.display import Display, anthropic_display, anthropic_resized, anthropic_scale, openai_display
from guitest.live.agent import STEP_TASK
from guitest.live.cua.policy import ComputerUsePolicy
from guitest.run.live_case import _asker
from guitest.live.loop import run_episode
from guitest.cost.spending import Meter
from guitest.live.protocol import Evaluation, Observation, TaskSpec
from guitest.models import load_model
from guitest.models.base import Settings
from guitest.sample import Sample

ANTHROPIC_KEY = "sk-ant-test-Zq81Lw"
OPENAI_KEY = "sk-oai-test-Pf27Xc"


def _require_anthropic() -> None:
    try:
        import anthropic  # noqa: F401
    except ImportError:
        (pytest.fail if os.environ.get("GUITEST_REQUIRE_ANTHROPIC") else pytest.skip)("the anthropic package is not installed (pip install 'guitest[anthropic]')")


# -- the declared display: the documentation's own examples ---------------------------------------------------------


@pytest.mark.parametrize(
    ("screen", "display"),
    [
        ((1920, 1080), (1429, 804)),  # get_scale_factor: sqrt(1.15e6 / 2073600) = 0.7447
        ((1512, 982), (1330, 864)),  # the computer-use page: "a 1512x982 screen gets downsampled to approximately 1330x864"
        ((1024, 768), (1024, 768)),  # XGA, under both limits: as it is
        ((480, 630), (480, 630)),  # MiniWoB++ at zoom 3
        ((2560, 1080), (1568, 661)),  # the long edge decides
    ],
)
def test_anthropic_display_follows_get_scale_factor(screen: tuple[int, int], display: tuple[int, int]) -> None:
    assert anthropic_display(screen, high_resolution=False).size == display
    scale = anthropic_scale(*screen)
    assert display == (int(screen[0] * scale), int(screen[1] * scale))


@pytest.mark.parametrize(
    ("size", "limits", "resized"),
    [
        ((1075, 1520), (1568, 1568), (924, 1307)),  # the vision page's A4 example
        ((1920, 1080), (1568, 1568), (1456, 819)),  # its cost table
        ((2000, 1500), (1568, 1568), (1270, 952)),
        ((3840, 2160), (2576, 4784), (2576, 1449)),  # Opus 4.7's limits: "downscaled to 2576x1449"
        ((1920, 1080), (2576, 4784), (1920, 1080)),  # fits the high-resolution tier as it is
    ],
)
def test_vision_resized_size_matches_the_documented_examples(size, limits, resized) -> None:
    assert anthropic_resized(*size, *limits) == resized


def test_openai_display_is_the_screenshot_up_to_the_original_detail_limit() -> None:
    assert openai_display((1920, 1080)).size == (1920, 1080) and not openai_display((1920, 1080)).scaled
    big = openai_display((5120, 2880))
    assert big.size[0] * big.size[1] <= 10_240_000 and big.size == (4266, 2400)


@pytest.mark.parametrize("screen", [(1920, 1080), (1512, 982), (2560, 1600), (3840, 2160)])
def test_display_pixels_map_to_the_screenshot_exactly(screen: tuple[int, int]) -> None:
    """A coordinate of the declared display is x * screen_width / display_width on the screenshot, per axis (the image
    sent is the screenshot resized to the display, so this is where its pixel lies); corners go to corners."""
    display = anthropic_display(screen, high_resolution=False)
    dw, dh = display.size
    for x, y in [(0, 0), (dw, dh), (dw // 2, dh // 3), (1, dh - 1), (dw - 7, 5)]:
        mapped = to_screen(Action("click", point=(float(x), float(y)), space="pixel_sent"), "pixel_sent", display.size, screen).point
        assert mapped is not None
        assert mapped[0] == pytest.approx(float(Fraction(x * screen[0], dw)), abs=1e-9)
        assert mapped[1] == pytest.approx(float(Fraction(y * screen[1], dh)), abs=1e-9)
    corner = to_screen(Action("click", point=(float(dw), float(dh)), space="pixel_sent"), "pixel_sent", display.size, screen).point
    assert corner == (float(screen[0]), float(screen[1]))


# -- tool versions, beta headers, image tiers: the computer-use page's model lists ----------------------------------


@pytest.mark.parametrize(
    ("model", "tool", "high"),
    [
        ("claude-opus-4-7", "computer_20251124", True),
        ("claude-opus-4-6", "computer_20251124", False),
        ("claude-sonnet-4-6", "computer_20251124", False),
        ("claude-opus-4-5-20251101", "computer_20251124", False),
        ("claude-sonnet-4-5-20250929", "computer_20250124", False),
        ("claude-haiku-4-5", "computer_20250124", False),
        ("claude-opus-4-1-20250805", "computer_20250124", False),
        ("claude-sonnet-4-20250514", "computer_20250124", False),
        ("claude-opus-4-20250514", "computer_20250124", False),
        ("claude-3-7-sonnet-20250219", "computer_20250124", False),
        ("claude-sonnet-5", "computer_20251124", True),
        ("a-proxy-name", "computer_20251124", False),  # unknown: the newest tool, the limits every model takes
    ],
)
def test_tool_version_and_image_tier_by_model(model: str, tool: str, high: bool) -> None:
    assert cua_anthropic.tool_version(model) == tool
    assert cua_anthropic.high_resolution(model) is high
    assert cua_anthropic.tool_version(model, "computer_20250124") == "computer_20250124"  # --computer-tool wins


def test_models_that_take_only_the_computer_toolset_say_so() -> None:
    for model in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"):
        with pytest.raises(ModelError, match="computer_toolset_20260801"):
            cua_anthropic.tool_version(model)
        assert cua_anthropic.tool_version(model, "computer_20251124") == "computer_20251124"


# -- Anthropic's computer tool, action by action ---------------------------------------------------------------------

D = Display((1000, 800), (2000, 1600), "test")


def anthropic_op(tool_input: dict[str, Any], version: str = "computer_20251124") -> Any:
    call = cua_anthropic.read_call({"type": "tool_use", "id": "toolu_1", "name": "computer", "input": tool_input}, D, version)
    assert call.id == "toolu_1" and len(call.ops) == 1
    return call.ops[0]


@pytest.mark.parametrize(
    ("tool_input", "kind", "fields"),
    [
        ({"action": "left_click", "coordinate": [10, 20]}, "click", {"point": (10.0, 20.0)}),
        ({"action": "left_click"}, "click", {"point": None}),  # 20250124: the coordinate is optional (the demo: at the pointer)
        ({"action": "right_click", "coordinate": [1, 2]}, "right_click", {"point": (1.0, 2.0)}),
        ({"action": "middle_click", "coordinate": [1, 2]}, "middle_click", {}),
        ({"action": "double_click", "coordinate": [1, 2]}, "double_click", {}),
        ({"action": "triple_click", "coordinate": [1, 2]}, "triple_click", {}),
        ({"action": "left_click", "coordinate": [5, 5], "text": "ctrl+shift"}, "click", {"keys": ("ctrl", "shift")}),  # modifiers (docs, OSWorld)
        ({"action": "left_click", "coordinate": [5, 5], "key": "shift"}, "click", {"keys": ("shift",)}),  # the demo's field
        ({"action": "mouse_move", "coordinate": [3, 4]}, "move", {"point": (3.0, 4.0)}),
        ({"action": "left_mouse_down"}, "mouse_down", {"point": None}),
        ({"action": "left_mouse_up", "coordinate": [9, 9]}, "mouse_up", {"point": (9.0, 9.0)}),
        ({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [30, 40]}, "drag", {"point": (1.0, 2.0), "end": (30.0, 40.0)}),
        ({"action": "left_click_drag", "coordinate": [30, 40]}, "drag", {"point": None, "end": (30.0, 40.0)}),  # the demo: from the pointer
        ({"action": "scroll", "coordinate": [100, 100], "scroll_direction": "down", "scroll_amount": 3}, "scroll", {"scroll": (0.0, 3.0)}),
        ({"action": "scroll", "scroll_direction": "up", "scroll_amount": 2}, "scroll", {"scroll": (0.0, -2.0), "point": None}),
        ({"action": "scroll", "scroll_direction": "left", "scroll_amount": 1, "text": "shift"}, "scroll", {"scroll": (-1.0, 0.0), "keys": ("shift",)}),
        ({"action": "type", "text": "grüße\nnext"}, "type", {"text": "grüße\nnext"}),
        ({"action": "key", "text": "ctrl+s"}, "key", {"keys": ("ctrl", "s")}),
        ({"action": "key", "text": "Return"}, "key", {"keys": ("enter",)}),
        ({"action": "key", "text": "Page_Down"}, "key", {"keys": ("pagedown",)}),
        ({"action": "hold_key", "text": "shift", "duration": 2}, "hold_key", {"keys": ("shift",), "seconds": 2.0}),
        ({"action": "wait", "duration": 1.5}, "wait", {"seconds": 1.5}),
        ({"action": "screenshot"}, "wait", {"seconds": 0.1}),  # OSWorld runs it as pyautogui.sleep(0.1), then the screen is taken
    ],
)
def test_anthropic_actions(tool_input: dict[str, Any], kind: str, fields: dict[str, Any]) -> None:
    op = anthropic_op(tool_input)
    assert op.error is None and op.action is not None and op.action.kind == kind
    for name, value in fields.items():
        assert getattr(op.action, name) == value, name
    if op.action.point is not None:
        assert op.action.space == "pixel_sent"  # display pixels, mapped by the policy


def test_anthropic_looks_and_zoom() -> None:
    assert anthropic_op({"action": "cursor_position"}).shows == "cursor"
    zoom = anthropic_op({"action": "zoom", "region": [10, 20, 110, 220]})
    assert zoom.shows == "zoom" and zoom.region == (10, 20, 110, 220) and zoom.action is None


@pytest.mark.parametrize(
    ("tool_input", "version", "says"),
    [
        ({"action": "zoom", "region": [0, 0, 10, 10]}, "computer_20250124", "has no zoom"),
        ({"action": "zoom", "region": [10, 10, 5, 5]}, "computer_20251124", "not a box inside"),
        ({"action": "left_click", "coordinate": [1001, 5]}, "computer_20251124", "out of bounds"),  # the demo's bound check
        ({"action": "left_click", "coordinate": [-1, 5]}, "computer_20251124", "non-negative ints"),
        ({"action": "left_click", "coordinate": [1.5, 5]}, "computer_20251124", "non-negative ints"),
        ({"action": "mouse_move"}, "computer_20251124", "coordinate is required"),
        ({"action": "type"}, "computer_20251124", "text is required"),
        ({"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 1}, "computer_20251124", "scroll_direction"),
        ({"action": "scroll", "scroll_direction": "up", "scroll_amount": -1}, "computer_20251124", "non-negative int"),
        ({"action": "wait", "duration": 101}, "computer_20251124", "too long"),
        ({"action": "hold_key", "text": "a"}, "computer_20251124", "must be a number"),
        # the demo (anthropics/anthropic-quickstarts 44c2b5c9, computer-use-demo tools/computer.py, run on these inputs) takes
        # both: hold_key ran `xdotool keydown a sleep nan keyup a`, and a scroll_amount of 10**12 `click --repeat 1000000000000 5`
        ({"action": "hold_key", "text": "a", "duration": float("nan")}, "computer_20251124", "duration=nan must be a finite number"),
        ({"action": "wait", "duration": float("-inf")}, "computer_20251124", "duration=-inf must be a finite number"),
        ({"action": "fly"}, "computer_20251124", "Invalid action"),
        # an integer past the largest float raised an OverflowError out of the reader: the case errored (and again
        # on --lf, read back from the response cache) instead of telling the model
        ({"action": "hold_key", "text": "a", "duration": 10**400}, "computer_20251124", "duration=1000000000000000000000000000000000000... must be a finite number"),
        ({"action": "wait", "duration": -(10**400)}, "computer_20251124", "must be a finite number"),
        ({"action": "scroll", "scroll_direction": "up", "scroll_amount": 10**400}, "computer_20251124", "scroll_amount=1000000000000000000000000000000000000... is too large a number"),
        # a list where a name belongs (a TypeError: unhashable type)
        ({"action": ["left_click"]}, "computer_20251124", "Invalid action: ['left_click']"),
        ({"action": "scroll", "scroll_direction": ["up"], "scroll_amount": 1}, "computer_20251124", "scroll_direction=['up'] must be"),
    ],
)
def test_anthropic_calls_the_tool_refuses_are_error_results(tool_input, version, says) -> None:
    op = anthropic_op(tool_input, version)
    assert op.action is None and op.error is not None and says in op.error


def test_a_tool_other_than_computer_is_an_error_result() -> None:
    call = cua_anthropic.read_call({"type": "tool_use", "id": "t", "name": "bash", "input": {"command": "ls"}}, D, "computer_20251124")
    assert call.ops[0].error is not None and "bash" in call.ops[0].error


# -- OpenAI's computer tool, action by action ------------------------------------------------------------------------


def openai_ops(actions: list[dict[str, Any]], **extra: Any) -> Any:
    item = {"type": "computer_call", "call_id": "call_1", "pending_safety_checks": [], **extra}
    item.update({"actions": actions} if len(actions) > 1 else {"action": actions[0]})
    return cua_openai.read_call(item, D)


@pytest.mark.parametrize(
    ("action", "kind", "fields"),
    [
        ({"type": "click", "button": "left", "x": 10, "y": 20}, "click", {"point": (10.0, 20.0)}),
        ({"type": "click", "button": "right", "x": 1, "y": 2}, "right_click", {}),
        ({"type": "click", "button": "wheel", "x": 1, "y": 2}, "middle_click", {}),
        ({"type": "click", "button": "left", "x": 1, "y": 2, "keys": ["CTRL"]}, "click", {"keys": ("ctrl",)}),
        ({"type": "double_click", "x": 5, "y": 6}, "double_click", {"point": (5.0, 6.0)}),
        ({"type": "move", "x": 5, "y": 6}, "move", {"point": (5.0, 6.0)}),
        ({"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 50, "y": 60}]}, "drag", {"point": (1.0, 1.0), "end": (50.0, 60.0)}),
        ({"type": "keypress", "keys": ["CTRL", "A"]}, "key", {"keys": ("ctrl", "a")}),  # lower case, as OSWorld presses them
        ({"type": "keypress", "keys": ["ENTER"]}, "key", {"keys": ("enter",)}),
        ({"type": "keypress", "keys": ["ARROWDOWN"]}, "key", {"keys": ("down",)}),
        ({"type": "type", "text": "naïve 日本"}, "type", {"text": "naïve 日本"}),
        ({"type": "wait"}, "wait", {"seconds": 1.0}),  # the Agents SDK example sleeps 1 s
        ({"type": "screenshot"}, "wait", {"seconds": 0.1}),
        ({"type": "scroll", "x": 100, "y": 100, "scroll_x": 0, "scroll_y": 300}, "scroll", {"scroll": (0.0, 300.0)}),  # pixels, made notches by the policy
    ],
)
def test_openai_actions(action: dict[str, Any], kind: str, fields: dict[str, Any]) -> None:
    call = openai_ops([action])
    (op,) = call.ops
    assert op.error is None and op.action is not None and op.action.kind == kind
    for name, value in fields.items():
        assert getattr(op.action, name) == value, name
    assert op.scroll_pixels is (kind == "scroll")


def test_openai_batches_run_in_order_and_carry_their_safety_checks() -> None:
    checks = [{"id": "sc_1", "code": "malicious_instructions", "message": "look out"}]
    call = openai_ops([{"type": "click", "button": "left", "x": 1, "y": 1}, {"type": "type", "text": "a"}, {"type": "keypress", "keys": ["ENTER"]}], pending_safety_checks=checks)
    assert [op.action.kind for op in call.ops] == ["click", "type", "key"]
    assert call.safety_checks == tuple(checks) and call.id == "call_1"


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ({"type": "click", "button": "back", "x": 1, "y": 1}, "'back' button"),
        ({"type": "click", "button": "left", "x": 2000, "y": 1}, "outside"),
        ({"type": "drag", "path": [{"x": 1, "y": 1}]}, "two points"),
        ({"type": "teleport"}, "unknown action type"),
        ({"type": "type", "text": 5}, "not a string"),
        ({"type": "scroll", "x": 1, "y": 1, "scroll_x": 0, "scroll_y": float("nan")}, "scroll_y=nan is not a finite number"),
        ({"type": "scroll", "x": 1, "y": 1, "scroll_x": 10**400, "scroll_y": 0}, "scroll_x=1000000000000000000000000000000000000000 is not a finite number"),
        ({"type": "move", "x": 10**400, "y": 1}, "x=1000000000000000000000000000000000000000 is not a finite number"),  # was an OverflowError
        # a list where a name belongs, a number where a list does (TypeErrors out of the reader)
        ({"type": "click", "button": ["left"], "x": 1, "y": 1}, "click with the ['left'] button"),
        ({"type": "keypress", "keys": 5}, "keypress needs keys"),
        ({"type": "drag", "path": 10**400}, "two points or more"),
    ],
)
def test_openai_actions_guitest_cannot_run(action: dict[str, Any], says: str) -> None:
    (op,) = openai_ops([action]).ops
    assert op.action is None and op.error is not None and says in op.error


#: any JSON value a reply can carry: integers past the largest float, NaN and infinities (Python's json reads
#: ``NaN``, ``Infinity`` and ``1e400``), strings, and lists and objects of them
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10**300, max_value=10**400) | st.integers(min_value=-(10**400), max_value=-(10**300)) | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=4,
)
ANTHROPIC_FIELDS = ("coordinate", "start_coordinate", "text", "key", "duration", "scroll_direction", "scroll_amount", "region")
OPENAI_FIELDS = ("x", "y", "button", "keys", "path", "text", "scroll_x", "scroll_y")


def well_read(op: Any) -> bool:
    """An operation a reader may return: an error the model is told (one short line), or an action whose numbers the
    loop's bounds can judge (guitest.live.actions.problem never raises on it)."""
    if op.error is not None:
        return isinstance(op.error, str) and "\n" not in op.error and len(op.error) < 300 and op.action is None
    if op.action is not None:
        problem(op.action)
    return True


def every_reply_read(model: Any, reply: Any) -> None:
    """Each reply the strategy ``reply`` draws is read by ``model``'s conversation into operations :func:`well_read`
    accepts, and its refusal check never raises."""

    @settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(reply=reply)
    def read(reply: dict[str, Any]) -> None:
        conversation = model.conversation("browser")
        conversation.display = D
        turn = conversation.read(reply)
        assert all(well_read(op) for _, op in turn.ops())
        model.refusal(reply)

    read()


def test_any_json_in_any_field_of_an_anthropic_reply_is_read_never_raised(keys: None) -> None:
    _require_anthropic()
    claude = load_model("anthropic:claude-sonnet-4-5", _settings())
    action = st.sampled_from(sorted(cua_anthropic.ACTIONS[cua_anthropic.V20251124])) | JSON
    tool_input = st.fixed_dictionaries({"action": action}, optional={f: JSON for f in ANTHROPIC_FIELDS})
    block = st.fixed_dictionaries({"type": st.just("tool_use"), "id": JSON, "name": st.just("computer") | JSON, "input": tool_input | JSON}) | st.fixed_dictionaries(
        {"type": st.just("text"), "text": JSON}
    )
    reply = st.fixed_dictionaries({"content": st.lists(block, max_size=3) | JSON, "stop_reason": st.sampled_from(["tool_use", "end_turn", "refusal"]) | JSON, "stop_details": JSON})
    every_reply_read(claude, reply)


def test_any_json_in_any_field_of_an_openai_reply_is_read_never_raised(keys: None) -> None:
    model = load_model("openai-cua:computer-use-preview", _settings())
    action = st.fixed_dictionaries(
        {"type": st.sampled_from(["click", "double_click", "move", "drag", "scroll", "keypress", "type", "wait", "screenshot"]) | JSON}, optional={f: JSON for f in OPENAI_FIELDS}
    )
    call = st.fixed_dictionaries({"type": st.just("computer_call"), "call_id": JSON}, optional={"action": action | JSON, "actions": st.lists(action, max_size=3) | JSON, "pending_safety_checks": JSON})
    other = st.fixed_dictionaries({"type": st.sampled_from(["message", "reasoning"]) | JSON}, optional={"content": JSON, "summary": JSON})
    reply = st.fixed_dictionaries({"output": st.lists(call | other, max_size=3) | JSON, "status": st.sampled_from(["completed", "incomplete"]) | JSON})
    every_reply_read(model, reply)


# -- stop rules, read from whole replies -----------------------------------------------------------------------------


def _settings(**kw: Any) -> Settings:
    return Settings(base_url="http://127.0.0.1:9/v1", **kw)


@pytest.fixture
def claude() -> Any:
    _require_anthropic()
    return load_model("anthropic:claude-sonnet-4-5", _settings())


def test_anthropic_stop_rules(claude: Any) -> None:
    conversation = claude.conversation("browser")
    conversation.display = D
    done = conversation.read({"id": "m", "stop_reason": "end_turn", "content": [{"type": "text", "text": "Finished."}]})
    assert done.end == "done" and not done.calls
    # OSWorld's AnthropicAgent: "[INFEASIBLE]" anywhere is FAIL, the reply's actions dropped
    fail = conversation.read(
        {
            "id": "m",
            "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "[INFEASIBLE] no such app"}, {"type": "tool_use", "id": "t", "name": "computer", "input": {"action": "screenshot"}}],
        }
    )
    assert fail.end == "fail" and not fail.calls
    cut = conversation.read({"id": "m", "stop_reason": "max_tokens", "content": [{"type": "text", "text": "I will"}]})
    assert cut.truncated and cut.end is None
    assert claude.refusal({"stop_reason": "refusal", "content": [], "stop_details": {"type": "refusal", "category": "cyber", "explanation": "no"}}) == "stop_reason refusal (cyber): no"
    assert claude.refusal({"stop_reason": "end_turn", "content": []}) is None


def test_openai_stop_rules() -> None:
    model = load_model("openai-cua:computer-use-preview", _settings())
    conversation = model.conversation("browser")
    conversation.display = D
    message = {"type": "message", "content": [{"type": "output_text", "text": "I think the task is infeasible."}]}
    assert conversation.read({"id": "r", "status": "completed", "output": [message]}).end == "fail"  # OSWorld's word list
    assert conversation.read({"id": "r", "status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": "Done."}]}]}).end == "done"
    assert conversation.read({"id": "r", "status": "incomplete", "output": []}).truncated
    refused = {"output": [{"type": "message", "content": [{"type": "refusal", "refusal": "I can't help with that."}]}]}
    assert model.refusal(refused) == "a refusal: I can't help with that."


CLAUDE_SCREENSHOTS = json.loads((Path(__file__).parent / "data" / "osworld_reference" / "claude_screenshots.json").read_text())


@pytest.mark.parametrize("copy", CLAUDE_SCREENSHOTS["copies"], ids=[c["repository"] for c in CLAUDE_SCREENSHOTS["copies"]])
@pytest.mark.parametrize("provider", ["bedrock", "anthropic"])
def test_old_tool_result_screenshots_go_as_osworlds_claude_runner_drops_them(copy: dict[str, Any], provider: str) -> None:
    """At every step of a 60-step episode, the request holds the tool-result screenshots OSWorld's AnthropicAgent's
    held (recorded by running its utils.py's _maybe_filter_to_n_most_recent_images as its predict does, per provider
    branch; tests/data/osworld_reference/README.md), with --screenshot-chunk set to that branch's threshold."""
    _require_anthropic()
    branch = copy["steps"][provider]
    model = load_model("anthropic:claude-sonnet-4-5", _settings(screenshot_chunk=branch["image_truncation_threshold"]))
    conversation = model.conversation("linux")
    request = conversation.request("task", {"data": "first"}, None, D)
    for step, expected in enumerate(branch["kept"], 1):
        conversation.commit(request, {"content": [{"type": "tool_use", "id": f"t{step}", "name": "computer", "input": {"action": "screenshot"}}]})
        result = type("Result", (), {"id": f"t{step}", "error": None, "text": "", "image": {"data": step}})()
        request = conversation.request("task", None, [result], D)
        kept = [
            part["source"]["data"]
            for m in request["messages"]
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
            for part in block["content"]
            if part.get("type") == "image"
        ]
        assert kept == expected, f"step {step}"
        assert request["messages"][0]["content"][1]["source"] == {"data": "first"}  # the first screenshot is no tool result: it stays


def test_the_default_screenshot_chunk_is_the_claude_runners_default_provider() -> None:
    """OSWorld's run_multienv_claude.py passes no provider, so AnthropicAgent's default applies: Bedrock (chunks of 10)
    in the copy that keeps it (AutoElicit), the Anthropic API (20) in DeskCraft's; guitest's default is Bedrock's."""
    defaults = {c["repository"]: c["default_provider"] for c in CLAUDE_SCREENSHOTS["copies"]}
    assert defaults == {"OSU-NLP-Group/AutoElicit": "bedrock", "mrwwk/DeskCraft": "anthropic"}
    assert not any(c["runner_passes_provider"] for c in CLAUDE_SCREENSHOTS["copies"])
    bedrock = next(c for c in CLAUDE_SCREENSHOTS["copies"] if c["default_provider"] == "bedrock")["steps"]["bedrock"]
    assert Settings().screenshot_chunk == bedrock["image_truncation_threshold"] == 10


def test_the_chunk_leaves_the_messages_given_untouched() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "t"}, {"type": "image", "source": "first"}]}]
    for k in range(30):
        messages += [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": str(k), "content": [{"type": "image", "source": k}]}]}]
    before = json.dumps(messages)
    assert len(cua_anthropic._keep_recent_images(messages, 10, 10)) == len(messages) and json.dumps(messages) == before


# -- whole episodes through the real clients, against the loopback fake ---------------------------------------------


def png(size: tuple[int, int], shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (shade, 120, 255 - shade)).save(out, "PNG")
    return out.getvalue()


class Screens:
    """A scripted environment: a new screen (a shade of its own) after every action; it records what ran."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.size = size
        self.ran: list[Action] = []
        self.shown: list[bytes] = []

    def _screen(self) -> Observation:
        self.shown.append(png(self.size, (len(self.ran) * 37) % 256))
        return Observation(self.shown[-1], self.size, "Press the blue button.")

    def reset(self, task: TaskSpec, seed: int | None) -> Observation:
        return self._screen()

    def step(self, action: Action) -> Observation:
        self.ran.append(action)
        return self._screen()

    def evaluate(self) -> Evaluation:
        return Evaluation(True, 1.0)

    def close(self) -> None:
        pass


def episode(
    spec: str, server: fakeserver.Server | str, size: tuple[int, int], budget: int = 8, options: RunOptions = DEFAULT_OPTIONS, meter: Meter | None = None, **settings: Any
) -> tuple[Any, Screens, list[dict[str, Any]]]:
    """One episode of ``spec`` against ``server`` (or a base URL: a server that has gone), asked through ``options``' cache."""
    base = server if isinstance(server, str) else server.url if spec.startswith("anthropic") else server.base_url
    model = load_model(spec, Settings(base_url=base, retries=2, timeout=10, **settings), backoff=0.01)
    env = Screens(size)
    sample = Sample(id="blue", image="", instruction="", box=(0, 0, 1, 1), tags={}, source="test")
    task = TaskSpec("miniwob", "press-blue")
    try:
        result = run_episode(env, task, 0, ComputerUsePolicy(model, sample, _asker(model, options, [], meter), 0, task), budget)
    finally:
        model.close()
    return result, env, [] if isinstance(server, str) else server.requests()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


def test_anthropic_tool_uses_of_a_reply_run_in_order_each_answered_by_the_screen_after_it(tmp_path: Path, keys: None) -> None:
    _require_anthropic()
    script = {
        "blue button": [
            {"status": 429, "retry_after": 0, "message": "rate limited"},  # retried after Retry-After
            {"status": 529},  # overloaded_error, retried
            {
                "calls": [
                    {"action": "left_click", "coordinate": {"frac": [0.25, 0.5]}},
                    {"action": "type", "text": "héllo"},
                    {"action": "zoom", "region": [0, 0, 100, 50]},
                    {"action": "cursor_position"},
                    {"action": "key", "text": "Return"},
                ],
                "text": "Three actions.",
            },
            {"calls": [{"action": "fly"}]},
            {"text": "All done."},
        ]
    }
    with fakeserver.serve(tmp_path, script=script, program=fakecua.__file__) as server:
        result, env, requests = episode("anthropic:claude-opus-4-6", server, (1920, 1080))
    assert result.end == "done" and result.error is None, result.error
    assert [a.kind for a in env.ran] == ["click", "type", "key", "done"]
    assert env.ran[0].point == pytest.approx((357 * 1920 / 1429, 402 * 1080 / 804), abs=1e-9)  # (357, 402) on the 1429x804 display
    assert [r["kind"] for r in requests] == ["status", "status", "calls", "calls", "text"]
    assert all(r["display"] == [1429, 804] and r["beta"] == "computer-use-2025-11-24" for r in requests)
    assert requests[0]["tool"]["enable_zoom"] is True and requests[0]["tool"]["type"] == "computer_20251124"
    step1 = requests[3]["results"]  # the answers to the five calls, in order
    assert [r["id"] for r in step1] == [f"toolu_0001_{k}" for k in range(5)]
    resized = [sha(_resized(shot)) for shot in env.shown]
    assert step1[0]["sha256"] == [resized[1]] and step1[1]["sha256"] == [resized[2]]  # the screen after each action
    assert step1[2]["images"] == [[135, 68]]  # the zoom: 100x50 display pixels at the screen's own resolution
    assert step1[3]["text"] == "X=357,Y=402" and step1[3]["images"] == []  # where the click left the pointer
    assert step1[4]["sha256"] == [resized[3]]
    assert requests[4]["results"] == [{"id": "toolu_0002_0", "error": "Invalid action: 'fly'"}]
    assert all(r["auth_sha256"] == sha(ANTHROPIC_KEY.encode()) for r in requests)
    assert "tool_error" in result.steps[1].notes


def _resized(shot: bytes) -> bytes:
    """The screenshot as the policy sends it on a 1429x804 display (resized, PNG): for the digests the fake logged."""
    from guitest.images import encode, resized

    with Image.open(io.BytesIO(shot)) as image:
        return encode(resized(image.convert("RGB"), (1429, 804)))[0]


@pytest.mark.parametrize("spec", ["openai-cua:computer-use-preview", "openai-cua:gpt-5.4"])
def test_openai_computer_calls_chain_by_previous_response_id_with_acknowledged_checks(tmp_path: Path, keys: None, spec: str) -> None:
    preview = spec.endswith("preview")
    check = {"id": "sc_1", "code": "irrelevant_domain", "message": "off the task's site"}

    def call(*actions: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"action": actions[0], **extra} if preview else {"actions": list(actions), **extra}

    turns = [call({"type": "click", "button": "left", "at": [0.25, 0.5]}), call({"type": "type", "text": "hi"}, pending_safety_checks=[check])]
    if preview:  # the preview returns one action per computer_call
        turns = [{"calls": [t]} for t in turns]
    else:  # the GA tool batches them in one call
        turns = [{"calls": [{"actions": turns[0]["actions"] + turns[1]["actions"], "pending_safety_checks": [check]}]}]
    script = {"blue button": [{"status": 500}, {"calls": [call({"type": "screenshot"})]}, *turns, {"text": "Finished."}]}
    with fakeserver.serve(tmp_path, script=script, program=fakecua.__file__) as server:
        result, env, requests = episode(spec, server, (1280, 720))
    assert result.end == "done" and result.error is None, result.error
    assert [a.kind for a in env.ran] == ["wait", "click", "type", "done"]
    assert env.ran[1].point == (320.0, 360.0)
    tool = requests[0]["tool"]
    assert tool == ({"type": "computer_use_preview", "display_width": 1280, "display_height": 720, "environment": "browser"} if preview else {"type": "computer"})
    chained = [r for r in requests if r["kind"] != "status" and r["previous_response_id"]]
    assert [r["previous_response_id"] for r in chained] == [f"resp_{n:04d}" for n in range(1, len(chained) + 1)]
    acknowledged = [x for r in requests for x in r["results"] if x["acknowledged"]]
    assert [x["acknowledged"] for x in acknowledged] == [[check]]
    assert any("safety_check:irrelevant_domain" in s.notes for s in result.steps)
    assert all(r["auth_sha256"] == sha(OPENAI_KEY.encode()) for r in requests)


CAP = 4  # the cap of actions a step runs (MAX_ACTIONS, 200: the loop's tests hold it), made small for the adapters' tests


def test_anthropic_hostile_numbers_and_too_many_calls_are_tool_errors_and_never_run(tmp_path: Path, keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_anthropic()
    monkeypatch.setattr(cua_policy, "MAX_ACTIONS", CAP)  # a small cap: every call's screenshot goes back, none dropped as old
    hostile = [
        {"action": "hold_key", "text": "shift", "duration": float("nan")},
        {"action": "scroll", "coordinate": {"frac": [0.5, 0.5]}, "scroll_direction": "down", "scroll_amount": 10**12},
        {"action": "left_click", "coordinate": {"frac": [0.25, 0.5]}},
    ]
    many = [{"action": "mouse_move", "coordinate": {"frac": [0.5, 0.5]}}] * (CAP + 5)
    script = {"blue button": [{"calls": hostile}, {"calls": many}, {"text": "All done."}]}
    with fakeserver.serve(tmp_path, script=script, program=fakecua.__file__) as server:
        result, env, requests = episode("anthropic:claude-sonnet-4-5", server, (320, 200))
    assert result.end == "done" and result.error is None, result.error
    assert [a.kind for a in env.ran] == ["click"] + ["move"] * CAP + ["done"]
    first = requests[1]["results"]
    assert first[0]["error"] in ("duration=nan must be a finite number", "duration=None must be a number")  # NaN as the client's JSON gives it
    assert first[1]["error"] == "a scroll of (0, 1e+12) notches is outside the range of scrolls, -1000 to 1000 notches each way"
    assert "error" not in first[2] and len(first[2]["images"]) == 1
    second = requests[2]["results"]
    assert len(second) == CAP + 5 and all("error" not in r for r in second[:CAP])
    assert [r["error"] for r in second[CAP:]] == [f"not run: a step runs at most {CAP} actions, and this reply asked for more"] * 5
    assert {"action_out_of_range", "tool_error"} <= set(result.steps[0].notes) and "over_cap" in result.steps[1].notes


def test_a_number_past_the_largest_float_is_the_tools_error_live_and_again_from_the_cache(tmp_path: Path, keys: None) -> None:
    """The issue's reply (a 401-digit hold_key duration and scroll_amount) asked live, then again with the endpoint gone,
    as ``--lf`` asks: both times the calls are the tool's errors and the episode goes on; before, the reader raised an
    OverflowError both times and the case errored."""
    _require_anthropic()
    calls = [
        {"action": "hold_key", "text": "shift", "duration": 10**400},
        {"action": "scroll", "coordinate": {"frac": [0.5, 0.5]}, "scroll_direction": "down", "scroll_amount": 10**400},
        {"action": "left_click", "coordinate": {"frac": [0.25, 0.5]}},
    ]
    runs = []
    url = ""
    for run in ("first", "again"):
        options = replace(DEFAULT_OPTIONS, cache=ResponseCache(tmp_path / "cache", "on", run=run))
        try:
            if run == "first":
                with fakeserver.serve(tmp_path, script={"blue button": [{"calls": calls}, {"text": "All done."}]}, program=fakecua.__file__) as server:
                    runs.append(episode("anthropic:claude-sonnet-4-5", server, (320, 200), options=options))
                    url = server.url
            else:  # the server has gone: every reply must come from the cache
                runs.append(episode("anthropic:claude-sonnet-4-5", url, (320, 200), options=options))
        finally:
            assert options.cache is not None
            options.cache.close()
    (live, live_env, requests), (cached, cached_env, _) = runs
    errors = [r.get("error") for r in requests[1]["results"]]
    assert errors == ["duration=1000000000000000000000000000000000000... must be a finite number", "scroll_amount=1000000000000000000000000000000000000... is too large a number", None]
    for result, env in ((live, live_env), (cached, cached_env)):
        assert result.end == "done" and result.error is None, result.error
        assert [a.kind for a in env.ran] == ["click", "done"] and "tool_error" in result.steps[0].notes
    assert all(step.cached for step in cached.steps) and [s.reply for s in cached.steps] == [s.reply for s in live.steps]


@pytest.mark.parametrize("spec", ["openai-cua:computer-use-preview", "openai-cua:gpt-5.4"])
def test_openai_hostile_numbers_and_too_many_actions_never_run_and_the_calls_are_answered(tmp_path: Path, keys: None, spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cua_policy, "MAX_ACTIONS", CAP)
    preview = spec.endswith("preview")
    # 10**300 pixels is a finite float, 10**400 is not one at all (float() of it raised an OverflowError)
    hostile = [
        {"type": "scroll", "at": [0.5, 0.5], "scroll_x": 0, "scroll_y": 10**300},
        {"type": "scroll", "at": [0.5, 0.5], "scroll_x": 10**400, "scroll_y": 0},
        {"type": "scroll", "at": [0.5, 0.5], "scroll_x": 0, "scroll_y": 100},
    ]
    many = [{"type": "move", "at": [0.5, 0.5]}] * (CAP + 5)
    if preview:  # one action per computer_call
        turns = [{"calls": [{"action": a} for a in hostile]}, {"calls": [{"action": a} for a in many]}]
    else:
        turns = [{"calls": [{"actions": hostile}]}, {"calls": [{"actions": many}]}]
    with fakeserver.serve(tmp_path, script={"blue button": [*turns, {"text": "Finished."}]}, program=fakecua.__file__) as server:
        result, env, requests = episode(spec, server, (320, 200))
    assert result.end == "done" and result.error is None, result.error  # every call was answered with a screenshot (fakecua checks it)
    assert [(a.kind, a.scroll) for a in env.ran[:1]] == [("scroll", (0.0, 2.0))]  # 100 pixels: 2 notches of 50
    assert [a.kind for a in env.ran[1:]] == ["move"] * CAP + ["done"]
    assert len(requests[1]["results"]) == (3 if preview else 1) and all(r["images"] for r in requests[1]["results"])
    assert {"action_out_of_range", "tool_error"} <= set(result.steps[0].notes) and "over_cap" in result.steps[1].notes


def test_a_safety_check_under_the_stop_policy_ends_the_episode_as_fail(tmp_path: Path, keys: None) -> None:
    check = {"id": "sc_9", "code": "sensitive_domain", "message": "a bank"}
    script = {"blue button": [{"calls": [{"action": {"type": "click", "button": "left", "at": [0.5, 0.5]}, "pending_safety_checks": [check]}]}]}
    with fakeserver.serve(tmp_path, script=script, program=fakecua.__file__) as server:
        result, env, requests = episode("openai-cua:computer-use-preview", server, (800, 600), safety_checks="stop")
    assert result.end == "fail" and [a.kind for a in env.ran] == ["fail"] and "sensitive_domain: a bank" in (env.ran[0].text or "")
    assert "safety_check_stopped" in result.steps[0].notes and len(requests) == 1


@pytest.mark.parametrize("spec", ["anthropic:claude-sonnet-4-5", "openai-cua:computer-use-preview"])
def test_a_refusal_is_an_error_of_the_episode(tmp_path: Path, keys: None, spec: str) -> None:
    if spec.startswith("anthropic"):
        _require_anthropic()
    with fakeserver.serve(tmp_path, script={"blue button": [{"refusal": "I won't press buttons."}]}, program=fakecua.__file__) as server:
        result, env, requests = episode(spec, server, (800, 600))
    assert result.end == "error" and result.error_source == "model" and "refused" in (result.error or "") and "I won't press buttons." in (result.error or "")
    assert env.ran == [] and len(requests) == 1  # a refusal is not retried


@pytest.mark.parametrize(
    ("spec", "fault", "says"),
    [
        ("anthropic:claude-sonnet-4-5", {"status": 529}, "gave up after 3 tries: HTTP 529: overloaded_error"),
        ("openai-cua:computer-use-preview", {"status": 429, "retry_after": 0}, "gave up after 3 tries: HTTP 429"),
        ("anthropic:claude-sonnet-4-5", {"status": 401, "echo_key": True}, "check the API key in $ANTHROPIC_API_KEY"),
        ("openai-cua:gpt-5.4", {"status": 401, "echo_key": True}, "check the API key in $OPENAI_API_KEY"),
    ],
)
def test_api_errors_are_retried_where_safe_and_never_show_the_key(tmp_path: Path, keys: None, spec: str, fault: dict[str, Any], says: str) -> None:
    if spec.startswith("anthropic"):
        _require_anthropic()
    meter = Meter()
    with fakeserver.serve(tmp_path, script={"blue button": [fault] * 3}, program=fakecua.__file__) as server:
        result, env, requests = episode(spec, server, (800, 600), meter=meter)
    assert result.end == "error" and says in (result.error or ""), result.error
    assert len(requests) == (1 if fault["status"] == 401 else 3)  # --retries=2: three tries; a 401 is not retried
    # every try is a failed call of its kind, counted apart from the calls that answered (there were none)
    assert meter.failed["calls"] == len(requests) and meter.failed["why"] == {"server_error" if fault["status"] >= 500 else "http_error": len(requests)}
    assert meter.paid == {}
    assert ANTHROPIC_KEY not in (result.error or "") and OPENAI_KEY not in (result.error or "")
    if fault.get("echo_key"):
        assert "***" in (result.error or "")


def test_a_step_continuing_a_response_the_server_dropped_says_how_to_start_over(tmp_path: Path, keys: None) -> None:
    from guitest.live.cua.policy import encode_request

    request = {
        "model": "computer-use-preview",
        "previous_response_id": "resp_from_an_earlier_run",
        "truncation": "auto",
        "tools": [{"type": "computer_use_preview", "display_width": 8, "display_height": 8, "environment": "browser"}],
        "input": [{"type": "computer_call_output", "call_id": "call_1", "output": {"type": "computer_screenshot", "image_url": "x"}}],
    }
    prompt, sent = encode_request(request, (8, 8))
    with fakeserver.serve(tmp_path, script={}, program=fakecua.__file__) as server:
        model = load_model("openai-cua:computer-use-preview", Settings(base_url=server.base_url, retries=0))
        case = Case(sample=Sample(id="c", image="", instruction="", box=(0, 0, 1, 1), tags={}, source="t"), original_size=(8, 8), truth=None, sent_size=(8, 8), task=STEP_TASK)
        with pytest.raises(ModelError, match="re-run with --cache=refresh") as raised:
            model.generate(prompt, sent, case)
        model.close()
    assert "HTTP 400" in str(raised.value) and "resp_from_an_earlier_run" in str(raised.value)


def test_a_grounding_case_is_told_what_these_models_are_for(keys: None) -> None:
    model = load_model("openai-cua:computer-use-preview", _settings())
    sample = Sample(id="g", image="x.png", instruction="the OK button", box=(0, 0, 1, 1), tags={}, source="test")
    case = Case(sample=sample, original_size=(10, 10), truth=None, sent_size=(10, 10), task=STEP_TASK)
    with pytest.raises(ModelError, match="is a computer-use agent: it runs live suites"):
        model.generate(Prompt(user="Where is the OK button?"), SentImage(image=None, size=(10, 10)), case)


def test_the_report_says_which_tool_and_never_the_key(keys: None) -> None:
    _require_anthropic()
    info = load_model("anthropic:claude-opus-4-7", _settings()).describe()
    assert info["computer_tool"] == {"type": "computer_20251124", "beta": "computer-use-2025-11-24", "zoom": True, "image_limits": "2576 px long edge, 4784 visual tokens"}
    assert info["api_key"] == "from $ANTHROPIC_API_KEY (set)" and ANTHROPIC_KEY not in json.dumps(info)
    info = load_model("openai-cua:computer-use-preview", _settings(safety_checks="stop")).describe()
    assert info["computer_tool"] == {"type": "computer_use_preview", "safety_checks": "stop"} and info["settings"]["safety_checks"] == "stop"
    assert OPENAI_KEY not in json.dumps(info)


def test_the_runner_of_a_computer_use_model_is_its_tool_loop(keys: None) -> None:
    from guitest.live import runners

    model = load_model("openai-cua:gpt-5.4", _settings())
    loop, why = runners.for_model(model, "uitars15")
    assert loop.describe()["name"] == "openai-computer-use" and loop.describe()["convention"] == "computer"
    assert why == "the API's own tool loop (--runner does not apply)"


def test_specs_without_a_model_name_or_with_a_bad_policy_say_what_to_give() -> None:
    with pytest.raises(ModelError, match="needs the model's name"):
        load_model("openai-cua:", _settings())
    with pytest.raises(ModelError, match="--safety-checks=maybe"):
        load_model("openai-cua:computer-use-preview", _settings(safety_checks="maybe"))


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test here reaches a real API: the base URLs are loopback ones (a stray default would need these unset)."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield
