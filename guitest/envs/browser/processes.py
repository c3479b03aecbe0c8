"""A local browser's processes, read from ``/proc``: found by the switch only that browser carries (its marker, on
its command line), their memory bounded, and ended.

Memory: each page's renderer process may take ``env_options.page_memory_mb`` (:data:`PAGE_MEMORY_MB`) of memory.
Chromium's own sandbox bounds a renderer with ``RLIMIT_DATA`` (sandbox/policy/linux/sandbox_linux.cc,
``SandboxLinux::LimitAddressSpace``: 8 or 16 GB; not ``RLIMIT_AS``, which V8's reserved address space exceeds), but
not under ``--no-sandbox``, which guitest runs with. So guitest sets ``RLIMIT_DATA`` itself on the browser's zygote
(the process every renderer is forked from, so every later renderer inherits it) and on the renderers and the GPU
process already running (:func:`limit_renderers`): the GPU process holds every page's WebGL textures, and one hostile
page's texture loop took it to 6.6 GB when only renderers were bounded. ``RLIMIT_DATA`` counts every private writable mapping, so it bounds the JavaScript heap, ArrayBuffers, strings and the
DOM alike: an allocation past it fails (an ArrayBuffer's is a ``RangeError`` the page's script sees) or ends the
renderer (the page crashes; its command fails with a message naming the bound, :meth:`guitest.envs.browser.host.BrowserHost.call`), and the
browser, its other pages and the next episode go on.
"""

from __future__ import annotations

import os
import signal

try:
    import resource
except ImportError:  # pragma: no cover - Windows: no resource limits, so no bound on a page's memory
    resource = None  # type: ignore[assignment]

#: default env_options.page_memory_mb: the memory (MB of RLIMIT_DATA) each page's renderer may take; an idle renderer
#: holds 500-650 MB of it already (writable mappings reserved, not touched), so a page has about 1.4 GB of its own.
#: 0: no bound (Chromium's own, 8 GB or more, does not apply under --no-sandbox)
PAGE_MEMORY_MB = 2048


def holds(pid: int, marker: str) -> bool:
    """Whether process ``pid`` runs with the switch ``marker`` (False once it is gone, a zombie, or another's)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return marker.encode() in handle.read().split(b"\0")
    except OSError:
        return False


def marked(marker: str) -> list[int]:
    """The processes of this user whose command line holds the switch ``marker`` (none where /proc cannot be read)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    uid = os.getuid()
    found = []
    for entry in entries:
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
            except OSError:
                continue
            if holds(int(entry), marker):
                found.append(int(entry))
    return found


#: the processes of a browser a page's memory lands in, bounded beside the zygotes: its renderer, and the GPU process,
#: which holds every page's WebGL textures and buffers (SwiftShader's, under --disable-gpu): one hostile page's texture
#: loop took it to 6.6 GB while the renderers held their bound
BOUNDED_TYPES = (b"--type=renderer", b"--type=gpu-process")


def limit_renderers(browser_pid: int, limit: int) -> bool:
    """Set ``RLIMIT_DATA`` to ``limit`` bytes on the zygote processes of the browser ``browser_pid`` (its process group,
    which Playwright makes for it), then on its renderer and GPU processes already running (:data:`BOUNDED_TYPES`).
    Chromium forks every later renderer, and the GPU process it starts again after a crash, from a zygote, so each
    inherits the bound; the processes are listed again after the zygotes are bounded, so one forked in between is
    bounded too (the GPU process starts on the browser's own time, before or after the bound). True when a zygote was
    limited (every later renderer is then bounded); False where it cannot be done (not Linux, no zygote)."""
    if resource is None or not hasattr(resource, "prlimit"):
        return False
    zygotes = sum(_limit(pid, limit) for pid, switches in _typed(browser_pid) if b"--type=zygote" in switches)
    for pid, switches in _typed(browser_pid):
        if any(kind in switches for kind in BOUNDED_TYPES):
            _limit(pid, limit)
    return zygotes > 0


def _typed(leader: int) -> list[tuple[int, list[bytes]]]:
    """The processes of the group ``leader`` leads, each with the switches of its command line."""
    found = []
    for pid in group(leader):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                # split at spaces too: Chromium's child processes rewrite their command line as one string (setproctitle)
                found.append((pid, handle.read().replace(b"\0", b" ").split()))
        except OSError:
            continue
    return found


def _limit(pid: int, limit: int) -> bool:
    """``RLIMIT_DATA`` of ``limit`` bytes on process ``pid``; False when it is gone meanwhile, or its hard limit is
    already lower than ours (kept)."""
    try:
        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))
    except (OSError, ValueError):
        return False
    return True


def group(leader: int) -> list[int]:
    """The processes of this user in the process group ``leader`` leads (none where /proc cannot be read)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == leader:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def end_processes(marker: str) -> int:
    """SIGKILL the process of this user whose command line holds the switch ``marker`` (one browser's own) and its
    process group: Playwright starts Chromium as the leader of a group of its own, whose members are that browser's
    renderer, GPU and utility processes. Returns how many browsers were ended (0 where /proc cannot be read)."""
    ended = 0
    for pid in marked(marker):
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            ended += 1
        except OSError:  # gone meanwhile
            continue
    return ended
