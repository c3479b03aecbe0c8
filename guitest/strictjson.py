"""JSON files every strict parser reads: finite numbers only, valid UTF-8, written atomically.

The reports, the comparison file and each episode's trajectory.json go through here. Python's ``json`` writes
``Infinity`` and ``NaN`` (which strict parsers, Node's ``JSON.parse`` among them, reject) and fails to encode a
lone surrogate (``\\ud800``, which a JSON-escaped model reply can carry) as UTF-8, which lost the whole report.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (inf, nan) replaced by None, for strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(data: Any, indent: int | None = None) -> str:
    """Strict JSON: no Infinity or NaN (strict parsers, Node's ``JSON.parse`` among them, reject them); a non-finite
    number becomes null. Written with :func:`write_text`, a lone surrogate in a string becomes its ``\\ud800`` escape."""
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=indent)
    except ValueError:
        return json.dumps(finite(data), ensure_ascii=False, allow_nan=False, indent=indent)


def encode(text: str) -> bytes:
    """``text`` as the bytes :func:`write_text` writes: UTF-8, characters UTF-8 cannot hold (lone surrogates) as
    backslash escapes rather than losing the file (inside a JSON string the escape is JSON's own)."""
    return text.encode("utf-8", "backslashreplace")


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically as :func:`encode` makes it: a crash or a full disk mid-write never leaves half a
    file, never touches the file there before, and leaves no temporary file behind (the OSError is raised)."""
    write_together({path: encode(text)})


def write_together(files: Mapping[Path, bytes]) -> None:
    """Write several files all or none: each is written to a temporary file beside it first, and only when every one
    is complete do they replace the files there before. When one cannot be written (``ENOSPC``: the disk is full), the
    temporary files and the folders made for them are removed, the earlier files are untouched, and the OSError is
    raised (its ``filename`` is the file that could not be written, or the folder that could not be made)."""
    temps: list[tuple[Path, Path]] = []
    made: list[Path] = []  # folders made here, removed again if the files are not written
    done = False
    try:
        for path, data in files.items():
            _make_folder(path.parent, made)
            tmp = path.with_name(f"{path.name}.{os.getpid()}-{os.urandom(3).hex()}.tmp")  # two runs writing one report never share one
            temps.append((tmp, path))
            try:
                with open(tmp, "wb") as f:
                    f.write(data)
            except OSError as exc:
                exc.filename = str(path)
                raise
        for tmp, path in temps:
            os.replace(tmp, path)
        done = True
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()  # replaced already (nothing there), or left by a failure
        if not done:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only if empty: something else may have put a file there meanwhile


def _make_folder(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and the parents it lacks, adding each made to ``made`` (parents first)."""
    if folder.is_dir():
        return
    missing = [folder, *(p for p in folder.parents if not p.is_dir())]
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            exc.filename = str(path)
            raise
        made.append(path)
