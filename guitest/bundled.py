"""The suites that ship with guitest: where they are, found by name, packed into the wheel, copied into a project.

A checkout keeps them in the repository's ``suites/``; the wheel carries the same folders as
``guitest/suites/<name>/``, each with an ``__init__.py`` the build writes, so pytest's own way to run
tests an installed package ships finds them by name::

    pytest --pyargs guitest.suites.screenspot_pro --model=...

A suite is named by its folder under ``suites/`` (``screenspot_pro``, ``mmbench_gui/l1``; the dotted
``mmbench_gui.l1`` works too). The installed package is read-only at run time: a suite's generated data
(the demo's screenshots) goes under the data root instead (:func:`guitest.datapath.data_folder`), and
reports go to the rootdir's ``reports/`` as for any suite.

This module uses the standard library only (and PyYAML in :func:`bundle`, lazily): ``setup.py`` loads it
by its file path to build the wheel, before guitest's dependencies are installed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

try:
    from .errors import GuitestError
except ImportError:  # loaded by its file path (setup.py, at build time), outside the package
    GuitestError = Exception  # type: ignore[misc,assignment]

SUITE_FILENAMES = ("suite.yaml", "suite.yml")

PACKAGE = Path(__file__).resolve().parent
#: the node id prefix of a built-in suite collected from outside the rootdir (``pytest --pyargs guitest.suites.NAME``)
NODEID_PREFIX = "guitest/suites/"
#: what the build writes into each folder on the way to a suite, so the folders are packages pytest --pyargs can name
INIT_TEXT = '"""A suite folder shipped with guitest: pytest --pyargs guitest.suites.NAME runs it (written by the build)."""\n'
#: never shipped, never copied: caches and lock files (names starting with a dot), bytecode
SKIPPED_DIRS = ("__pycache__",)
SKIPPED_SUFFIXES = (".pyc", ".pyo")


class BundledError(GuitestError):
    """A built-in suite cannot be found or copied; the message says what to do."""


@dataclass(frozen=True)
class Bundled:
    """One built-in suite: its name (its folder under ``suites/``, ``/``-separated) and its folder."""

    name: str
    folder: Path

    @property
    def dotted(self) -> str:
        """The name pytest --pyargs takes: ``guitest.suites.mmbench_gui.l1``."""
        return "guitest.suites." + self.name.replace("/", ".")


def folder() -> Path:
    """The folder holding the built-in suites: ``guitest/suites/`` of an installed wheel, else the
    repository's ``suites/`` beside the ``guitest/`` package of a checkout."""
    shipped = PACKAGE / "suites"
    return shipped if shipped.is_dir() else PACKAGE.parent / "suites"


def installed(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies inside the installed package's suites (``guitest/suites/``), which a run must not write to.
    A checkout's ``suites/`` is not: there a suite's generated data stays beside it, as it always has."""
    try:
        Path(path).resolve().relative_to(PACKAGE / "suites")
    except ValueError:
        return False
    return True


def is_suite_folder(path: Path) -> bool:
    """A folder holding a suite file, or a suite written in Python (``test_*.py``)."""
    return any((path / n).is_file() for n in SUITE_FILENAMES) or any(path.glob("test_*.py"))


def suites(top: Path | None = None) -> list[Bundled]:
    """Every built-in suite under ``top`` (default :func:`folder`), sorted by name."""
    top = top or folder()
    found = []
    for here, dirs, _ in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        path = Path(here)
        if path != top and is_suite_folder(path):
            found.append(Bundled(path.relative_to(top).as_posix(), path))
    return sorted(found, key=lambda b: b.name)


def find(name: str) -> Bundled:
    """The built-in suite called ``name`` (``screenspot_pro``, ``mmbench_gui/l1`` or ``mmbench_gui.l1``);
    :class:`BundledError` naming the built-in suites when there is none."""
    wanted = name.strip("/").replace(".", "/")
    top = folder()
    for suite in suites(top):
        if suite.name == wanted:
            return suite
    raise BundledError(f"{name!r} is neither a suite folder or file here nor a built-in suite; built-in suites: {', '.join(names(top)) or f'none (no {top})'}")


def names(top: Path | None = None) -> list[str]:
    """The built-in suites' names."""
    return [s.name for s in suites(top)]


def suite_file(arg: str) -> Path:
    """The suite file ``arg`` names: a suite folder or file that exists (relative to the current folder), else a
    built-in suite's name. :class:`BundledError` says which exist when it is neither."""
    path = Path(arg)
    if path.is_dir():
        for filename in SUITE_FILENAMES:
            if (path / filename).is_file():
                return path / filename
        raise BundledError(f"{path}: no {' or '.join(SUITE_FILENAMES)} in this folder")
    if path.is_file():
        return path
    suite = find(arg)
    for filename in SUITE_FILENAMES:
        if (suite.folder / filename).is_file():
            return suite.folder / filename
    raise BundledError(f"{suite.name} is a suite written in Python ({suite.folder}); it has no {SUITE_FILENAMES[0]}: run it with pytest")


def run_target(path: str | os.PathLike[str]) -> str:
    """What to give pytest to run the suite in folder ``path``: ``--pyargs guitest.suites.NAME`` for a suite of the
    installed package, else the folder as a path (relative to the current folder when it lies below it)."""
    here = Path(path).resolve()
    if installed(here):
        return "--pyargs " + Bundled(here.relative_to(PACKAGE / "suites").as_posix(), here).dotted
    try:
        return here.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(here)


def nodeid(path: Path, rootpath: Path) -> str | None:
    """The node id of suite file ``path`` when it lies outside the rootdir, else None (pytest's own id).

    pytest names a file outside the rootdir relative to the argument it came from, so every suite run with
    ``--pyargs`` would be just ``suite.yaml`` (two suites in one run collide, and the run cannot find the file
    again from its id to write the report). A built-in suite becomes ``guitest/suites/<name>/suite.yaml``, the
    same on every machine; any other file its absolute path.
    """
    path = path.resolve()
    try:
        path.relative_to(rootpath.resolve())
        return None
    except ValueError:
        pass
    top = folder().resolve()
    try:
        return NODEID_PREFIX + path.relative_to(top).as_posix()
    except ValueError:
        return path.as_posix()


def resolve_key(rootdir: str | os.PathLike[str], key: str) -> Path:
    """The suite file behind the file part of a node id (the inverse of :func:`nodeid`): relative to the rootdir,
    absolute, or a built-in suite's ``guitest/suites/...`` id."""
    path = Path(rootdir, key)
    if not path.exists() and key.startswith(NODEID_PREFIX):
        return folder() / key[len(NODEID_PREFIX) :]
    return path


# ----------------------------------------------------------------------------- shipping and copying


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith(SKIPPED_SUFFIXES)


def generated_folders(top: Path) -> set[Path]:
    """The folders under ``top`` that hold a suite's generated data (``data.generator`` with ``base: suite``, as the
    demo's ``data/``): made on first use, never shipped or copied. Reads the suite files with PyYAML."""
    import yaml

    out = set()
    for here, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not _skipped(d)]
        for filename in SUITE_FILENAMES:
            if filename not in files:
                continue
            path = Path(here, filename)
            try:
                raw = yaml.safe_load(path.read_text("utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                raise BundledError(f"{path}: cannot read the suite file: {exc}") from None
            data = raw.get("data") if isinstance(raw, dict) else None
            if isinstance(data, dict) and data.get("generator") and data.get("base") == "suite" and isinstance(data.get("dir"), str):
                target = Path(here, data["dir"]).resolve()
                if target != Path(here).resolve() and Path(here).resolve() in target.parents:  # only a subfolder: never the suite itself
                    out.add(target)
    return out


def _files(source: Path) -> list[Path]:
    """The files of the suites under ``source`` that belong to them (relative paths, sorted)."""
    generated = generated_folders(source)
    out = []
    for here, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not _skipped(d) and Path(here, d).resolve() not in generated)
        out += [Path(here, f).relative_to(source) for f in sorted(files) if not _skipped(f) and f != "__init__.py"]
    return out


def bundle(source: Path, target: Path) -> list[Path]:
    """Copy the suites under ``source`` (a checkout's ``suites/``) into ``target`` (``guitest/suites`` of the build),
    with an ``__init__.py`` in ``target`` and in each folder on the way to a suite. Leaves out generated data,
    caches, bytecode and dot-files. Returns the files written (for the build's list of outputs)."""
    written = []
    for rel in _files(source):
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, dest)
        written.append(dest)
    packages = {target}
    for suite in suites(source):
        parts = Path(suite.name).parts
        packages.update(target.joinpath(*parts[: i + 1]) for i in range(len(parts)))
    for package in sorted(packages):
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(INIT_TEXT, "utf-8")
        written.append(package / "__init__.py")
    return written


def copy(name: str, into: Path, *, force: bool = False) -> Path:
    """Copy built-in suite ``name`` to ``into/<name>`` (its files only: no generated data, no ``__init__.py``), so its
    prompt, gate or tasks can be edited; returns that folder. An existing folder is an error unless ``force``, which
    replaces the files the suite ships and leaves any others alone."""
    suite = find(name)
    dest = into / suite.name
    if dest.resolve() == suite.folder.resolve():
        raise BundledError(f"{dest} is the built-in suite itself (a checkout's suites/): edit it there, or copy it elsewhere with --into")
    if dest.exists() and not force:
        raise BundledError(
            f"{dest} exists already; copying {suite.name} again would overwrite its files: pass --force to replace them "
            "(files the suite does not ship are left alone), or choose another folder with --into"
        )
    try:
        for rel in _files(suite.folder):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(suite.folder / rel, dest / rel)
    except OSError as exc:
        raise BundledError(f"cannot copy {suite.name} to {dest}: {exc.strerror or exc}") from None
    return dest
