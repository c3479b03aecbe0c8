"""guitest's OSWorld runners against OSWorld's own code, recorded (tests/data/osworld_reference/, its README says how).

Two recordings, both made by running OSWorld's agents (the repository and commit are in each file's header):

- messages.json: what each agent's ``predict`` sent at EVERY step of 7- and 12-step episodes, with the runner's own
  history window and with others. guitest's runner must send the same messages: the same roles in the same order,
  the same texts byte for byte, the same earlier screenshots in the same places.
- replies.json: what each reply of the reply tables did on OSWorld's machine (the agent's ``predict``, then
  ``lib_run_single``'s loop through ``DesktopEnv.step``, the controller's ``execute_python_command`` and the server's
  ``/execute``, against a recording pyautogui). guitest's runner must do the same, except in the rows of DEPARTURES,
  each a departure docs/live.md names with its reason.

Events, as on a 1920x1080 screen in whole pixels: ``click(x,y)`` (``click()``: where the pointer is), ``double_click``,
``triple_click``, ``right_click``, ``middle_click``, ``move(x,y)``, ``drag_to(x,y)`` (the button held from where the
pointer is), ``scroll(n at x,y)`` (pyautogui's clicks, positive up), ``type('t')`` (key by key; consecutive typing
joined), ``paste('t')`` (through the clipboard), ``key(a+b)``, ``WAIT``, ``DONE``, ``FAIL``; the reference's own
failures as ``client_error`` (its UI-TARS agent gave up on the reply) and ``crash(Type)`` (its loop raised: the
episode ends). ``error(Type)`` marks where the reference's code stopped on the machine; what ran before it counts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from guitest.exchange import SentImage
from guitest.live import runners
from guitest.live.runners.runner import Past

DATA = Path(__file__).parent / "data" / "osworld_reference"
MESSAGES = json.loads((DATA / "messages.json").read_text(encoding="utf-8"))
REPLIES = json.loads((DATA / "replies.json").read_text(encoding="utf-8"))
DOCS = (Path(__file__).parent.parent / "docs" / "live.md").read_text(encoding="utf-8")
SCREEN = (1920, 1080)
ALIASES = {"\n": "enter", "\r": "enter", "return": "enter", "\t": "tab", "escape": "esc", "control": "ctrl", "ctrlleft": "ctrl", "shiftleft": "shift", "altleft": "alt"}


class _Model:
    def plan_size(self, size: tuple[int, int]) -> tuple[int, int]:
        return size


# -- messages: every step of every recorded episode ------------------------------------------------------------------


def images_for(name: str, history: int | None) -> int:
    """guitest's ``--history-images`` for the reference's window (UI-TARS's ``history_n`` counts the current screenshot)."""
    runner = runners.get(name)
    if history is None:
        return runner.history_images
    return history - 1 if runner.convention == "uitars" else history


def guitest_messages(name: str, replies: list[str], seen: list[int], images: int) -> list[list[list[Any]]]:
    """The messages runner ``name`` sends at each step of an episode of ``replies`` (step k given screenshot
    ``seen[k]``), laid out as the recording lays them out: ``[role, part, ...]``, a text as itself, an image as
    ``{"image": step}``."""
    runner = runners.get(name)
    sent = runner.sizes(SCREEN, _Model())  # type: ignore[arg-type]
    past: list[Past] = []
    out = []
    for step, reply in enumerate(replies):
        shot = SentImage(None, sent, data=bytes([seen[step]]))
        prompt = runner.prompt("Open the settings", past, shot, images)
        said: list[list[Any]] = [["system", prompt.system]]
        for role, parts in prompt.turns:
            said.append([role, *({"image": prompt.images[p].data[0]} if isinstance(p, int) else p for p in parts)])  # type: ignore[index]
        out.append(said)
        read = runner.read(reply)
        actions, _ = runner.decide(read, past, step, len(replies))
        past.append(Past(reply, shot, actions, runner.line(reply, actions)))
    return out


def reference_messages(episode: dict[str, Any]) -> list[list[list[Any]]]:
    texts = MESSAGES["texts"]
    return [[[m[0], *(texts[p] if isinstance(p, int) else p for p in m[1:])] for m in step] for step in episode["messages"]]


EPISODES = MESSAGES["episodes"]


@pytest.mark.parametrize("episode", EPISODES, ids=[e["name"] for e in EPISODES])
def test_every_step_sends_the_references_messages(episode: dict[str, Any]) -> None:
    """At every step of the episode, guitest's messages are the ones OSWorld's agent sent (messages.json's header
    names the repository and commit the agents were run at)."""
    ours = guitest_messages(episode["runner"], episode["replies"], episode["seen"], images_for(episode["runner"], episode["history"]))
    theirs = reference_messages(episode)
    assert len(ours) == len(theirs)
    for step, (mine, reference) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == reference, f"step {step + 1} of {episode['name']}"


def test_the_episodes_are_longer_than_every_window() -> None:
    for name in ("uitars15", "uitars15-qwen2vl", "qwen25vl", "qwen3vl", "prompt-agent"):
        lengths = {len(e["replies"]) for e in EPISODES if e["runner"] == name and e["history"] is None}
        assert lengths == {7, 12} and min(lengths) > runners.get(name).history_images + 1, name
    assert MESSAGES["repository"] and re.fullmatch(r"[0-9a-f]{40}", MESSAGES["commit"])
