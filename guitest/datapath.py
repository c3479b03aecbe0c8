"""Where benchmark data lives: the data root's resolution order and safe paths under it."""

from __future__ import annotations

import os
from pathlib import Path

from . import bundled
from .registry import GENERATORS

ENV_VAR = "GUITEST_DATA"
# MMBench-GUI's (and VLMEvalKit's) own data root; its tooling keeps ``MMBench-GUI/`` there
LMU_ENV_VAR = "LMUData"


def default_root() -> Path:
    """The documented default data root: ``$XDG_DATA_HOME/guitest`` or ``~/.local/share/guitest``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "guitest"


def resolve_root(option: str | None) -> tuple[Path, str]:
    """Return the data root and where it came from: ``--data-root``, then $GUITEST_DATA, then $LMUData
    (MMBench-GUI's own variable, so a setup made for its tooling works as it is), then the default."""
    if option:
        return Path(option).expanduser().resolve(), "--data-root"
    for name in (ENV_VAR, LMU_ENV_VAR):
        env = os.environ.get(name)
        if env:
            return Path(env).expanduser().resolve(), f"${name}"
    return default_root().resolve(), "default"


def inside(base: str, relative: str) -> str | None:
    """``base/relative`` normalised, or None when it escapes ``base`` (``..`` or an absolute path).

    Pure string work (no file system calls), so it is cheap enough for every row of a large suite.
    """
    base = os.path.normpath(base)
    candidate = os.path.normpath(os.path.join(base, relative))
    if candidate.startswith(base.rstrip(os.sep) + os.sep) and candidate != base:
        return candidate
    return None


def data_folder(suite_folder: str, data: dict, root: str) -> str:
    """Where a suite's data is: ``dir`` under the suite's folder (``base: suite``) or under the data root.

    Generated data (``base: suite`` with a ``generator``) of a suite that ships inside the installed package goes
    under the data root instead, in the suite's own folder there (the demo: ``DATA_ROOT/demo/data``): a run never
    writes into the installed package. A checkout's or a copied suite keeps it beside the suite file.
    """
    return os.path.normpath(os.path.join(_base(suite_folder, data, root), data["dir"]))


def _base(suite_folder: str, data: dict, root: str) -> str:
    if data.get("base") != "suite":
        return root
    if data.get("generator") and bundled.installed(suite_folder):
        return os.path.join(root, Path(suite_folder).resolve().relative_to(bundled.PACKAGE / "suites"))
    return suite_folder


def describe_data(suite_folder: str, data: dict, root: str, root_source: str) -> str:
    """A phrase saying where a suite reads its data from, for the terminal and the reports."""
    folder = data_folder(suite_folder, data, root)
    base = _base(suite_folder, data, root)
    beside = base == suite_folder
    if not _within(folder, base):  # data.dir: ../elsewhere or an absolute path: say where it really is
        what = "the suite folder" if beside else f"the data root {root} (from {root_source})"
        return f"{os.path.abspath(folder)}, OUTSIDE {what} (data.dir {data.get('dir')!r})"
    if beside:
        return f"{folder} (its own data, beside the suite file)"
    if data.get("base") == "suite":
        return f"{folder} (generated under the data root {root}, from {root_source}: the installed suite's folder is read-only)"
    return f"{folder}, under the data root {root} (from {root_source})"


def _within(path: str, base: str) -> bool:
    base = os.path.realpath(base)
    return os.path.commonpath([os.path.realpath(path), base]) == base


def locate(suite_folder: str, data: dict, root: str, root_source: str, suite_path: str) -> str:
    """The data folder of a suite; runs its generator first if it declares one.

    Raises :class:`~guitest.errors.SuiteError` saying where it looked and how to get
    the data when the folder is missing (never a silent skip).
    """
    from .errors import SuiteError

    folder = data_folder(suite_folder, data, root)
    generator = data.get("generator")
    if generator:
        GENERATORS.get(generator)(folder)
    if not os.path.isdir(folder):
        howto = data.get("howto") or "download the data set in its published layout"
        where_root = f"suite folder {suite_folder}" if _base(suite_folder, data, root) == suite_folder else f"data root {root} (from {root_source})"
        raise SuiteError(
            f"{suite_path}: data folder {folder} does not exist.\n"
            f"  guitest looked under the {where_root}; the order is --data-root, then ${ENV_VAR}, then ${LMU_ENV_VAR}, then {default_root()}.\n"
            f"  To get the data: {howto}\n"
            f"  Then point guitest at the folder that holds '{data['dir']}': pytest ... --data-root=DIR (or export {ENV_VAR}=DIR)."
        )
    return folder
