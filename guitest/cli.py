"""The ``guitest`` command: helpers around the pytest plugin (runs are ``pytest suites/NAME`` or ``pytest --pyargs guitest.suites.NAME``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, bundled
from .datapath import ENV_VAR, locate, resolve_root
from .errors import GuitestError
from .formats import annotation_files
from .suite import load_suite


def cmd_placeholders(args: argparse.Namespace) -> int:
    from .data.placeholders import make_placeholders

    suite = load_suite(bundled.suite_file(args.suite))
    root, source = resolve_root(args.data_root)
    data_dir = locate(str(suite.folder), suite.data, str(root), source, str(suite.path))
    files = annotation_files(suite, data_dir)
    images = Path(data_dir, suite.data["images"])
    counts = make_placeholders(suite.format, files, images, overwrite=args.overwrite)
    print(f"{suite.name}: placeholders in {images}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"  run it with: pytest {bundled.run_target(suite.folder)} --model=oracle" + (f" --data-root={root}" if source == "--data-root" else ""))
    return 0


def cmd_suites_list(args: argparse.Namespace) -> int:
    top = bundled.folder()
    found = bundled.suites(top)
    if not found:
        raise GuitestError(f"this guitest has no built-in suites ({top} does not hold any): reinstall it (pip install --force-reinstall guitest)")
    width = max(len(s.name) for s in found)
    print(f"built-in suites, in {top}:")
    for suite in found:
        print(f"  {suite.name:<{width}}  {_describe(suite)}")
    example = found[0]
    print(f"run one: pytest {bundled.run_target(example.folder)} --model=SPEC   copy one to edit it: guitest suites copy NAME   (then: pytest suites/NAME --model=SPEC)")
    return 0


def _describe(suite: bundled.Bundled) -> str:
    files = [suite.folder / n for n in bundled.SUITE_FILENAMES if (suite.folder / n).is_file()]
    if not files:
        return "a suite written in Python (pytest tests)"
    try:
        loaded = load_suite(files[0])
    except GuitestError as exc:
        return f"(cannot be read: {str(exc).splitlines()[0]})"
    return f"{loaded.task}: {loaded.description}" if loaded.description else loaded.task


def cmd_suites_copy(args: argparse.Namespace) -> int:
    into = Path(args.into)
    for name in args.names:
        dest = bundled.copy(name, into, force=args.force)
        print(f"{name}: copied to {dest}; run it with: pytest {bundled.run_target(dest)} --model=SPEC")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``guitest`` command line: each command's parser, in the order ``guitest --help`` lists them."""
    parser = argparse.ArgumentParser(
        prog="guitest",
        description="Helpers for guitest suites. Benchmarks run through pytest: pytest --pyargs guitest.suites.NAME --model=SPEC "
        "(a built-in suite), pytest suites/NAME --model=SPEC (a checkout, or a copy: guitest suites copy NAME)",
    )
    parser.add_argument("--version", action="version", version=f"guitest {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_placeholders, _add_suites, _add_compare, _add_leaderboard, _add_merge, _add_data, _add_desktop):
        add(sub)
    return parser


def _add_placeholders(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "placeholders",
        help="write blank images of the recorded sizes for every image a suite's annotations name",
        description=(
            "Write blank placeholder screenshots for a suite whose annotation files are present but whose "
            "images are not, so the pipeline can run end to end (with --model=oracle, say). ScreenSpot-Pro "
            "records each image's size; for ScreenSpot v1/v2 the sizes are approximate (see guitest/data/placeholders.py). "
            "Existing images are left alone unless --overwrite."
        ),
    )
    p.add_argument("suite", help="a built-in suite's name (screenspot_pro), or a suite folder or suite.yaml (suites/screenspot_pro)")
    p.add_argument("--data-root", help=f"data root (else ${ENV_VAR}, else the default)")
    p.add_argument("--overwrite", action="store_true", help="replace images that exist")
    p.set_defaults(func=cmd_placeholders)


def _add_suites(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    su = sub.add_parser(
        "suites",
        help="list the built-in suites, or copy one into your project to edit it",
        description=(
            "The suites that ship with guitest. Run one as it is published with pytest --pyargs guitest.suites.NAME "
            "(or pytest suites/NAME from a checkout); copy one into your project to edit its prompt, gate or tasks."
        ),
    )
    su.set_defaults(func=cmd_suites_list)
    suites_sub = su.add_subparsers(dest="suites_command")
    suites_sub.add_parser("list", help="list the built-in suites (the default)").set_defaults(func=cmd_suites_list)
    cp = suites_sub.add_parser(
        "copy",
        help="copy built-in suites into a folder of your project (default ./suites/NAME)",
        description="Copy built-in suites to INTO/NAME (default ./suites/NAME) with their files (prompts, tasks, apps), "
        "without generated data; then run the copy with pytest suites/NAME. An existing folder is left alone unless --force.",
    )
    cp.add_argument("names", nargs="+", metavar="NAME", help="built-in suite names, e.g. screenspot_pro mmbench_gui/l1 (guitest suites lists them)")
    cp.add_argument("--into", default="suites", metavar="DIR", help="folder to copy into (default: suites)")
    cp.add_argument("--force", action="store_true", help="replace the files of an existing copy (other files are left alone)")
    cp.set_defaults(func=cmd_suites_copy)


def _add_compare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .reporting import compare

    c = sub.add_parser(
        "compare",
        help="compare two JSON reports per category, with an exact McNemar test on the shared cases",
        description=(
            "Compare OLD and NEW guitest JSON reports: per category both accuracies and the difference, an exact "
            "McNemar test on the cases both runs scored, and a verdict (better, worse, no detectable change). "
            "Cases present in one run only are listed, and the cases that flipped (lost, gained, newly errored, no longer "
            "errored) are named; --html PAGE writes a page of them with both runs' answers or steps. Exit 0; 1 with --fail-on-regression when a category got "
            "significantly worse (by at least --min-drop), or when the runs are not comparable (fewer paired cases "
            "than --min-paired); 2 when a file cannot be read."
        ),
    )
    compare.add_arguments(c)
    from .published import runs as published_runs

    c.set_defaults(func=lambda args: compare.run(args, published_runs.load_any, published_runs))


def _add_leaderboard(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .reporting import leaderboard

    lb = sub.add_parser(
        "leaderboard",
        help="a report as an entry of the grounding leaderboard (ScreenSpot-Pro, ScreenSpot-v2), or set beside one of its rows",
        description=(
            "Write a ScreenSpot-Pro or ScreenSpot-v2 report as an entry in the schema of GUI-Agent/grounding-leaderboard "
            "(results/screenspot_pro.json: per group and per application {icon, text, avg}, and overall; fractions 0-1, at "
            "full precision). With --against, print field by field where it differs from a row of a leaderboard file. Exit 0; "
            "2 for a report that is not such a run, incomplete, of part of its suite (-k, -m, --limit, --shard; write it "
            "with --subset, labelled), or a file that cannot be read."
        ),
    )
    leaderboard.add_arguments(lb)
    lb.set_defaults(func=leaderboard.run)


def _add_merge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .scale import merge as merge_mod

    m = sub.add_parser(
        "merge",
        help="one report from the reports of a run's shards (--shard=K/N), gated as the whole run",
        description=(
            "Rebuild one report (JSON, Markdown, HTML) from the JSON reports of the shards of one run: every case and "
            "figure as the run made in one piece would give. Refused for shards of different suites, models, settings, "
            "data or splits, and for a part changed after its run (its counts, cases or parts disagree, or a verdict is "
            "not the one its task gives the stored point and truth). Exits as the run in one piece would: 13 when a part "
            "reached its budget; 1 when a case ended in error; 11 when a part's report is missing; the gate's exit code "
            "(10) when the gate fails; else 0. 12 when the merged report cannot be written; 2 when the reports cannot be "
            "read or merged."
        ),
    )
    merge_mod.add_arguments(m)
    m.set_defaults(func=merge_mod.run)


def _add_data(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .data import fetch

    d = sub.add_parser("data", help="download and verify benchmark data")
    data_sub = d.add_subparsers(dest="data_command", required=True)
    f = data_sub.add_parser(
        "fetch",
        help="download a suite's public data from the Hugging Face Hub, then verify it",
        description="Download NAME's public data into the data root (--data-root, $GUITEST_DATA, $LMUData, default), "
        "unpack it, and verify the sample count and that every image exists. A verified copy is left alone "
        "unless --force. Exit 0 when verified, 2 otherwise.",
    )
    fetch.add_arguments(f)
    f.set_defaults(func=fetch.run)


def _add_desktop(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .desktopenv import commands as desktop_cli

    dk = sub.add_parser(
        "desktop",
        help="a local Linux desktop for live desktop tasks: up, down, status",
        description="Start, stop or list local Linux desktops (Xvfb 1920x1080, openbox, guitest's server of the OSWorld / "
        "Windows Agent Arena machine protocol on 127.0.0.1) for pytest ... --env-url=URL (docs/live_local_desktop.md).",
    )
    desktop_cli.add_arguments(dk)
    dk.set_defaults(func=desktop_cli.run)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``guitest`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except GuitestError as exc:
        print(f"guitest: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
