"""How long reading a reply takes, on long and broken replies: think-stripping, the answer styles, embedded JSON.

    python bench/bench_parsing.py [--repeat 3]

Each row: one reply (its length in characters), the median seconds over the repeats of reading it the way a case
does with each of four profiles' answer styles (generic, qwen2.5-vl, ui-tars-1.5, qwen3-vl), plus the refusal check,
and of every live runner's reading of a step's reply (:mod:`guitest.live.runners`). Replies are cut to the last 65,536 characters before they
are read (``MAX_REPLY``), so the long rows measure the cut reply, as a case reads it. Linear reading keeps every row
in milliseconds; the think-stripping this replaced took 2.3 s on the first row alone.
"""

from __future__ import annotations

import argparse
import statistics
import time

from guitest.answers import region as parsing
from guitest.live import runners
from guitest.profiles import PROFILES

N = 65_536
REPLIES = {
    "no </think>": "x" * N,
    "<think> never closed": "<think>" + "y" * N,
    "unclosed <point> tags": "<point>1 2 " * (N // 11),
    "unclosed <bbox> tags": "<bbox>" * (N // 6),
    "Answer: markers": "Answer: " * (N // 8),
    "nested JSON lists, truncated": "[1," * (N // 3),
    "JSON keys, broken": '{"' * (N // 2),
    "unclosed <tool_call>s": '<tool_call>{"a": ' * (N // 17),
    "UI-TARS start_box, unclosed": "click(start_box='(1,2)" * (N // 22),
    "UI-TARS type(content=', unclosed": "Action: " + "type(content='" * (N // 14),
    "code fences, one never closed": "```python\n" + "pyautogui.click(" * (N // 16),
    "pyautogui ; cuts": ";" * N,
    "5 MB, no </think>": "z" * 5_000_000,
}


def read(reply: str) -> None:
    for name in ("generic", "qwen2.5-vl", "ui-tars-1.5", "qwen3-vl"):
        parsing.parse_answer(reply, PROFILES[name].styles)
    parsing.is_refusal(reply)
    for runner in map(runners.get, runners.RUNNERS.names()):
        runner.read(reply[-N:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| reply | characters | seconds (median) |\n|---|---|---|")
    for label, reply in REPLIES.items():
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            read(reply)
            times.append(time.perf_counter() - start)
        print(f"| {label} | {len(reply):,} | {statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
