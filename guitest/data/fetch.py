"""``guitest data fetch NAME``: download a suite's public data from the Hugging Face Hub, then verify it.

The data lands in the data root's folder for the suite (``DATA_ROOT/<data.dir>`` of the
built-in suite's ``suite.yaml``: ``guitest/suites/NAME`` installed, ``suites/NAME`` in a
checkout), in the layout the suite reads; the data root is resolved as everywhere else
(``--data-root``, then ``$GUITEST_DATA``, then the default). After the download,
archives are unpacked and files put where the suite expects them, and the copy is
VERIFIED: the suite's annotations are read with the same reader a run uses, the sample
count must equal :data:`EXPECTED`, and every image a sample names
must exist. A folder that verifies already is left alone unless ``force``.

Where the data comes from (Hugging Face *dataset* repositories), as far as it could be
checked without network access (from stored copies of the hub's file listings and
from public code that downloads these repositories):

``screenspot_pro``: ``likaixin/ScreenSpot-Pro``, the authors' repository.
    CONFIRMED layout: ``annotations/<application>_<platform>.json``, ``images/<app>_<os>/...``
    (plus ``README.md``, ``annotate.html``, ``.DS_Store``, not needed). Downloaded as is.

``screenspot_v2``: ``OS-Copilot/ScreenSpot-v2``, the OS-Atlas authors' repository.
    CONFIRMED files: ``screenspot_{desktop,mobile,web}_v2.json`` and ``screenspotv2_image.zip``
    (1.33 GB) at the top level. NOT CONFIRMED: the inside of the zip. Public scripts
    unzip it in place and then read ``screenspotv2_image/``, which suggests one top-level
    folder of that name; the unpacking here accepts either that or a flat archive (a
    single top-level folder is dropped, ``__MACOSX/`` and ``.DS_Store`` are skipped),
    and the archive is deleted once unpacked.

``screenspot``: the SeeClick authors publish ScreenSpot on box.nju.edu.cn / Google Drive
    (``screenspot_{mobile,desktop,web}.json`` + ``screenspot_imgs.tar``), NOT on the hub.
    ``rootsautomation/ScreenSpot`` (named in the README) is a parquet conversion
    (``data/test-*.parquet``: file_name, bbox, instruction, data_type, data_source, image),
    which ``snapshot_download`` cannot turn into the JSON layout. This module uses
    ``KevinQHLin/ScreenSpot``, a THIRD-PARTY mirror whose ``metadata/screenspot_*.json``
    have the byte sizes of the SeeClick files (58.7 / 90.6 / 79.2 kB) and whose ``images/``
    holds ``<split>_<uuid>.png``: the JSON files are moved to the suite folder and
    ``images/`` becomes ``screenspot_imgs/``. NOT CONFIRMED: that the mirror's images are
    complete and identical to SeeClick's; the verify step catches missing ones.

A mirror of the whole hub works through huggingface_hub's own ``HF_ENDPOINT`` variable.
``huggingface_hub`` is an optional dependency: ``pip install 'guitest[fetch]'``.
"""

from __future__ import annotations

import argparse
import glob
import importlib
import os
import shutil
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import bundled
from ..datapath import ENV_VAR, inside, resolve_root
from ..errors import GuitestError, SuiteError

# The number of samples each suite has when its data is complete (the published totals).
EXPECTED: dict[str, int] = {
    "screenspot_pro": 1581,
    "screenspot": 1272,
    "screenspot_v2": 1272,
}

MAX_MISSING_SHOWN = 10
INSTALL_HINT = "pip install 'guitest[fetch]'  (or: pip install huggingface_hub)"


@dataclass(frozen=True)
class Source:
    """Where a suite's data lives on the hub and how its files become the suite's layout."""

    repo_id: str
    allow_patterns: tuple[str, ...]
    archives: tuple[tuple[str, str], ...] = ()  # (archive in the repo, folder to unpack it into)
    moves: tuple[tuple[str, str], ...] = ()  # (file glob or folder in the repo, folder it belongs in)
    note: str = ""  # what is not confirmed about the layout

    @property
    def url(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo_id}"

    def by_hand(self) -> str:
        """The manual steps after ``hf download``, in words."""
        steps = [f"unzip {a} so that its images are in {d}/ (and delete the zip)" for a, d in self.archives]
        for src, dst in self.moves:
            if dst == ".":
                steps.append(f"move {src} up into that folder")
            else:
                steps.append(f"rename {src}/ to {dst}/")
        return ", ".join(steps)


SOURCES: dict[str, Source] = {
    "screenspot_pro": Source(
        repo_id="likaixin/ScreenSpot-Pro",
        allow_patterns=("annotations/*.json", "images/*", "README.md"),
    ),
    "screenspot_v2": Source(
        repo_id="OS-Copilot/ScreenSpot-v2",
        allow_patterns=("screenspot_*_v2.json", "screenspotv2_image.zip", "README.md"),
        archives=(("screenspotv2_image.zip", "screenspotv2_image"),),
        note="the inside of screenspotv2_image.zip is not confirmed (a top-level screenspotv2_image/ folder or flat images both work)",
    ),
    "screenspot": Source(
        repo_id="KevinQHLin/ScreenSpot",
        allow_patterns=("metadata/screenspot_*.json", "images/*"),
        moves=(("metadata/screenspot_*.json", "."), ("images", "screenspot_imgs")),
        note=("a third-party mirror of the SeeClick release (which is not on the hub); that its images are complete is not confirmed"),
    ),
}

Downloader = Callable[..., Any]
Printer = Callable[[str], None]


class FetchError(GuitestError):
    """The data could not be downloaded, unpacked or verified; the message says what to do."""


@dataclass(frozen=True)
class Verification:
    """What the verify step found in a suite's data folder."""

    samples: int
    expected: int
    images: int  # distinct images the samples name
    missing: tuple[str, ...]  # of those, the ones that do not exist (paths relative to the data folder)
    error: str | None = None  # the annotations could not be read

    @property
    def ok(self) -> bool:
        return self.error is None and self.samples == self.expected and not self.missing

    def problems(self) -> list[str]:
        if self.error is not None:
            return [f"the annotations cannot be read: {self.error}"]
        out = []
        if self.samples != self.expected:
            diff = self.samples - self.expected
            out.append(f"{self.samples} samples, expected {self.expected} ({'+' if diff > 0 else ''}{diff})")
        if self.missing:
            shown = ", ".join(self.missing[:MAX_MISSING_SHOWN])
            more = f", ... and {len(self.missing) - MAX_MISSING_SHOWN} more" if len(self.missing) > MAX_MISSING_SHOWN else ""
            out.append(f"{len(self.missing)} of {self.images} images missing: {shown}{more}")
        return out


@dataclass(frozen=True)
class FetchResult:
    name: str
    repo_id: str
    data_root: Path
    data_root_source: str
    data_dir: Path
    downloaded: bool  # False: a verified copy was there already
    verification: Verification


def default_suites_dir() -> Path:
    """The built-in suites: ``guitest/suites/`` of an installed guitest, ``suites/`` of a checkout."""
    return bundled.folder()


def verify(name: str, data_dir: Path, suites_dir: Path | None = None) -> Verification:
    """Read suite ``name``'s annotations under ``data_dir``; count samples and check every image exists."""
    from ..formats import read_suite_samples

    suite = _load(name, suites_dir)
    expected = EXPECTED[name]
    try:
        samples = read_suite_samples(suite, str(data_dir))
    except SuiteError as exc:
        return Verification(0, expected, 0, (), error=str(exc))
    images = sorted({s.image for s in samples})
    missing = tuple(os.path.relpath(p, data_dir) for p in images if not os.path.isfile(p))
    return Verification(len(samples), expected, len(images), missing)


def fetch(
    name: str,
    *,
    data_root: str | None = None,
    revision: str | None = None,
    force: bool = False,
    suites_dir: Path | None = None,
    download: Downloader | None = None,
    echo: Printer = print,
) -> FetchResult:
    """Download suite ``name``'s data into the data root, unpack it, and verify it.

    ``download`` is called like ``huggingface_hub.snapshot_download(repo_id, repo_type="dataset",
    revision=..., local_dir=..., allow_patterns=[...], force_download=...)``; ``None`` means
    that function (imported here, so huggingface_hub stays optional). A data folder that
    verifies already is left alone unless ``force``; ``force`` downloads every file again.
    Raises :class:`FetchError` (a :class:`GuitestError`) when huggingface_hub is missing,
    the hub cannot be reached, or the verification fails, and :class:`SuiteError` for a bad
    suite file.
    """
    if name not in SOURCES:
        raise FetchError(f"no public data to fetch for {name!r}; suites with a download: {', '.join(sorted(SOURCES))}")
    source = SOURCES[name]
    suite = _load(name, suites_dir)
    root, root_source = resolve_root(data_root)
    data_dir = root / suite.data["dir"]
    where = f"data root {root} (from {root_source})"

    if data_dir.is_dir() and not force:
        found = verify(name, data_dir, suites_dir)
        if found.ok:
            echo(f"{name}: {data_dir} is there and verified ({_counts(found)}); left alone (--force downloads it again)")
            return FetchResult(name, source.repo_id, root, root_source, data_dir, False, found)
        echo(f"{name}: {data_dir} is incomplete ({found.problems()[0].splitlines()[0]}); downloading")

    _download(name, source, data_dir, where, revision, force, download, echo)
    _put_in_place(name, source, data_dir, echo)
    found = _verified(name, source, data_dir, where, revision, suites_dir)
    echo(f"{name}: verified {data_dir}: {_counts(found)}")
    run_with = "" if root_source == "default" else f" --data-root={root}" if root_source == "--data-root" else ""
    echo(f"  {where}; run it with: pytest {bundled.run_target(suite.folder)}{run_with} --model=SPEC")
    return FetchResult(name, source.repo_id, root, root_source, data_dir, True, found)


def _download(name: str, source: Source, data_dir: Path, where: str, revision: str | None, force: bool, download: Downloader | None, echo: Printer) -> None:
    """Download ``source``'s files into ``data_dir`` (through ``download``, else the Hub's own); FetchError saying how to
    get them by hand when the Hub cannot be reached (a folder this call created is not left behind empty)."""
    if download is None:
        download = _hub_downloader(name, source, data_dir, where, revision)
    rev = revision or "main"
    echo(f"{name}: downloading dataset {source.repo_id} (revision {rev}) from the Hugging Face Hub into {data_dir}")
    created = not data_dir.exists()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create {data_dir} in the {where}: {exc.strerror or exc}") from None
    try:
        download(
            source.repo_id,
            repo_type="dataset",
            revision=revision,
            local_dir=str(data_dir),
            allow_patterns=list(source.allow_patterns),
            force_download=force,
        )
    except _network_errors() as exc:
        if created:  # leave no empty folder behind: a run would then report missing annotations, not missing data
            _remove_empty_folders(data_dir)
        raise FetchError(
            f"could not download {source.repo_id} (revision {rev}) from the Hugging Face Hub into {data_dir}: {_describe(exc)}\n  {_hint(exc)}\n" + _by_hand(name, source, data_dir, where, revision)
        ) from None


def _put_in_place(name: str, source: Source, data_dir: Path, echo: Printer) -> None:
    """Unpack ``source``'s archives and make its moves in ``data_dir``; FetchError when the files cannot be put in place."""
    try:
        for archive, into in source.archives:
            path = data_dir / archive
            if path.is_file():
                count = unpack(path, data_dir / into)
                path.unlink()
                echo(f"{name}: unpacked {count} files from {archive} into {data_dir / into}")
        for src, dst in source.moves:
            _move(data_dir, src, dst)
    except OSError as exc:
        raise FetchError(f"{name}: downloaded into {data_dir}, but putting the files in place failed: {exc}") from None


def _verified(name: str, source: Source, data_dir: Path, where: str, revision: str | None, suites_dir: Path | None) -> Verification:
    """The verification of the downloaded ``data_dir``; FetchError listing its problems (and how to resume) when it fails."""
    found = verify(name, data_dir, suites_dir)
    if not found.ok:
        raise FetchError(
            f"{name}: the data downloaded from {source.repo_id} into {data_dir} does not verify:\n  "
            + "\n  ".join(found.problems())
            + (f"\n  (layout note: {source.note})" if source.note else "")
            + "\n  Run again to resume the download, or --force to download every file again.\n"
            + _by_hand(name, source, data_dir, where, revision)
        )
    return found


def unpack(archive: Path, into: Path) -> int:
    """Extract a zip into ``into``, dropping one top-level folder common to every member.

    ``__MACOSX/`` entries and ``.DS_Store`` files are skipped; a member that would land
    outside ``into`` (``..``, an absolute path) stops the unpacking with a FetchError.
    Returns the number of files written.
    """
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX/") and os.path.basename(m.filename) != ".DS_Store"]
            names = [m.filename.replace("\\", "/") for m in members]
            tops = {n.split("/", 1)[0] for n in names}
            strip = len(tops) == 1 and all("/" in n for n in names)
            base = os.path.normpath(str(into))
            for member, name in zip(members, names, strict=True):
                relative = name.split("/", 1)[1] if strip else name
                target = inside(base, relative)
                if target is None:
                    raise FetchError(f"{archive}: member {member.filename!r} would land outside {into}; refusing the archive")
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with zf.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            return len(members)
    except zipfile.BadZipFile as exc:
        raise FetchError(f"{archive}: not a valid zip archive ({exc}); run again with --force to download it again") from None


def _move(data_dir: Path, src: str, dst: str) -> None:
    """Move a folder (merging into ``dst``) or the files a glob matches (into ``dst``) under ``data_dir``."""
    target = data_dir / dst
    source = data_dir / src
    if source.is_dir():
        for folder, _, files in os.walk(source):
            for f in files:
                rel = os.path.relpath(os.path.join(folder, f), source)
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                os.replace(os.path.join(folder, f), target / rel)
        shutil.rmtree(source, ignore_errors=True)
        return
    for path in glob.glob(str(data_dir / src)):
        target.mkdir(parents=True, exist_ok=True)
        os.replace(path, target / os.path.basename(path))
    parent = source.parent
    if parent != data_dir and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()


def _remove_empty_folders(top: Path) -> None:
    for folder, _, _ in sorted(os.walk(top), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def _load(name: str, suites_dir: Path | None):
    from ..suite import load_suite

    folder = suites_dir or default_suites_dir()
    path = folder / name / "suite.yaml"
    if not path.is_file():
        where = "" if suites_dir else " (this guitest's built-in suites)"
        raise FetchError(f"{path}: no such suite file{where}; point --suites at the folder that holds the suites ({name}/suite.yaml)")
    return load_suite(path)


def _hub_downloader(name: str, source: Source, data_dir: Path, where: str, revision: str | None) -> Downloader:
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise FetchError(f"downloading {source.repo_id} needs huggingface_hub, which is not installed: {INSTALL_HINT}\n" + _by_hand(name, source, data_dir, where, revision)) from None
    return snapshot_download


def _network_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a download raises when the hub is unreachable or refuses (all caught, all reported)."""
    errors: list[type[BaseException]] = [OSError, ConnectionError, TimeoutError]
    for module, attr in (
        ("huggingface_hub.errors", "HfHubHTTPError"),
        ("huggingface_hub.errors", "OfflineModeIsEnabled"),
        ("huggingface_hub.utils", "HfHubHTTPError"),
        ("requests", "RequestException"),
        ("httpx", "HTTPError"),
        ("httpx", "TransportError"),
        ("httpx2", "HTTPError"),
    ):
        mod = sys.modules.get(module)
        if mod is None and module.split(".")[0] in sys.modules:
            try:
                mod = importlib.import_module(module)
            except Exception:  # noqa: BLE001 - a broken optional module only means one class fewer
                mod = None
        cls = getattr(mod, attr, None) if mod is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            errors.append(cls)
    return tuple(errors)


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 400:
        text = text[:400] + " ..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _hint(exc: BaseException) -> str:
    kinds = {k.__name__ for k in type(exc).__mro__}
    if "RevisionNotFoundError" in kinds:
        return "The hub does not know that revision: check --revision (a branch, tag or commit of the data set)."
    if "GatedRepoError" in kinds:
        return "The data set is gated: accept its terms on its page and log in (hf auth login), then run again."
    if "RepositoryNotFoundError" in kinds:
        return "The hub does not know that data set (renamed, private, or a login is needed: hf auth login)."
    return "The Hugging Face Hub is unreachable from here (no network, a proxy, or the hub is down); HF_ENDPOINT selects a mirror."


def _by_hand(name: str, source: Source, data_dir: Path, where: str, revision: str | None) -> str:
    rev = f" --revision {revision}" if revision else ""
    then = source.by_hand()
    root = data_dir.parent
    return (
        f"  To download by hand: hf download {source.repo_id} --repo-type dataset{rev} --local-dir {data_dir}\n"
        f"  (huggingface-cli download with older huggingface_hub; or get the files from {source.url})"
        f"{'; then, in ' + str(data_dir) + ': ' + then if then else ''}.\n"
        f"  Using the {where}. Check a copy made by hand with: guitest data fetch {name} --data-root {root} "
        f"(a copy that verifies is not downloaded again)."
    )


def _counts(v: Verification) -> str:
    return f"{v.samples} samples (expected {v.expected}), {v.images} images, all present"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``guitest data fetch``."""
    parser.add_argument("name", metavar="NAME", help=f"the suite whose data to fetch: {', '.join(sorted(SOURCES))}")
    parser.add_argument("--data-root", metavar="DIR", help=f"data root to download into (else ${ENV_VAR}, else the default)")
    parser.add_argument("--revision", metavar="REV", help="branch, tag or commit of the hub data set (default: main)")
    parser.add_argument("--force", action="store_true", help="download again even when a verified copy is there")
    parser.add_argument("--suites", metavar="DIR", help="folder holding the suites, e.g. your copies (default: guitest's built-in suites)")


def run(args: argparse.Namespace, download: Downloader | None = None) -> int:
    """Run ``guitest data fetch`` from parsed arguments: 0 when the data verifies, 2 otherwise."""
    try:
        fetch(
            args.name,
            data_root=args.data_root,
            revision=args.revision,
            force=args.force,
            suites_dir=Path(args.suites) if args.suites else None,
            download=download,
        )
    except GuitestError as exc:
        print(f"guitest data fetch: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None, download: Downloader | None = None) -> int:
    """Stand-alone entry (``python -m guitest.data.fetch NAME ...``), same as ``guitest data fetch``."""
    parser = argparse.ArgumentParser(prog="guitest data fetch", description="Download a suite's public data from the Hugging Face Hub, then verify it.")
    add_arguments(parser)
    return run(parser.parse_args(argv), download=download)


if __name__ == "__main__":
    sys.exit(main())
