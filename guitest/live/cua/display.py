"""The display a computer-use tool declares, and how its coordinates map to the real screenshot.

A computer-use API takes integer pixel coordinates of the display its tool declares (Anthropic's
``display_width_px``/``display_height_px``, OpenAI's preview ``display_width``/``display_height``) or
of the screenshot it was sent (OpenAI's GA ``computer`` tool). guitest sends each screenshot resized
to that size and maps the coordinates of a reply back to screenshot pixels through the same geometry
as every other model (:func:`guitest.live.actions.to_screen` with space ``pixel_sent``: per axis,
``x * screen_width / display_width``).

The sizes, each from its provider's documentation:

- Anthropic, models before Claude Opus 4.7 (:func:`anthropic_scale`): the computer-use tool page's
  ``get_scale_factor``, ``min(1, 1568 / long edge, sqrt(1,150,000 / pixels))``, sides ``int(side * scale)``
  ("Handle coordinate scaling for higher resolutions", platform.claude.com/docs/en/agents-and-tools/
  tool-use/computer-use-tool).
- Anthropic, Claude Opus 4.7 and later (:func:`anthropic_resized`): the vision page's ``resized_size``
  with ``max_edge=2576, max_tokens=4784`` (the largest aspect-preserving size whose 28-pixel patches fit,
  "Resize your image before uploading", platform.claude.com/docs/en/build-with-claude/vision); the
  computer-use page says these models' coordinates are 1:1 with the image pixels.
- OpenAI: the screenshot as it is, up to the 10.24M pixels ``detail: "original"`` keeps
  (developers.openai.com/api/docs/guides/tools-computer-use); a larger screen is scaled to fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Anthropic's limits for models before Claude Opus 4.7 (computer-use tool page)
LOW_LONG_EDGE, LOW_PIXELS = 1568, 1_150_000
#: Anthropic's limits for Claude Opus 4.7 and later (vision page): long edge, and visual tokens of 28x28 pixels
HIGH_LONG_EDGE, HIGH_TOKENS, PATCH = 2576, 4784, 28
#: the pixels OpenAI's ``detail: "original"`` keeps
OPENAI_MAX_PIXELS = 10_240_000


@dataclass(frozen=True)
class Display:
    """The declared display (``size``) of an episode whose screenshots are ``screen`` pixels, and the rule that made it."""

    size: tuple[int, int]
    screen: tuple[int, int]
    rule: str

    @property
    def scaled(self) -> bool:
        """Whether screenshots are resized before they are sent."""
        return self.size != self.screen

    def describe(self) -> dict[str, object]:
        """Plain builtins for the report."""
        return {"display": list(self.size), "screen": list(self.screen), "rule": self.rule}


def anthropic_scale(width: int, height: int) -> float:
    """The computer-use page's ``get_scale_factor``: the factor that brings a screen within 1568 pixels on its long
    edge and about 1.15 megapixels (1 when it already is)."""
    long_edge_scale = LOW_LONG_EDGE / max(width, height)
    total_pixels_scale = math.sqrt(LOW_PIXELS / (width * height))
    return min(1.0, long_edge_scale, total_pixels_scale)


def _tokens(width: int, height: int) -> int:
    return math.ceil(width / PATCH) * math.ceil(height / PATCH)


def anthropic_resized(width: int, height: int, max_edge: int = HIGH_LONG_EDGE, max_tokens: int = HIGH_TOKENS) -> tuple[int, int]:
    """The vision page's ``resized_size``: the size Claude resizes an image to (before padding), the image itself when
    it fits; a binary search along the long edge for the largest aspect-preserving size that fits."""

    def fits(w: int, h: int) -> bool:
        return math.ceil(w / PATCH) * PATCH <= max_edge and math.ceil(h / PATCH) * PATCH <= max_edge and _tokens(w, h) <= max_tokens

    if fits(width, height):
        return width, height
    if height > width:
        h, w = anthropic_resized(height, width, max_edge, max_tokens)
        return w, h
    aspect = width / height
    lo, hi = 1, width  # lo always fits, hi never does
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if fits(mid, max(round(mid / aspect), 1)):
            lo = mid
        else:
            hi = mid
    return lo, max(round(lo / aspect), 1)


def anthropic_display(screen: tuple[int, int], high_resolution: bool) -> Display:
    """The display Anthropic's computer tool declares for a screen of ``screen`` pixels (see the module docstring)."""
    width, height = screen
    if high_resolution:
        return Display(anthropic_resized(width, height), screen, "anthropic: vision resized_size, 2576 px long edge, 4784 visual tokens")
    scale = anthropic_scale(width, height)
    size = (max(int(width * scale), 1), max(int(height * scale), 1))
    return Display(size, screen, f"anthropic: get_scale_factor {scale:.6f} (1568 px long edge, 1.15 megapixels)")


def openai_display(screen: tuple[int, int]) -> Display:
    """The display of OpenAI's computer tools: the screenshot's own pixels, scaled down only past 10.24M pixels."""
    width, height = screen
    if width * height <= OPENAI_MAX_PIXELS:
        return Display(screen, screen, "openai: the screenshot as it is")
    scale = math.sqrt(OPENAI_MAX_PIXELS / (width * height))
    return Display((max(int(width * scale), 1), max(int(height * scale), 1)), screen, f"openai: scaled by {scale:.6f} to 10.24M pixels")
