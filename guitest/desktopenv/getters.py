"""The evaluator getters guitest implements: each fetches a ``result`` or ``expected`` value through the machine protocol.

A getter is named by its config's ``type`` (``{"type": "vm_file", "path": ..., "dest": ...}``) and
called as ``getter(context, config)``, as desktop-env calls ``get_<type>(env, config)``. Files are copied
into the episode's work folder and given to the metric as local paths, as desktop-env does with its
cache folder. A file that is not on the machine gives None (the metric then scores 0).

==============================  ===============================================  ===============================
type                            config                                           value
==============================  ===============================================  ===============================
rule                            ``rules``                                        ``rules`` as written
vm_file                         ``path``, ``dest`` (``multi``, ``gives``)         local copy's path, or None
cloud_file                      ``path`` (a URL, ``file://`` or a path relative  local copy's path
                                to the task file), ``dest`` (``multi``, ``gives``)
cache_file                      ``path`` (in the work folder)                    its path
vm_command_line                 ``command``, ``shell``                           the command's standard output
vm_command_error                ``command``, ``shell``                           its standard error
vm_terminal_output              (none)                                           the ``/terminal`` text
vm_file_exists_in_vm_folder     ``folder_name``, ``file_name``                   1.0 or 0.0
vm_file_exists_in_desktop       ``file_name``                                    True or False
is_file_desktop                 ``filename``                                     ``"true"`` or ``"false"``
is_file_saved_desktop           ``filename``, ``textcontent``                    ``"true"`` when the desktop file
                                                                                 contains the text
accessibility_tree              (none)                                           the ``/accessibility`` XML text
==============================  ===============================================  ===============================

Other getters (browser profiles, Windows settings, app-specific state) are not implemented; the
evaluator marks such a task ``decided_by: judge``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from .client import MachineClient, MachineFailure
from .setup import default_download_cache, fetch

Getter = Callable[["GetterContext", dict[str, Any]], Any]


@dataclass(frozen=True)
class GetterContext:
    """What getters work with: the episode's ``machine``, its ``work_dir`` (local copies of files) and the
    ``download_cache`` for ``cloud_file``."""

    machine: MachineClient
    work_dir: str
    download_cache: str = ""

    @property
    def cache(self) -> str:
        return self.download_cache or default_download_cache()


def _targets(config: dict[str, Any]) -> tuple[list[str], list[str], set[int]]:
    if config.get("multi", False):
        paths, dests = list(config["path"]), list(config["dest"])
    else:
        paths, dests = [config["path"]], [config.get("dest") or os.path.basename(str(config["path"]).replace("\\", "/"))]
    return paths, dests, set(config.get("gives", [0]))


def _local(ctx: GetterContext, dest: str) -> str:
    # dest is a bare file name in the task file; never let it leave the work folder
    return os.path.join(ctx.work_dir, os.path.basename(str(dest).replace("\\", "/")) or "file")


def _given(out: list[Any]) -> Any:
    return out[0] if len(out) == 1 else out


def get_rule(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """The ``rules`` of the config, as written (what ``exact_match`` and friends compare with)."""
    return config["rules"]


def get_vm_file(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """A local copy of the machine's file at ``path`` (saved as ``dest``); None when it does not exist.
    ``multi``: ``path`` and ``dest`` are lists; ``gives``: which of them the metric gets (default [0])."""
    paths, dests, gives = _targets(config)
    out: list[Any] = []
    for i, (path, dest) in enumerate(zip(paths, dests, strict=False)):  # as desktop_env's getters/file.py: extra paths or dests are ignored
        data = ctx.machine.get_file(path)
        local = _local(ctx, dest)
        if data is not None:
            with open(local, "wb") as f:
                f.write(data)
        if i in gives:
            out.append(local if data is not None else None)
    return _given(out)


def get_cloud_file(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """A local copy of the file at ``path`` (``https://``, ``file://``, or a local path the reader made
    absolute); ``multi`` and ``gives`` as for ``vm_file``. EnvFailure when it cannot be downloaded."""
    paths, dests, gives = _targets(config)
    out: list[Any] = []
    for i, (path, dest) in enumerate(zip(paths, dests, strict=False)):  # as desktop_env's getters/file.py: extra paths or dests are ignored
        local = fetch(str(path), ctx.cache, str(dest))
        if i in gives:
            out.append(local)
    return _given(out)


def get_cache_file(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """The path of a file an earlier ``execute`` step saved in the work folder (its ``stdout``/``stderr``)."""
    path = _local(ctx, config["path"])
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    return path


def _run(ctx: GetterContext, config: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return ctx.machine.execute(config["command"], shell=config.get("shell", False))
    except MachineFailure as exc:
        if exc.taken_out:
            raise
        return None  # desktop-env's getter gives None for an error answer


def get_vm_command_line(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """The standard output of ``command`` run on the machine (``/execute``); None when the server answers an error."""
    result = _run(ctx, config)
    return None if result is None else result["output"]


def get_vm_command_error(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """The standard error of ``command`` run on the machine; None when the server answers an error."""
    result = _run(ctx, config)
    return None if result is None else result["error"]


def get_vm_terminal_output(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """The text of the active terminal (``/terminal``); None when the server has none."""
    return ctx.machine.terminal()


def _join(folder: str, name: str) -> str:
    sep = "\\" if "\\" in folder else "/"
    return folder.rstrip("\\/") + sep + name


def get_vm_file_exists_in_vm_folder(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """1.0 when ``folder_name``/``file_name`` exists on the machine, else 0.0 (WAA's getter)."""
    folder, name = config.get("folder_name"), config.get("file_name")
    if not folder or not name:
        return 0.0
    return 1.0 if ctx.machine.get_file(_join(folder, name)) is not None else 0.0


def _desktop_file(ctx: GetterContext, name: str) -> bytes | None:
    desktop = ctx.machine.desktop_path()
    if not desktop or not name:
        return None
    return ctx.machine.get_file(_join(desktop, name))


def get_vm_file_exists_in_desktop(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """True when ``file_name`` exists in the machine user's desktop folder (``/desktop_path``), else False."""
    return _desktop_file(ctx, config.get("file_name", "")) is not None


def get_is_file_desktop(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """``"true"`` when ``filename`` exists in the desktop folder, else ``"false"`` (WAA's getter)."""
    return "true" if _desktop_file(ctx, config.get("filename", "")) is not None else "false"


def get_is_file_saved_desktop(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """``"true"`` when the desktop file ``filename`` contains ``textcontent``, else ``"false"`` (WAA's getter)."""
    data = _desktop_file(ctx, config.get("filename", ""))
    if data is None:
        return "false"
    return "true" if str(config.get("textcontent", "")) in data.decode("utf-8", "replace") else "false"


def get_accessibility_tree(ctx: GetterContext, config: dict[str, Any]) -> Any:
    """The machine's accessibility tree as XML text (``/accessibility``); None when it has none."""
    return ctx.machine.accessibility()


GETTERS: dict[str, Getter] = {
    f.__name__.removeprefix("get_"): f
    for f in (
        get_rule,
        get_vm_file,
        get_cloud_file,
        get_cache_file,
        get_vm_command_line,
        get_vm_command_error,
        get_vm_terminal_output,
        get_vm_file_exists_in_vm_folder,
        get_vm_file_exists_in_desktop,
        get_is_file_desktop,
        get_is_file_saved_desktop,
        get_accessibility_tree,
    )
}


def supported_getters() -> list[str]:
    """The getter types guitest implements, sorted."""
    return sorted(GETTERS)
