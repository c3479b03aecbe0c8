"""The HTML report's viewer at scale: synthetic runs of 500, 5,000 and 50,000 episodes and grounding cases, written
as guitest writes a report (``guitest.reporting.html.page_files``: the page and its data folder), opened in Chromium
through Playwright (Debian's chromium by its executable path, as tests/test_html_report.py does).

For each run it measures, best and median of ``--repeat`` fresh browser contexts:

- the first screen: first contentful paint (the headline, gate, tables and charts are the page's HTML);
- the case list: the viewer's ``guitest-list`` mark (its index read, the cards in view placed), and the load event;
- the first case: a case opened from its link (``page.html#case=ID``) in a fresh context, to its detail shown;
- one episode (or case) opened from the list: the time from setting its address to its detail shown (its chunk read);
- DOM nodes (Chromium's ``Performance.getMetrics`` ``Nodes``) after the list and after the case, the JS heap, and
  the renderer's memory (``VmRSS``, and ``VmHWM`` its peak, of the page's renderer process, found by
  ``SystemInfo.getProcessInfo``).

Episodes: 12 steps each (a MiniWoB++ run's mean: 5,992 frames in 505 episodes), a UI-TARS-like reply of about 300
characters per step, 1280x800 screenshots with their thumbnails (a pool of 24 files inside the report folder, which
every episode's steps name). Grounding cases: ScreenSpot-Pro's tags and a reply per case, each linked to one of 20
1920x1080 screenshots outside the report folder (the default ``--report-images=link``).

    python bench/bench_viewer.py                                  # every size, both kinds
    python bench/bench_viewer.py --sizes 500 --repeat 1           # the smallest, while building
    python bench/bench_viewer.py --before 28c5415 --before-max 5000   # also the page that revision wrote

``--single-max N``: up to N cases, also the page that carries its data (``html.render``: a run folder's copy).
``--before REV`` renders the same reports with the ``guitest/`` of that revision (``git archive``, run in a
subprocess) and opens its one page the same way (no viewer marks: the first paint, the load event, nodes, memory).
The machine's load average is printed beside each run: on a shared machine, a wall time is an upper bound.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}
STEPS = 12
SCREEN = (1280, 800)
POOL = 24
GROUP_APPS = {"CAD": ["autocad", "solidworks", "inventor"], "Creative": ["photoshop", "premiere", "blender"], "Dev": ["vscode", "pycharm", "android_studio"], "Office": ["word", "excel", "powerpoint"]}

WAIT_READY = """(selector) => new Promise(done => {
    const found = () => document.querySelector(selector);
    if (found()) { done(true); return; }
    const obs = new MutationObserver(() => { if (found()) { obs.disconnect(); done(true); } });
    obs.observe(document.documentElement, {attributes: true, childList: true, subtree: true});
})"""
TIMINGS = """() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const paint = performance.getEntriesByType('paint').find(p => p.name === 'first-contentful-paint');
    const mark = name => { const m = performance.getEntriesByName(name)[0]; return m ? m.startTime : null; };
    return {fcp: paint ? paint.startTime : null, load: nav.loadEventEnd, list: mark('guitest-list'), opened: mark('guitest-case'),
            elements: document.getElementsByTagName('*').length};
}"""
OPEN_FROM_LIST = """(id) => new Promise(done => {
    const view = document.getElementById('case-view');
    const started = performance.now();
    const obs = new MutationObserver(() => {
        if (view.getAttribute('data-ready')) { obs.disconnect(); requestAnimationFrame(() => done(performance.now() - started)); }
    });
    obs.observe(view, {attributes: true});
    location.hash = new URLSearchParams({case: id}).toString();
})"""


# -- synthetic runs ---------------------------------------------------------------------------------------------------


def _screenshot(size: tuple[int, int], seed: int) -> Any:
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    im = Image.new("RGB", size, (236, 239, 243))
    d = ImageDraw.Draw(im)
    w, h = size
    d.rectangle([0, 0, w, h // 20], fill=(40, 44, 52))
    d.rectangle([0, h // 20, w // 6, h], fill=(250, 250, 252))
    for i in range(14):
        x, y = rng.randrange(w // 5, w - 200), rng.randrange(h // 10, h - 60)
        d.rectangle([x, y, x + rng.randrange(60, 260), y + rng.randrange(20, 50)], fill=(rng.randrange(40, 220), rng.randrange(80, 200), rng.randrange(120, 240)))
        d.text((x + 6, y + 4), f"Button {i} {seed}", fill=(255, 255, 255))
    return im


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def episode_report(n: int, reports: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """A live report of ``n`` episodes, its step screenshots (a pool, with thumbnails) in its run folder."""
    from guitest.reporting import report as report_mod
    from guitest.reporting import thumbnails
    from guitest.tasks import load_task

    pool = reports / "runs" / "bench" / "20260101-000000-0000" / "episodes" / "pool"
    pool.mkdir(parents=True, exist_ok=True)
    refs = []
    for k in range(POOL):
        path = pool / f"step-{k:02d}.png"
        if not path.exists():
            png = _png(_screenshot(SCREEN, k))
            path.write_bytes(png)
            thumbnails.save_step_thumbnail(str(path), png)
        refs.append(path.relative_to(reports).as_posix())
    rng = random.Random(n)
    results = []
    for i in range(n):
        task = f"task-{i % 125:03d}"
        success = rng.random() < 0.6
        steps = []
        for s in range(1, STEPS + 1):
            x, y = rng.randrange(0, SCREEN[0]), rng.randrange(0, SCREEN[1])
            reply = f"Thought: The page shows the form for {task}; the field I need is at the left, below the header, so I click it to continue with step {s} of the plan. Action: click(start_box='({x},{y})')"
            steps.append(
                {
                    "number": s,
                    "reply": reply,
                    "actions": [{"kind": "click", "point": [x, y], "space": "screen"}],
                    "text": f"click({x}, {y})",
                    "notes": [],
                    "policy_seconds": round(rng.uniform(0.5, 3.0), 6),
                    "env_seconds": round(rng.uniform(0.05, 0.3), 6),
                    "usage": {"input_tokens": 1500 + 40 * s, "output_tokens": 60},
                    "screenshot": refs[(i * 7 + s) % POOL],
                }
            )
        episode = {
            "task": task,
            "env": "miniwob",
            "seed": i,
            "instruction": f"Do {task} with seed {i}",
            "end": "done" if success else "budget",
            "success": success,
            "score": 1.0 if success else -1.0,
            "reason": "reward 1.0" if success else "reward -1.0",
            "decided_by": "environment",
            "error": None,
            "error_source": None,
            "steps": STEPS,
            "wall_seconds": 20.0,
            "env_seconds": 2.0,
            "policy_seconds": 18.0,
            "screen_size": list(SCREEN),
            "scale": 1.0,
            "final_screenshot": refs[i % POOL],
            "trajectory": steps,
        }
        prediction = {"success": success, "score": episode["score"], "end": episode["end"], "steps": STEPS, "budget": 15, "reason": episode["reason"], "decided_by": "environment", "reset": "reset"}
        results.append(
            {
                "id": f"{task}-seed{i}",
                "verdict": "hit" if success else "miss",
                "tags": {"task": task, "family": f"family-{i % 9}", "seed": str(i)},
                "prediction": prediction,
                "response": steps[-1]["reply"],
                "instruction": episode["instruction"],
                "success": success,
                "score": episode["score"],
                "steps": STEPS,
                "seconds": 20.0,
                "trajectory": None,
                "episode": episode,
                "notes": [],
                "usage": {"calls": STEPS, "seconds": 18.0, "input_tokens": STEPS * 1760, "output_tokens": STEPS * 60, "cost": 0.0042},
            }
        )
    task = load_task("live", {"headline": "success_rate"})
    report = report_mod.build(
        suite={"name": "bench", "path": "bench/suite.yaml", "format": "miniwob", "task": "live", "settings": task.settings, "env": "miniwob", "max_steps": 15},
        model={"spec": "openai:ui-tars", "adapter": "OpenAI", "space": "pixel_sent", "settings": {}},
        results=results,
        n_selected=n,
        missing=[],
        tags=["task", "family"],
        cross=[],
        gate={"thresholds": {}, "failures": [], "passed": None},
        run={"started": "2026-01-01T00:00:00+0000", "seconds": 1.0, "workers": 2},
        task=task,
    )
    return report, {}


def grounding_report(n: int, data: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """A grounding report of ``n`` cases, each linked to one of 20 screenshots under ``data``."""
    from guitest.reporting import report as report_mod

    data.mkdir(parents=True, exist_ok=True)
    shots = []
    for k in range(20):
        path = data / f"shot-{k:02d}.png"
        if not path.exists():
            _screenshot((1920, 1080), 100 + k).save(path)
        shots.append(str(path))
    rng = random.Random(n)
    results, pictures = [], {}
    groups = sorted(GROUP_APPS)
    for i in range(n):
        group = groups[i % len(groups)]
        app = GROUP_APPS[group][i % 3]
        platform = ("windows", "macos", "linux")[i % 3]
        ui_type = ("text", "icon")[i % 2]
        hit = rng.random() < 0.4
        px, py = rng.uniform(0, 1920), rng.uniform(0, 1080)
        cid = f"{app}_{platform}_{i}"
        results.append(
            {
                "id": cid,
                "verdict": "hit" if hit else "miss",
                "tags": {"group": group, "application": app, "platform": platform, "ui_type": ui_type},
                "prediction": {"point": [px / 1920, py / 1080], "pixel": [round(px, 2), round(py, 2)], "space": "normalized", "via": "answer"},
                "response": f"The control labelled {app} option {i % 50} sits in the toolbar near the top. Answer: [{px / 1920:.3f}, {py / 1080:.3f}]",
                "finish_reason": "stop",
                "truth": [800.0, 400.0, 880.0, 440.0],
                "size": [1920, 1080],
                "sent_size": [1920, 1080],
                "image": f"{app}_{platform}/shot-{i % 20:02d}.png",
                "notes": [],
                "instruction": f"click the {app} option number {i % 50}",
            }
        )
        pictures[cid] = shots[i % 20]
    report = report_mod.build(
        suite={"name": "bench", "path": "bench/suite.yaml", "format": "screenspot_pro", "task": "grounding"},
        model={"spec": "openai:qwen2.5-vl-7b", "adapter": "OpenAI", "space": "pixel_sent", "settings": {}},
        results=results,
        n_selected=n,
        missing=[],
        tags=["group", "application", "platform", "ui_type"],
        cross=[["group", "ui_type"]],
        gate={"thresholds": {}, "failures": [], "passed": None},
        run={"started": "2026-01-01T00:00:00+0000", "seconds": 1.0, "workers": 2},
    )
    return report, pictures


# -- writing ----------------------------------------------------------------------------------------------------------


def write_viewer(report: dict[str, Any], pictures: dict[str, str], reports: Path) -> dict[str, Any]:
    """The page and its data folder as the report's writer writes them; the seconds and bytes it took."""
    from guitest import strictjson
    from guitest.reporting import html

    page = reports / "bench.html"
    shutil.rmtree(reports / "bench_files", ignore_errors=True)
    started = time.perf_counter()
    files = html.page_files(report, pictures, [page], reports.resolve())
    built = time.perf_counter() - started
    strictjson.write_together(files)
    written = time.perf_counter() - started - built
    data = sum(len(v) for k, v in files.items() if k != page)
    return {"page": page, "build_s": built, "write_s": written, "page_mb": len(files[page]) / 2**20, "data_mb": data / 2**20, "files": len(files)}


def write_single(report: dict[str, Any], pictures: dict[str, str], reports: Path) -> dict[str, Any]:
    """The page that carries its data (``html.render``: a run folder's copy, ``guitest merge``'s page)."""
    from guitest import strictjson
    from guitest.reporting import html

    page = reports / "single.html"
    started = time.perf_counter()
    text = html.render(report, pictures, reports.resolve(), reports.resolve())
    built = time.perf_counter() - started
    strictjson.write_text(page, text)
    return {"page": page, "build_s": built, "page_mb": page.stat().st_size / 2**20}


def write_before(report_json: Path, pictures: dict[str, str], reports: Path, rev: str, work: Path) -> dict[str, Any]:
    """The page as revision ``rev``'s guitest wrote it (its html.render, in a subprocess over that revision's package)."""
    tree = work / f"before-{rev}"
    if not (tree / "guitest").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "guitest"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    (reports / "pictures.json").write_text(json.dumps(pictures))
    page = reports / "before.html"
    code = (
        "import json, sys, time; from pathlib import Path; from guitest.reporting import html; "
        "report = json.loads(Path(sys.argv[1]).read_text()); pictures = json.loads(Path(sys.argv[2]).read_text()); "
        "t = time.perf_counter(); text = html.render(report, pictures, Path(sys.argv[3]).parent, Path(sys.argv[3]).parent); "
        "Path(sys.argv[3]).write_text(text, 'utf-8', errors='backslashreplace'); print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(report_json), str(reports / "pictures.json"), str(page)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree, check=True
    )  # cwd: -c puts it first on sys.path
    return {"page": page, "build_s": float(out.stdout.strip()), "page_mb": page.stat().st_size / 2**20}


# -- the browser ------------------------------------------------------------------------------------------------------


def renderer_memory(cdp: Any) -> dict[str, float]:
    """The largest renderer process's memory (MB) from /proc: resident now (``rss``), at its peak (``peak``, VmHWM),
    and its private pages (``private``: what it alone holds, the libraries it shares with the browser left out)."""
    best: dict[str, float] = {"rss_mb": 0.0, "peak_mb": 0.0, "private_mb": 0.0}
    for info in cdp.send("SystemInfo.getProcessInfo")["processInfo"]:
        if info.get("type") != "renderer":
            continue
        try:
            status = Path(f"/proc/{info['id']}/status").read_text()
            rollup = Path(f"/proc/{info['id']}/smaps_rollup").read_text()
        except OSError:
            continue
        fields = {line.split(":")[0]: int(line.split()[1]) for line in (status + rollup).splitlines() if line.startswith(("VmRSS", "VmHWM", "Private_Clean", "Private_Dirty"))}
        found = {"rss_mb": fields.get("VmRSS", 0) / 1024, "peak_mb": fields.get("VmHWM", 0) / 1024, "private_mb": (fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)) / 1024}
        if found["rss_mb"] > best["rss_mb"]:
            best = found
    return best


def _nodes(cdp: Any) -> dict[str, float]:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {"nodes": metrics.get("Nodes", 0), "heap_mb": metrics.get("JSHeapUsedSize", 0) / 2**20}


def measure(browser: Any, browser_cdp: Any, page_path: Path, open_id: str | None, viewer: bool) -> dict[str, Any]:
    """One fresh context: the page opened, its list ready, then one case opened from the list; and a fresh context for
    the case opened from its link."""
    out: dict[str, Any] = {}
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(page_path.as_uri(), wait_until="load", timeout=600_000)
    if viewer:
        page.evaluate(WAIT_READY, "#cards[data-ready]")
    timings = page.evaluate(TIMINGS)
    out |= {"fcp_ms": timings["fcp"], "load_ms": timings["load"], "list_ms": timings["list"], "elements": timings["elements"]}
    out |= {f"list_{k}": v for k, v in _nodes(cdp).items()}
    out |= {f"list_{k}": v for k, v in renderer_memory(browser_cdp).items()}
    if viewer and open_id is not None:
        out["open_ms"] = page.evaluate(OPEN_FROM_LIST, open_id)
        out |= {f"open_{k}": v for k, v in _nodes(cdp).items()}
        out |= {f"open_{k}": v for k, v in renderer_memory(browser_cdp).items()}
    context.close()
    if viewer and open_id is not None:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(page_path.as_uri() + "#" + _fragment(open_id), wait_until="load", timeout=600_000)
        page.evaluate(WAIT_READY, "#case-view[data-ready]")
        out["first_case_ms"] = page.evaluate(TIMINGS)["opened"]
        context.close()
    out["problems"] = problems
    return out


def _fragment(case_id: str) -> str:
    import urllib.parse

    return urllib.parse.urlencode({"case": case_id})


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's best (least) and median over the repeats."""
    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
        if values:
            out[key] = {"best": min(values), "median": statistics.median(values)}
    out["problems"] = sorted({p for r in runs for p in r.get("problems", [])})
    return out


def load_average() -> list[str]:
    """The machine's load average over 1, 5 and 15 minutes (2 cores: above 2, other programs wait for a core)."""
    return Path("/proc/loadavg").read_text().split()[:3]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000, 50000])
    parser.add_argument("--kinds", nargs="+", choices=["episodes", "grounding"], default=["episodes", "grounding"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/guitest-bench-viewer"))
    parser.add_argument("--before", metavar="REV", help="also the page this git revision's guitest wrote")
    parser.add_argument("--before-max", type=int, default=5000, help="the largest run the --before page is made for (its page holds every case)")
    parser.add_argument("--single-max", type=int, default=5000, help="the largest run the page that carries its data (a run folder's copy) is measured for")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        browser_cdp = browser.new_browser_cdp_session()
        for kind in args.kinds:
            for n in args.sizes:
                folder = args.work / f"{kind}-{n}"
                reports = folder / "reports"
                reports.mkdir(parents=True, exist_ok=True)
                started = time.perf_counter()
                report, pictures = episode_report(n, reports) if kind == "episodes" else grounding_report(n, args.work / "data")
                made = time.perf_counter() - started
                written = write_viewer(report, pictures, reports)
                middle = report["cases"][n // 2]["id"]
                load = load_average()
                runs = [measure(browser, browser_cdp, written["page"], middle, True) for _ in range(args.repeat)]
                row = {"kind": kind, "n": n, "made_s": made, **{k: v for k, v in written.items() if k != "page"}, "load_average": load, "after": summarize(runs)}
                if n <= args.single_max:
                    single = write_single(report, pictures, reports)
                    row["single"] = {"build_s": single["build_s"], "page_mb": single["page_mb"], **summarize([measure(browser, browser_cdp, single["page"], middle, True) for _ in range(args.repeat)])}
                if args.before and n <= args.before_max:
                    from guitest.reporting import report as report_mod

                    report_mod.write_json(report, reports / "bench.json")
                    old = write_before(reports / "bench.json", pictures, reports, args.before, args.work)
                    row["before"] = {"build_s": old["build_s"], "page_mb": old["page_mb"], **summarize([measure(browser, browser_cdp, old["page"], None, False) for _ in range(args.repeat)])}
                results.append(row)
                print(json.dumps(row, default=str), flush=True)
                del report, pictures
        browser.close()
    print(table(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, default=str))
    return 0


def _cell(row: dict[str, Any], key: str, both: bool = True) -> str:
    found = row.get(key)
    if not isinstance(found, dict):
        return "–"
    return f"{found['best']:,.0f} / {found['median']:,.0f}" if both else f"{found['median']:,.0f}"


def table(results: list[dict[str, Any]]) -> str:
    """The results as a Markdown table: times best / median of the repeats (ms), sizes and memory their median."""
    lines = [
        "| run | page MB / data MB (files) | written s | first paint | list ready (load event) | a case from its link | a case from the list | DOM nodes: list, case | renderer MB: RSS (peak), private | load average |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        a = r["after"]
        lines.append(
            f"| {r['n']:,} {r['kind']} | {r['page_mb']:.2f} / {r['data_mb']:.1f} ({r['files']}) | {r['build_s'] + r['write_s']:.1f} | {_cell(a, 'fcp_ms')} | {_cell(a, 'list_ms')} ({_cell(a, 'load_ms', False)}) "
            f"| {_cell(a, 'first_case_ms')} | {_cell(a, 'open_ms')} | {_cell(a, 'list_nodes', False)}, {_cell(a, 'open_nodes', False)} "
            f"| {_cell(a, 'open_rss_mb', False)} ({_cell(a, 'open_peak_mb', False)}), {_cell(a, 'open_private_mb', False)} | {' '.join(r['load_average'])} |"
        )
        c = r.get("single")
        if c:
            lines.append(
                f"| ↳ one page carrying its data | {c['page_mb']:.2f} (1) | {c['build_s']:.1f} | {_cell(c, 'fcp_ms')} | {_cell(c, 'list_ms')} ({_cell(c, 'load_ms', False)}) | {_cell(c, 'first_case_ms')} "
                f"| {_cell(c, 'open_ms')} | {_cell(c, 'list_nodes', False)}, {_cell(c, 'open_nodes', False)} | {_cell(c, 'open_rss_mb', False)} ({_cell(c, 'open_peak_mb', False)}), {_cell(c, 'open_private_mb', False)} | |"
            )
        b = r.get("before")
        if b:
            lines.append(
                f"| ↳ the page before | {b['page_mb']:.2f} (1) | {b['build_s']:.1f} | {_cell(b, 'fcp_ms')} | load event {_cell(b, 'load_ms')} | – | – | {_cell(b, 'list_nodes', False)} "
                f"| {_cell(b, 'list_rss_mb', False)} ({_cell(b, 'list_peak_mb', False)}), {_cell(b, 'list_private_mb', False)} | |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
