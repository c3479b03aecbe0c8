"""The HTML report's page: the first screen (the run's settings, headline, tables, charts, the case list's filters)
written as HTML, and the viewer that shows the cases (``viewer/viewer.js``, its data from
:mod:`guitest.reporting.viewer_data`).

The page opens at once however many cases the run has: its HTML is the first screen alone; the viewer reads an
index of the cases, puts on the page only the cards in view, and loads a case's detail (reply, evidence, cost, an
episode's every step) when the case is opened. Each case and step has its own address (``#case=ID&step=N``), and the
filters are kept in the address too. :func:`page_files` writes the page with its data in a folder beside it
(``<stem>_files/``: script files, since a page opened from ``file:`` may not ``fetch()`` one); :func:`render` writes
one page that carries its data (a copy that travels alone).

The page loads nothing from the network: its style and script are its own (by hash, or files of its data folder),
and a Content-Security-Policy allows no other script, no inline event handler, and no image but the screenshots
(linked by relative paths: the default; or thumbnails carried as files or data URIs: see
:mod:`guitest.reporting.thumbnails`). Every string that comes from the report (model replies, instructions, tag
values, errors, settings) is HTML-escaped in the first screen and set as text by the viewer, so a reply like
``<script>...</script>`` shows as text and never runs.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import os
import re
import shutil
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import backends, strictjson
from . import viewer_data
from .viewer_data import number as _num
from .viewer_data import number3 as _num3
from .document import Counts, Report
from .thumbnails import is_embedded

VERDICT_ORDER = ("hit", "miss", "unparsed", "refused", "truncated", "unsure", "error", "partial")
COUNT_COLUMNS = ("n", "hit", "accuracy", "ci95", "unparsed", "refused", "truncated", "error")
LIVE_COLUMNS = ("n", "hit", "accuracy", "ci95", "mean_score", "unsure", "error")


# -- small helpers --------------------------------------------------------------------------------


def _e(value: Any) -> str:
    """Escape anything for HTML text or a double-quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _pct(value: Any) -> str:
    return f"{100 * value:.1f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def _ci(row: Mapping[str, Any]) -> str:
    ci = row.get("ci95")
    if row.get("accuracy") is None or not isinstance(ci, (list, tuple)) or len(ci) != 2:
        return "–"
    return f"{_pct(ci[0])}–{_pct(ci[1])}"


def _is_live(report: Report) -> bool:
    return report["suite"]["task"] == "live"


def _fmt(value: Any) -> str:
    """A setting's value as text: strings as they are, anything else as JSON (null, true, numbers, lists)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return repr(value)


# -- sections -------------------------------------------------------------------------------------


def _settings(report: Report) -> str:
    suite, model, run = report["suite"], report["model"], report["run"]
    profile = model.get("profile")
    rows: list[tuple[str, str]] = [
        ("suite", f"{suite['name']} ({suite['path']}), format {suite['format'] or '–'}, task {suite['task'] or '–'}"),
        ("model", f"{model.get('spec', '')} (adapter {model.get('adapter', '–')}, answers in {model.get('space', '–')} coordinates)"),
    ]
    if isinstance(profile, Mapping):
        rows.append(("profile", f"{profile.get('name', '–')}" + (f" ({model['profile_reason']})" if model.get("profile_reason") else "")))
        rows.append(("profile space", _fmt(profile.get("space"))))
        sizing = profile.get("sizing")
        if isinstance(sizing, Mapping):
            rest = ", ".join(f"{k} {_fmt(v)}" for k, v in sizing.items() if k != "kind")
            rows.append(("image sizing", f"{sizing.get('kind', '–')}" + (f" ({rest})" if rest else "")))
        elif sizing is not None:
            rows.append(("image sizing", _fmt(sizing)))
    elif profile is not None:
        rows.append(("profile", _fmt(profile)))
    settings = model.get("settings")
    if isinstance(settings, Mapping):
        rows += [(f"setting: {k}", _fmt(v)) for k, v in settings.items()]
    if _is_live(report):
        rule = run.get("success_rule")
        rows += backends.run_rows(suite.get("env"), run)
        rows.append(("environment", f"{suite.get('env') or '–'}" + (f" ({_fmt(suite['env_options'])})" if suite.get("env_options") else "")))
        rows.append(("step budget", _fmt(suite.get("max_steps"))))
        task_settings = suite.get("settings")
        if isinstance(task_settings, Mapping):
            rows += [(f"live: {k}", _fmt(v)) for k, v in task_settings.items() if not (k == "success_rule" and isinstance(rule, Mapping))]
    rows.append(("guitest", _fmt(report["guitest"] or "–")))
    usage = report.get("usage")
    if isinstance(usage, Mapping) and isinstance(run.get("usage"), Mapping):
        from . import costs

        rows.append(("cost", (costs.summary_line(usage, run) or "–").removeprefix("cost: ")))
    if run.get("data"):  # where this suite's data came from (a suite with its own data reads nothing under the data root)
        rows.append(("data", _fmt(run["data"])))
    else:
        rows.append(("data root", f"{run.get('data_root', '–')}" + (f" (from {run['data_root_source']})" if run.get("data_root_source") else "")))
    for key in ("started", "seconds"):
        if key in run:
            rows.append((key, _fmt(run[key])))
    if "workers" in run:  # 0 is a serial run, not a run of no processes
        rows.append(("workers", _workers(run)))
    if run.get("pytest_args"):
        rows.append(("pytest arguments", " ".join(str(a) for a in run["pytest_args"])))
    rows.append(("results", f"{report['n_results']} of {report['n_selected']} selected cases" + ("" if report["complete"] else " (INCOMPLETE)")))
    body = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_e(v)}</td></tr>' for k, v in rows)
    extra = ""
    if isinstance(profile, Mapping) and (profile.get("prompt") or profile.get("system")):
        parts = []
        if profile.get("system"):
            parts.append(f'<h4>system</h4><pre class="text">{_e(profile["system"])}</pre>')
        if profile.get("prompt"):
            parts.append(f'<h4>prompt template</h4><pre class="text">{_e(profile["prompt"])}</pre>')
        extra = '<details class="prompt"><summary>prompt</summary>' + "".join(parts) + "</details>"
    return f'<section id="settings"><h2>Run settings</h2><table class="kv">{body}</table>{extra}</section>'


def _live_others(report: Report) -> list[str]:
    """The live figures beside the headline: the other figure, EQA, steps of successes, what was left out."""
    h = report["headline"]
    m = report.get("task_metrics") or {}
    ci = h.get("ci95")
    others = []
    if h.get("figure") == "mean_score":
        others.append(f"success rate {_pct(h.get('success_rate'))}%")
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and h.get("success_rate") is not None:
        others.append(f"success 95% CI {_pct(ci[0])}–{_pct(ci[1])}%")
    if h.get("figure") != "mean_score":
        others.append(f"mean score {_num3(h.get('mean_score'))}")
    others.append(f"EQA {_num3(m.get('eqa'))}")
    steps = m.get("steps_of_successes") or {}
    if steps.get("n"):
        others.append(f"mean steps of successes {_num3(steps.get('mean'))}")
    overall = report["overall"]
    others.append(f"{overall.get('unsure', 0)} unsure (left to the judge)")
    others.append(f"{overall['error']} errors")
    if m.get("unknown_state"):
        others.append(f"{m['unknown_state']} episode(s) on a machine in an unknown state")
    return others


def _headline(report: Report) -> str:
    h, gate = report["headline"], report["gate"]
    if _is_live(report):
        figure = h.get("figure", "success_rate")
        big = f"{_e(_num3(h.get('accuracy')))}" if figure == "mean_score" else f"{_e(_pct(h.get('accuracy')))}<small>%</small>"
        items = [f'<div class="big" id="headline-accuracy">{big}</div>', f'<div class="what">{_e(h.get("what", ""))}</div>']
        others = _live_others(report)
    else:
        items = [f'<div class="big" id="headline-accuracy">{_e(_pct(h.get("accuracy")))}<small>%</small></div>', f'<div class="what">{_e(h.get("average", ""))}: {_e(h.get("what", ""))}</div>']
        others = [f"micro {_pct(h.get('micro'))}%"]
        if h.get("over"):
            others.append(f"macro over {h['over']} {_pct(h.get('macro'))}%")
        others += [f"macro {k} {_pct(v)}%" for k, v in report["macro"].items() if v is not None and k != h.get("over")]
    items.append(f'<div class="others">{_e(" · ".join(others))}</div>')
    if gate.get("passed") is not None or gate.get("failures"):
        from .summary import subset_suffix

        ok = bool(gate.get("passed"))
        text = "gate passed" + subset_suffix(report) if ok else "gate FAILED: " + "; ".join(str(f) for f in gate.get("failures") or [])
        items.append(f'<div class="gate {"ok" if ok else "bad"}">{_e(text)}</div>')
    if not report["complete"]:
        missing = report["missing"]
        items.append(f'<div class="gate bad">{_e(f"{len(missing)} selected case(s) produced no result")}</div>')
    notes = report["notes"]
    if notes:
        items.append(f'<div class="others">notes: {_e(", ".join(f"{k} ×{v}" for k, v in notes.items()))}</div>')
    return '<section id="headline" class="headline">' + "".join(items) + "</section>"


def _count_cells(row: Mapping[str, Any], live: bool = False) -> str:
    if live:
        cells = [row.get("n"), row.get("hit"), _pct(row.get("accuracy")), _ci(row), _num3(row.get("mean_score")), row.get("unsure", 0), row.get("error")]
        columns: tuple[str, ...] = LIVE_COLUMNS
    else:
        cells = [row.get("n"), row.get("hit"), _pct(row.get("accuracy")), _ci(row), row.get("unparsed"), row.get("refused"), row.get("truncated"), row.get("error")]
        columns = COUNT_COLUMNS
    return "".join(f'<td class="num" data-col="{c}">{_e("–" if v is None else v)}</td>' for c, v in zip(columns, cells, strict=True))


def _tables(report: Report) -> str:
    live = _is_live(report)
    if live:
        head = (
            '<tr><th>category</th><th>value</th><th class="num">n</th><th class="num">success</th><th class="num">SR %</th><th class="num">95% CI</th>'
            '<th class="num">mean score</th><th class="num">unsure</th><th class="num">error</th></tr>'
        )
    else:
        head = (
            '<tr><th>category</th><th>value</th><th class="num">n</th><th class="num">hit</th><th class="num">acc %</th><th class="num">95% CI</th>'
            '<th class="num">unparsed</th><th class="num">refused</th><th class="num">truncated</th><th class="num">error</th></tr>'
        )
    width = 9 if live else 10
    rows = [f'<tr class="overall" data-category="overall" data-value=""><th scope="row">overall</th><td></td>{_count_cells(report["overall"], live)}</tr>']
    macro = report["macro"]
    for name, values in report["breakdown"].items():
        m = None if live else macro.get(name)
        label = f"{name}" + (f" — macro {_pct(m)}%" if m is not None else "")
        rows.append(f'<tr class="group"><th colspan="{width}" scope="rowgroup">{_e(label)}</th></tr>')
        for value, row in values.items():
            rows.append(f'<tr data-category="{_e(name)}" data-value="{_e(value)}"><td>{_e(name)}</td><td>{_e(value)}</td>{_count_cells(row, live)}</tr>')
    if live:
        note = (
            "Success rate = successes / (n − unsure − error): episodes no check of guitest's decided (unsure, for the judge) and errored "
            "episodes are left out and shown apart. Mean score = the mean of the decided episodes' scores. 95% CI: Wilson score interval."
        )
    else:
        note = "Accuracy = hit / (n − error); unparsed, refused and truncated replies count as wrong; errors are excluded and shown apart. 95% CI: Wilson score interval."
    return f'<section id="tables"><h2>Results</h2><table class="results" id="results-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table><p class="note">{_e(note)}</p></section>'


def _chart(name: str, values: Mapping[str, Counts]) -> str:
    """A horizontal bar chart of accuracy per value, with the 95% interval as a whisker."""
    rows = list(values.items())
    label_w, bar_w, right_w, row_h, top = 150, 330, 64, 22, 22
    width = label_w + bar_w + right_w
    height = top + row_h * len(rows) + 6
    out = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-label="{_e("accuracy by " + name)}">']
    for tick in (0, 25, 50, 75, 100):
        x = label_w + bar_w * tick / 100
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 4}"/>')
        out.append(f'<text class="tick" x="{x:.1f}" y="{top - 8}" text-anchor="middle">{tick}%</text>')
    for i, (value, row) in enumerate(rows):
        y = top + i * row_h
        acc = _num(row.get("accuracy"))
        shown = value if len(value) <= 26 else value[:25] + "…"
        tip = f"{value}: {_pct(acc)}% (95% CI {_ci(row)}), {row.get('hit', '–')} hits, n {row.get('n', '–')}"
        out.append(f'<g class="bar"><title>{_e(tip)}</title>')
        out.append(f'<text class="label" x="{label_w - 8}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end">{_e(shown)}</text>')
        out.append(f'<rect class="track" x="{label_w}" y="{y + 4}" width="{bar_w}" height="{row_h - 8}"/>')
        if acc is not None:
            out.append(f'<rect class="fill" x="{label_w}" y="{y + 4}" width="{bar_w * acc:.1f}" height="{row_h - 8}"/>')
            ci = row.get("ci95")
            lo, hi = (_num(ci[0]), _num(ci[1])) if isinstance(ci, (list, tuple)) and len(ci) == 2 else (None, None)
            if lo is not None and hi is not None:
                x1, x2, ym = label_w + bar_w * lo, label_w + bar_w * hi, y + row_h / 2
                out.append(f'<path class="whisker" d="M{x1:.1f} {ym:.1f}H{x2:.1f}M{x1:.1f} {ym - 5:.1f}V{ym + 5:.1f}M{x2:.1f} {ym - 5:.1f}V{ym + 5:.1f}"/>')
        out.append(f'<text class="val" x="{label_w + bar_w + 8}" y="{y + row_h / 2 + 4:.1f}">{_e(_pct(acc))}{"%" if acc is not None else ""}</text></g>')
    out.append("</svg>")
    return f'<figure class="chartbox"><figcaption>{_e(name)}</figcaption>{"".join(out)}</figure>'


def _budget_chart(by_budget: Mapping[str, Any]) -> str:
    """The success rate had the budget been 1, 2, ... steps: one column per budget."""
    points = sorted((int(b), v) for b, raw in by_budget.items() if str(b).isdigit() and (v := _num(raw)) is not None)
    if not points:
        return ""
    left, plot_w, plot_h, top, bottom = 40, 440, 150, 12, 28
    width, height = left + plot_w + 10, top + plot_h + bottom
    step = plot_w / len(points)
    out = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-label="success rate by step budget">']
    for tick in (0, 25, 50, 75, 100):
        y = top + plot_h * (1 - tick / 100)
        out.append(f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}"/>')
        out.append(f'<text class="tick" x="{left - 6}" y="{y + 3:.1f}" text-anchor="end">{tick}%</text>')
    every = max(1, len(points) // 15)
    for i, (b, v) in enumerate(points):
        x, h = left + i * step, plot_h * v
        out.append(
            f'<g class="bar"><title>{_e(f"budget {b} steps: {_pct(v)}%")}</title><rect class="fill" x="{x + step * 0.1:.1f}" y="{top + plot_h - h:.1f}" width="{step * 0.8:.1f}" height="{h:.1f}"/></g>'
        )
        if i % every == 0 or i == len(points) - 1:
            out.append(f'<text class="tick" x="{x + step / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{b}</text>')
    out.append(f'<text class="tick" x="{left + plot_w / 2:.1f}" y="{height - 2}" text-anchor="middle">step budget</text></svg>')
    return f'<figure class="chartbox" id="budget-chart"><figcaption>success rate had the budget been</figcaption>{"".join(out)}</figure>'


def _charts(report: Report) -> str:
    charts = [_chart(name, values) for name, values in report["breakdown"].items() if values]
    live = _is_live(report)
    if live:
        by_budget = (report.get("task_metrics") or {}).get("success_by_budget")
        if isinstance(by_budget, Mapping):
            charts.insert(0, _budget_chart(by_budget))
    charts = [c for c in charts if c]
    if not charts:
        return ""
    title, note = (
        ("Success rate", "Bars: success rate; whiskers: 95% confidence interval. The budget chart counts a success at budget b when it took at most b steps.")
        if live
        else ("Accuracy by category", "Bars: accuracy; whiskers: 95% confidence interval.")
    )
    return f'<section id="charts"><h2>{title}</h2><p class="note">{_e(note)}</p><div class="charts">' + "".join(charts) + "</div></section>"


def _options(counts: Mapping[str, int], order: Iterable[str]) -> str:
    total = sum(counts.values())
    # Option values carry a '=' prefix so that "" can mean "any" even when a tag value is empty.
    opts = [f'<option value="">all ({total})</option>']
    opts += [f'<option value="={_e(v)}">{_e(v)} ({counts[v]})</option>' for v in order if v in counts]
    return "".join(opts)


def _gallery(report: Report, linked: int, episodes: bool) -> str:
    """The case list's filters (verdict, each tag with up to :data:`MAX_OPTIONS` values, text), its legend, and the
    empty list the viewer fills with the cards in view."""
    cases = report["cases"]
    verdicts: dict[str, int] = {}
    for c in cases:
        verdicts[str(c.get("verdict", ""))] = verdicts.get(str(c.get("verdict", "")), 0) + 1
    order = [v for v in VERDICT_ORDER if v in verdicts] + sorted(v for v in verdicts if v not in VERDICT_ORDER)
    controls = [f'<label>verdict <select id="f-verdict">{_options(verdicts, order)}</select></label>']
    for i, name in enumerate(viewer_data.tag_names(report, cases)):
        values: dict[str, int] = {}
        for c in cases:
            tags = c.get("tags")
            if isinstance(tags, Mapping) and name in tags:
                values[str(tags[name])] = values.get(str(tags[name]), 0) + 1
        if values and len(values) <= MAX_OPTIONS:
            controls.append(f'<label>{_e(name)} <select class="f-tag" id="f-tag-{i}" data-tag="{_e(name)}">{_options(values, sorted(values))}</select></label>')
    controls.append('<label>id, instruction or tag <input type="search" id="f-text" placeholder="contains…"></label>')
    controls.append('<button type="button" id="f-reset">reset</button>')
    controls.append(f'<span id="f-count" aria-live="polite">{len(cases)} cases</span>')
    legend = "Screenshots: green box = target, red circle = predicted point. Open a case for its reply, evidence and cost; its address (#case=…) links to it."
    if episodes:
        legend = (
            "Episodes: each card shows the last screen; open one for every step: the screen the agent saw with its actions drawn (a click enlarges it), "
            "the actions read, the reply, why it scored as it did and what it cost. Each case and step has its own address (#case=…&step=N)."
        )
    if linked:
        legend += f" {linked} screenshot(s) are shown from their files, where the run read them (relative links); for a report folder that carries them, run with --report-images=embed."
    return (
        f'<section id="gallery"><h2>Cases</h2><div class="filters" role="search">{"".join(controls)}</div><p class="note">{_e(legend)}</p>'
        '<p class="status" id="cards-status">Loading the cases…</p><div class="cards" id="cards"></div>'
        '<noscript><p class="status bad">The case list needs JavaScript; the tables above are complete without it.</p></noscript></section>'
    )


def _workers(run: Mapping[str, Any]) -> str:
    """The run's processes in words: ``run.workers`` is pytest-xdist's -n (0 for a serial run; a merged report's, the shards' summed)."""
    n = run.get("workers") or 0
    if run.get("merged_shards"):
        return f"{n} in all (the shards' -n, summed; a serial shard counts 0)"
    return f"{n} (pytest-xdist -n)" if n else "serial (one process, no -n)"


def _warnings(report: Report) -> str:
    """Banners for what changes how the numbers may be read: replies from the response cache, an unreachable endpoint."""
    from .costs import budget_text
    from .summary import FINISH_WITH_LF, cache_sentence, not_asked_words, subset_sentence

    run = report["run"]
    notes = []
    part = subset_sentence(report) if isinstance(report.get("selection"), Mapping) else None
    if part:
        notes.append(part)
    if isinstance(run.get("cache"), Mapping):
        cached = cache_sentence(report)
        if cached:
            notes.append(cached)
    down = run.get("unreachable")
    if isinstance(down, Mapping):
        notes.append(f"Endpoint {down.get('url')} {down.get('state', 'unreachable')} ({down.get('reason')}): {down.get('cases_not_asked')} case(s) not asked (errors); re-run them with --lf.")
    budget = run.get("budget")
    stopped = budget_text(budget) if isinstance(budget, Mapping) else None
    if stopped:
        notes.append(f"Budget reached: {stopped}; {not_asked_words(report)}: {FINISH_WITH_LF}.")
    return "".join(f'<p class="warn">{_e(n)}</p>' for n in notes)


def _missing(report: Report) -> str:
    missing = report["missing"]
    if not missing:
        return ""
    ids = "\n".join(str(m) for m in missing)  # one text, however many: a run that lost 50,000 cases still opens at once
    return f'<section id="missing"><h2>Selected cases with no result ({len(missing)})</h2><pre class="missing">{_e(ids)}</pre></section>'


# -- the page -------------------------------------------------------------------------------------

#: the viewer's files, shipped with the package (guitest/reporting/viewer/) and read once
ASSETS = Path(__file__).resolve().parent / "viewer"
#: a tag with more values than this gets no menu (a seed, an id-like tag): the text filter finds its values
MAX_OPTIONS = 300
#: the data folder beside a page ``<stem>.html``: ``<stem>_files/<token>/`` (a token per data, see :func:`prune`)
DATA_SUFFIX = "_files"
_DATA_META = re.compile(rb'<meta name="guitest-data" content="([^"]*)"')


@functools.cache
def asset(name: str) -> bytes:
    """The viewer's file ``name`` (``viewer.js``, ``viewer.css``), read once."""
    return (ASSETS / name).read_bytes()


def _digest(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


def _csp(script: str, images: str) -> str:
    return f"default-src 'none'; img-src {images}; style-src 'sha256-{_digest(asset('viewer.css'))}'; script-src {script}; base-uri 'none'; form-action 'none'"


def _page(report: Report, linked: int, episodes: bool, head: str, scripts: str, csp: str) -> str:
    """The page: the first screen (settings, headline, tables, charts, the case list's filters) and the viewer's place."""
    suite = report["suite"]["name"] or "?"
    spec = report["model"].get("spec") or "?"
    title = f"guitest report: {suite} · {spec}"
    started = report["run"].get("started")
    sub = f"model {spec} · {report['n_results']} of {report['n_selected']} cases" + (f" · {started}" if started else "")
    loads = "it shows the screenshots from their files" if linked or episodes else "it carries its pictures"
    body = "".join(
        [
            f'<header><h1>{_e(title)}</h1><p class="sub">{_e(sub)} · <a href="#" id="to-cases">the cases</a></p></header>',
            _warnings(report),
            _headline(report),
            _tables(report),
            _charts(report),
            _settings(report),
            _missing(report),
            _gallery(report, linked, episodes),
            f"<footer>{_e('Written by guitest ' + report['guitest'] + '. This page loads nothing from the network; ' + loads + '.')}</footer>",
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="referrer" content="no-referrer">{head}'
        f"<title>{_e(title)}</title><style>{asset('viewer.css').decode('utf-8')}</style></head>"
        f'<body><main>{body}</main><section id="case-view" class="caseview" hidden aria-label="one case"></section>'
        f'<div id="lightbox" class="lightbox" hidden></div>{scripts}</body></html>\n'
    )


def _linked(pictures: Mapping[str, str]) -> int:
    return sum(1 for v in pictures.values() if isinstance(v, str) and not is_embedded(v) and os.path.isabs(v))


def _has_episodes(report: Report, files_dir: Any) -> bool:
    return files_dir is not None and any(c.get("episode") for c in report["cases"])


def render(report: Report, pictures: Mapping[str, str] | None = None, page_dir: Any = None, files_dir: Any = None) -> str:
    """One self-contained HTML page for a report: the first screen (settings, headline, tables, charts) and the
    viewer (:mod:`guitest.reporting.viewer_data`), its data carried in the page (for a page copied on its own:
    a merged report); :func:`page_files` writes the page that loads its data from a folder.

    ``pictures`` maps a case id to its screenshot's picture (see :mod:`guitest.reporting.thumbnails`): a
    ``data:image/...;base64,`` URI is carried; an absolute file path is linked, relative to ``page_dir`` (the folder
    the page is written to; None: a ``file:`` URI). A case without one gets no picture, and anything else (a URL, a
    relative path) is ignored. A live case shows its episode, its screenshots linked from the files the report names
    relative to ``files_dir`` (the report folder; default ``page_dir``). Nothing on the page refers to a network
    resource, and every string taken from the report is shown as text.
    """
    pictures = pictures or {}
    files_dir = files_dir if files_dir is not None else page_dir
    data = viewer_data.build(report, pictures, page_dir, files_dir, as_files=False, salt=_digest(asset("viewer.js")))
    linked, episodes = _linked(pictures), _has_episodes(report, files_dir)
    images = "'self' file: data:" if linked or episodes else "data:"  # linked screenshots: files beside (or under) the page's own origin
    script = asset("viewer.js")
    scripts = viewer_data.inline_blocks(data) + f"<script>{script.decode('utf-8')}</script>"
    return _page(report, linked, episodes, "", scripts, _csp(f"'sha256-{_digest(script)}'", images))


def data_folder(page: Path) -> Path:
    """The folder beside the page ``page`` that holds its viewer's data: ``<stem>_files``."""
    return page.with_name(page.stem + DATA_SUFFIX)


def page_files(report: Report, pictures: Mapping[str, str], paths: Iterable[Path], files_dir: Any, originals: Mapping[str, str] | None = None, shown_by: Iterable[Path] = ()) -> dict[Path, bytes]:
    """The HTML report at each of ``paths``: the page, which shows its first screen at once, and its data folder
    (:func:`data_folder`, one folder ``<token>/`` per data), from which the viewer loads the case index, then each
    case's detail when it is opened, as script files (a page opened from ``file:`` may not ``fetch()`` a file; a
    ``<script>`` may load one, and it calls the viewer with its data). The pages and folders together can be moved
    or zipped as they are: every link is relative.

    ``pictures``, ``files_dir``: as for :func:`render`, but an embedded picture is written as a file of the data
    folder; ``originals``: case id -> the screenshot file behind an embedded picture (shown full size when the case
    is opened). ``shown_by``: more pages, the same first screen, that show the first page's data from where they are
    (the latest and passed pages at the top of the report folder showing a run kept in its run folder): each names
    that data folder by its relative path and has none of its own (the viewer takes the data's links from the folder
    of the page that wrote it)."""
    script = asset("viewer.js")
    linked, episodes = _linked(pictures), _has_episodes(report, files_dir)
    built: dict[Path, viewer_data.ViewerData] = {}
    out: dict[Path, bytes] = {}
    images = "'self' file:" if linked else "'self'"  # embedded pictures are files of the data folder here; linked ones may fall back to their absolute place

    def page(base: str) -> bytes:
        head = f'<meta name="guitest-data" content="{_e(base)}">'
        scripts = f'<script src="{_e(base)}viewer.js" defer></script>'
        return strictjson.encode(_page(report, linked, episodes, head, scripts, _csp("'self'", images)))

    first: tuple[Path, str] | None = None
    for path in paths:
        folder = path.parent.resolve()
        data = built.get(folder)
        if data is None:
            data = built[folder] = viewer_data.build(report, pictures, folder, files_dir, originals, as_files=True, salt=_digest(script))
        out[path] = page(urllib.parse.quote(f"{data_folder(path).name}/{data.token}/"))
        out.update(viewer_data.folder_files(data, data_folder(path) / data.token, script))
        first = first or (path, data.token)
    for other in shown_by:
        if first is None:
            raise ValueError("page_files: shown_by needs a page that writes the data")
        target = data_folder(first[0]).resolve() / first[1]
        out[other] = page(urllib.parse.quote(Path(os.path.relpath(target, other.parent.resolve())).as_posix() + "/"))
    return out


def named_data(page: Path) -> list[str]:
    """The data folders the page at ``page`` names (paths relative to its folder, ending in ``/``): none for a page that
    carries its data, or that cannot be read."""
    try:
        with open(page, "rb") as f:
            head = f.read(64 << 10)  # the name is in the page's head
    except OSError:
        return []
    return [urllib.parse.unquote(html.unescape(found.decode("utf-8", "replace"))) for found in _DATA_META.findall(head)]


def prune(page: Path) -> list[Path]:
    """Remove the data folders under the page's :func:`data_folder` that no page beside it names any more (an
    earlier run's: a ``.passed`` copy of a page keeps its own); the folders removed."""
    folder = data_folder(page)
    try:
        tokens = [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []
    named = {name for other in page.parent.glob("*.html") for name in named_data(other)}
    removed = []
    for token in tokens:
        if f"{folder.name}/{token.name}/" not in named:
            shutil.rmtree(token, ignore_errors=True)
            removed.append(token)
    return removed
