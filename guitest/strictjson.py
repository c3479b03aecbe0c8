"""JSON files every strict parser reads: finite numbers only, valid UTF-8, written atomically; and read back within bounds.

The reports, the comparison file and each episode's trajectory.json go through here. Python's ``json`` writes
``Infinity`` and ``NaN`` (which strict parsers, Node's ``JSON.parse`` among them, reject) and fails to encode a
lone surrogate (``\\ud800``, which a JSON-escaped model reply can carry) as UTF-8, which lost the whole report.

Reading (:func:`load`, :func:`loads`): every reader of a report-like file (a report, a shard, a leaderboard file, a
published run's ``traj.jsonl`` line) goes through one loader with a size bound (:data:`MAX_BYTES`) and a depth bound
(:data:`MAX_DEPTH`); whatever the file holds, it either gives plain builtins or raises :class:`UnreadableJSON` with one
line naming the file and why, which each caller turns into its own error. Python's ``json`` alone raised a bare
RecursionError on 100,000 nested brackets and read a 2 GB file whole.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
from pathlib import Path
from typing import Any, Mapping

from .errors import GuitestError
from .printable import printable

#: the largest JSON file guitest reads (a report of 100,000 cases is about 100 MB; Python holds a file's values in
#: several times its size)
MAX_BYTES = 512 << 20
#: the deepest nesting guitest reads (a report nests about 10 levels; the readers after the loader, and
#: :func:`finite`, recurse once or twice a level, so a bound well under Python's recursion limit keeps them safe)
MAX_DEPTH = 100


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


class UnreadableJSON(GuitestError):
    """A JSON file or text that cannot be read within the bounds: the message is one line, ``LABEL: why``."""


def load(path: str | os.PathLike[str], label: str | None = None, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH, expect: type | None = None) -> Any:
    """The JSON value in the file at ``path``, as :func:`loads` reads it; :class:`UnreadableJSON` naming ``label``
    (default: the path) for a file that is missing, a folder, unreadable, larger than ``max_bytes`` (never more than
    that is read), or not UTF-8 (a binary file)."""
    shown = _one_line(str(path if label is None else label))
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise UnreadableJSON(f"{shown}: a folder, not a JSON file")
            if info.st_size > max_bytes:
                raise UnreadableJSON(f"{shown}: larger than {_size(max_bytes)}, the most guitest reads of a JSON file")
            data = handle.read(max_bytes + 1)  # no more than the bound, even from a device or a pipe
    except FileNotFoundError:
        raise UnreadableJSON(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise UnreadableJSON(f"{shown}: a folder, not a JSON file") from None
    except OSError as exc:
        raise UnreadableJSON(f"{shown}: cannot read: {_one_line(exc.strerror or str(exc))}") from None
    if len(data) > max_bytes:
        raise UnreadableJSON(f"{shown}: larger than {_size(max_bytes)}, the most guitest reads of a JSON file")
    return loads(data, shown, max_depth=max_depth, expect=expect)


def loads(text: str | bytes, label: str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH, expect: type | None = None) -> Any:
    """The JSON value of ``text`` (bytes must be UTF-8; a byte-order mark is allowed), as plain builtins: ``NaN`` and
    ``Infinity`` (which older guitest versions wrote) and a float past the largest one read as None, as :func:`dumps`
    writes them now. :class:`UnreadableJSON` (``label: why``) for text longer than ``max_bytes``, text that is not
    JSON, nesting deeper than ``max_depth`` (arrays and objects), an integer too large for a float, or a top-level
    value that is not of type ``expect`` (``dict``: an object, ``list``: an array)."""
    label = _one_line(label)
    if isinstance(text, bytes):
        if len(text) > max_bytes:
            raise UnreadableJSON(f"{label}: larger than {_size(max_bytes)}, the most guitest reads of a JSON text")
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UnreadableJSON(f"{label}: not UTF-8 text (byte {exc.start}): not a JSON file") from None
    elif len(text) > max_bytes:
        raise UnreadableJSON(f"{label}: larger than {_size(max_bytes)}, the most guitest reads of a JSON text")
    if not text or text.isspace():
        raise UnreadableJSON(f"{label}: empty, not JSON")
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except _TooLarge as exc:
        raise UnreadableJSON(f"{label}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UnreadableJSON(f"{label}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:  # Python's parser gives up near its recursion limit: far past max_depth
        raise UnreadableJSON(f"{label}: nested deeper than {max_depth} levels, more than guitest reads") from None
    if depth(value, max_depth) > max_depth:
        raise UnreadableJSON(f"{label}: nested deeper than {max_depth} levels, more than guitest reads")
    if expect is not None and not isinstance(value, expect):
        raise UnreadableJSON(f"{label}: the top level is {kind(value)}, expected {kind(expect())}")
    return value


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deep ``value`` nests (a scalar 0, ``[]`` 1, ``[[1]]`` 2), counted without recursion and up to just past
    ``limit``."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if level > limit:
            break
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, (dict, list)):
                stack.append((child, level + 1))
    return deepest


class _TooLarge(ValueError):
    """A number the loader does not take (raised from inside ``json.loads``, which lets it through)."""


def _no_constant(name: str) -> None:
    return None  # NaN, Infinity, -Infinity: what dumps writes for them now


def _finite_float(text: str) -> float | None:
    number = float(text)
    return number if math.isfinite(number) else None


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    try:
        if digits > 309:  # past the largest float, and int() of 4300 digits or more is refused by Python itself
            raise OverflowError
        number = int(text)
        float(number)
    except OverflowError:
        raise _TooLarge(f"an integer of {digits} digits, past the largest number guitest reads") from None
    return number


def _one_line(text: str) -> str:
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def kind(value: Any) -> str:
    """What a JSON value is, as messages name it: ``an object``, ``an array``, ``a string``, ``a number``, ..."""
    return {dict: "an object", list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
