"""A report in the schema of the grounding leaderboard (GUI-Agent/grounding-leaderboard, ``results/screenspot_pro.json``
and ``results/screenspot_v2.json``, read at commit ef17af0): one entry ``{MODEL: {"link", "description", "results"}}``
whose figures are fractions 0-1, so a run is submitted, or set beside a leaderboard row field by field.

- ScreenSpot-Pro: ``results.group`` (Dev, Creative, CAD, Scientific, Office, OS) and ``results.application`` (26
  applications), each ``{"icon", "text", "avg"}``, and ``results.overall`` the same over every case: ``avg`` is the
  accuracy over icon and text cases together (micro: the rows there check so, e.g. 274 of 604 icon and 687 of 977
  text cases give 961 of 1581, 0.6078).
- ScreenSpot-v2: ``results.platform`` (mobile, desktop, web), each ``{"icon", "text", "avg"}``, and
  ``results.overall_avg``, written as the micro accuracy over every case. (The leaderboard's own v2 rows do not all
  agree with one definition of it: guitest writes the micro one and says so.)

Every figure is the report's own accuracy over the cases of that group (hits over the cases not in error), at full float
precision: ``hits / cases`` as Python divides, bit for bit what the leaderboard's submission notebook
(likaixin2000/ScreenSpot-Pro-GUI-Grounding, ``leaderboard_submission.ipynb`` at e9f0ff0) copies from the metrics
``eval_screenspot_pro.py`` computes (``correct_num / num_total``), so two entries of one run diff clean. The report's
own tables keep six decimals; a figure here equals its breakdown's to those. A group with no icon (or no text) case has
no figure (null) where the script writes 0; every group and application of ScreenSpot-Pro has both.

An entry counts the whole suite: a report of part of it (``-k``, ``-m``, ``--limit``, ``--shard``, any deselection:
its ``selection`` says so, ``n_selected`` against the suite's ``n_suite``), or one that does not record its selection,
is refused unless ``subset=True`` (``--subset``), and the entry then says it is one: its description begins
``SUBSET:`` and its ``subset`` field counts the cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..verdict import CaseResult
from .document import Report
from .summary import subset_part
from .tallies import exact_accuracy

#: the schemas guitest writes: name -> (the tag of a group, the leaderboard's key of it) pairs, the tag telling icon
#: from text, and whether the overall figure is one ``overall`` record (Pro) or an ``overall_avg`` number (v2)
SCHEMAS: dict[str, tuple[tuple[tuple[str, str], ...], str, bool]] = {
    "screenspot_pro": ((("group", "group"), ("application", "application")), "ui_type", True),
    "screenspot_v2": ((("split", "platform"),), "data_type", False),
}


class LeaderboardError(ValueError):
    """The report cannot be written in that schema; the message says what it lacks."""


def _fraction(cases: Sequence[CaseResult]) -> float | None:
    return exact_accuracy(cases) if cases else None


def _cell(cases: Sequence[CaseResult], kind_tag: str) -> dict[str, float | None]:
    """``{"icon", "text", "avg"}`` over ``cases``: each kind's accuracy, and the accuracy over both."""
    by: Callable[[str], list[CaseResult]] = lambda kind: [c for c in cases if c["tags"].get(kind_tag) == kind]  # noqa: E731
    return {"icon": _fraction(by("icon")), "text": _fraction(by("text")), "avg": _fraction(list(cases))}


def entry(report: Report, schema: str, name: str | None = None, link: str = "", description: str = "", subset: bool = False) -> dict[str, Any]:
    """The leaderboard entry of ``report`` in ``schema`` (a key of :data:`SCHEMAS`), named ``name`` (default: the model's
    spec); LeaderboardError when its cases lack the tags that schema groups by, some case has not been run, or the run
    covers part of its suite (or does not say) and ``subset`` is not given; with ``subset``, such an entry says so."""
    if schema not in SCHEMAS:
        raise LeaderboardError(f"unknown leaderboard schema {schema!r}; known: {', '.join(SCHEMAS)}")
    groups, kind_tag, overall_record = SCHEMAS[schema]
    cases = report["cases"]
    if not cases:
        raise LeaderboardError("the report has no case")
    wanted = [tag for tag, _ in groups] + [kind_tag]
    lacking = sorted({t for c in cases for t in wanted if t not in c["tags"]})
    if lacking:
        raise LeaderboardError(f"its cases have no {', '.join(lacking)} tag: it is not a {schema} run (suites/{schema} tags them)")
    if not report["complete"]:
        raise LeaderboardError(f"the run is incomplete ({len(report['missing'])} selected case(s) without a result): a leaderboard row counts every case")
    part = _part(report)
    if part is not None and not subset:
        raise LeaderboardError(f"{part}: a leaderboard row counts the whole suite; run it whole, or pass --subset to write an entry that says it is a subset")
    results: dict[str, Any] = {}
    for tag, key in groups:
        values = sorted({c["tags"][tag] for c in cases})
        results[key] = {v: _cell([c for c in cases if c["tags"][tag] == v], kind_tag) for v in values}
    if overall_record:
        results["overall"] = _cell(cases, kind_tag)
    else:
        results["overall_avg"] = _fraction(cases)
    model = name or str(report["model"].get("spec") or "model")
    said = description or f"guitest {report['guitest']}, {report['suite']['name']} ({report['n_results']} cases)"
    if part is None:
        return {model: {"link": link, "description": said, "results": results}}
    selection = report.get("selection")
    total = selection["n_suite"] if selection else None
    counted = {
        "cases": report["n_selected"],
        "of": total,
        "by": list(selection["by"]) if selection else [],
        "limit": selection.get("limit") if selection else None,
        "shard": report["run"].get("shard"),
    }
    return {model: {"link": link, "description": f"SUBSET: {report['n_selected']} of {total if total is not None else 'an unknown number of'} cases. {said}", "results": results, "subset": counted}}


def _part(report: Report) -> str | None:
    """Why ``report`` is not of its whole suite (:func:`guitest.reporting.summary.subset_part`), or None when it is."""
    if "selection" not in report:
        return f"the report does not record how many cases its suite has (written before guitest recorded its selection), so its {report['n_selected']} case(s) cannot be told from the whole suite"
    part = subset_part(report)
    return f"the run covers {part}" if part else None


def differences(ours: Mapping[str, Any], theirs: Mapping[str, Any], tolerance: float = 0.0005) -> list[str]:
    """Field by field, where two entries' ``results`` differ by more than ``tolerance`` (``group.CAD.icon 0.344 vs 0.331``),
    and the fields only one of them has."""
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    out.append(f"{path}{k}: only in {'ours' if k in a else 'theirs'}")
                else:
                    walk(a[k], b[k], f"{path}{k}.")
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if abs(a - b) > tolerance:
                out.append(f"{path.rstrip('.')} {a:.4f} vs {b:.4f} ({100 * (a - b):+.1f} points)")
        elif a != b:
            out.append(f"{path.rstrip('.')} {a!r} vs {b!r}")

    walk(ours, theirs, "")
    return out


# -- command line ------------------------------------------------------------------------------------------------------


def add_arguments(parser: Any) -> None:
    """``guitest leaderboard``'s arguments."""
    parser.add_argument("report", metavar="REPORT.json", help="a guitest JSON report of a ScreenSpot-Pro or ScreenSpot-v2 run")
    parser.add_argument("--schema", choices=sorted(SCHEMAS), default=None, help="the leaderboard file's schema (default: the report's suite name)")
    parser.add_argument("--name", default=None, help="the entry's model name (default: the report's model spec)")
    parser.add_argument("--link", default="", help="the entry's link (a model card)")
    parser.add_argument("--description", default="", help="the entry's description (default: guitest's version, the suite and the case count)")
    parser.add_argument(
        "--subset",
        action="store_true",
        help="write the entry of a run of part of its suite (-k, -m, --limit, --shard, any deselection), refused otherwise; the entry says so (its description begins SUBSET:, its subset field counts the cases)",
    )
    parser.add_argument("--out", default="-", metavar="FILE", help="write the entry there ('-': stdout, the default)")
    parser.add_argument("--against", default=None, metavar="LEADERBOARD.json", help="a leaderboard file (results/screenspot_pro.json): print where the entry differs from its row --row")
    parser.add_argument("--row", default=None, metavar="MODEL", help="with --against: the leaderboard row to set beside (default: --name)")


def run(args: Any) -> int:
    """Write the entry (and with ``--against``, the differences from a row): 0; 2 for a report or file that cannot be used."""
    import json
    import sys

    from .. import strictjson
    from ..printable import printable
    from .compare import ReportError, load_report

    try:
        report = load_report(args.report)
    except ReportError as exc:
        print(f"guitest leaderboard: {exc}", file=sys.stderr)
        return 2
    schema = args.schema or report["suite"]["name"]
    try:
        made = entry(report, schema, args.name, args.link, args.description, subset=args.subset)
    except LeaderboardError as exc:
        print(f"guitest leaderboard: {args.report}: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(made, indent=1) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        strictjson.write_text(Path(args.out), text)
    if args.against:
        row = args.row or next(iter(made))
        try:
            board = strictjson.load(args.against, expect=dict)
        except strictjson.UnreadableJSON as exc:
            print(f"guitest leaderboard: {exc} (a leaderboard file, as results/screenspot_pro.json)", file=sys.stderr)
            return 2
        entry_row = board.get(row)
        theirs = entry_row.get("results") if isinstance(entry_row, dict) else None
        if not isinstance(theirs, dict):
            said = "has no row" if entry_row is None else "has no results object in row"
            print(printable(f"guitest leaderboard: {args.against} {said} {row!r} (pass --row with one of its model names)"), file=sys.stderr)
            return 2
        found = differences(next(iter(made.values()))["results"], theirs)
        print(f"against {row} in {args.against}: " + ("the same to 0.05 points" if not found else f"{len(found)} field(s) differ"), file=sys.stderr if args.out == "-" else sys.stdout)
        for line in found:
            print("  " + line, file=sys.stderr if args.out == "-" else sys.stdout)
    return 0
