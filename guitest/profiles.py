"""Model profiles: what differs between model families, declared rather than guessed.

A profile bundles the prompt, how the screenshot is sized before sending, which answer
styles are read (in order), and the coordinate space of the answer. It is chosen with
``--model-profile=NAME`` or picked from the model name by :data:`NAME_TABLE`. The
sources of each convention are cited in ``docs/profiles.md``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import ModelError
from .geometry import from_original_pixels


@dataclass(frozen=True)
class Sizing:
    """How a screenshot is sized before sending.

    ``keep``: sent as is, unless ``--max-pixels``/``--min-pixels`` ask for a scale
    (aspect ratio kept). ``smart_resize``: Qwen2-VL's rule, both sides multiples of
    ``factor``, the pixel count within ``[min_pixels, max_pixels]``.
    """

    kind: str = "keep"
    factor: int = 28
    min_pixels: int | None = None
    max_pixels: int | None = None


@dataclass(frozen=True)
class Profile:
    """One model family's conventions."""

    name: str
    space: str
    styles: tuple[tuple[str, str], ...]
    prompt: str
    render: str
    source: str
    system: str | None = None
    sizing: Sizing = field(default_factory=Sizing)
    decimals: int = 4

    def describe(self) -> dict[str, Any]:
        """The profile as plain builtins, for the report."""
        out = asdict(self)
        out["styles"] = [list(s) for s in self.styles]
        return out

    def answer_text(self, x: float, y: float) -> str:
        """A reply in this profile's own syntax answering the point ``(x, y)`` (already in the profile's space)."""
        fmt = f"{{:.{self.decimals}f}}"
        return self.render.replace("{x}", fmt.format(x)).replace("{y}", fmt.format(y))

    def point_text(self, pixel: tuple[float, float], sent_size: tuple[int, int], original_size: tuple[int, int]) -> str:
        """A reply naming ``pixel`` (original pixels) in this profile's own syntax and space (``auto``: normalized),
        for a screenshot of ``original_size`` sent at ``sent_size``."""
        space = "normalized" if self.space == "auto" else self.space
        return self.answer_text(*from_original_pixels(pixel, space, sent_size, original_size))


GENERIC_PROMPT = (
    "You are given a screenshot of a graphical user interface.\n"
    "Find the UI element described by this instruction: {instruction}\n"
    "Give the point to click as normalized coordinates (x, y), each between 0 and 1, "
    "where (0, 0) is the top-left corner and (1, 1) the bottom-right corner of the screenshot.\n"
    "If the element is not on the screen, say so instead.\n"
    "End your reply with a final line of the form: Answer: [x, y]"
)

QWEN25_SYSTEM = (
    "You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse to interact with a computer.\\n'
    "* The screen's resolution is {width}x{height}.\\n"
    '* Coordinates are absolute pixels of the screen.", "parameters": {"properties": {"action": {"enum": ["left_click"], "type": "string"}, '
    '"coordinate": {"description": "(x, y): the pixel to click.", "type": "array"}}, "required": ["action"], "type": "object"}}}\n'
    "</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)

QWEN_MIN_PIXELS = 56 * 56
QWEN_MAX_PIXELS = 28 * 28 * 16384
UITARS15_MIN_PIXELS = 100 * 28 * 28
UITARS15_MAX_PIXELS = 16384 * 28 * 28

ALL_STYLES = ("toolcall", "qwen_box", "uitars", "pyautogui", "tags", "pair")

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile(
            name="generic",
            space="normalized",
            styles=(("pair", "normalized"), ("toolcall", "normalized"), ("tags", "normalized")),
            prompt=GENERIC_PROMPT,
            render="Answer: [{x}, {y}]",
            source="guitest's own default prompt",
            decimals=6,
        ),
        Profile(
            name="qwen2.5-vl",
            space="pixel_sent",
            styles=(("toolcall", "pixel_sent"), ("qwen_box", "pixel_sent"), ("pair", "pixel_sent")),
            system=QWEN25_SYSTEM,
            prompt="{instruction}",
            render='<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [{x}, {y}]}}\n</tool_call>',
            sizing=Sizing("smart_resize", 28, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS),
            source="Qwen2.5-VL technical report (arXiv:2502.13923), absolute coordinates; Qwen2.5-VL cookbooks (computer_use tool)",
            decimals=1,
        ),
        Profile(
            name="qwen2-vl",
            space="grid1000",
            styles=(("qwen_box", "grid1000"), ("pair", "grid1000")),
            prompt="Output the bounding box in the image corresponding to the instruction: {instruction}",
            render="<|object_ref_start|>target<|object_ref_end|><|box_start|>({x},{y}),({x},{y})<|box_end|>",
            source="Qwen2-VL model card (grounding with <|box_start|>, coordinates normalised to [0, 1000))",
            decimals=2,
        ),
        Profile(
            name="os-atlas",
            space="grid1000",
            styles=(("qwen_box", "grid1000"), ("pair", "grid1000")),
            prompt='In this UI screenshot, what is the position of the element corresponding to the command "{instruction}" (with bbox)?',
            render="<|object_ref_start|>target<|object_ref_end|><|box_start|>({x},{y}),({x},{y})<|box_end|>",
            source="OS-Atlas model card (OS-Copilot/OS-Atlas-Base-7B): grounding prompt and <|box_start|> output on 0-1000",
            decimals=2,
        ),
        Profile(
            name="qwen3-vl",
            space="grid1000",
            styles=(("toolcall", "grid1000"), ("qwen_box", "grid1000"), ("pair", "grid1000")),
            prompt='Locate the UI element for the instruction "{instruction}". Output its point as JSON: {"point_2d": [x, y]} with x and y on a 0-1000 scale.',
            render='{"point_2d": [{x}, {y}]}',
            source="Qwen3-VL model card and cookbooks: relative coordinates on a 0-1000 grid",
            decimals=2,
        ),
        Profile(
            name="ui-tars",
            space="grid1000",
            styles=(("uitars", "grid1000"), ("qwen_box", "grid1000"), ("pair", "grid1000")),
            prompt="Output only the coordinate of one point in your response. What element matches the following task: {instruction}",
            render="click(start_box='({x},{y})')",
            source="UI-TARS paper (arXiv:2501.12326) and repository bytedance/UI-TARS: grounding prompt, coordinates on 0-1000",
            decimals=2,
        ),
        Profile(
            name="ui-tars-1.5",
            space="pixel_sent",
            styles=(("uitars", "pixel_sent"), ("tags", "pixel_sent"), ("qwen_box", "pixel_sent"), ("pair", "pixel_sent")),
            prompt="Output only the coordinate of one point in your response. What element matches the following task: {instruction}",
            render="Thought: The target is visible.\nAction: click(start_box='<|box_start|>({x},{y})<|box_end|>')",
            sizing=Sizing("smart_resize", 28, UITARS15_MIN_PIXELS, UITARS15_MAX_PIXELS),
            source="UI-TARS-1.5 repository bytedance/UI-TARS (README_coordinates.md): absolute pixels of the smart_resized image",
            decimals=1,
        ),
        Profile(
            name="seeclick",
            space="normalized",
            styles=(("qwen_box", "grid1000"), ("pair", "normalized")),
            prompt='In this UI screenshot, what is the position of the element corresponding to the command "{instruction}" (with point)?',
            render="({x},{y})",
            source="SeeClick paper (arXiv:2401.10935) and repository njucckevin/SeeClick: (x, y) in [0, 1]",
            decimals=4,
        ),
        Profile(
            name="aguvis",
            space="normalized",
            styles=(("pyautogui", "normalized"), ("pair", "normalized")),
            prompt="Please generate the next move according to the UI screenshot and instruction.\n\nInstruction: {instruction}",
            render="pyautogui.click(x={x}, y={y})",
            source="Aguvis paper (arXiv:2412.04454) and repository xlang-ai/aguvis: pyautogui actions with normalized coordinates",
            decimals=4,
        ),
        Profile(
            name="gpt-4o",
            space="normalized",
            styles=(("toolcall", "normalized"), ("pair", "normalized")),
            prompt=GENERIC_PROMPT,
            render='{"x": {x}, "y": {y}}',
            source="API models asked for normalized coordinates (no native grounding convention)",
            decimals=4,
        ),
        Profile(
            name="claude",
            space="normalized",
            styles=(("toolcall", "normalized"), ("pair", "normalized")),
            prompt=GENERIC_PROMPT,
            render="Answer: [{x}, {y}]",
            source="API models asked for normalized coordinates (no native grounding convention)",
            decimals=4,
        ),
        Profile(
            name="auto",
            space="auto",
            styles=tuple((s, "auto") for s in ALL_STYLES),
            prompt=GENERIC_PROMPT,
            render="Answer: [{x}, {y}]",
            source="the magnitude guess of the anchors; guitest only guesses when asked, and counts every guess",
            decimals=6,
        ),
    ]
}

# First match wins; matched against the model name (case-insensitive). Override with --model-profile.
NAME_TABLE: tuple[tuple[str, str], ...] = (
    (r"ui-?tars-?1[._]5", "ui-tars-1.5"),
    (r"ui-?tars", "ui-tars"),
    (r"qwen3-?vl", "qwen3-vl"),
    (r"qwen2[._]5-?vl", "qwen2.5-vl"),
    (r"os-?atlas", "os-atlas"),
    (r"qwen2-?vl", "qwen2-vl"),
    (r"seeclick", "seeclick"),
    (r"aguvis", "aguvis"),
    (r"claude", "claude"),
    (r"gpt-?4|gpt-?5|\bo[134]\b", "gpt-4o"),
)


def get(name: str) -> Profile:
    """The profile called ``name``; a ModelError listing the known ones otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ModelError(f"unknown model profile {name!r}; known profiles: {', '.join(PROFILES)}") from None


def pick(model_name: str) -> tuple[Profile, str]:
    """The profile for a model name by :data:`NAME_TABLE`, and why it was chosen."""
    for pattern, name in NAME_TABLE:
        if re.search(pattern, model_name, re.IGNORECASE):
            return PROFILES[name], f"model name matches /{pattern}/"
    return PROFILES["generic"], "default (no entry of the name table matches the model name)"
