"""The HTML report: one page with the run's settings, tables, charts and a filterable case gallery.

The page loads nothing from the network: CSS and a small vanilla script are inline, and a
Content-Security-Policy allows no script but the page's own (by its hash) and no image but
the screenshots. Those are either linked (the default: the ``<img>`` names the screenshot
file by a relative path, and the policy allows same-origin and ``file:`` images) or
embedded as JPEG thumbnails (data URIs: then the page allows ``data:`` images only and is
one self-contained file); see :mod:`guitest.reporting.thumbnails`. Every string that comes from the
report (model replies, instructions, tag values, errors, settings) is HTML-escaped, so a
reply like ``<script>...</script>`` shows as text and never runs.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

from .thumbnails import is_embedded, link
from ..verdict import CaseResult
from .document import Counts, Report

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


def _num(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _num3(value: Any) -> str:
    """A number to three decimals ('–' for none)."""
    number = _num(value)
    return "–" if number is None else f"{number:.3f}"


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


def _verdict_class(verdict: Any) -> str:
    return f"v-{verdict}" if verdict in VERDICT_ORDER else "v-other"


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
        if isinstance(rule, Mapping):
            from ..miniwob.rules import summary_line

            rows.append(("success rule", summary_line(dict(rule)).removeprefix("success rule: ")))
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


def _box(value: Any) -> list[float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4:
        nums = [n for v in value if (n := _num(v)) is not None]
        if len(nums) == 4:
            return nums
    return None


def _point(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        x, y = _num(value[0]), _num(value[1])
        if x is not None and y is not None:
            return x, y
    return None


def _overlay(case: CaseResult) -> str:
    """An SVG in the original image's pixel space, stretched over the thumbnail: the truth box and the predicted point."""
    size = _point(case.get("size"))
    if size is None or size[0] <= 0 or size[1] <= 0:
        return ""
    w, h = size
    parts = []
    truth = _box(case.get("truth"))
    if truth is not None:
        x1, y1, x2, y2 = truth
        parts.append(f'<rect class="truth" x="{x1:g}" y="{y1:g}" width="{max(x2 - x1, 0):g}" height="{max(y2 - y1, 0):g}"/>')
    pixel = _point((case.get("prediction") or {}).get("pixel"))
    if pixel is not None:
        px, py = pixel
        r = max(w, h) * 0.014
        parts += _marker(px, py, r)
        parts.append(f'<path class="pred" d="M{px - 2 * r:.1f} {py:g}H{px + 2 * r:.1f}M{px:g} {py - 2 * r:.1f}V{py + 2 * r:.1f}"/>')
    return _svg(w, h, parts) if parts else ""


def _marker(px: float, py: float, r: float) -> list[str]:
    """A point drawn as a red circle with a white halo (SVG elements)."""
    return [f'<circle class="pred-halo" cx="{px:g}" cy="{py:g}" r="{r:.1f}"/>', f'<circle class="pred" cx="{px:g}" cy="{py:g}" r="{r:.1f}"/>']


def _svg(w: float, h: float, parts: list[str]) -> str:
    """An SVG in a ``w`` x ``h`` pixel space, stretched over its picture."""
    return f'<svg class="overlay" viewBox="0 0 {w:g} {h:g}" preserveAspectRatio="none" aria-hidden="true">{"".join(parts)}</svg>'


def _strip(case: Mapping[str, Any], files_dir: Any, page_dir: Any) -> str:
    """A live case's episode as a strip of steps: each screenshot the agent saw (a link to its file, which the report
    names relative to ``files_dir``) with every action of the step drawn on it (numbered when there are several), the
    reply, and the actions read (those that did not run marked); then the final screen."""
    episode = case.get("episode")
    if not isinstance(episode, Mapping) or files_dir is None:
        return ""
    size = _point(episode.get("screen_size"))
    steps = [s for s in episode.get("trajectory") or [] if isinstance(s, Mapping)]
    frames = []
    for step in steps:
        src = _episode_src(step.get("screenshot"), files_dir, page_dir)
        actions = _step_actions(step)
        executed = given if isinstance(given := step.get("executed"), int) else len(actions)
        shot = ""
        if src:
            dims = f' width="{size[0]:g}" height="{size[1]:g}"' if size else ""
            alt = _e(f"step {step.get('number')}")
            shot = f'<figure class="shot"><img src="{_e(src)}" alt="{alt}"{dims} loading="lazy" decoding="async">{_action_overlay(actions[:executed], size)}</figure>'
        read = step.get("text") or ("(no readable action)" if not actions else "; ".join(str(a.get("kind")) for a in actions))
        if executed < len(actions):
            read += f" (actions {executed + 1}-{len(actions)} not run)" if len(actions) - executed > 1 else f" (action {len(actions)} not run)"
        notes = ", ".join(str(n) for n in step.get("notes") or [])
        reply = step.get("reply")
        frames.append(
            f'<li class="step">{shot}<p class="act"><b>{_e(step.get("number"))}</b> {_e(read)}</p>'
            + (f'<p class="meta">{_e(notes)}</p>' if notes else "")
            + (f'<details><summary>reply</summary><pre class="reply">{_e(reply)}</pre></details>' if reply is not None else "")
            + "</li>"
        )
    final = _episode_src(episode.get("final_screenshot"), files_dir, page_dir)
    if final:
        frames.append(
            f'<li class="step"><figure class="shot"><img src="{_e(final)}" alt="final screen" loading="lazy" decoding="async"></figure><p class="act"><b>end</b> {_e(episode.get("end"))}</p></li>'
        )
    outcome = f"{'success' if episode.get('success') else 'no success'}, score {_num3(episode.get('score'))}, {len(steps)} step(s), {_num3(episode.get('wall_seconds'))} s"
    reason = f" · {episode['reason']}" if episode.get("reason") else ""
    return f'<div class="episode"><p class="meta">{_e(outcome + reason)}</p><ol class="strip">{"".join(frames)}</ol></div>'


def _episode_src(ref: Any, files_dir: Any, page_dir: Any) -> str | None:
    """The ``src`` of an episode screenshot the report names relative to ``files_dir`` (never outside it)."""
    if not isinstance(ref, str) or not ref or os.path.isabs(ref) or ref.startswith(".."):
        return None
    return link(os.path.join(os.path.abspath(files_dir), ref), page_dir)


def _step_actions(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A step's actions in order: its ``actions`` list (a report from before several actions per step: its ``action``)."""
    actions = step.get("actions")
    if isinstance(actions, list):
        return [a for a in actions if isinstance(a, Mapping)]
    single = step.get("action")
    return [single] if isinstance(single, Mapping) else []


def _action_overlay(actions: list[Mapping[str, Any]], size: tuple[float, float] | None) -> str:
    """The actions drawn over their screenshot (pixels of that screenshot): a circle at each point, an arrow to a drag's
    end, and the action's number beside its circle when there are several."""
    if size is None:
        return ""
    w, h = size
    r = max(w, h) * 0.02
    parts: list[str] = []
    for number, action in enumerate(actions, 1):
        point, end = _point(action.get("point")), _point(action.get("end"))
        if point is None:
            continue
        px, py = point
        parts += _marker(px, py, r)
        if end is not None:
            parts.append(f'<path class="pred" d="M{px:g} {py:g}L{end[0]:g} {end[1]:g}"/>')
        if len(actions) > 1:
            parts.append(f'<text class="pred-n" x="{px + 1.3 * r:.1f}" y="{py - 1.3 * r:.1f}" font-size="{2 * r:.1f}">{number}</text>')
    return _svg(w, h, parts) if parts else ""


def _card(case: CaseResult, thumb: str | None, files_dir: Any = None, page_dir: Any = None) -> str:
    """One case's card; ``thumb`` is the ``src`` of its picture (a data URI or a link to the file), or None; a live
    case shows its episode instead (:func:`_strip`)."""
    cid = str(case.get("id", ""))
    verdict = str(case.get("verdict", ""))
    tags = given if isinstance(given := case.get("tags"), Mapping) else {}
    tags = {str(k): str(v) for k, v in tags.items()}
    instruction = case.get("instruction")
    search = " ".join([cid, str(instruction or "")]).lower()
    out = [f'<article class="card {_verdict_class(verdict)}" data-verdict="{_e(verdict)}" data-tags="{_e(json.dumps(tags, ensure_ascii=False))}" data-text="{_e(search)}">']
    out.append(f'<header><span class="badge {_verdict_class(verdict)}">{_e(verdict)}</span><code class="cid">{_e(cid)}</code></header>')
    if thumb:
        size = _point(case.get("size"))
        # the original's size gives the box its shape before a lazily loaded picture arrives
        dims = f' width="{size[0]:g}" height="{size[1]:g}"' if size is not None and size[0] > 0 and size[1] > 0 else ""
        out.append(f'<figure class="shot"><img src="{_e(thumb)}" alt="{_e("screenshot of " + cid)}"{dims} loading="lazy" decoding="async">{_overlay(case)}</figure>')
    if tags:
        out.append('<ul class="tags">' + "".join(f"<li><span>{_e(k)}</span> {_e(v)}</li>" for k, v in tags.items()) + "</ul>")
    if instruction:
        out.append(f'<p class="instruction">{_e(instruction)}</p>')
    strip = _strip(case, files_dir, page_dir)
    response = case.get("response")
    if strip:
        out.append(strip)
    elif response is not None:
        out.append(f'<pre class="reply" title="model reply">{_e(response)}</pre>')
    else:
        out.append('<p class="noreply">no reply</p>')
    if case.get("error"):
        out.append(f'<pre class="err">{_e(case["error"])}</pre>')
    meta = []
    truth = _box(case.get("truth"))
    if truth is not None:
        meta.append("truth [" + ", ".join(f"{v:g}" for v in truth) + "]")
    elif case.get("truth") is not None:
        meta.append("truth " + _fmt(case.get("truth")))
    prediction = case.get("prediction") or {}
    pixel = _point(prediction.get("pixel"))
    if pixel is not None:
        meta.append(f"predicted ({pixel[0]:g}, {pixel[1]:g})")
    via = prediction.get("via")
    if via:
        meta.append(f"via {via}")
    size = _point(case.get("size"))
    if size is not None:
        meta.append(f"image {size[0]:g}×{size[1]:g}")
    sent = _point(case.get("sent_size"))
    if sent is not None and sent != size:
        meta.append(f"sent {sent[0]:g}×{sent[1]:g}")
    if case.get("finish_reason"):
        meta.append(f"finish {case['finish_reason']}")
    if case.get("image"):
        meta.append(str(case["image"]))
    notes = case.get("notes")
    if notes:
        meta.append("notes: " + ", ".join(str(n) for n in notes))
    if meta:
        out.append(f'<p class="meta">{_e(" · ".join(meta))}</p>')
    out.append("</article>")
    return "".join(out)


def _tag_names(report: Report, cases: list[CaseResult]) -> list[str]:
    names: list[str] = [n for n in report["breakdown"] if "/" not in n]
    for case in cases:
        tags = case.get("tags")
        if isinstance(tags, Mapping):
            names += [str(k) for k in tags if str(k) not in names]
    return names


def _options(counts: Mapping[str, int], order: Iterable[str]) -> str:
    total = sum(counts.values())
    # Option values carry a '=' prefix so that "" can mean "any" even when a tag value is empty.
    opts = [f'<option value="">all ({total})</option>']
    opts += [f'<option value="={_e(v)}">{_e(v)} ({counts[v]})</option>' for v in order if v in counts]
    return "".join(opts)


def _gallery(report: Report, sources: Mapping[str, str], files_dir: Any = None, page_dir: Any = None) -> str:
    cases = report["cases"]
    verdicts: dict[str, int] = {}
    for c in cases:
        verdicts[str(c.get("verdict", ""))] = verdicts.get(str(c.get("verdict", "")), 0) + 1
    order = [v for v in VERDICT_ORDER if v in verdicts] + sorted(v for v in verdicts if v not in VERDICT_ORDER)
    controls = [f'<label>verdict <select id="f-verdict">{_options(verdicts, order)}</select></label>']
    for i, name in enumerate(_tag_names(report, cases)):
        values: dict[str, int] = {}
        for c in cases:
            tags = c.get("tags")
            if isinstance(tags, Mapping) and name in tags:
                values[str(tags[name])] = values.get(str(tags[name]), 0) + 1
        if values:
            controls.append(f'<label>{_e(name)} <select class="f-tag" id="f-tag-{i}" data-tag="{_e(name)}">{_options(values, sorted(values))}</select></label>')
    controls.append('<label>id or instruction <input type="search" id="f-text" placeholder="contains…"></label>')
    controls.append('<button type="button" id="f-reset">reset</button>')
    controls.append(f'<span id="f-count" aria-live="polite">{len(cases)} of {len(cases)} cases shown</span>')
    cards = "".join(_card(c, sources.get(str(c.get("id", ""))), files_dir, page_dir) for c in cases)
    linked = sum(not is_embedded(v) for v in sources.values())
    legend = "Screenshots: green box = target, red circle = predicted point."
    if any(c.get("episode") for c in cases):
        legend = "Episodes: each screen the agent saw, the red circle where its action acted, the action read and the reply."
    if linked:
        legend += f" {linked} screenshot(s) are shown from their files, where the run read them (relative links); for a page that carries them, run with --report-images=embed."
    return f'<section id="gallery"><h2>Cases</h2><div class="filters" role="search">{"".join(controls)}</div><p class="note">{_e(legend)}</p><div class="cards" id="cards">{cards}</div></section>'


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
    items = "".join(f"<li><code>{_e(m)}</code></li>" for m in missing)
    return f'<section id="missing"><h2>Selected cases with no result ({len(missing)})</h2><ul class="missing">{items}</ul></section>'


def _sources(pictures: Mapping[str, Any], page_dir: Any) -> dict[str, str]:
    """Case id -> ``src`` of its picture: a ``data:image/`` URI as it is, an absolute path as a link to the file from
    ``page_dir``; anything else (a URL, a relative path) is dropped, so the page never loads a resource from elsewhere."""
    out = {}
    for case_id, value in pictures.items():
        src = value if is_embedded(value) else link(value, page_dir)
        if src is not None:
            out[str(case_id)] = src
    return out


# -- the page -------------------------------------------------------------------------------------

CSS = """
:root{--hit:#1a7f37;--miss:#cf222e;--amber:#b7791f;--err:#7d1a1a;--ink:#1f2328;--mute:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--accent:#2f6fdf}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#fff}
main{max-width:1280px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}h4{margin:8px 0 4px}
.sub{color:var(--mute);margin:0}
table{border-collapse:collapse}
table.kv th{text-align:left;font-weight:600;color:var(--mute);padding:3px 16px 3px 0;vertical-align:top;white-space:nowrap}
table.kv td{padding:3px 0;word-break:break-word}
table.results{width:100%;font-variant-numeric:tabular-nums}
table.results th,table.results td{padding:5px 10px;border-bottom:1px solid var(--line);text-align:left}
table.results thead th{background:var(--bg);position:sticky;top:0;font-weight:600}
table.results .num{text-align:right}
table.results tr.overall{font-weight:700;background:#eef4ff}
table.results tr.group th{background:var(--bg);color:var(--mute);font-weight:600;padding-top:10px}
table.results tbody tr:not(.group):hover{background:#fafbfc}
.note{color:var(--mute);font-size:12.5px}
.headline{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px 20px;margin-top:18px;padding:14px 18px;border:1px solid var(--line);border-radius:8px;background:var(--bg)}
.headline .big{font-size:40px;font-weight:700;line-height:1}.headline .big small{font-size:20px;color:var(--mute)}
.headline .what{font-weight:600}.headline .others{color:var(--mute)}
.gate{padding:2px 10px;border-radius:12px;font-weight:600}.gate.ok{background:#dafbe1;color:var(--hit)}.gate.bad{background:#ffebe9;color:var(--miss)}
details.prompt{margin-top:8px}
pre{white-space:pre-wrap;word-break:break-word;margin:6px 0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre.text{background:var(--bg);padding:8px;border-radius:6px}
.charts{display:flex;flex-wrap:wrap;gap:16px}
.chartbox{margin:0;padding:10px;border:1px solid var(--line);border-radius:8px;max-width:100%}
.chartbox figcaption{font-weight:600;margin-bottom:4px}
svg.chart{max-width:100%;height:auto;font-size:12px}
svg.chart .grid{stroke:#e6eaef}svg.chart .tick{fill:var(--mute);font-size:10px}
svg.chart .label{fill:var(--ink)}svg.chart .val{fill:var(--ink);font-variant-numeric:tabular-nums}
svg.chart .track{fill:#eef1f4}svg.chart .fill{fill:var(--accent);opacity:.85}
svg.chart .whisker{stroke:#111;stroke-width:1.5;fill:none}
.filters{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;padding:10px 12px;background:var(--bg);border:1px solid var(--line);border-radius:8px;position:sticky;top:0;z-index:2}
.filters label{color:var(--mute);font-size:13px}
.filters select,.filters input,.filters button{font:inherit;padding:3px 6px;border:1px solid var(--line);border-radius:6px;background:#fff;color:var(--ink)}
#f-count{margin-left:auto;font-weight:600}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:14px;margin-top:12px}
.card{border:1px solid var(--line);border-left:5px solid var(--mute);border-radius:8px;padding:10px 12px;background:#fff;content-visibility:auto;contain-intrinsic-size:auto 420px;min-width:0}
[hidden]{display:none!important}
.card header{display:flex;gap:8px;align-items:center;margin-bottom:6px;min-width:0}
.card .cid{font-size:12px;word-break:break-all}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;flex:none}
.v-hit{border-left-color:var(--hit)}.badge.v-hit{background:var(--hit)}
.v-miss{border-left-color:var(--miss)}.badge.v-miss{background:var(--miss)}
.v-unparsed,.v-refused,.v-truncated,.v-partial{border-left-color:var(--amber)}.badge.v-unparsed,.badge.v-refused,.badge.v-truncated,.badge.v-partial{background:var(--amber)}
.v-error{border-left-color:var(--err)}.badge.v-error{background:var(--err)}
.badge.v-other{background:var(--mute)}
.shot{position:relative;margin:0 0 8px;line-height:0;background:#eee;border-radius:4px;overflow:hidden}
.shot img{width:100%;height:auto;display:block}
.shot .overlay{position:absolute;left:0;top:0;width:100%;height:100%}
.episode .strip{list-style:none;display:flex;gap:8px;overflow-x:auto;padding:0;margin:6px 0}
.episode .step{flex:0 0 150px;font-size:12px}.episode .act{margin:2px 0;word-break:break-word}
.episode details pre{max-height:160px;overflow:auto}
.overlay .truth{fill:rgba(26,127,55,.18);stroke:#12e05a;stroke-width:2;vector-effect:non-scaling-stroke}
.overlay .pred-halo{fill:none;stroke:#fff;stroke-width:4;vector-effect:non-scaling-stroke}
.overlay .pred{fill:none;stroke:#ff1f3d;stroke-width:2;vector-effect:non-scaling-stroke}
.overlay .pred-n{fill:#ff1f3d;stroke:#fff;stroke-width:2;paint-order:stroke;font-weight:700;font-family:sans-serif;vector-effect:non-scaling-stroke}
.tags{list-style:none;padding:0;margin:0 0 6px;display:flex;flex-wrap:wrap;gap:4px}
.tags li{font-size:12px;background:var(--bg);border:1px solid var(--line);border-radius:10px;padding:0 7px}.tags li span{color:var(--mute)}
.instruction{margin:4px 0;font-weight:600}
pre.reply{background:var(--bg);padding:6px 8px;border-radius:6px;max-height:14em;overflow:auto}
pre.err{background:#ffebe9;color:var(--err);padding:6px 8px;border-radius:6px;max-height:10em;overflow:auto}
.noreply{color:var(--mute);font-style:italic;margin:4px 0}
.meta{color:var(--mute);font-size:12px;margin:4px 0 0;word-break:break-word}
ul.missing{columns:3;font-size:12px}
p.warn{border-left:4px solid var(--amber);background:#fff8e6;padding:8px 12px;font-weight:600}
footer{margin-top:40px;color:var(--mute);font-size:12px}
"""

JS = """
(function () {
  "use strict";
  var cards = Array.prototype.map.call(document.querySelectorAll("#cards .card"), function (el) {
    var tags = {};
    try { tags = JSON.parse(el.getAttribute("data-tags") || "{}"); } catch (e) { tags = {}; }
    return { el: el, verdict: el.getAttribute("data-verdict"), tags: tags, text: el.getAttribute("data-text") || "" };
  });
  var verdict = document.getElementById("f-verdict");
  var tagSelects = Array.prototype.slice.call(document.querySelectorAll("select.f-tag"));
  var text = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  if (!verdict || !count) { return; }
  function apply() {
    var want = verdict.value ? verdict.value.slice(1) : null;
    var needle = text ? text.value.trim().toLowerCase() : "";
    var tagWants = tagSelects.filter(function (s) { return s.value; }).map(function (s) {
      return [s.getAttribute("data-tag"), s.value.slice(1)];
    });
    var shown = 0;
    cards.forEach(function (c) {
      var ok = (want === null || c.verdict === want) && (!needle || c.text.indexOf(needle) !== -1);
      for (var i = 0; ok && i < tagWants.length; i++) {
        ok = Object.prototype.hasOwnProperty.call(c.tags, tagWants[i][0]) && c.tags[tagWants[i][0]] === tagWants[i][1];
      }
      c.el.hidden = !ok;
      if (ok) { shown++; }
    });
    count.textContent = shown + " of " + cards.length + " cases shown";
  }
  verdict.addEventListener("change", apply);
  tagSelects.forEach(function (s) { s.addEventListener("change", apply); });
  if (text) { text.addEventListener("input", apply); }
  var reset = document.getElementById("f-reset");
  if (reset) {
    reset.addEventListener("click", function () {
      verdict.value = "";
      tagSelects.forEach(function (s) { s.value = ""; });
      if (text) { text.value = ""; }
      apply();
    });
  }
  apply();
})();
"""


def _csp(linked: bool) -> str:
    digest = base64.b64encode(hashlib.sha256(JS.encode("utf-8")).digest()).decode("ascii")
    images = "'self' file: data:" if linked else "data:"  # linked screenshots: files beside (or under) the page's own origin
    return f"default-src 'none'; img-src {images}; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"


def render(report: Report, pictures: Mapping[str, str] | None = None, page_dir: Any = None, files_dir: Any = None) -> str:
    """One HTML page for a report: settings, headline, tables, charts and a filterable case gallery.

    ``pictures`` maps a case id to its screenshot's picture (see :mod:`guitest.reporting.thumbnails`):
    a ``data:image/...;base64,`` URI is embedded; an absolute file path is linked, relative
    to ``page_dir`` (the folder the page is written to; None: a ``file:`` URI). A case
    without one gets no picture, and anything else (a URL, a relative path) is ignored. The
    truth box and the predicted point (pixels of the original image, ``case["size"]``) are
    drawn over the picture. A live case shows its episode as a strip of steps, its screenshots linked from the
    files the report names relative to ``files_dir`` (the report folder; default ``page_dir``). Nothing on the
    page refers to a network resource, and every string taken from the report is escaped.
    """
    sources = _sources(pictures or {}, page_dir)
    files_dir = files_dir if files_dir is not None else page_dir
    episodes = files_dir is not None and any(c.get("episode") for c in report["cases"])
    linked = episodes or any(not is_embedded(v) for v in sources.values())
    suite = report["suite"]["name"] or "?"
    spec = report["model"].get("spec") or "?"
    title = f"guitest report: {suite} · {spec}"
    started = report["run"].get("started")
    sub = f"model {spec} · {report['n_results']} of {report['n_selected']} cases" + (f" · {started}" if started else "")
    body = "".join(
        [
            f'<header><h1>{_e(title)}</h1><p class="sub">{_e(sub)}</p></header>',
            _warnings(report),
            _headline(report),
            _tables(report),
            _charts(report),
            _settings(report),
            _missing(report),
            _gallery(report, sources, files_dir, page_dir),
            f"<footer>{_e('Written by guitest ' + report['guitest'] + '. ' + ('This page loads nothing from the network; it shows the screenshots from their files.' if linked else 'This page is self-contained: it loads nothing from the network.'))}</footer>",
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_csp(linked))}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main><script>{JS}</script></body></html>\n"
    )
