"""Runners: each model family driven in live tasks the way its own reference runner drives it.

A runner (:class:`~guitest.live.runners.runner.Runner`) is one object per convention holding its prompt, its reader,
its renderer, its history layout, its image sizing, its coordinate mapping and its stop rules. :data:`RUNNERS` names
them (:data:`guitest.registry.RUNNERS`, each imported when first asked for; :func:`register` adds one, a team's own
from a conftest.py: docs/adapters.md); a model profile names its runner (:data:`PROFILE_RUNNERS`; profiles not named
there use ``guitest``); ``--runner=NAME`` chooses another. docs/live_agents.md lists each runner's sources file by file and
where guitest departs.

- ``guitest``: guitest's own step prompt and ``Action: click(0.42, 0.31)`` format (:mod:`.guitest`).
- ``uitars15``, ``uitars15-qwen2vl``: OSWorld's ``mm_agents/uitars15_v1.py`` for UI-TARS-1.5 and UI-TARS (:mod:`.uitars15`).
- ``qwen25vl``, ``qwen3vl``: OSWorld's ``mm_agents/qwen25vl_agent.py`` and ``qwen3vl_agent.py`` (:mod:`.qwen`).
- ``prompt-agent``: OSWorld's pyautogui ``PromptAgent`` (``mm_agents/agent.py``), for API models; ``aguvis``: guitest's
  pyautogui prompt with normalized coordinates (:mod:`.prompt_agent`).
"""

from __future__ import annotations

from typing import Any

from ...registry import RUNNERS
from .runner import Past, Read, Runner
from .guitest import RUNNER as GUITEST_RUNNER

__all__ = ["RUNNERS", "PROFILE_RUNNERS", "GUITEST_RUNNER", "Past", "Read", "Runner", "get", "register", "for_model"]

register = RUNNERS.register

#: the runner a model profile (guitest/profiles.py) uses in live tasks; profiles not named here use ``guitest``
PROFILE_RUNNERS = {
    "ui-tars-1.5": "uitars15",
    "ui-tars": "uitars15-qwen2vl",
    "qwen2.5-vl": "qwen25vl",
    "qwen3-vl": "qwen3vl",
    "gpt-4o": "prompt-agent",
    "claude": "prompt-agent",
    "aguvis": "aguvis",
}


def get(name: str) -> Runner:
    """The runner called ``name``; a ModelError naming the known ones otherwise."""
    runner: Runner = RUNNERS.get(name)
    return runner


def for_model(model: Any, name: str | None = None) -> tuple[Runner, str]:
    """The runner for ``model`` and why: ``name`` when given (``--runner``), else its profile's, else ``guitest``; a
    computer-use API's own tool loop (``model.tool_loop``, :mod:`guitest.live.cua`) always, no prompt runner applying."""
    own = getattr(model, "tool_loop", None)
    if own is not None:
        return own, "the API's own tool loop" + (" (--runner does not apply)" if name else "")
    if name:
        return get(name), "--runner"
    profile = getattr(getattr(model, "profile", None), "name", "")
    if profile in PROFILE_RUNNERS:
        return get(PROFILE_RUNNERS[profile]), f"the runner of profile {profile}"
    return get(GUITEST_RUNNER.name), f"default (profile {profile or 'none'} has no runner of its own)"
