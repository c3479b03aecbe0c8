"""Reading a reply costs work linear in the reply: think-stripping, tags and embedded JSON on long, broken replies,
and every live runner's reading of a step's reply.

Bounded by the work done, not by a timed assertion: the JSON scan counts its decode attempts; the regular
expressions run in a child process whose generous limit a linear reading never nears (a 2 MB reply reads in
milliseconds) and a quadratic one cannot meet (the old think-stripping took 2.3 s on 50,000 characters, so
about an hour on 2 MB). bench/bench_parsing.py measures the times.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from guitest.answers import jsonscan
from guitest.answers import toolcall


class CountingDecoder:
    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0
        self.inner = jsonscan.json.JSONDecoder()

    def raw_decode(self, text: str, start: int = 0):  # noqa: ANN201 - the decoder's own signature
        """Counts each decode and the characters it read: to its value's end, or to where it failed."""
        self.calls += 1
        try:
            value, end = self.inner.raw_decode(text, start)
        except jsonscan.json.JSONDecodeError as exc:
            self.chars += exc.pos - start
            raise
        self.chars += end - start
        return value, end


@pytest.mark.parametrize(
    "reply",
    ["[1," * 20000, '{"a": ' * 20000, "[" * 30000, "{" * 30000, '{"' * 30000, 'x [{"x": 1, "y": [' * 5000],
    ids=["nested-lists", "nested-objects", "open-brackets", "open-braces", "keys", "mixed"],
)
def test_a_broken_json_reply_is_decoded_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch, reply: str) -> None:
    counter = CountingDecoder()
    monkeypatch.setattr(jsonscan, "_decoder", counter)
    toolcall.find(reply)
    # each opener is decoded at most once (and once more over the whole text when its value may run past a chunk);
    # the old scan decoded every opener to the failure at the reply's end: for nested lists 20,000 decodes reading
    # 30,000 characters each on average, 6e8 in all
    assert counter.calls <= 2 * (reply.count("{") + reply.count("[")) + 1
    assert counter.chars <= 50 * len(reply)


def test_values_inside_a_broken_structure_are_still_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # a truncated list whose first elements are complete: the complete ones are read, the open one skipped
    counter = CountingDecoder()
    monkeypatch.setattr(jsonscan, "_decoder", counter)
    reply = 'points: [{"x": 0.1, "y": 0.2}, {"x": 0.3, "y": 0.4}, {"x": 0.5, "y": '
    assert [(f.x, f.y) for f in toolcall.find(reply)] == [(0.1, 0.2), (0.3, 0.4)]
    assert counter.calls == 3  # the list (fails at the end), its two complete objects; the third, open at the end, is skipped
    # a value longer than a chunk, and one after a broken prefix
    long = '{"note": "' + "a" * 10_000 + '", "x": 3, "y": 4}'
    assert [(f.x, f.y) for f in toolcall.find(long)] == [(3.0, 4.0)]
    mixed = 'text [see {"bad" ] then {"action": "left_click", "coordinate": [10, 20]}'
    assert [(f.x, f.y) for f in toolcall.find(mixed)] == [(10.0, 20.0)]
    # nested too deep for the decoder: skipped whole, and what follows is read
    deep = "[" * 5000 + "]" * 5000 + ' {"x": 7, "y": 8}'
    assert [(f.x, f.y) for f in toolcall.find(deep)] == [(7.0, 8.0)]
    call = '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [5, 6]}}</tool_call>'
    assert [(f.x, f.y) for f in toolcall.find("[1," * 1000 + call)] == [(5.0, 6.0)]


LONG_REPLIES = textwrap.dedent(
    """
    from guitest.answers import region as parsing
    from guitest.profiles import PROFILES
    n = 2_000_000
    replies = ["x" * n, "<think>" + "y" * n, "<point>1 2 " * (n // 11), "<bbox>" * (n // 6), "Answer: " * (n // 8)]
    for reply in replies:
        parsing.strip_think(reply)
        for name in ("generic", "qwen2.5-vl", "ui-tars-1.5", "qwen3-vl"):
            parsing.parse_answer(reply, PROFILES[name].styles)
    print("read", len(replies))
    """
)


def test_long_replies_without_closing_tags_read_in_linear_work() -> None:
    done = subprocess.run([sys.executable, "-c", LONG_REPLIES], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "read 5"


RUNNER_REPLIES = textwrap.dedent(
    """
    from guitest.live import runners
    m = 50_000  # a runner reads the last 50,000 characters of a reply, whatever its length
    replies = ["Action: " + "type(content='" * (m // 14), "click(start_box='(1,2)" * (m // 22), "```" + "`" * m,
               "```python\\n" + "pyautogui.click(" * (m // 16), "<tool_call>\\n" + '{"a": ' * (m // 6), "Action: " + "click(" * (m // 6),
               ";" * m, "\\n" * m, "Action: " + "drag(" * (m // 5)]
    for reply in replies:
        for runner in map(runners.get, runners.RUNNERS.names()):
            runner.read(reply)
    print("read", len(replies))
    """
)


def test_live_runners_read_long_broken_replies_in_linear_work() -> None:
    # every runner on 50,000-character replies of unclosed calls, quotes and fences: about a second in all when linear;
    # the call scanner that searched 20,000 characters from every opening took 41 s on the first two alone
    done = subprocess.run([sys.executable, "-c", RUNNER_REPLIES], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "read 9"
