"""Write tasks.json, the MiniWoB++ task list of this suite, from the installed ``miniwob`` package.

    python suites/miniwob/make_tasks.py          # rewrites suites/miniwob/tasks.json

Every task page under ``miniwob/html/miniwob/`` becomes a row with seeds 0..4 and flags:

- ``nondeterministic``: the package registers the task with ``nondeterministic=True`` (its comment is the note);
- ``select_dropdown``: the page builds a native ``<select>``, which headless Chromium does not draw
  in screenshots (a screenshot-only agent would have to use the keyboard blind);
- ``unregistered``: the package ships the page but registers no environment for it (it is not
  among the package's benchmark tasks).

tests/test_live_formats.py checks that tasks.json agrees with the installed package.
"""

from __future__ import annotations

import json
import os
import re
import sys

SEEDS = [0, 1, 2, 3, 4]
SELECT = re.compile(r"<select|append\(['\"]select|createElement\(['\"]select")


def package_dir() -> str:
    import miniwob

    return os.path.dirname(miniwob.__file__)


def registered(package: str) -> dict[str, str | None]:
    """Registered task name -> the non-determinism note (None when deterministic)."""
    source = open(os.path.join(package, "registration.py"), encoding="utf-8").read()
    out: dict[str, str | None] = {}
    for block in re.findall(r"register\((.*?)\n    \)", source, re.DOTALL):
        name = re.search(r'id="miniwob/(.*?)-v1"', block)
        if name is None:
            continue
        note = re.search(r"nondeterministic=True,\s*#\s*(.*)", block)
        out[name.group(1)] = note.group(1).strip() if note else ("" if "nondeterministic=True" in block else None)
    return out


def rows(package: str) -> list[dict[str, object]]:
    """The task list's rows, sorted by task name."""
    pages = os.path.join(package, "html", "miniwob")
    known = registered(package)
    out = []
    for page in sorted(os.listdir(pages), key=lambda p: p[: -len(".html")]):
        if not page.endswith(".html"):
            continue
        task = page[: -len(".html")]
        flags, notes = [], []
        if task not in known:
            flags.append("unregistered")
            notes.append("no environment registered for it in the miniwob package")
        elif known[task] is not None:
            flags.append("nondeterministic")
            notes.append(known[task] or "flagged nondeterministic by the miniwob package")
        with open(os.path.join(pages, page), encoding="utf-8") as f:
            if SELECT.search(f.read()):
                flags.append("select_dropdown")
                notes.append("a native <select> (not drawn in headless screenshots)")
        row: dict[str, object] = {"task": task, "family": task.split("-", 1)[0], "seeds": SEEDS}
        if flags:
            row["flags"] = flags
            row["note"] = "; ".join(notes)
        out.append(row)
    return out


def main() -> int:
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tasks.json")
    data = rows(package_dir())
    with open(target, "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in data) + "\n]\n")
    flagged = sum(1 for r in data if r.get("flags"))
    print(f"wrote {target}: {len(data)} tasks, {flagged} flagged, {len(data) - flagged} in the default selection")
    return 0


if __name__ == "__main__":
    sys.exit(main())
