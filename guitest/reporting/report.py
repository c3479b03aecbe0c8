"""The run report: a JSON document (``schemas/report.schema.json``), a Markdown summary, terminal tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, Sequence

from .. import __version__, backends, schema
from ..strictjson import dumps, write_text
from ..verdict import REPORT_FIELDS, CaseResult
from . import costs
from .document import Counts, GateRecord, Headline, Report, RunRecord, SelectionRecord, SuiteRecord, Tallies
from .summary import FINISH_WITH_LF, cache_sentence, cache_suffix, gate_failures, not_asked_words, subset_sentence, subset_suffix
from .tallies import LEFT_OUT, aggregate, headline

_KEPT = frozenset(REPORT_FIELDS)


class Scoring(Protocol):
    """What the report asks of a suite's task (a :class:`guitest.tasks.Task` is one): the verdicts its accuracy
    leaves out, its own metrics over the cases, its headline, and how its metrics read as text. The task's side
    of the report, handed in, so the report side imports no task."""

    left_out: frozenset[str]

    def summarize(self, cases: list[CaseResult]) -> dict[str, Any] | None: ...

    def headline(self, agg: Tallies, task_metrics: dict[str, Any] | None, average: str, macro_over: str | None) -> Headline: ...

    def summary_lines(self, metrics: dict[str, Any]) -> list[str]: ...


def build(
    *,
    suite: SuiteRecord,
    model: dict[str, Any],
    results: list[CaseResult],
    n_selected: int,
    missing: list[str],
    tags: list[str],
    cross: list[list[str]],
    average: str = "micro",
    macro_over: str | None = None,
    gate: GateRecord,
    run: RunRecord,
    task: Scoring | None = None,
    selection: SelectionRecord | None = None,
) -> Report:
    """The tallied part of one suite's report: its cases, tables and headline around ``gate`` and ``run`` (the
    report is made whole, gated and final by :func:`guitest.reporting.builder.suite_report`, which every report goes
    through). Everything but ``run`` depends only on the results, not on their order; ``selection``, which part of the
    suite they are (the builder decides it)."""
    cases = [_report_fields(r) for r in sorted(results, key=lambda r: r["id"])]
    agg = aggregate(cases, tags, cross, task.left_out if task is not None else LEFT_OUT)
    metrics = task.summarize(cases) if task is not None else None
    spent = costs.record(cases, tags, suite.get("task") == "live")
    return {
        "guitest": __version__,
        "suite": suite,
        "model": model,
        "n_selected": n_selected,
        **({"selection": selection} if selection is not None else {}),  # type: ignore[typeddict-item]  # beside n_selected, when given
        "n_results": len(cases),
        "complete": not missing,
        "missing": sorted(missing),
        "overall": agg["overall"],
        "breakdown": agg["breakdown"],
        "macro": agg["macro"],
        "notes": agg["notes"],
        "headline": task.headline(agg, metrics, average, macro_over) if task is not None else headline(agg, average, macro_over),
        "gate": gate,
        "cases": cases,
        "run": run,
        **({"task_metrics": metrics} if metrics is not None else {}),  # type: ignore[typeddict-item]  # after the run, when the task has its own
        **({"usage": spent} if spent is not None else {}),  # type: ignore[typeddict-item]  # ... and when the calls were tallied
    }


def _report_fields(result: CaseResult) -> CaseResult:
    """The fields of a result the report keeps (thumbnails and cache counts stay out); the result itself when it has no others."""
    extra = result.keys() - _KEPT
    if not extra:
        return result
    case = result.copy()
    for key in extra:
        del case[key]  # type: ignore[misc]  # a transient field of CaseResult, or one a Python test's result added
    return case


def merge_previous(previous: Report, results: list[CaseResult], selected: list[str]) -> tuple[list[CaseResult], list[str]]:
    """Fold a re-run (``--lf``) into the previous report: new results replace old ones by case id.

    Returns the merged results and selected case ids, so the report covers the whole
    suite again once the errored cases have been re-run.
    """
    by_id = {case["id"]: case for case in previous["cases"]}
    by_id.update((r["id"], r) for r in results)
    ids = set(selected) | set(by_id) | set(previous["missing"])
    return list(by_id.values()), sorted(ids)


def validate(report: Report) -> list[str]:
    """Schema problems of a report (empty when it is valid). A valid report is checked by the predicate generated
    from the schema (0.3 s for 100,000 cases, where jsonschema takes 10 s); only an invalid one goes through
    jsonschema, for the messages."""
    if schema.fast_check("report")(report):
        return []
    return [f"{f or '(top level)'}: {m}" for f, m in schema.iter_problems("report", report)]


def json_text(report: Report) -> str:
    """The report as strict JSON (:func:`guitest.strictjson.dumps`), one line."""
    # no indent: the C encoder only serves indent=None (8x faster on 100,000 cases); the .md and .html are for reading
    return dumps(report) + "\n"


def write_json(report: Report, path: Path) -> None:
    """Write the report atomically as strict JSON (:func:`json_text`)."""
    write_text(path, json_text(report))


def pct(value: float | None) -> str:
    """A fraction as a percentage with one decimal (no sign), '-' when there is none."""
    return "-" if value is None else f"{100 * value:.1f}"


def table_rows(report: Report) -> list[tuple[str, str, Counts]]:
    """``(breakdown, value, counts)`` rows: overall first, then each breakdown's values in order."""
    rows: list[tuple[str, str, Counts]] = [("overall", "", report["overall"])]
    for name, values in report["breakdown"].items():
        rows.extend((name, value, row) for value, row in values.items())
    return rows


HEADER = ("category", "value", "n", "hit", "acc%", "95% CI", "unparsed", "refused", "trunc", "error")
#: a live suite's columns: episodes, successes, success rate and its interval, mean score, and what was left out
LIVE_HEADER = ("category", "value", "n", "success", "SR%", "95% CI", "mean score", "unsure", "error")


def is_live(report: Report) -> bool:
    """Whether the report is of a live suite (episodes, scored by their environment)."""
    return report["suite"]["task"] == "live"


def _header(report: Report) -> tuple[str, ...]:
    """The table's columns: a live suite's own; else an ``unsure`` column only where a judge said unsure."""
    if is_live(report):
        return LIVE_HEADER
    return HEADER[:-1] + ("unsure", "error") if _has_unsure(report) else HEADER


def _has_unsure(report: Report) -> bool:
    return bool(report["overall"].get("unsure"))


def score3(value: Any) -> str:
    """A score to three decimals, '-' when there is none."""
    return "-" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.3f}"


def _cells(name: str, value: str, row: Counts, unsure: bool = False, live: bool = False) -> tuple[str, ...]:
    lo, hi = row["ci95"]
    ci = "-" if row["accuracy"] is None else f"{100 * lo:.1f}-{100 * hi:.1f}"
    if live:
        return (name, value, str(row["n"]), str(row["hit"]), pct(row["accuracy"]), ci, score3(row.get("mean_score")), str(row.get("unsure", 0)), str(row["error"]))
    extra = (str(row.get("unsure", 0)),) if unsure else ()
    return (name, value, str(row["n"]), str(row["hit"]), pct(row["accuracy"]), ci, str(row["unparsed"]), str(row["refused"]), str(row["truncated"]), *extra, str(row["error"]))


def table_cells(report: Report) -> list[tuple[str, ...]]:
    """The overall and per-category table as rows of text cells, the header first (the report's own columns)."""
    unsure, live = _has_unsure(report), is_live(report)
    return [_header(report)] + [_cells(*r, unsure=unsure, live=live) for r in table_rows(report)]


def reading_note(report: Report) -> str:
    """How to read the table's rates."""
    if is_live(report):
        return (
            "Success rate = successes / (n - unsure - error): episodes no check of guitest's decided (unsure: for the judge) "
            "and errored episodes are left out and shown apart; mean score = the mean of the decided episodes' scores. 95% CI: Wilson."
        )
    return "Accuracy = hit / (n - error); unparsed, refused and truncated replies count as wrong; errors are excluded and shown apart."


def align_table(cells: Sequence[tuple[str, ...]], left: tuple[int, ...] = (0, 1)) -> list[str]:
    """Plain-text lines of a table whose first row is the header: columns in ``left`` left-aligned, the rest right-aligned."""
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = []
    for i, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if j in left else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def text_table(report: Report, task_lines: Sequence[str] = ()) -> list[str]:
    """The overall and per-category table as aligned plain-text lines; ``task_lines``: the task's own metrics as it
    prints them (:meth:`Scoring.summary_lines`)."""
    lines = align_table(table_cells(report))
    lines += repeat_lines(report)
    lines += task_lines
    lines.append(headline_line(report))
    macro = {k: v for k, v in report["macro"].items() if v is not None}
    if macro and not is_live(report):
        lines.append("macro average (mean of the values' accuracies): " + ", ".join(f"{k} {pct(v)}%" for k, v in macro.items()))
    if report["notes"]:
        lines.append("notes: " + ", ".join(f"{k} x{v}" for k, v in report["notes"].items()))
    return lines


def repeat_lines(report: Report) -> list[str]:
    """With --repeats: per category, avg@k, pass@k, the spread of accuracy across runs and the flaky share."""
    if "repeats" not in report["overall"]:
        return []
    k = report["overall"]["repeats"]["k"]
    header = ("category", "value", "cases", f"avg@{k}%", f"pass@{k}%", "std across runs", "flaky%")
    cells = [header]
    for name, value, row in table_rows(report):
        rep = row.get("repeats")
        if rep is None:
            continue
        std = rep["std_across_runs"]
        pass_k = rep.get(f"pass@{rep['k']}")  # pass@1..k: keys named by k
        cells.append((name, value, str(rep["cases"]), pct(row["accuracy"]), pct(pass_k if isinstance(pass_k, (int, float)) else None), "-" if std is None else f"{100 * std:.1f}", pct(rep["flaky"])))
    overall = report["overall"]["repeats"]
    flips = overall.get("flip_rate")
    intro = f"repeats: {k} attempts per case; accuracy above is avg@{k}, its interval over cases; pass@k {overall['pass_estimator']}" + (
        f"; a case's verdict flips between two runs {pct(flips)}% of the time" if flips is not None else ""
    )
    return [intro] + align_table(cells)


def task_lines(report: Report, task: Scoring | None) -> list[str]:
    """The task's own metrics (P/R/F1, weighted scores, agreement, ...) as its module prints them."""
    metrics = report.get("task_metrics")
    return task.summary_lines(metrics) if metrics and task is not None else []


def headline_line(report: Report) -> str:
    """One line: the suite's declared headline average first, the other beside it, each named."""
    h = report["headline"]
    if h.get("figure") == "mean_score":
        return f"headline: mean score {score3(h['accuracy'])} (the suite's headline, the figure its benchmark reports); success rate {pct(h.get('success_rate'))}%"
    if h.get("figure") == "success_rate":
        lo, hi = h.get("ci95") or (0, 0)
        return f"headline: success rate {pct(h['accuracy'])}% (95% CI {pct(lo)}-{pct(hi)}; the suite's headline, the figure its benchmark reports); mean score {score3(h.get('mean_score'))}"
    if h["average"] == "macro":
        return f"headline: {pct(h['accuracy'])}% macro over {h['over']} (the suite's declared headline); micro {pct(h['micro'])}%"
    return f"headline: {pct(h['accuracy'])}% micro (the suite's declared headline)" + (f"; macro over {h['over']} {pct(h['macro'])}%" if h.get("over") else "")


def md_cell(text: str) -> str:
    """Text safe in one Markdown table cell: no line break (a tag value could start a heading), ``|`` and ``\\`` escaped."""
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split())


def markdown(report: Report, task_lines: Sequence[str] = ()) -> str:
    """A Markdown summary: settings, the table, the gate, the data notes; ``task_lines`` as for :func:`text_table`."""
    model = report["model"]
    out = [
        f"# guitest report: {report['suite']['name']}",
        "",
        f"- model: `{md_cell(model['spec']).replace(chr(96), chr(39))}` ({md_cell(model['adapter'])}, answers in `{model['space']}` coordinates)",
        f"- results: {report['n_results']} of {report['n_selected']} selected cases" + ("" if report["complete"] else " (INCOMPLETE)"),
        f"- guitest {report['guitest']}, data {report['run'].get('data') or '`' + str(report['run'].get('data_root', '')) + '`'}",
    ]
    part = subset_sentence(report)
    if part:
        out.append(f"- **{md_cell(part)}**")
    out += [f"- {md_cell(line)}" for line in backends.run_lines(report["suite"].get("env"), report["run"])]
    cached = cache_sentence(report)
    if cached:
        out.append(f"- **{cached}**")
    down = report["run"].get("unreachable")
    if down:
        out.append(f"- **endpoint {down.get('state', 'unreachable')}**: {down['url']} ({down['reason']}); {down['cases_not_asked']} case(s) not asked (errors): re-run them with `--lf`")
    spent = costs.summary_line(report.get("usage"), report["run"])
    if spent:
        out.append(f"- {md_cell(spent)}")
    stopped = costs.budget_text(report["run"].get("budget") or {})
    if stopped:
        out.append(f"- **budget reached**: {md_cell(stopped)}; {not_asked_words(report)}: {FINISH_WITH_LF}")
    cells = [[md_cell(c) for c in row] for row in table_cells(report)]
    out += ["", "| " + " | ".join(cells[0]) + " |", "|" + "|".join("---" for _ in cells[0]) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    if task_lines:
        out += ["", "```", *task_lines, "```"]
    out.append("")
    out.append(headline_line(report))
    out.append("")
    out.append(reading_note(report))
    gate = report["gate"]
    if gate.get("failures") or gate.get("passed") is not None:
        out += ["", "## Gate", ""]
        out.append("passed" + subset_suffix(report) + cache_suffix(report) if gate.get("passed") else "FAILED: " + gate_failures(report))
        out += [f"- note: {md_cell(note)}" for note in gate.get("notes") or []]
    if report["notes"]:
        out += ["", "## Notes", ""] + [f"- {k}: {v}" for k, v in report["notes"].items()]
    return "\n".join(out) + "\n"
