"""How fast guitest's local desktop starts and how much a live desktop step costs.

    python bench/bench_desktop.py [--starts 3] [--steps 30] [--json PATH]

Needs the packages of tests/setup_desktop.sh and pyautogui + python-xlib in this Python. Measures,
each as median, minimum and maximum over its repeats:

- ``start``: :func:`guitest.localdesktop.xvfb.start_desktop` until its server answers (Xvfb, D-Bus, the
  accessibility bus, openbox, the server), then ``stop``: everything ended.
- ``screenshot``: ``GET /screenshot`` of the 1920x1080 screen (grab, cursor, PNG), client side: of the
  empty desktop, and of a screen full of text (an xterm listing files), which costs more to compress.
- ``action warm``: an action's ``python -c "import pyautogui; ...; pyautogui.moveTo(x, y)"`` through
  ``POST /execute``, run by the server's warm interpreter (pyautogui's own 0.1 s PAUSE included, as
  on OSWorld's and WAA's servers).
- ``action cold``: the same code as a new Python process (what a plain ``python -c`` costs; the
  server takes this path for code that does not start with ``import pyautogui``).
- ``step``: :meth:`guitest.desktopenv.machine.DesktopEnv.step` of a click, i.e. the action, the backend's
  settle pause (default 0.3 s, reported separately as ``step, settle 0``) and the next screenshot.

The issue's target: a step's environment overhead (screenshot plus action) under 1 s median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable

from guitest.localdesktop.xvfb import start_desktop
from guitest.desktopenv.machine import DesktopEnv
from guitest.live.actions import Action
from guitest.live.protocol import TaskSpec
from guitest.desktopenv.client import MachineClient
from guitest.desktopenv.machine_pool import MachinePool


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        began = time.perf_counter()
        fn()
        out.append(time.perf_counter() - began)
    return out


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="desktop starts to time")
    parser.add_argument("--steps", type=int, default=30, help="repeats of each per-step measurement")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    starts, stops = [], []
    for _ in range(args.starts):
        began = time.perf_counter()
        desktop = start_desktop()
        MachineClient(desktop.url).platform()
        starts.append(time.perf_counter() - began)
        began = time.perf_counter()
        desktop.stop()
        stops.append(time.perf_counter() - began)
    results["start"] = summary(starts)
    results["stop"] = summary(stops)
    with start_desktop() as desktop:
        client = MachineClient(desktop.url)
        client.run_pyautogui("pass")  # the warm interpreter is ready
        results["screenshot"] = summary(timed(client.screenshot, args.steps))
        client.setup_call("launch", {"command": "xterm -geometry 238x75+0+0 -e 'ls -lR /usr/lib; sleep 600'", "shell": True})
        time.sleep(2.0)
        results["screenshot, full screen of text"] = summary(timed(client.screenshot, args.steps))
        client.reset_desktop()
        points = iter(range(10**6))
        results["action warm"] = summary(timed(lambda: client.run_pyautogui(f"pyautogui.moveTo({100 + next(points) % 500}, 300)"), args.steps))
        cold = "import sys; import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.moveTo({}, 300)"
        results["action cold"] = summary(timed(lambda: client.execute(["python", "-c", cold.format(100 + next(points) % 500)]), max(5, args.steps // 3)))
        task = TaskSpec("desktop", "bench/idle", "nothing", {"config": [], "evaluator": {"func": "infeasible"}})
        for label, settle in (("step", 0.3), ("step, settle 0", 0.0)):
            env = DesktopEnv([desktop.url], settle=settle, pool=MachinePool([desktop.url]))
            env.reset(task, seed=None)
            results[label] = summary(timed(lambda env=env: env.step(Action("click", point=(1800.0, 1000.0), space="screen")), args.steps))
            env.close()
    width = max(len(k) for k in results)
    print(f"{'measurement':{width}}  median      min      max   n")
    for name, r in results.items():
        print(f"{name:{width}}  {r['median']:6.3f} s {r['min']:6.3f} s {r['max']:6.3f} s  {r['n']}")
    overhead = results["screenshot"]["median"] + results["action warm"]["median"]
    print(f"screenshot + action (warm), medians: {overhead:.3f} s (target < 1 s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
