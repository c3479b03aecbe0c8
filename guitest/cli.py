"""The ``guitest`` command: helpers around the pytest plugin (runs are ``pytest suites/NAME``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .datapath import ENV_VAR, locate, resolve_root
from .errors import GuitestError
from .formats import annotation_files
from .suite import SUITE_FILENAMES, load_suite


def _suite_file(arg: str) -> Path:
    path = Path(arg)
    if path.is_dir():
        for name in SUITE_FILENAMES:
            if (path / name).is_file():
                return path / name
        raise GuitestError(f"{path}: no {' or '.join(SUITE_FILENAMES)} in this folder")
    if not path.is_file():
        raise GuitestError(f"{path}: no such suite file or folder")
    return path


def cmd_placeholders(args: argparse.Namespace) -> int:
    from .placeholders import make_placeholders

    suite = load_suite(_suite_file(args.suite))
    root, source = resolve_root(args.data_root)
    data_dir = locate(str(suite.folder), suite.data, str(root), source, str(suite.path))
    files = annotation_files(suite, data_dir)
    images = Path(data_dir, suite.data["images"])
    counts = make_placeholders(suite.format, files, images, overwrite=args.overwrite)
    print(f"{suite.name}: placeholders in {images}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="guitest",
        description="Helpers for guitest suites. Benchmarks run through pytest: pytest suites/NAME --model=SPEC",
    )
    parser.add_argument("--version", action="version", version=f"guitest {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "placeholders",
        help="write blank images of the recorded sizes for every image a suite's annotations name",
        description=(
            "Write blank placeholder screenshots for a suite whose annotation files are present but whose "
            "images are not, so the pipeline can run end to end (with --model=oracle, say). ScreenSpot-Pro "
            "records each image's size; for ScreenSpot v1/v2 the sizes are approximate (see guitest/placeholders.py). "
            "Existing images are left alone unless --overwrite."
        ),
    )
    p.add_argument("suite", help="suite folder or suite.yaml, e.g. suites/screenspot_pro")
    p.add_argument("--data-root", help=f"data root (else ${ENV_VAR}, else the default)")
    p.add_argument("--overwrite", action="store_true", help="replace images that exist")
    p.set_defaults(func=cmd_placeholders)
    from .reporting import compare

    c = sub.add_parser(
        "compare",
        help="compare two JSON reports per category, with an exact McNemar test on the shared cases",
        description=(
            "Compare OLD and NEW guitest JSON reports: per category both accuracies and the difference, an exact "
            "McNemar test on the cases both runs scored, and a verdict (better, worse, no detectable change). "
            "Cases present in one run only are listed. Exit 0; 1 with --fail-on-regression when a category got "
            "significantly worse (by at least --min-drop); 2 when a file cannot be read."
        ),
    )
    compare.add_arguments(c)
    c.set_defaults(func=compare.run)
    from . import fetch

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
    from .localdesktop import commands as desktop_cli

    dk = sub.add_parser(
        "desktop",
        help="a local Linux desktop for live desktop tasks: up, down, status",
        description="Start, stop or list local Linux desktops (Xvfb 1920x1080, openbox, guitest's server of the OSWorld / "
        "Windows Agent Arena machine protocol on 127.0.0.1) for pytest ... --env-url=URL (docs/live.md).",
    )
    desktop_cli.add_arguments(dk)
    dk.set_defaults(func=desktop_cli.run)
    return parser


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
