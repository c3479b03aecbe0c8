"""Action parsers: one module per model convention, each reading one action out of a reply.

Conventions (``CONVENTIONS``): ``guitest`` (guitest's own default format, :mod:`.guitest`),
``pyautogui`` (OSWorld's code actions, Aguvis), ``uitars`` (UI-TARS ``click(start_box=...)``),
``computer_use`` (Qwen2.5-VL and Qwen3-VL ``<tool_call>`` JSON). Each module has

- ``read(text) -> Parsed``: the reply's LAST action (reasoning in ``<think>`` removed) and notes
  on how it was read; ``action`` is None when the reply holds none it can read (``notes`` say
  why). Never raises, whatever the string.
- ``parse(text) -> Action | None``: ``read(text).action``.
- ``render(action, decimals) -> str``: a reply in the convention that reads back as ``action``
  (baselines and test policies speak every convention through it).

Points stay in the reply's own numbers: ``Action.space`` is None (the profile's declared space
applies) except where the syntax itself names its space (guitest's format is normalized).
:func:`guitest.live.actions.to_screen` maps them to screenshot pixels.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..actions import Action

#: convention name -> module under guitest.live.parsers
CONVENTIONS = {"guitest": "guitest", "pyautogui": "pyautogui", "uitars": "uitars", "computer_use": "computer_use"}

#: the convention a model profile (guitest/profiles.py) speaks in live tasks; profiles not named here speak ``guitest``
PROFILE_CONVENTIONS = {
    "qwen2.5-vl": "computer_use",
    "qwen3-vl": "computer_use",
    "ui-tars": "uitars",
    "ui-tars-1.5": "uitars",
    "aguvis": "pyautogui",
}

MAX_REPLY = 50_000  # characters read from the end of a reply; an action is never further back


@dataclass(frozen=True)
class Parsed:
    """What a parser read: the action (None when unreadable) and notes (``no_action``, ``several_actions``, ...)."""

    action: Action | None
    notes: tuple[str, ...] = ()


def module(convention: str) -> ModuleType:
    """The parser module of ``convention``; ValueError naming the known conventions otherwise."""
    try:
        name = CONVENTIONS[convention]
    except KeyError:
        raise ValueError(f"unknown action convention {convention!r}; known: {', '.join(CONVENTIONS)}") from None
    return importlib.import_module(f"{__name__}.{name}")


def read(convention: str, text: str | None) -> Parsed:
    """The last action of a reply in ``convention`` (see the module docstring); a None reply reads as no action."""
    if text is None:
        return Parsed(None, ("no_reply",))
    return module(convention).read(text)


def render(convention: str, action: Action, decimals: int = 4) -> str:
    """A reply in ``convention`` that reads back as ``action`` (its points already in the convention's numbers)."""
    return module(convention).render(action, decimals)


def convention_of(profile: str) -> str:
    """The convention a model profile speaks (``guitest`` for profiles without a live convention of their own)."""
    return PROFILE_CONVENTIONS.get(profile, "guitest")
