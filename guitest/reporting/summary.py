"""What a run says about itself in words: the header's lines at its start, each suite's summary at its end.

Plain text from the model, the configuration and each suite's report; the plugin prints it, and the Markdown
and HTML reports take the sentences that say the same thing (the cache's, the gate's) from here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol, Sequence

from .. import __version__, backends
from ..cache import FILENAME
from . import costs
from .gate import unknown_state_line
from ..printable import printable
from ..report_parts import RunnerRecord
from .document import Report

if TYPE_CHECKING:
    from ..cache import Run
    from ..models.base import Model


class HeaderOptions(backends.HeaderOptions, Protocol):
    """The run's options the header says (a :class:`guitest.plan.runconfig.RunConfig` is one): the backends' and the cache."""

    @property
    def cache(self) -> str: ...


@dataclass(frozen=True)
class Line:
    """One line of the terminal summary: its text, drawn as a separator of ``sep`` characters when given, in the
    terminal's ``markup`` (``red``, ``green``, ``yellow``, ``bold``)."""

    text: str
    markup: tuple[str, ...] = ()
    sep: str | None = None


# -- the header ---------------------------------------------------------------------------------


def header_lines(model: "Model | None", config: HeaderOptions, run: "Run | None", cache_folder: Path) -> list[str]:
    """The run header: guitest's version; with a model, its settings as the model uses them, its profile, the
    response cache and the desktop machines; the success rule when ``--success-rule`` is given."""
    lines = [f"guitest {__version__}"]
    found = backends.every()  # each backend asked once: listing them reads the installed packages' entry points
    if model is not None:
        described = model.describe()
        extra = "".join(f", {k} {described[k]}" for k in ("base_url", "api_key") if k in described)
        s = model.settings  # a --model-config may have changed them
        shown = [
            ("temperature", f"temperature {s.temperature:g}"),
            ("max_tokens", f"max tokens {s.max_tokens}"),
            ("timeout", f"timeout {s.timeout:g} s"),
            ("retries", f"retries {s.retries}"),
            ("seed", f"seed {s.seed}"),
            ("concurrency", f"concurrency {s.concurrency}"),
        ]
        used = model.uses
        lines.append(
            f"guitest model: {described['spec']} ({described['adapter']}{extra}); "
            + ", ".join(text for name, text in shown if (used is None and name != "seed") or (used is not None and name in used))
        )
        profile = model.profile
        sizing = profile.sizing
        size_rule = (
            f"smart_resize(factor {sizing.factor}, min_pixels {s.min_pixels or sizing.min_pixels}, max_pixels {s.max_pixels or sizing.max_pixels})"
            if sizing.kind == "smart_resize"
            else f"as is{f', at most {s.max_pixels} pixels' if s.max_pixels else ''}{f', at least {s.min_pixels} pixels' if s.min_pixels else ''}"
        )
        lines.append(
            f"guitest profile: {profile.name} ({model.profile_reason}): answers in {profile.space} coordinates, "
            f"read as {', '.join(style for style, _ in profile.styles)}; screenshots sent {size_rule}"
            + (f", at most {s.max_image_bytes} bytes" if s.max_image_bytes else "")
            + (" (by the model server's processor: files sent as they are, --resize=auto)" if described.get("image_sizing") else "")
        )
        cache_line = cache_header(model, config.cache, run, cache_folder)
        if cache_line:
            lines.append(cache_line)
            lines += running_lines(run, config.cache, cache_folder)
        lines += backends.machines_lines(config, found)
    lines += backends.option_lines(config, found)
    return lines


def cache_header(model: "Model", mode: str, run: "Run | None", cache_folder: Path) -> str | None:
    """The header's line on the response cache: off, reused, or a fresh run (and the run it resumes); None for a model
    that costs nothing."""
    if not model.cacheable:
        return None
    if mode == "off":
        return "guitest cache: off: every case asks the model"
    where = cache_folder / FILENAME
    if run is not None and run.resumes:
        r = run.resumes
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["started"]))
        return f"guitest cache: {mode}: this run resumes run {r['id']} (started {started}; {r['why']}): the replies it recorded in {where} are read back, not asked again"
    if mode in ("on", "read"):
        return f"guitest cache: {mode}: replies recorded by earlier runs of this model, endpoint and settings in {where} are REUSED, not asked again"
    return f"guitest cache: {mode}: a fresh run{f' (run {run.id})' if run else ''}: every case asks the model; replies are stored in {where} (read back only when this run is resumed)"


def running_lines(run: "Run | None", mode: str, cache_folder: Path) -> list[str]:
    """The header's lines on the runs of the same model and settings that were running on this cache when this run
    started: passed over (neither resumed nor read), and what to do instead."""
    if run is None:
        return []
    where = cache_folder / FILENAME
    out = []
    for other in run.running:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(other["started"]))
        process = f"process {other['pid']}, " if other.get("pid") else ""
        out.append(
            f"guitest cache: {mode}: run {other['id']} of this model, endpoint and settings is running now on {where} ({process}started {started}): "
            "this run neither resumes it nor reads any of its replies. To resume it instead, wait until it ends (or stop it) and run again; "
            "to run both at once, give each its own --cache-dir and --report-dir (both write <report-dir>/<suite>.*)"
        )
    return out


# -- sentences the terminal and the reports share ------------------------------------------------


def cache_sentence(report: Report) -> str | None:
    """One sentence saying that (and how much of) the result came from the response cache, where and when those
    replies were recorded; None when no reply came from it."""
    cache = report["run"].get("cache")
    attempts = cache.get("attempts_answered_from_cache", 0) if cache else 0
    if not cache or not attempts:
        return None
    recorded = cache.get("recorded") or {}
    when = f", recorded {recorded['first']}" + (f" to {recorded['last']}" if recorded.get("last") != recorded.get("first") else "") if recorded else ""
    runs = cache.get("recorded_by_runs") or []
    by = f" by run {', '.join(runs)}" if runs else ""
    return (
        f"{cache.get('cases_answered_from_cache', attempts)} of {report['n_results']} case(s) answered from the response cache "
        f"({attempts} attempt(s); --cache={cache.get('mode')}; {cache.get('path')}{when}{by}), not asked of the model in this run"
    )


def subset_sentence(report: Report) -> str | None:
    """One sentence saying that the report covers part of its suite: how many of its cases, and what chose them (--limit,
    -k, -m, --shard, ...); None for a report of the whole suite, or one that does not record its selection."""
    part = subset_part(report)
    return f"SUBSET: {part}: its figures are not the whole suite's" if part else None


def subset_part(report: Report) -> str | None:
    """``N of the suite's M cases (what chose them)`` for a report of part of its suite; None otherwise (:func:`subset_sentence`)."""
    selection = report.get("selection")
    if not selection or not selection.get("subset"):
        return None
    total = selection.get("n_suite")
    how = []
    limit = selection.get("limit")
    if limit:
        how.append(f"--limit={limit['n']}: spread over {', '.join(limit['strata']) or 'one category'}, seed {limit['seed']}")
    how += selection.get("by") or []
    if report["run"].get("shard"):
        how.append(f"--shard={report['run']['shard']}")
    what = f"{report['n_selected']} of the suite's {total} cases" if total is not None else f"{report['n_selected']} selected cases (the suite's total is not known)"
    return what + (f" ({'; '.join(how)})" if how else "")


def subset_suffix(report: Report) -> str:
    """`` on a SUBSET (N of the suite's M cases)`` for the gate's line of a report of part of its suite, else nothing."""
    selection = report.get("selection")
    if not selection or not selection.get("subset"):
        return ""
    total = selection.get("n_suite")
    return f" on a SUBSET ({report['n_selected']} of the suite's {total} cases)" if total is not None else f" on a SUBSET ({report['n_selected']} selected cases)"


def cache_note(report: Report) -> str:
    """The short form for the gate's line: how many cases the cache answered, and from when."""
    cache = report["run"].get("cache")
    recorded = (cache.get("recorded") if cache else None) or {}
    since = f" recorded from {recorded['first']}" if recorded else ""
    return f"{cache.get('cases_answered_from_cache', 0) if cache else 0} of {report['n_results']} cases answered from the response cache{since}"


def gate_failures(report: Report) -> str:
    """The gate's failures in one sentence, with how many cases the cache answered when it answered any."""
    return "; ".join(report["gate"].get("failures", [])) + cache_suffix(report)


def cache_suffix(report: Report) -> str:
    """`` (N of M cases answered from the response cache ...)`` when the cache answered any case, else nothing."""
    return f" ({cache_note(report)})" if cache_sentence(report) else ""


def describe_limits(limits: Mapping[str, Any]) -> str:
    """The gate's thresholds as ``metric >= value`` (overall first, then per category)."""
    metric = limits.get("metric", "accuracy")
    parts = [f"{metric} >= {limits['accuracy']:.4f}"] if limits.get("accuracy") is not None else []
    parts += [f"{k} >= {v:.4f}" for k, v in sorted(limits.get("by", {}).items())]
    return ", ".join(parts)


# -- the end of the run -------------------------------------------------------------------------


def endpoint_down(reports: Iterable[Report]) -> list[Line]:
    """Said once, before pytest's own sections: the endpoint that was unreachable, how many cases were therefore not
    asked, and how many were not run at all (the run stopped early, ``-x``); nothing when every endpoint answered. It is
    the one message of that cause: the suites' summaries then say nothing of their missing cases or their gate."""
    hit = [r for r in reports if endpoint_cause(r)]
    if not hit:
        return []
    downs = [endpoint_cause(r) or {} for r in hit]
    down = downs[0]
    state = down.get("state", "unreachable")
    not_asked = sum(d["cases_not_asked"] for d in downs)
    not_run = sum(len(r["missing"]) for r in hit)
    counts = ([f"{not_asked} case(s) were not asked and are errors"] if not_asked else []) + ([f"{not_run} were not run (the run stopped early)"] if not_run else [])
    what = ", and ".join(counts) + ": start the endpoint (or check --base-url), then " + ("run the same command again." if not_run else "re-run them with --lf.")
    return [
        Line(f"guitest: endpoint {state}", ("red", "bold"), sep="="),
        Line(printable(f"{down['url']} is {state} ({down['reason']})."), ("red", "bold")),
        Line(what),
    ]


def nothing_selected(keyword: str, marker: str, n: int, tags: Iterable[tuple[str, str]]) -> list[Line]:
    """Said when ``-k keyword`` and/or ``-m marker`` left none of the ``n`` guitest cases collected: how -k and -m match,
    with the cases' own keywords (their tag values) and a marker made of one of their ``(tag, value)`` pairs."""
    chosen = " and ".join(part for part in (f"-k {keyword!r}" if keyword else "", f"-m {marker!r}" if marker else "") if part)
    pairs = sorted(tags)
    values = sorted({value for _, value in pairs})
    some = ", ".join(values[:20]) + (", ..." if len(values) > 20 else "")
    example = f', e.g. -m "guitest({pairs[0][0]}={pairs[0][1]!r})"' if pairs else ""
    return [
        Line(
            printable(
                f"guitest: {chosen} selected none of the {n} guitest case(s) collected. -k matches substrings of case ids and of "
                f"keywords, and each tag value of a case is a keyword (here: {some}); -m takes the marker guitest(tag='value'){example}. "
                "List the cases with --collect-only -q"
            ),
            ("yellow", "bold"),
        )
    ]


def endpoint_cause(report: Report) -> dict[str, Any] | None:
    """The endpoint that failed this suite's run (``url``, ``state``, ``reason``, ``cases_not_asked``), or None: the one
    that was unreachable when cases were not asked because of it, or, when the run stopped early (``-x``) before any
    case was turned away, the last of its endpoints when every one of them was taken out."""
    run = report["run"]
    if run.get("unreachable"):
        return dict(run["unreachable"])
    endpoints = run.get("endpoints") or []
    if report["missing"] and endpoints and all(e.get("down") for e in endpoints):
        return {"url": endpoints[-1]["url"], "state": "down", "reason": endpoints[-1]["down"], "cases_not_asked": 0}
    return None


#: how to finish a run its budget stopped, as the summary and the reports say it
FINISH_WITH_LF = "raise the limit (or drop it) and re-run with --lf: it asks only the cases not asked, the others come from the response cache and the report"


def not_asked_words(report: Report) -> str:
    """How many cases a budget left unasked, for a suite's summary and reports: the run's count, and this suite's
    (its cases missing from the report) when the run had other suites' too."""
    run_count = int((report["run"].get("budget") or {}).get("cases_not_asked", 0))
    here = len(report["missing"])
    if run_count == here:
        return f"{here} case(s) not asked, missing from the report"
    return f"{run_count} case(s) of the run not asked ({here} of this suite's, missing from its report)"


def runner_line(record: RunnerRecord) -> str:
    """A live suite's runner in one line, from the report's record of it (:func:`guitest.run.live_case.live_record`'s ``runner``)."""
    return f"runner: {record['name']} ({record['chosen']}), {record['history_images']} earlier screenshot(s) per step: {record['source']}"


def unreported(key: str, reason: str) -> list[Line]:
    """The summary of a suite that got no report, and why."""
    return [Line(f"guitest: {key}: NO REPORT", ("red", "bold"), sep="="), Line(printable(reason), ("red", "bold"))]


def endpoints_line(endpoints: Sequence[Mapping[str, Any]]) -> str:
    """With several endpoints, what each did: ``endpoints: URL 220 replies (0.05 s each), URL 4 replies (1.02 s each,
    rested 1), ...``; empty with one."""
    if len(endpoints) < 2:
        return ""
    parts = []
    for e in endpoints:
        said = [f"{e['latency_s']:g} s each"] if e.get("latency_s") is not None else []
        said += [f"rested {e['rested']}"] if e.get("rested") else []
        said += [f"{e['failures']} failures"] if e.get("failures") else []
        said += ["taken out"] if e.get("down") else []
        parts.append(f"{e['url']} {e['replies']} replies" + (f" ({', '.join(said)})" if said else ""))
    return "endpoints: " + ", ".join(parts)


def suite_summary(
    report: Report,
    key: str,
    table: list[str],
    *,
    baseline: str | None = None,
    baseline_path: str | None = None,
    paths: Iterable[Path] = (),
    kept: list[str] | None = None,
    unsaved: str | None = None,
    uncopied: str | None = None,
) -> list[Line]:
    """A suite's part of the terminal summary: what ran, its ``table`` (:func:`guitest.reporting.report.text_table`), warnings,
    the gate, the comparison with ``--baseline`` (its text) and where the reports went, or ``unsaved``: why they could
    not be written (``uncopied``: why this run's copies of them could not be made)."""
    down = endpoint_cause(report) is not None  # the one cause, said at the top (endpoint_down): not again as missing cases and a failed gate
    out = _what_ran(report, key) + [Line(line) for line in table]
    spent = costs.summary_line(report.get("usage"), report["run"])
    if spent:
        out.append(Line(spent))
    out += _warnings(report, down) + _gate_lines(report, down)
    if baseline is not None:
        out.append(Line(f"compared with --baseline {baseline_path}", sep="-"))
        out += [Line(line) for line in baseline.splitlines()]
    if unsaved is not None:
        out.append(Line(f"guitest: {printable(unsaved)}", ("red", "bold")))
        return out
    return out + _where_written(report, paths, kept, uncopied)


def _what_ran(report: Report, key: str) -> list[Line]:
    """The summary's head: the suite, the model, the data, the runner, the backend's settings and run fields, the part
    of the suite and the cache's share, the endpoints' shares."""
    out = [Line(f"guitest: {report['suite']['name']} ({key})", sep="="), Line(f"model {report['model']['spec']}: {report['n_results']} results of {report['n_selected']} selected cases")]
    run = report["run"]
    if run.get("data"):
        out.append(Line(f"data: {run['data']}"))
    if report["suite"].get("runner"):
        out.append(Line(runner_line(report["suite"]["runner"])))
    env = report["suite"].get("env")  # a live suite's backend: its settings in force, and the fields it added to the run
    out += [Line(text) for text in backends.settings_lines(env, report["suite"])]
    out += [Line(text) for text in backends.run_lines(env, run)]
    part = subset_sentence(report)
    if part:
        out.append(Line(part, ("yellow", "bold")))
    cached = cache_sentence(report)
    if cached:
        out.append(Line(cached, ("yellow", "bold")))
    shares = endpoints_line(run.get("endpoints") or [])
    if shares:
        out.append(Line(shares))
    return out


def _warnings(report: Report, down: bool) -> list[Line]:
    """The lines that say the figures are not the whole story: the budget reached or cases missing (not when the endpoint
    was ``down``: that is said at the top), coordinates that look normalized, machines of unknown state."""
    out = []
    stopped = costs.budget_text(report["run"].get("budget") or {})
    if stopped:
        out.append(Line(f"BUDGET REACHED: {stopped}: {not_asked_words(report)} (exit status 13); {FINISH_WITH_LF}", ("red", "bold")))
    elif not report["complete"] and not down:
        shown = ", ".join(report["missing"][:5]) + (" ..." if len(report["missing"]) > 5 else "")
        out.append(
            Line(
                f"INCOMPLETE: {report['n_selected'] - report['n_results']} selected case(s) produced no result (a worker crashed or the run stopped early): {shown}. Re-run them with --lf.",
                ("red", "bold"),
            )
        )
    suspicious = report["notes"].get("coordinates_look_normalized", 0)
    if suspicious:
        out.append(
            Line(
                f"warning: {suspicious} answer(s) gave coordinates within [0, 1] although profile {report['model']['profile']['name']} "
                f"reads {report['model']['space']} coordinates: if the model answers normalized points, pass --model-profile "
                "(e.g. generic) so they are not scored as pixels near the top-left corner",
                ("yellow",),
            )
        )
    unknown = unknown_state_line(report)
    if unknown:
        out.append(Line(f"warning: {unknown}", ("yellow",)))
    return out


def _gate_lines(report: Report, down: bool) -> list[Line]:
    """The gate's notes and verdict (a failure not said when the endpoint was ``down``), and schema problems."""
    gate = report["gate"]
    out = [Line(f"gate note: {note}", ("yellow",)) for note in gate["notes"]]
    if gate["failures"] and not down:
        out.append(Line("GATE FAILED: " + gate_failures(report), ("red", "bold")))
    elif gate["passed"]:
        part = subset_suffix(report)
        out.append(Line(f"gate passed{part}: " + describe_limits(gate["thresholds"]) + cache_suffix(report), ("yellow",) if part else ("green",)))
    out += [Line(f"guitest bug: the report does not match its schema: {problem}", ("red",)) for problem in report.get("schema_problems", [])]
    return out


def _where_written(report: Report, paths: Iterable[Path], kept: list[str] | None, uncopied: str | None) -> list[Line]:
    """Where the reports went, why this run's copies could not be made (``uncopied``), and the copies ``kept``."""
    out = [Line("reports: " + ", ".join(str(p) for p in paths))]
    if uncopied is not None:
        out.append(Line(f"warning: {printable(uncopied)}", ("yellow",)))
    if kept:
        out.append(Line("kept: " + ", ".join(kept) + " (each run's reports under runs/; *.passed.* is the last run that passed)"))
        if report["gate"].get("passed") is None and any(k.endswith(".passed.*") for k in kept):
            out.append(
                Line(
                    "note: this run has no gate, so it passed by finishing without errors, whatever its score, and *.passed.* is now this "
                    "run; give the suite a gate: (or --min-accuracy) to keep *.passed.* for runs that meet it",
                    ("yellow",),
                )
            )
    return out
