"""Summarise a py-spy raw profile (``py-spy record -f raw --threads [--gil]``): where the samples go.

    python bench/spysum.py PROFILE.txt [--top 25] [--focus NAME ...]

Prints the share of samples per thread kind (the pytest main thread, guitest's case
threads, others), the top functions by self samples, and the inclusive share of a
few functions worth knowing (``--focus`` adds more; a function counts once per
stack). With ``--gil``, py-spy keeps only samples of the thread holding the GIL, so
the shares say who holds the interpreter: the resource a one-process run runs out of.
"""

from __future__ import annotations

import argparse
import collections
import re

FOCUS = (
    "pytest_runtestloop",
    "pytest_runtest_protocol",
    "GuitestItem.runtest",
    "Session.result",
    "Prefetcher.result",
    "Session._upcoming",
    "run_case",
    "open_image",
    "decode_rgb",
    "resized",
    "encode",
    "data_uri",
    "OpenAIChat.messages",
    "OpenAIChat.generate",
    "Completions.create",
    "SyncAPIClient._build_request",
    "Client.send",
    "SyncAPIClient._process_response",
    "judge",
    "case_result",
    "TerminalReporter.pytest_runtest_logreport",
    "TerminalReporter.pytest_runtest_logstart",
    "WorkerInteractor.pytest_runtest_logreport",
    "serialize_report",
    "pytest_sessionfinish",
    "pytest_collection",
)


def thread_kind(frame: str) -> str:
    name = frame.split(":", 1)[-1].strip()
    if "guitest-case" in name:
        return "guitest case threads"
    if "MainThread" in name or name.startswith("python") or name.startswith("pytest"):
        return "main thread"
    return "other threads (" + re.sub(r"[_\d]+$", "", name) + ")"


def summarise(path: str, top: int = 25, focus: tuple[str, ...] = FOCUS, within: str | None = None) -> str:
    """The Markdown summary; ``within``: keep only the main thread's stacks through that function (and all other threads)."""
    by_thread: collections.Counter[str] = collections.Counter()
    self_time: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            n = int(count)
            frames = stack.split(";")
            if within and thread_kind(frames[0]) == "main thread" and not any(fr.split(" (", 1)[0] == within for fr in frames):
                continue
            total += n
            if frames[0].startswith("thread"):
                by_thread[thread_kind(frames[0])] += n
                frames = frames[1:]
            if frames:
                self_time[_short(frames[-1])] += n
            seen = set()
            for fr in frames:
                name = fr.split(" (", 1)[0]
                if name in focus and name not in seen:
                    seen.add(name)
                    inclusive[name] += n
    out = [f"{total} samples", "", "| thread | share |", "|---|---|"]
    out += [f"| {k} | {100 * v / total:.1f}% |" for k, v in by_thread.most_common()]
    out += ["", "| function (inclusive) | share |", "|---|---|"]
    out += [f"| `{k}` | {100 * v / total:.1f}% |" for k, v in sorted(inclusive.items(), key=lambda kv: -kv[1])]
    out += ["", f"| top {top} by self samples | share |", "|---|---|"]
    out += [f"| `{k}` | {100 * v / total:.1f}% |" for k, v in self_time.most_common(top)]
    return "\n".join(out)


def _short(frame: str) -> str:
    m = re.match(r"(.*?) \((.*?)(?::\d+)?\)$", frame)
    if not m:
        return frame
    func, file = m.groups()
    parts = file.split("/")
    return f"{func} ({'/'.join(parts[-2:])})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--focus", nargs="*", default=[])
    parser.add_argument("--within", default=None, help="keep only main-thread stacks through this function, e.g. pytest_runtestloop")
    args = parser.parse_args()
    print(summarise(args.profile, args.top, FOCUS + tuple(args.focus), args.within))


if __name__ == "__main__":
    main()
