"""A run's manifest: what a re-run needs and what two runs can differ by, recorded in every report (``manifest``) and
compared first by ``guitest compare`` (:func:`differences`).

It holds guitest's version (in a checkout, its commit and whether the tree was modified), Python's and the versions of
the packages that touch a result, the suite file's digest, the data's fingerprint (each annotation or task file the
suite reads: its SHA-256 and size, so a silently changed benchmark shows), and each text that shapes what the model is
asked (the prompt template, the system text, a live runner's source file) as a digest, the text kept once under
``texts``. The model's settings, its profile and the identity its server reports, a live suite's runner, budget and
waits are already in the report (``model``, ``suite``, ``run.served_model``): :func:`differences` reads them there.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import __version__

VERSION = 1
#: the packages whose version can change a result (a client's request, a processor's resizing, a page's rendering)
PACKAGES = ("openai", "anthropic", "httpx", "transformers", "torch", "pillow", "playwright", "miniwob", "desktop-env", "rapidocr-onnxruntime", "rapidocr", "numpy")
#: at most this many bytes of one data file are digested (a larger file is recorded by size and modification time)
MAX_DIGEST_BYTES = 256 << 20


def digest(data: bytes | str) -> str:
    """The SHA-256 of ``data`` (text as UTF-8), hex, prefixed ``sha256:``."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


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
    here = Path(__file__).resolve().parent.parent
    if not (here / ".git").exists():
        return out
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no", "--", "guitest"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return out
    out["commit"], out["modified"] = commit or None, bool(status.strip())
    return out


def packages(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    """The installed versions of ``names`` (those not installed left out)."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def data_fingerprint(files: Iterable[str], base: str) -> dict[str, Any]:
    """Each data file's record (:func:`file_record`), named relative to ``base``; ``files``: how many."""
    records = {os.path.relpath(path, base): file_record(path) for path in sorted(files)}
    return {"files": len(records), "digests": records}


def build(*, suite_path: str | None, data: Mapping[str, Any] | None, texts: Mapping[str, str | None]) -> dict[str, Any]:
    """The manifest: ``suite_path`` the suite file (None for a Python suite), ``data`` its :func:`data_fingerprint`,
    ``texts`` each named text that shapes the requests (``prompt``, ``system``, ``runner``; None: none)."""
    kept = {name: text for name, text in texts.items() if text}
    return {
        "version": VERSION,
        "guitest": checkout(),
        "python": platform.python_version(),
        "packages": packages(),
        "suite_file": file_record(suite_path) if suite_path and os.path.isfile(suite_path) else None,
        "data": dict(data) if data is not None else None,
        "digests": {name: digest(text) for name, text in kept.items()},
        "texts": {digest(text): text for text in kept.values()},
    }


# -- what two runs differ by -------------------------------------------------------------------------------------------

#: model settings that change a reply (where and how fast the model was asked do not)
REPLY_SETTINGS = ("temperature", "top_p", "max_tokens", "seed", "min_pixels", "max_pixels", "max_image_bytes", "resize", "dtype", "device")


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two reports' runs, most telling first, as short phrases (``prompt changed``, ``data changed:
    3 files``, ``temperature 0 -> 0.6``, ``runner uitars15 -> qwen25vl``); empty when nothing recorded differs. Reads
    the manifest where both reports have one, and the model, suite and run records every report has."""
    out: list[str] = []
    om, nm = old.get("manifest") or {}, new.get("manifest") or {}
    oprof, nprof = _profile(old), _profile(new)
    for name in ("prompt", "system"):
        a, b = _text(om, oprof, name), _text(nm, nprof, name)
        if a != b:
            out.append(f"{'prompt' if name == 'prompt' else 'system prompt'} changed")
    orun, nrun = (old.get("suite") or {}).get("runner") or {}, (new.get("suite") or {}).get("runner") or {}
    if orun.get("name") != nrun.get("name"):
        out.append(f"runner {orun.get('name') or '-'} -> {nrun.get('name') or '-'}")
    elif (om.get("digests") or {}).get("runner") != (nm.get("digests") or {}).get("runner") and om and nm:
        out.append(f"runner {nrun.get('name') or ''} changed (its source file)".replace("  ", " "))
    if om and nm:
        changed = _data_changes(om.get("data"), nm.get("data"))
        if changed:
            out.append(changed)
        if (om.get("suite_file") or {}).get("sha256") != (nm.get("suite_file") or {}).get("sha256"):
            out.append("suite file changed")
    omodel, nmodel = old.get("model") or {}, new.get("model") or {}
    if omodel.get("spec") != nmodel.get("spec"):
        out.append(f"model {omodel.get('spec')} -> {nmodel.get('spec')}")
    served_old, served_new = _served(old), _served(new)
    if served_old and served_new and served_old != served_new:
        out.append(f"served model {served_old} -> {served_new}")
    if oprof.get("name") != nprof.get("name"):
        out.append(f"profile {oprof.get('name')} -> {nprof.get('name')}")
    osettings, nsettings = omodel.get("settings") or {}, nmodel.get("settings") or {}
    for key in REPLY_SETTINGS:
        if key in osettings or key in nsettings:
            a, b = osettings.get(key), nsettings.get(key)
            if a != b:
                out.append(f"{key} {_show(a)} -> {_show(b)}")
    osuite, nsuite = old.get("suite") or {}, new.get("suite") or {}
    if osuite.get("settings") != nsuite.get("settings"):
        out.append("suite settings changed")
    if osuite.get("max_steps") != nsuite.get("max_steps"):
        out.append(f"step budget {_show(osuite.get('max_steps'))} -> {_show(nsuite.get('max_steps'))}")
    if osuite.get("waits") != nsuite.get("waits"):
        out.append("waits changed")
    orule, nrule = (old.get("run") or {}).get("success_rule") or {}, (new.get("run") or {}).get("success_rule") or {}
    if orule.get("name") != nrule.get("name"):
        out.append(f"success rule {orule.get('name') or '-'} -> {nrule.get('name') or '-'}")
    if om and nm:
        if (om.get("guitest") or {}).get("version") != (nm.get("guitest") or {}).get("version") or (om.get("guitest") or {}).get("commit") != (nm.get("guitest") or {}).get("commit"):
            out.append(f"guitest {_build(om)} -> {_build(nm)}")
        for name in sorted(set(om.get("packages") or {}) | set(nm.get("packages") or {})):
            a, b = (om.get("packages") or {}).get(name), (nm.get("packages") or {}).get(name)
            if a != b:
                out.append(f"{name} {a or 'absent'} -> {b or 'absent'}")
    elif om or nm:
        out.append(f"only the {'new' if nm else 'old'} report records a manifest (versions, data and prompt digests): those are not compared")
    return out


def _profile(report: Mapping[str, Any]) -> Mapping[str, Any]:
    profile = (report.get("model") or {}).get("profile")
    return profile if isinstance(profile, Mapping) else {}


def _text(manifest: Mapping[str, Any], profile: Mapping[str, Any], name: str) -> str | None:
    """A named text's digest from the manifest, else the digest of the profile's text (a report without a manifest)."""
    given = (manifest.get("digests") or {}).get(name)
    if given is not None or manifest:
        return given
    text = profile.get(name)
    return digest(text) if isinstance(text, str) and text else None


def _data_changes(old: Any, new: Any) -> str | None:
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return None if old == new else "data changed"
    a, b = old.get("digests") or {}, new.get("digests") or {}
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if not changed:
        return None
    shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
    return f"data changed: {len(changed)} file(s) ({shown})"


def _served(report: Mapping[str, Any]) -> str | None:
    served = ((report.get("run") or {}).get("served_model") or {}).get("served") or []
    names = sorted({str(s.get("root") or s.get("id")) for s in served if isinstance(s, Mapping) and (s.get("root") or s.get("id"))})
    return ", ".join(names) or None


def _build(manifest: Mapping[str, Any]) -> str:
    g = manifest.get("guitest") or {}
    commit = g.get("commit")
    return f"{g.get('version')}" + (f" ({commit[:7]}{', modified' if g.get('modified') else ''})" if commit else "")


def _show(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
