"""A run's manifest: what a re-run needs and what two runs can differ by, recorded in every report (``manifest``) and
compared first by ``guitest compare`` (:func:`differences`).

It holds guitest's version (in a checkout, its commit and whether the tree was modified), Python's and the versions of
the packages that touch a result or run the cases (pytest, pytest-xdist), the suite file's digest, the data's
fingerprint (each annotation or task file the suite reads: its SHA-256 and size, so a silently changed benchmark
shows), each text that shapes what the model is asked (the prompt template, the system text, a live runner's source
file) as a digest, the text kept once under ``texts``, and the software a live environment ran on as it reported it
(``software``: the browser's name and version, read where the browser was started). The model's settings, its
profile, replaced stages and the identity its server reports, a live suite's runner, budget and waits, the case
selection and each case's prompt as sent (``prompt_digest``) are already in the report (``model``, ``suite``,
``run``, ``selection``, ``cases``): :func:`differences` reads them there.

Two reports are compared on what both record: a field one of them lacks (a report written before it existed) is not
recorded, never a difference by itself (:func:`unrecorded` names those).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import __version__
from ..report_parts import Manifest
from ..models.base import ASKED  # every other model setting both reports record is compared

VERSION = 2
#: the packages whose version can change a result (a client's request, a processor's resizing, a page's rendering) or
#: how the cases are collected, selected and run (pytest, pytest-xdist)
PACKAGES = (
    "pytest",
    "pytest-xdist",
    "openai",
    "anthropic",
    "httpx",
    "transformers",
    "torch",
    "pillow",
    "playwright",
    "miniwob",
    "desktop-env",
    "rapidocr-onnxruntime",
    "rapidocr",
    "numpy",
)
#: what a version 1 manifest looked up, recording only the installed ones: a name of these it lacks was not installed,
#: any other name it lacks was not looked up (not recorded). From version 2 on a package not installed is recorded as null.
PACKAGES_V1 = ("openai", "anthropic", "httpx", "transformers", "torch", "pillow", "playwright", "miniwob", "desktop-env", "rapidocr-onnxruntime", "rapidocr", "numpy")
#: at most this many bytes of one data file are digested (a larger file is recorded by size and modification time)
MAX_DIGEST_BYTES = 256 << 20


def digest(data: bytes | str) -> str:
    """The SHA-256 of ``data`` (text as UTF-8), hex, prefixed ``sha256:``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def prompt_digest(prompts: Iterable[tuple[str | None, str]]) -> str:
    """The digest of a case's prompt as sent: each ``(system, user)`` text it asked, in order (a case asking several
    variants gives each). Equal exactly when every text sent is equal, whatever built it (a template, a stage)."""
    return digest(json.dumps([[system, user] for system, user in prompts], ensure_ascii=False))


def file_record(path: str) -> dict[str, Any]:
    """A file's digest and size (a file over :data:`MAX_DIGEST_BYTES`: its size and modification time only)."""
    size = os.path.getsize(path)
    if size > MAX_DIGEST_BYTES:
        return {"bytes": size, "modified": int(os.path.getmtime(path))}
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"sha256": "sha256:" + h.hexdigest(), "bytes": size}


def checkout() -> dict[str, Any]:
    """guitest's version and, when it runs from a git checkout, the commit and whether tracked files were modified."""
    out: dict[str, Any] = {"version": __version__, "commit": None, "modified": None}
    here = Path(__file__).resolve().parents[2]  # the checkout: guitest/reporting/manifest.py is two folders below it
    if not (here / ".git").exists():
        return out
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no", "--", "guitest"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return out
    out["commit"], out["modified"] = commit or None, bool(status.strip())
    return out


def packages(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """The installed version of each of ``names``; None for one not installed (looked up, absent)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def data_fingerprint(files: Iterable[str], base: str) -> dict[str, Any]:
    """Each data file's record (:func:`file_record`), named relative to ``base``; ``files``: how many."""
    records = {os.path.relpath(path, base): file_record(path) for path in sorted(files)}
    return {"files": len(records), "digests": records}


def gather_software(records: Iterable[Mapping[str, Iterable[str]] | None]) -> dict[str, list[str]]:
    """The software records of many episodes (or cases) as one: per kind (``browser``), every version reported, sorted."""
    seen: dict[str, set[str]] = {}
    for record in records:
        for kind, versions in (record or {}).items():
            seen.setdefault(kind, set()).update(versions)
    return {kind: sorted(versions) for kind, versions in sorted(seen.items())}


def build(*, suite_file: Mapping[str, Any] | None, data: Mapping[str, Any] | None, texts: Mapping[str, str | None], software: Mapping[str, Iterable[str]] | None = None) -> Manifest:
    """The manifest: ``suite_file`` the suite file's :func:`file_record`, made when the run read it (None for a Python
    suite), ``data`` its :func:`data_fingerprint`,
    ``texts`` each named text that shapes the requests (``prompt``, ``system``, ``runner``; None: none), ``software``
    what the run's live environments reported running on (:func:`gather_software`; empty when no environment was
    started, or none says)."""
    kept = {name: text for name, text in texts.items() if text}
    return {
        "version": VERSION,
        "guitest": checkout(),
        "python": platform.python_version(),
        "packages": packages(),
        "suite_file": dict(suite_file) if suite_file is not None else None,
        "data": dict(data) if data is not None else None,
        "digests": {name: digest(text) for name, text in kept.items()},
        "texts": {digest(text): text for text in kept.values()},
        "software": gather_software([software] if software else []),
    }


# -- what two runs differ by -------------------------------------------------------------------------------------------


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two reports' runs that a difference of their results could come from, most telling first,
    as short phrases (``prompt as sent changed in 6 of 6 shared cases``, ``data changed: 3 file(s) (...)``,
    ``case selection every case -> -k windows (6 -> 2 cases, 2 in both)``, ``temperature 0 -> 0.6``, ``pytest 8.3.0 ->
    9.2.0``); empty when nothing both record differs. A field only one report records is not compared
    (:func:`unrecorded`)."""
    om, nm = _mapping(old.get("manifest")), _mapping(new.get("manifest"))
    return [*_asked_changes(old, new, om, nm), *_model_changes(old, new), *_episode_changes(old, new), *_software_changes(om, nm)]


def _asked_changes(old: Mapping[str, Any], new: Mapping[str, Any], om: Mapping[str, Any], nm: Mapping[str, Any]) -> list[str]:
    """What the cases asked: the prompt as sent, a live suite's runner, the data, the suite file, the cases selected."""
    out = _prompt_changes(old, new, om, nm)
    runner = _both(_mapping(old.get("suite")), _mapping(new.get("suite")), "runner")
    if runner is not None:
        oname, nname = (_mapping(r).get("name") for r in runner)
        texts = _both(_mapping(om.get("digests")), _mapping(nm.get("digests")), "runner")
        if oname != nname:
            out.append(f"runner {oname or '-'} -> {nname or '-'}")
        elif texts is not None and texts[0] != texts[1]:
            out.append(f"runner {nname or ''} changed (its source file)".replace("  ", " "))
    data = _both(om, nm, "data")
    if data is not None and None not in data:
        changed = _data_changes(*data)
        if changed:
            out.append(changed)
    suite_file = _both(om, nm, "suite_file")
    if suite_file is not None and None not in suite_file and suite_file[0] != suite_file[1]:
        out.append("suite file changed")
    selection = _selection_change(old, new)
    if selection:
        out.append(selection)
    return out


def _model_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Who answered: the model asked for and the one the server says it served, its profile, its stages, its settings."""
    out: list[str] = []
    omodel, nmodel = _mapping(old.get("model")), _mapping(new.get("model"))
    spec = _both(omodel, nmodel, "spec")
    if spec is not None and spec[0] != spec[1]:
        out.append(f"model {spec[0]} -> {spec[1]}")
    served_old, served_new = _served(old), _served(new)
    if served_old and served_new and served_old != served_new:
        out.append(f"served model {served_old} -> {served_new}")
    oprof, nprof = _profile_name(old), _profile_name(new)
    if oprof is not None and nprof is not None and oprof != nprof:
        out.append(f"profile {oprof} -> {nprof}")
    out += _stage_changes(omodel, nmodel)
    out += _changed_values(_mapping(omodel.get("settings")), _mapping(nmodel.get("settings")), skip=ASKED)
    return out


def _episode_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """How the cases ran: the suite's settings, a live suite's step budget and waits, and the success rule."""
    out: list[str] = []
    osuite, nsuite = _mapping(old.get("suite")), _mapping(new.get("suite"))
    settings = _both(osuite, nsuite, "settings")
    if settings is not None:
        out += _changed_values(_mapping(settings[0]), _mapping(settings[1]), label="suite setting ")
    budget = _both(osuite, nsuite, "max_steps")
    if budget is not None and budget[0] != budget[1]:
        out.append(f"step budget {_show(budget[0])} -> {_show(budget[1])}")
    waits = _both(osuite, nsuite, "waits")
    if waits is not None and waits[0] != waits[1]:
        out.append("waits changed")
    rule = _both(_mapping(old.get("run")), _mapping(new.get("run")), "success_rule")
    if rule is not None:
        orule, nrule = (_mapping(r).get("name") for r in rule)
        if orule != nrule:
            out.append(f"success rule {orule or '-'} -> {nrule or '-'}")
    return out


def _software_changes(om: Mapping[str, Any], nm: Mapping[str, Any]) -> list[str]:
    """What they ran on: the environments' software (the browser), guitest, Python and the packages that touch a result."""
    out: list[str] = []
    software = _both(om, nm, "software")
    if software is not None:
        osoft, nsoft = _mapping(software[0]), _mapping(software[1])
        for kind in sorted(set(osoft) & set(nsoft)):
            if sorted(osoft[kind]) != sorted(nsoft[kind]):
                out.append(f"{kind} {', '.join(osoft[kind]) or '-'} -> {', '.join(nsoft[kind]) or '-'}")
    made = _both(om, nm, "guitest")
    if made is not None:
        obuild, nbuild = (_mapping(g) for g in made)
        if any(obuild.get(k) != nbuild.get(k) for k in ("version", "commit", "modified")):
            out.append(f"guitest {_build(obuild)} -> {_build(nbuild)}")
    python = _both(om, nm, "python")
    if python is not None and python[0] != python[1]:
        out.append(f"Python {python[0]} -> {python[1]}")
    opkg, npkg = _packages(om), _packages(nm)
    for name in sorted(set(opkg) & set(npkg)):
        if opkg[name] != npkg[name]:
            out.append(f"{name} {opkg[name] or 'absent'} -> {npkg[name] or 'absent'}")
    return out


def unrecorded(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What one report records and the other does not, so :func:`differences` could not compare it: one phrase per
    side that lacks something (``the old report does not record: a manifest (versions, data and prompt digests), ...``)."""
    out = []
    for side, this, other in (("old", old, new), ("new", new, old)):
        lacks = []
        mine, theirs = _mapping(this.get("manifest")), _mapping(other.get("manifest"))
        if theirs and not mine:
            lacks.append("a manifest (versions, data and prompt digests)")
        elif mine and theirs:
            lacks += [what for key, what in (("software", "the software its live environment ran on"), ("python", "Python's version")) if key in theirs and key not in mine]
            missing = sorted(set(_packages(theirs)) - set(_packages(mine)))
            if missing:
                lacks.append(f"the version of {', '.join(missing)}")
        if _prompts(other) and not _prompts(this):
            lacks.append("the prompts as sent")
        if _selection_options(other) is not None and _selection_options(this) is None:
            lacks.append("what selected its cases")
        if lacks:
            out.append(f"the {side} report does not record {'; '.join(lacks)}: not compared")
    return out


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _both(a: Mapping[str, Any], b: Mapping[str, Any], key: str) -> tuple[Any, Any] | None:
    """``key``'s value in each of ``a`` and ``b``; None when either does not record it."""
    if key not in a or key not in b:
        return None
    return a[key], b[key]


def _changed_values(old: Mapping[str, Any], new: Mapping[str, Any], skip: Iterable[str] = (), label: str = "") -> list[str]:
    """``<label><key> <old> -> <new>`` for each key both record with different values, in sorted order, ``skip`` left out."""
    skipped = set(skip)
    return [f"{label}{key} {_show(old[key])} -> {_show(new[key])}" for key in sorted(set(old) & set(new) - skipped) if old[key] != new[key]]


def _prompt_changes(old: Mapping[str, Any], new: Mapping[str, Any], om: Mapping[str, Any], nm: Mapping[str, Any]) -> list[str]:
    """The prompt as sent, where both reports record it for some shared case (the texts every case asked, however they
    were built); else the template and system text the manifests (or, before them, the profiles) record."""
    template = _text(om, old, "prompt") != _text(nm, new, "prompt")
    system = _text(om, old, "system") != _text(nm, new, "system")
    sent = _sent_changes(old, new)
    if sent is None:
        return (["prompt changed"] if template else []) + (["system prompt changed"] if system else [])
    changed, shared = sent
    if not changed:
        return []
    data = _both(om, nm, "data")
    causes = (("the template", template), ("the system text", system), ("the data", data is not None and None not in data and _data_changes(*data) is not None))
    why = [what for what, differs in causes if differs]
    said = f"{', '.join(why[:-1])} and {why[-1]} changed" if len(why) > 1 else f"{why[0]} changed" if why else "template, system text and data unchanged: what builds the prompt changed"
    return [f"prompt as sent changed in {changed} of {shared} shared cases ({said})"]


def _prompts(report: Mapping[str, Any]) -> dict[str, str]:
    """Each case's prompt digest, by case id (only the cases that record one)."""
    cases = report.get("cases")
    rows = cases if isinstance(cases, list) else []
    return {c["id"]: c["prompt_digest"] for c in rows if isinstance(c, Mapping) and isinstance(c.get("prompt_digest"), str) and isinstance(c.get("id"), str)}


def _sent_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[int, int] | None:
    """Of the shared cases whose prompt as sent both reports record, how many changed and how many there are; None when
    there is no such case."""
    a, b = _prompts(old), _prompts(new)
    shared = a.keys() & b.keys()
    if not shared:
        return None
    return sum(a[i] != b[i] for i in shared), len(shared)


def _text(manifest: Mapping[str, Any], report: Mapping[str, Any], name: str) -> str | None:
    """A named text's digest from the manifest, else the digest of the profile's text (a report without a manifest)."""
    given = _mapping(manifest.get("digests")).get(name)
    if given is not None or manifest:
        return given
    profile = _mapping(_mapping(report.get("model")).get("profile"))
    text = profile.get(name)
    return digest(text) if isinstance(text, str) and text else None


def _profile_name(report: Mapping[str, Any]) -> str | None:
    """The model profile's name (an early report records the profile as its name alone); None when not recorded."""
    profile = _mapping(report.get("model")).get("profile")
    name = profile.get("name") if isinstance(profile, Mapping) else profile
    return str(name) if name is not None else None


def _stage_changes(old_model: Mapping[str, Any], new_model: Mapping[str, Any]) -> list[str]:
    """The model stages a model config replaced (``model.pipeline``, recorded whenever one did: absent, none), and the
    generation settings it passed them."""
    a, b = _mapping(old_model.get("pipeline")), _mapping(new_model.get("pipeline"))
    ostages, nstages = _mapping(a.get("stages")), _mapping(b.get("stages"))
    out = [f"{stage} stage {ostages.get(stage) or 'default'} -> {nstages.get(stage) or 'default'}" for stage in sorted(set(ostages) | set(nstages)) if ostages.get(stage) != nstages.get(stage)]
    ogen, ngen = _mapping(a.get("generation")), _mapping(b.get("generation"))
    out += [f"model config generation {key} {_show(ogen.get(key))} -> {_show(ngen.get(key))}" for key in sorted(set(ogen) | set(ngen)) if ogen.get(key) != ngen.get(key)]
    return out


def _packages(manifest: Mapping[str, Any]) -> dict[str, str | None]:
    """Each package the manifest looked up and its version (None: not installed); a version 1 manifest recorded only
    the installed ones of :data:`PACKAGES_V1`."""
    given = _mapping(manifest.get("packages"))
    if not given and "packages" not in manifest:
        return {}
    out: dict[str, str | None] = {name: (str(v) if v is not None else None) for name, v in given.items()}
    if manifest.get("version") == 1:
        for name in PACKAGES_V1:
            out.setdefault(name, None)
    return out


def _data_changes(old: Any, new: Any) -> str | None:
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return None if old == new else "data changed"
    a, b = old.get("digests") or {}, new.get("digests") or {}
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if not changed:
        return None
    shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
    return f"data changed: {len(changed)} file(s) ({shown})"


# -- the case selection ------------------------------------------------------------------------------------------------

#: pytest options whose value narrows the cases run, as the label names them
_VALUED = {"-k": "-k", "-m": "-m", "--deselect": "--deselect", "--limit": "--limit"}
#: pytest flags that narrow the cases run
_FLAGS = {"--lf": "--lf", "--last-failed": "--lf", "--sw": "--stepwise", "--stepwise": "--stepwise"}


def _selected(report: Mapping[str, Any]) -> set[str]:
    """The cases the run selected: those with a result and those without (``missing``)."""
    cases, missing = report.get("cases"), report.get("missing")
    ids = {c["id"] for c in (cases if isinstance(cases, list) else []) if isinstance(c, Mapping) and isinstance(c.get("id"), str)}
    return ids | {m for m in (missing if isinstance(missing, list) else []) if isinstance(m, str)}


def _selection_options(report: Mapping[str, Any]) -> list[str] | None:
    """What narrowed the run's cases, as options (``-k windows``, ``--shard 2/2``, ``--limit 50 (seed 0)``): the
    report's ``selection`` where it has one, else read from its command line; [] for the whole suite; None when the
    report records neither."""
    run = _mapping(report.get("run"))
    selection = report.get("selection")
    parts: list[str] | None = None
    if isinstance(selection, Mapping):
        parts = [str(by) for by in selection.get("by") or []]
        limit = selection.get("limit")
        if isinstance(limit, Mapping):
            parts.append(f"--limit {limit.get('n')}" + (f" (seed {limit['seed']})" if limit.get("seed") is not None else ""))
    elif isinstance(run.get("pytest_args"), list):
        parts = _narrowing([str(a) for a in run["pytest_args"]], folded=bool(run.get("merged_into_report_of")))
    if run.get("shard"):
        parts = [*(parts or []), f"--shard {run['shard']}"]
    return parts


def _narrowing(args: list[str], folded: bool) -> list[str]:
    """The options of a pytest command line that narrow the cases run (``folded``: an ``--lf`` run folded into the
    report of the run before it, which covers that run's cases: its ``--lf`` narrows nothing)."""
    out: list[str] = []
    deselected = node_ids = 0
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg in _FLAGS:
            if not (folded and _FLAGS[arg] == "--lf"):
                out.append(_FLAGS[arg])
        elif name in _VALUED or arg[:2] in ("-k", "-m") and len(arg) > 2:
            if name in _VALUED and not eq:
                value, i = (args[i + 1] if i + 1 < len(args) else ""), i + 1
            elif name not in _VALUED:
                name, value = arg[:2], arg[2:]
            if name == "--deselect":
                deselected += 1
            else:
                out.append(f"{_VALUED[name]} {shlex.quote(value)}")
        elif "::" in arg and not arg.startswith("-"):
            node_ids += 1
        i += 1
    if deselected:
        out.append(f"--deselect ({deselected})")
    if node_ids:
        out.append(f"node ids ({node_ids})")
    return out


def _selection_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The case selection, named when the two runs selected different cases (the same cases under other options cannot
    make a difference): what selected them on each side, and how many cases each selected and both."""
    a, b = _selected(old), _selected(new)
    if a == b:
        return None
    oopt, nopt = _selection_options(old), _selection_options(new)
    olabel, nlabel = _selection_label(oopt), _selection_label(nopt)
    counts = f"{len(a)} -> {len(b)} cases, {len(a & b)} in both"
    if olabel != nlabel:
        return f"case selection {olabel} -> {nlabel} ({counts})"
    return f"cases selected ({counts}), under the same selection ({olabel})"


def _selection_label(options: list[str] | None) -> str:
    if options is None:
        return "not recorded"
    return " ".join(options) if options else "every case"


def _served(report: Mapping[str, Any]) -> str | None:
    served = ((report.get("run") or {}).get("served_model") or {}).get("served") or []
    names = sorted({str(s.get("root") or s.get("id")) for s in served if isinstance(s, Mapping) and (s.get("root") or s.get("id"))})
    return ", ".join(names) or None


def _build(g: Mapping[str, Any]) -> str:
    commit = g.get("commit")
    return f"{g.get('version')}" + (f" ({commit[:7]}{', modified' if g.get('modified') else ''})" if commit else (" (modified)" if g.get("modified") else ""))


def _show(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
