"""The page ``guitest compare OLD NEW --html PAGE`` writes: what changed between two runs, case by case.

At the top, the comparison as the command prints it (who was compared, what differs between the runs' manifests, the
table and its statistics); then every flipped case (:func:`guitest.reporting.compare.flipped`), by kind, each a
closed ``<details>`` that shows, when opened:

- a grounding case: both runs' predicted points and the truth box drawn on the one screenshot (the new run's; the old
  run's point too when its screenshot had the same size), and the numbers and replies in a table. The screenshot is
  the one the run's own HTML report shows for the case (its viewer index beside the JSON report), else the file named
  by the case's ``image`` under the run's data folder; when neither is found the page says so and shows the numbers.
- a live case: both episodes' steps side by side (each step's actions, reply and screenshot), with the first step
  where they diverge marked. Two steps diverge when the actions they ran differ (compared as the report records
  them: guitest's actions, or, when either side is a published OSWorld run, the ``traj.jsonl`` action each side's
  step ran, guitest's written as :func:`guitest.published.runs.osworld_steps` writes them); an episode that has no
  step where the other has one diverges there. The replies' words are not compared.

A published OSWorld folder on either side shows its steps and screenshots from each task's ``traj.jsonl``.

The page is one HTML file with no script, its style the HTML report's own (``viewer/viewer.css``) and a few rules of
its own, and a Content-Security-Policy that allows no script and no image but files and ``data:`` URIs. Screenshots
are linked by paths relative to the page (as the HTML report links them): move the page with the reports, or the
reports with it. Images load only when their case is opened (``loading="lazy"`` inside a closed ``<details>``); the
text is all on the page (5,000 grounding flips: 5.4 MB, about 2 s to show in Chromium; 1,000 live flips of 15 steps:
15 MB, about 5 s). Every string from a report is HTML-escaped.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from .. import strictjson
from ..errors import GuitestError
from ..verdict import CaseResult
from . import viewer_data
from .document import Report
from .html import asset
from .thumbnails import is_embedded, link

#: the most files searched under a run's data folder for a screenshot by name (a data set's images, not a disk)
MAX_DATA_FILES = 200_000

STYLE = """
.flip{border:1px solid var(--line);border-radius:8px;margin:6px 0;padding:4px 10px}
.flip>summary{cursor:pointer;display:flex;flex-wrap:wrap;gap:8px;align-items:center;padding:4px 0}
.flip>summary .id{font-weight:600;word-break:break-all}
.flip>summary .instr{color:var(--mute)}
.cmp-shot{position:relative;display:inline-block;max-width:100%;margin:8px 0;line-height:0}
.cmp-shot img{max-width:100%;max-height:80vh;display:block}
.cmp-shot svg{position:absolute;left:0;top:0;width:100%;height:100%;overflow:visible}
.cmp-shot .truth{fill:none;stroke:#1a7f37;stroke-width:2}
.cmp-shot .old{fill:none;stroke:#d4380d;stroke-width:3}
.cmp-shot .new{fill:none;stroke:#2f6fdf;stroke-width:3}
.k-old{color:#d4380d;font-weight:700}.k-new{color:#2f6fdf;font-weight:700}.k-truth{color:#1a7f37;font-weight:700}
table.cmp{width:100%;border-collapse:collapse;margin:8px 0;table-layout:fixed}
table.cmp th,table.cmp td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top;word-break:break-word}
table.cmp th.n{width:7.5em}
table.cmp tr.diverge{background:#fff4e5;outline:2px solid var(--amber)}
table.cmp .mark{color:var(--amber);font-weight:700;display:block}
table.cmp img{max-width:100%;max-height:240px;display:block;margin:4px 0}
.missing{color:var(--miss)}
"""

TITLE = "guitest compare: what changed"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _hash(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# -- where a grounding case's screenshot is ----------------------------------------------------------------------------


class Screenshots:
    """The screenshots of one run's cases, found as the run's own HTML report shows them (the viewer index beside the
    JSON report ``report_path``: ``<stem>.html`` and its data folder), else by the case's ``image`` name under the
    run's data folder (the report's ``run.data``). Each is looked up once, when first asked for."""

    def __init__(self, report: Report, report_path: Path) -> None:
        self.report = report
        self.report_path = report_path
        self._index: tuple[dict[str, str], Path] | None = None
        self._by_name: dict[str, list[str]] | None = None

    def find(self, case: CaseResult) -> str | None:
        """The case's screenshot: an absolute path to an existing file, a ``data:image/`` URI, or None."""
        pictures, page_dir = self._viewer()
        found = pictures.get(str(case.get("id")))
        if found is not None:
            return found
        name = case.get("image")
        if isinstance(name, str) and name:
            paths = self._data_files().get(os.path.basename(name), [])
            if len(paths) == 1:
                return paths[0]
        return None

    def _viewer(self) -> tuple[dict[str, str], Path]:
        if self._index is None:
            self._index = ({}, self.report_path.parent)
            page = self.report_path.with_suffix(".html")
            index = _viewer_index(page)
            if index is not None:
                self._index = (_pictures(index, page), page.parent)
        return self._index

    def _data_files(self) -> dict[str, list[str]]:
        if self._by_name is None:
            self._by_name = {}
            folder = str(self.report["run"].get("data") or "").split(" (", 1)[0]
            if folder and os.path.isabs(folder) and os.path.isdir(folder):
                seen = 0
                for root, _, names in os.walk(folder):
                    for name in names:
                        self._by_name.setdefault(name, []).append(os.path.join(root, name))
                    seen += len(names)
                    if seen > MAX_DATA_FILES:
                        break
        return self._by_name


_DATA_META = re.compile(rb'<meta name="guitest-data" content="([^"]*)"')
_INLINE_INDEX = re.compile(r'<script type="application/json" id="gv-index">(.*?)</script>', re.S)
_JS_ESCAPE = re.compile(r"\\(['\\])")


def _viewer_index(page: Path) -> dict[str, Any] | None:
    """The viewer index of the HTML report ``page`` (:mod:`~guitest.reporting.viewer_data`): from its data folder's
    ``index.js``, or carried in the page; None when there is none or it cannot be read."""
    try:
        with open(page, "rb") as f:
            head = f.read(64 << 10)
            found = _DATA_META.search(head)
            if found is None:
                text = (head + f.read()).decode("utf-8", "replace")
                inline = _INLINE_INDEX.search(text)
                return _object(inline.group(1), page) if inline else None
        base = urllib.parse.unquote(html.unescape(found.group(1).decode("utf-8", "replace")))
        script = (page.parent / base / "index.js").read_text("utf-8", errors="replace")
    except OSError:
        return None
    start, end = script.find("JSON.parse('"), script.rfind("'));")
    if start < 0 or end < start:
        return None
    return _object(_JS_ESCAPE.sub(r"\1", script[start + len("JSON.parse('") : end]), page)


def _object(text: str, page: Path) -> dict[str, Any] | None:
    try:
        value = strictjson.loads(text, str(page))
    except strictjson.UnreadableJSON:
        return None
    return value if isinstance(value, dict) else None


def _pictures(index: Mapping[str, Any], page: Path) -> dict[str, str]:
    """Each case's picture in a viewer index, as an absolute path of an existing file or a ``data:image/`` URI."""
    given = index.get("pictures")
    pictures: list[Any] = given if isinstance(given, list) else []
    resolved: dict[int, str | None] = {}
    out: dict[str, str] = {}
    for entry in index.get("cases") or ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("p"), int) or not 0 <= entry["p"] < len(pictures):
            continue
        number = entry["p"]
        if number not in resolved:
            sources = pictures[number] if isinstance(pictures[number], list) else [pictures[number]]
            resolved[number] = next((p for p in (_source(s, page) for s in sources) if p is not None), None)
        if resolved[number] is not None:
            out[str(entry.get("id"))] = str(resolved[number])
    return out


def _source(src: Any, page: Path) -> str | None:
    """A viewer picture source (relative to ``page``, ``@name`` in its data folder, ``file:``, ``data:``) as an
    absolute path of an existing file or a ``data:image/`` URI; None for anything else."""
    if not isinstance(src, str) or not src:
        return None
    if is_embedded(src):
        return src
    if src.startswith("@"):
        index = _viewer_folder(page)
        path = index / src[1:] if index is not None else None
    elif src.startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlparse(src).path))
    elif ":" in src.split("/", 1)[0]:
        return None  # a URL: the page loads nothing from elsewhere
    else:
        path = page.parent / urllib.parse.unquote(src)
    return str(path.resolve()) if path is not None and path.is_file() else None


def _viewer_folder(page: Path) -> Path | None:
    try:
        with open(page, "rb") as f:
            found = _DATA_META.search(f.read(64 << 10))
    except OSError:
        return None
    if found is None:
        return None
    return page.parent / urllib.parse.unquote(html.unescape(found.group(1).decode("utf-8", "replace")))


def _src(picture: str, page_dir: Path) -> str | None:
    """How the page shows a picture :class:`Screenshots` found: a ``data:`` URI as it is, a file by its link."""
    return picture if is_embedded(picture) else link(picture, page_dir)


class Published(Protocol):
    """How the page reads a published OSWorld run's steps (:mod:`guitest.published.runs`, which the command line passes:
    the reporting package never imports it, it imports the reporting package)."""

    def osworld_task(self, report: Report, case: Mapping[str, Any]) -> Path | None: ...

    def osworld_trajectory(self, task: Path) -> list[dict[str, Any]]: ...

    def osworld_steps(self, episode: Mapping[str, Any], start: datetime) -> list[tuple[dict[str, Any], str | None]]: ...


# -- one run's episode as steps ----------------------------------------------------------------------------------------


class Side:
    """One run of the comparison: its report, where it was read from, and how its cases' pictures and steps are found."""

    def __init__(self, name: str, report: Report, path: Path, page_dir: Path, published: Published | None = None) -> None:
        self.name = name
        self.published = published
        self.report = report
        self.path = path
        self.page_dir = page_dir
        self.cases = {str(c["id"]): c for c in report["cases"]}
        self.osworld = report["suite"].get("format") == "osworld_results"
        self.screenshots = Screenshots(report, path)
        self.links = viewer_data.Links(page_dir, path.parent if path.is_file() else path, as_files=False)

    def steps(self, case: CaseResult, osworld_form: bool) -> list[dict[str, Any]]:
        """The case's episode as steps: ``n``, ``actions`` (words), ``key`` (what divergence compares: the actions, in
        OSWorld's form when ``osworld_form``), ``reply``, ``src`` and ``thumb`` (links; None without)."""
        if self.osworld:
            task = self.published.osworld_task(self.report, case) if self.published is not None else None
            try:
                lines = self.published.osworld_trajectory(task) if self.published is not None and task is not None else []
            except GuitestError:  # a traj.jsonl that cannot be read: no steps shown
                lines = []
            out = []
            for step in lines:
                shot = link(step["screenshot"], self.page_dir) if step["screenshot"] else None
                out.append({"n": step["n"], "actions": [_code(a) for a in step["actions"]], "key": [_key(a) for a in step["actions"]], "reply": step["response"], "src": shot, "thumb": shot})
            return out
        holder = _episode_holder(case)
        if holder is None:
            return []
        shown = viewer_data.episode(holder, self.links, None, 0)["steps"]
        record = holder["episode"]
        raw = [s for s in record.get("trajectory") or () if isinstance(s, Mapping)]
        keys: list[list[str]]
        if osworld_form and self.published is not None:
            by_step: dict[int, list[str]] = {}
            try:
                for line, _ in self.published.osworld_steps(record, datetime(1970, 1, 1)):
                    by_step.setdefault(int(line["step_num"]), []).append(_key(line["action"]))
                keys = [by_step.get(int(s.get("number") or i), []) for i, s in enumerate(raw, 1)]
            except (ValueError, TypeError, OverflowError):  # an episode recorded oddly: compared in guitest's form
                keys = [[_key(dict(a)) for a in _ran(s)] for s in raw]
        else:
            keys = [[_key(dict(a)) for a in _ran(s)] for s in raw]
        steps = []
        for i, (recorded, shown_step) in enumerate(zip(raw, shown, strict=True)):
            steps.append(
                {
                    "n": shown_step["n"],
                    "actions": [_action_words(a) for a in _ran(recorded)] or [shown_step["read"]],
                    "key": keys[i],
                    "reply": shown_step.get("reply"),
                    "src": shown_step.get("src"),
                    "thumb": shown_step.get("thumb") or shown_step.get("src"),
                }
            )
        return steps


def _episode_holder(case: CaseResult) -> Mapping[str, Any] | None:
    """The case, or its first attempt with an episode (--repeats), whichever holds the episode shown."""
    if isinstance(case.get("episode"), Mapping):
        return case
    for attempt in case.get("attempts") or ():
        if isinstance(attempt, Mapping) and isinstance(attempt.get("episode"), Mapping):
            return attempt
    return None


def _ran(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    actions = viewer_data.step_actions(step)
    executed = step.get("executed")
    return actions[:executed] if isinstance(executed, int) and not isinstance(executed, bool) else actions


def _key(action: Any) -> str:
    try:
        return json.dumps(action, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(action)


def _code(action: Any) -> str:
    return action if isinstance(action, str) else _key(action)


def _action_words(action: Mapping[str, Any]) -> str:
    """An action in a line: its kind, then its other fields (``space`` left out)."""
    rest = " ".join(f"{k}={_code(v)}" for k, v in action.items() if k not in ("kind", "space"))
    return f"{action.get('kind')} {rest}".strip()


def divergence(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the first step whose actions differ (a step one episode has and the other lacks differs); None
    when both ran the same actions step for step."""
    for i in range(max(len(old), len(new))):
        if i >= len(old) or i >= len(new) or old[i]["key"] != new[i]["key"]:
            return i
    return None


# -- the page ----------------------------------------------------------------------------------------------------------


def render(result: Mapping[str, Any], text: str, kinds: Sequence[tuple[str, str]], old: Side, new: Side) -> str:
    """The page: the comparison's ``text``, then each flipped case of ``result["flipped"]``, by kind in the order of
    ``kinds`` (name, label) (see the module docstring)."""
    found = result.get("flipped") or {}
    total = sum(len(found.get(kind) or ()) for kind, _ in kinds)
    parts = [
        f'<header><h1>{_e(TITLE)}</h1><p class="sub">old: {_e(old.path)} · new: {_e(new.path)}</p></header>',
        "<h2>The comparison</h2>",
        f'<pre class="text">{_e(text)}</pre>',
        f"<h2>Flipped cases ({total})</h2>",
        '<p class="note">A case flipped when both runs have it and its outcome (a hit, not a hit, an error) changed; a change '
        "between two ways of being wrong is no flip. Open a case for both runs' answers (grounding: both points on its "
        "screenshot) or both episodes' steps side by side, the first step whose actions differ marked.</p>",
    ]
    if total:
        parts.append("<ul>" + "".join(f'<li><a href="#{kind}">{_e(label)}: {len(found.get(kind) or ())}</a></li>' for kind, label in kinds if found.get(kind)) + "</ul>")
    for kind, label in kinds:
        cases = found.get(kind) or []
        if not cases:
            continue
        parts.append(f'<section id="{kind}"><h3>{_e(label)}: {len(cases)}</h3>')
        parts += [_flip(item, old, new) for item in cases]
        parts.append("</section>")
    parts.append(f"<footer>{_e('Written by guitest compare. This page runs no script and loads nothing from the network; it shows the screenshots from their files.')}</footer>")
    css = asset("viewer.css").decode("utf-8")
    csp = f"default-src 'none'; img-src 'self' file: data:; style-src 'sha256-{_hash(css)}' 'sha256-{_hash(STYLE)}'; script-src 'none'; base-uri 'none'; form-action 'none'"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">'
        f"<title>{_e(TITLE)}</title><style>{css}</style><style>{STYLE}</style></head>"
        f"<body><main>{''.join(parts)}</main></body></html>\n"
    )


def _badge(verdict: str) -> str:
    return f'<span class="badge v-{_e(verdict)}">{_e(verdict)}</span>'


def _flip(item: Mapping[str, str], old: Side, new: Side) -> str:
    cid = item["id"]
    o, n = old.cases[cid], new.cases[cid]
    instruction = n.get("instruction") or o.get("instruction") or (n.get("episode") or {}).get("instruction")
    summary = f'<summary>{_badge(item["old"])} → {_badge(item["new"])} <span class="id">{_e(cid)}</span>' + (f' <span class="instr">{_e(instruction)}</span>' if instruction else "") + "</summary>"
    live = old.osworld or new.osworld or _episode_holder(o) is not None or _episode_holder(n) is not None
    body = _live(o, n, old, new) if live else _grounding(o, n, old, new)
    return f'<details class="flip" id="case-{_e(urllib.parse.quote(cid, safe=""))}" data-kind="{"live" if live else "grounding"}">{summary}{body}</details>'


def _fmt_point(value: Any) -> str:
    point = viewer_data._point(value)
    return "–" if point is None else f"({point[0]:g}, {point[1]:g})"


def _fmt_box(value: Any) -> str:
    box = viewer_data._box(value)
    if box is not None:
        return "[" + ", ".join(f"{v:g}" for v in box) + "]"
    return "–" if value is None else viewer_data._fmt(value)


def _grounding(o: CaseResult, n: CaseResult, old: Side, new: Side) -> str:
    """Both runs' answers: their points and the truth on the screenshot, and the numbers and replies."""
    g_new, g_old = viewer_data.geometry(n), viewer_data.geometry(o)
    shot, shot_side = None, None
    for side, case in ((new, n), (old, o)):
        picture = side.screenshots.find(case)
        if picture is not None:
            shot, shot_side = _src(picture, new.page_dir), side
            break
    geometry = g_new or g_old
    out = []
    if geometry is None:
        out.append('<p class="note">No screenshot size in either report: the answers are shown as numbers only.</p>')
    elif shot is None:
        out.append(
            f'<p class="missing">The screenshot was not found (not in the HTML report beside either JSON report, nor under either run\'s data folder as {_e(n.get("image") or o.get("image") or "its file")}): the answers are shown as numbers only.</p>'
        )
    else:
        w, h = geometry[0], geometry[1]
        assert w is not None and h is not None
        r = max(w, h) / 80
        marks = []
        if geometry[2] is not None:
            x1, y1, x2, y2 = geometry[2:6]
            assert x1 is not None and y1 is not None and x2 is not None and y2 is not None
            marks.append(f'<rect class="truth" x="{x1:g}" y="{y1:g}" width="{x2 - x1:g}" height="{y2 - y1:g}" vector-effect="non-scaling-stroke"/>')
        for name, g in (("old", g_old), ("new", g_new)):
            if g is not None and g[6] is not None and g[7] is not None and g[:2] == geometry[:2]:
                marks.append(f'<circle class="{name}" cx="{g[6]:g}" cy="{g[7]:g}" r="{r:g}" vector-effect="non-scaling-stroke"><title>{name} run</title></circle>')
        note = "" if g_old is None or g_new is None or g_old[:2] == g_new[:2] else '<p class="missing">The runs saw screenshots of different sizes: only the new run\'s point is drawn.</p>'
        out.append(
            f'<div class="cmp-shot"><img loading="lazy" src="{_e(shot)}" alt="the screenshot" width="{w:g}" height="{h:g}">'
            f'<svg viewBox="0 0 {w:g} {h:g}" preserveAspectRatio="none" aria-hidden="true">{"".join(marks)}</svg></div>{note}'
            f'<p class="note"><span class="k-old">○ old</span> · <span class="k-new">○ new</span> · <span class="k-truth">▭ truth</span>'
            + (f" (the screenshot of the {shot_side.name} run)" if shot_side is old else "")
            + "</p>"
        )
    rows = []
    for name, case in (("old", o), ("new", n)):
        prediction = case.get("prediction") if isinstance(case.get("prediction"), Mapping) else {}
        reply = case.get("response")
        said = (f"<pre class=reply>{_e(reply)}</pre>" if reply is not None else "") + (f"<pre class=err>{_e(case['error'])}</pre>" if case.get("error") else "")
        rows.append(
            f'<tr><th class="n"><span class="k-{name}">{name}</span></th><td>{_badge(str(case.get("verdict")))}</td>'
            f"<td>{_e(_fmt_point((prediction or {}).get('pixel')))}</td><td>{_e(_fmt_box(case.get('truth')))}</td>"
            f"<td>{said}</td></tr>"
        )
    out.append(
        '<table class="cmp"><thead><tr><th class="n">run</th><th>verdict</th><th>predicted point (pixels)</th><th>truth</th><th>reply</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>"
    )
    return "".join(out)


def _live(o: CaseResult, n: CaseResult, old: Side, new: Side) -> str:
    """Both episodes' steps side by side, the first step where they diverge marked."""
    osworld_form = old.osworld or new.osworld
    a, b = old.steps(o, osworld_form), new.steps(n, osworld_form)
    split = divergence(a, b)
    head = []
    for name, case, steps in (("old", o, a), ("new", n, b)):
        score = case.get("score")
        words = f"{len(steps)} step(s)" + (f", score {score:g}" if isinstance(score, (int, float)) and not isinstance(score, bool) else "")
        error = f" · {case['error']}" if case.get("error") else ""
        head.append(f'<li><span class="k-{name}">{name}</span> {_badge(str(case.get("verdict")))} {_e(words + error)}</li>')
    where = "the episodes ran the same actions at every step" if split is None else f"the first step where they diverge: step {split + 1} (marked)"
    if osworld_form:
        where += "; a published OSWorld run's step shows the screen after its action (traj.jsonl's screenshot_file), a guitest run's the screen its model saw"
    rows = []
    for i in range(max(len(a), len(b))):
        mark = '<span class="mark" title="the first step whose actions differ">first divergence</span>' if i == split else ""
        rows.append(f'<tr{" class=diverge" if i == split else ""}><th class="n">{i + 1}{mark}</th><td>{_cell(a, i)}</td><td>{_cell(b, i)}</td></tr>')
    return (
        f'<ul class="evidence">{"".join(head)}</ul><p class="note">{_e(where)}.</p>'
        '<table class="cmp steps"><thead><tr><th class="n">step</th><th><span class="k-old">old</span></th><th><span class="k-new">new</span></th></tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def _cell(steps: Sequence[Mapping[str, Any]], i: int) -> str:
    if i >= len(steps):
        return '<span class="note">(no such step)</span>'
    step = steps[i]
    out = [f'<div class="act">{_e("; ".join(step["actions"]) or "(no action)")}</div>']
    if step.get("src"):
        out.append(f'<a href="{_e(step["src"])}"><img loading="lazy" src="{_e(step.get("thumb") or step["src"])}" alt="the screen of step {_e(step["n"])}"></a>')
    if step.get("reply") is not None:
        out.append(f"<pre class=reply>{_e(step['reply'])}</pre>")
    return "".join(out)


def write(page: Path, result: Mapping[str, Any], text: str, kinds: Sequence[tuple[str, str]], old: Report, new: Report, old_path: Path, new_path: Path, published: Published | None = None) -> None:
    """Write the page of the comparison ``result`` of ``old`` (read from ``old_path``) and ``new`` to ``page``, its
    ``text`` at the top and its flips by ``kinds`` (:data:`guitest.reporting.compare.FLIPS`)
    (atomically; its folder made); OSError when it cannot be written. ``published`` reads a published OSWorld run's
    steps (:mod:`guitest.published.runs`); without it such a run's episodes show no step."""
    page_dir = page.resolve().parent
    page_dir.mkdir(parents=True, exist_ok=True)
    html_text = render(result, text, kinds, Side("old", old, old_path.resolve(), page_dir, published), Side("new", new, new_path.resolve(), page_dir, published))
    strictjson.write_text(page, html_text)
