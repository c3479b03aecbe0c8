"""The bytes of a report folder, by kind of file, and what it holds more than once (files of the same content).

    python bench/report_bytes.py REPORT_DIR

docs/bench.md ("A run written once") has the figures of one run before and after a run was written once: run the same
suite into two report folders, with each source tree first on ``PYTHONPATH``, and this on each folder.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections import defaultdict
from pathlib import Path


def kind(relative: str) -> str:
    """A file's kind: an episode's screenshot, thumbnail or trajectory; a page's data file; or a report file at the top,
    ``.passed`` or in a run folder."""
    name = os.path.basename(relative)
    if "/episodes/" in "/" + relative:
        return "episodes .thumb.jpg" if name.endswith(".thumb.jpg") else "episodes " + os.path.splitext(name)[1]
    if "_files/" in relative:
        return ("run folder " if relative.startswith("runs/") else "top ") + "page data " + os.path.splitext(name)[1]
    where = "run folder " if relative.startswith("runs/") else "top "
    return where + (".passed" if ".passed." in name else "") + (os.path.splitext(name)[1] or name)


def main() -> int:
    """Print the folder's bytes per kind, its total, and the files whose content another file holds too."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args().folder
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    same: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        kinds[kind(relative)][0] += 1
        kinds[kind(relative)][1] += len(data)
        same[hashlib.sha256(data).hexdigest()].append((relative, len(data)))
    for name, (n, size) in sorted(kinds.items()):
        print(f"{name:32s} {n:6d} files {size / 1024:10.1f} KB")
    again = sum(files[0][1] * (len(files) - 1) for files in same.values())
    print(f"total {sum(s for _, s in kinds.values()) / 1024:.1f} KB; {again / 1024:.1f} KB in files whose content another holds too:")
    for files in sorted(same.values(), key=lambda f: -f[0][1] * (len(f) - 1)):
        if len(files) > 1:
            print(f"  {files[0][1] / 1024:.1f} KB x {len(files)}: " + ", ".join(r for r, _ in files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
