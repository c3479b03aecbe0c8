"""The scale bench's process-tree monitor: a run's CPU time and each process's peak RSS, read from /proc every 20 ms, and
how busy the rest of the machine was (see bench/run.py).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from scale_settings import CLK


def _children_map() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        out.setdefault(ppid, []).append(int(name))
    return out


def _proc_cpu(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK
    except (OSError, IndexError, ValueError):
        return None


def _proc_hwm(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _proc_role(pid: int, root: int) -> str:
    if pid == root:
        return "main"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return "worker" if ("execnet" in cmd or "sys.stdin" in cmd or "xdist" in cmd) else "other"


def _machine_busy() -> float:
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts[:8]) - idle) / CLK


class Monitor:
    """Polls a process tree: CPU seconds per process, peak RSS per process (VmHWM), roles."""

    def __init__(self, root: int, extra: dict[str, int] | None = None, interval: float = 0.02) -> None:
        self.root = root
        self.extra = extra or {}
        self.interval = interval
        self.cpu: dict[int, float] = {}
        self.hwm: dict[int, int] = {}
        self.role: dict[int, str] = {}
        self.extra_cpu0 = {k: _proc_cpu(p) or 0.0 for k, p in self.extra.items()}
        self.extra_cpu: dict[str, float] = {}
        self.busy0 = _machine_busy()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        kids = _children_map()
        todo, tree = [self.root], []
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(kids.get(pid, ()))
        for pid in tree:
            cpu, hwm = _proc_cpu(pid), _proc_hwm(pid)
            if cpu is not None:
                self.cpu[pid] = max(cpu, self.cpu.get(pid, 0.0))
            if hwm is not None:
                self.hwm[pid] = max(hwm, self.hwm.get(pid, 0))
            if pid not in self.role:
                self.role[pid] = _proc_role(pid, self.root)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._poll()
            self._stop.wait(self.interval)

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        busy = _machine_busy() - self.busy0
        for k, p in self.extra.items():
            self.extra_cpu[k] = (_proc_cpu(p) or 0.0) - self.extra_cpu0[k]
        mine = sum(self.cpu.values()) + sum(self.extra_cpu.values())
        by_role: dict[str, dict[str, float]] = {}
        for pid, role in self.role.items():
            r = by_role.setdefault(role, {"n": 0, "cpu_s": 0.0, "peak_rss_mb": 0.0})
            r["n"] += 1
            r["cpu_s"] += self.cpu.get(pid, 0.0)
            r["peak_rss_mb"] = max(r["peak_rss_mb"], self.hwm.get(pid, 0) / 2**20)
        return {
            "tree_cpu_s": sum(self.cpu.values()),
            "roles": by_role,
            "extra_cpu_s": self.extra_cpu,
            "machine_busy_s": busy,
            "others_cpu_s": max(0.0, busy - mine),
        }


def run_monitored(cmd: list[str], env: dict[str, str], cwd: Path, extra: dict[str, int] | None = None, timeout: float = 180.0) -> dict[str, Any]:
    """Run ``cmd``; wall time, exit code, output tail and the monitor's figures."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mon = Monitor(proc.pid, extra)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        out += f"\n[bench: killed after {timeout} s]"
    wall = time.perf_counter() - t0
    stats = mon.stop()
    stats.update(wall_s=wall, rc=proc.returncode, tail=out.strip().splitlines()[-3:], cmd=cmd)
    return stats
