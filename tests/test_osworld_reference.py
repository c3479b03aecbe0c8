"""guitest's OSWorld runners against OSWorld's own code, recorded (tests/data/osworld_reference/, its README says how).

Two recordings, both made by running OSWorld's agents (the repository and commit are in each file's header):

- messages.json: what each agent's ``predict`` sent at EVERY step of 7- and 12-step episodes, with the runner's own
  history window and with others. guitest's runner must send the same messages: the same roles in the same order,
  the same texts byte for byte, the same earlier screenshots in the same places, at the size the model sees.
- replies.json: what each reply of the reply tables did on OSWorld's machine (the agent's ``predict``, then
  ``lib_run_single``'s loop through ``DesktopEnv.step``, the controller's ``execute_python_command`` and the server's
  ``/execute``, against a recording pyautogui). guitest's runner must do the same, except in the rows of DEPARTURES,
  each a departure docs/live_agents.md names with its reason.

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

from guitest.desktopenv.machine import pyautogui_code, pyautogui_key
from guitest.exchange import SentImage
from guitest.live import runners
from guitest.live.actions import Action
from guitest.live.runners.runner import Past

DATA = Path(__file__).parent / "data" / "osworld_reference"
MESSAGES = json.loads((DATA / "messages.json").read_text(encoding="utf-8"))
REPLIES = json.loads((DATA / "replies.json").read_text(encoding="utf-8"))
_LIVE = (Path(__file__).parent.parent / "docs" / "live_agents.md").read_text(encoding="utf-8")
#: docs/live_agents.md's "Where guitest departs from the references, on purpose" section
DOCS = _LIVE.split("### Where guitest departs from the references, on purpose", 1)[1].split("\n## ", 1)[0]
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
            said.append([role, *({"image": prompt.images[p].data[0], "size": list(prompt.images[p].size)} if isinstance(p, int) else p for p in parts)])  # type: ignore[index]
        out.append(said)
        read = runner.read(reply)
        actions, _ = runner.decide(read, past, step, len(replies))
        past.append(Past(reply, shot, actions, runner.line(reply, actions)))
    return out


def reference_messages(episode: dict[str, Any]) -> list[list[list[Any]]]:
    """The recorded messages, texts written out; an image at the size the model sees it: UI-TARS's as its server's
    processor resizes it (guitest resizes on the client, docs/live_agents.md: "Images"), the others as sent."""
    texts = MESSAGES["texts"]

    def part(p: Any) -> Any:
        if isinstance(p, int):
            return texts[p]
        return {"image": p["image"], "size": p.get("model_sees", p["size"])}

    return [[[m[0], *map(part, m[1:])] for m in step] for step in episode["messages"]]


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


# -- replies: what each does on the machine --------------------------------------------------------------------------


def key_name(key: str) -> str:
    key = key.lower() if len(key) > 1 else key
    return ALIASES.get(key, key)


def points(action: Action) -> list[tuple[int, int]]:
    """The whole-pixel points guitest's desktop sends for ``action`` (its own pyautogui code, read back)."""
    return [(int(x), int(y)) for x, y in re.findall(r"\((\d+), (\d+)", pyautogui_code(action, SCREEN))]


def machine(steps: list[list[Action]]) -> list[list[str]]:
    """What guitest's desktop does for each step's actions (screenshot pixels), as events (see the module docstring)."""
    out: list[list[str]] = []
    pointer: tuple[int, int] | None = None

    def at(p: tuple[int, int] | None) -> str:
        return "" if p is None else f"{p[0]},{p[1]}"

    for actions in steps:
        said: list[str] = []
        for a in actions:
            if a.kind in ("click", "double_click", "right_click", "triple_click", "middle_click"):
                if a.point is not None:
                    pointer = points(a)[0]
                said.append(f"{a.kind}({at(pointer)})")
            elif a.kind == "move":
                p = points(a)[0]
                if p != pointer:
                    said.append(f"move({at(p)})")
                pointer = p
            elif a.kind == "drag":
                *start, end = points(a)
                if start and start[0] != pointer:
                    said.append(f"move({at(start[0])})")
                said.append(f"drag_to({at(end)})")
                pointer = end
            elif a.kind == "scroll":
                if a.point is not None:
                    pointer = points(a)[0]
                where = f" at {at(pointer)}" if pointer else ""
                dx, dy = a.scroll
                if round(dy):
                    said.append(f"scroll({-round(dy)}{where})")
                if round(dx):
                    said.append(f"hscroll({round(dx)}{where})")
            elif a.kind == "type":
                if a.paste or not a.text.isascii():  # guitest.desktopenv.machine.typing_code: through the clipboard
                    said.append(f"paste({a.text!r})")
                else:
                    for char in a.text:
                        said.append(f"key({key_name(char)})" if char in "\n\r\t" else f"type({char!r})")
            elif a.kind == "key":
                names = [key_name(pyautogui_key(k)) for k in a.keys]
                said.append(f"type({names[0]!r})" if len(names) == 1 and len(names[0]) == 1 else "key(" + "+".join(names) + ")")
            else:
                said.append(a.kind.upper())
        out.append(said)
    return out


def on_screen(event: str) -> str:
    """``event`` with a point past the screen's edge where X puts the pointer: on its last pixel (Qwen3-VL's 999 maps
    to 1920, pyautogui sends it, the X server clamps it; guitest's desktop clamps it itself)."""
    if event.startswith(("type(", "paste(")):
        return event
    return re.sub(r"(-?\d+),(-?\d+)", lambda m: f"{min(max(int(m[1]), 0), SCREEN[0] - 1)},{min(max(int(m[2]), 0), SCREEN[1] - 1)}", event)


def joined(events: list[str]) -> list[str]:
    """Consecutive typing as one ``type``, points on the screen, the reference's stops on the machine (``error(...)``)
    left out."""
    out: list[str] = []
    for event in map(on_screen, events):
        if event.startswith("error("):
            continue
        if event.startswith("type(") and out and out[-1].startswith("type("):
            out[-1] = f"type({eval(out[-1][5:-1]) + eval(event[5:-1])!r})"
        else:
            out.append(event)
    return out


def guitest_episode(name: str, replies: list[str], budget: int) -> list[list[str]]:
    """What each reply of an episode does through runner ``name`` on guitest's desktop (its stop rules applied)."""
    runner = runners.get(name)
    sent = runner.sizes(SCREEN, _Model())  # type: ignore[arg-type]
    past: list[Past] = []
    steps = []
    for step, reply in enumerate(replies):
        read = runner.read(reply)
        actions, _ = runner.decide(read, past, step, budget)
        past.append(Past(reply, SentImage(None, sent), actions, runner.line(reply, actions)))
        steps.append([runner.to_screen(a, runner.space_for(None), sent, SCREEN) for a in actions])
        if any(a.kind in ("done", "fail") for a in actions):
            break
    return [joined(s) for s in machine(steps)]


#: rows where guitest does something else, on purpose: what guitest does, and the phrase of docs/live_agents.md's "departs on
#: purpose" section that names the departure (the recording's ``reference`` column says what OSWorld does)
UNREADABLE, TYPED, X_KEYS, THINK = "an unreadable reply uses its step", "text is typed as given", "x key names", "reasoning in `<think>` is not acted on"
DEPARTURES: dict[str, tuple[list[list[str]], str]] = {
    "uitars-unparseable-part": ([[]], UNREADABLE),
    "uitars-no-action": ([[]], UNREADABLE),
    "uitars-box-tokens": ([["click(99,197)"]], "box tokens"),
    "uitars-point-argument": ([["click(99,197)"]], "`point=`, `start_point=` and `end_point=`"),
    "uitars-start-point-argument": ([["move(9,19)", "drag_to(298,395)"]], "`point=`, `start_point=` and `end_point=`"),
    "uitars-backslash-in-content": ([["paste('C:\\\\temp\\\\a.txt')", "WAIT"]], TYPED),
    "uitars-newline-inside-content": ([["paste('line one\\nline two')", "WAIT"]], TYPED),
    "uitars-x-style-key": ([["key(ctrl+c)"]], X_KEYS),
    "pa-x-style-key": ([["key(ctrl+c)"]], X_KEYS),
    "pa-non-ascii": ([["paste('naïve 東京')"]], TYPED),
    "pa-less-than": ([["type('a<b<')"]], "`<` in typed text"),
    "pa-variable": ([["click(1,2)", "click(3,4)"]], "a statement guitest cannot read is skipped"),
    "pa-code-inside-think": ([["click(100,200)"]], THINK),
}
for _p, _x, _y in (("q25", 145, 148), ("q3", 192, 108)):
    DEPARTURES.update(
        {
            f"{_p}-x-style-key": ([["key(ctrl+c)"]], X_KEYS),
            f"{_p}-keys-as-a-string": ([["key(ctrl+a)"]], "`keys` given as a string is read as a combination"),
            f"{_p}-non-ascii": ([["paste('北京 café')"]], TYPED),
            f"{_p}-quote-in-text": ([['type("it\'s")']], TYPED),
            f"{_p}-backslash-in-text": ([["type('C:\\\\temp')"]], TYPED),
            f"{_p}-newline-in-text": ([["type('hello')", "key(enter)"]], TYPED),
            f"{_p}-arguments-as-a-json-string": ([[f"click({_x},{_y})"]], "a JSON string (the OpenAI wire form)"),
            f"{_p}-call-inside-think": ([[f"click({_x},{_y})"]], THINK),
        }
    )

ROWS = REPLIES["rows"]


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
def test_replies_do_what_they_do_on_osworlds_machine(row: dict[str, Any]) -> None:
    done = guitest_episode(row["runner"], row["replies"], row["budget"])
    reference = [joined(step) for step in row["reference"]]
    if row["name"] in DEPARTURES:
        expected, departs = DEPARTURES[row["name"]]
        assert done == expected
        assert done != reference, f"{row['name']} no longer departs: remove it from DEPARTURES"
        assert departs.lower() in " ".join(DOCS.lower().split()), departs
    else:
        assert done == reference


def test_the_reply_tables_cover_the_edge_cases() -> None:
    names = {r["name"] for r in ROWS}
    for prefix in ("q25", "q3"):
        assert {
            f"{prefix}-{n}"
            for n in (
                "several",
                "two-tool-calls",
                "terminate-success",
                "terminate-failure",
                "middle-click",
                "x-style-key",
                "non-ascii",
                "quote-in-text",
                "backslash-in-text",
                "newline-in-text",
                "three-key-combo",
                "scroll-up-no-point",
                "scroll-drag-move-wait",
                "arguments-as-a-json-string",
                "call-inside-think",
            )
        } <= names
    assert {
        "uitars-box-tokens",
        "uitars-finished-content",
        "uitars-call-user-x4",
        "uitars-wait",
        "uitars-three-key-hotkey",
        "uitars-point-argument",
        "uitars-start-point-argument",
        "uitars-newline-inside-content",
        "uitars-backslash-in-content",
        "uitars-scroll-up-no-point",
    } <= names
    assert {
        "pa-triple-and-middle",
        "pa-x-style-key",
        "pa-for-range-loop-first",
        "pa-if-first",
        "pa-code-inside-think",
        "pa-scroll-with-and-without-point",
        "pa-quotes-backslash-newline",
        "pa-non-ascii",
    } <= names
    assert all(n in names for n in DEPARTURES)
