"""Where benchmark data lives: the data root's resolution order and safe paths under it."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "GUITEST_DATA"


def default_root() -> Path:
    """The documented default data root: ``$XDG_DATA_HOME/guitest`` or ``~/.local/share/guitest``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "guitest"


def resolve_root(option: str | None) -> tuple[Path, str]:
    """Return the data root and where it came from: ``--data-root``, then $GUITEST_DATA, then the default."""
    if option:
        return Path(option).expanduser().resolve(), "--data-root"
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve(), f"${ENV_VAR}"
    return default_root().resolve(), "default"


def inside(base: str, relative: str) -> str | None:
    """``base/relative`` normalised, or None when it escapes ``base`` (``..`` or an absolute path).

    Pure string work (no file system calls), so it is cheap enough for every row of a large suite.
    """
    base = os.path.normpath(base)
    candidate = os.path.normpath(os.path.join(base, relative))
    if candidate.startswith(base + os.sep):
        return candidate
    return None
