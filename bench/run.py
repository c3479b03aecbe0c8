"""The guitest scale bench: throughput, per-case harness cost, collection and aggregation.

    python bench/run.py                      # the default groups (about 6-10 minutes on 2 cores)
    python bench/run.py --only throughput    # one group: throughput, reference, harness, e2e-large, collection, report
    python bench/run.py --repeat 3           # best of 3 for the timed pytest runs (default 2)
    python bench/run.py --pythonpath DIR     # bench a scratch copy of guitest (DIR holds its guitest/ package)
    python bench/run.py --only pro --repeat 3 --before 5fc758c   # a whole ScreenSpot-Pro-sized run beside plain clients

Data goes to ``--work`` (default ``/tmp/guitest-bench``), generated once by
``bench/make_data.py``; the loopback server is ``bench/server.py``. Every pytest
scenario runs as a subprocess watched by a /proc poller (every 20 ms: the process
tree's CPU time from ``/proc/PID/stat`` and each process's peak RSS ``VmHWM`` from
``/proc/PID/status``, which the kernel keeps, so a late poll still sees the peak),
and the machine's total busy CPU from ``/proc/stat``, to show how much of the
machine other programs took during the run. The table is printed and written to
``bench/results.md`` (``--out``), the raw figures to ``--work``/results.json.

The ``pro`` group (only when asked for: 25-50 minutes) is the full-size scenario: the
1581 real ScreenSpot-Pro rows with screenshots at their real sizes (``bench/make_pro.py``,
3.6 GB generated once into ``--work``), run at default settings serially and with ``-n 2``,
each repeat interleaved with the plain clients of ``bench/plain_client.py``; then the
report's picture options (``--report-images=embed``, and with ``--before REV`` the code of
an earlier commit), what each costs per screenshot, and the harness CPU per 4K case. Its
tables go to ``bench/results-pro.md`` (``--out-pro``), ready for docs/bench.md.

Internal modes (run as subprocesses by the bench, usable alone): ``--child
reference``, ``--child harness``, ``--child collect``, ``--child report``, ``--child thumbs``.

Where each figure is measured: ``scale_bench.py`` (the scenarios, run as watched subprocesses: ``process_monitor.py``),
the child modes ``reference_clients.py``, ``harness_cost.py``, ``collection_cost.py``, ``report_cost.py`` and
``picture_cost.py``, the tables ``scale_tables.py``, the sizes and targets ``scale_settings.py``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from collection_cost import child_collect
from harness_cost import child_harness
from picture_cost import child_thumbs
from reference_clients import child_reference
from report_cost import child_report
from scale_bench import Bench
from scale_settings import CONC, GROUPS, HERE, N_SMALL
from scale_tables import render, render_pro


CHILDREN = {"reference": child_reference, "harness": child_harness, "collect": child_collect, "report": child_report, "thumbs": child_thumbs}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="/tmp/guitest-bench", help="data, reports and raw results (default /tmp/guitest-bench)")
    parser.add_argument("--out", default=str(HERE / "results.md"), help="where to write the Markdown table (default bench/results.md)")
    parser.add_argument("--out-pro", default=str(HERE / "results-pro.md"), help="where to write the full-size scenario's tables (default bench/results-pro.md)")
    parser.add_argument("--only", nargs="*", choices=GROUPS)
    parser.add_argument("--repeat", type=int, default=2, help="repeats of the timed throughput runs; the best is shown (default 2)")
    parser.add_argument("--pythonpath", default=None, help="prepend this to PYTHONPATH of every run (bench a scratch copy of guitest)")
    parser.add_argument("--quiet-wait", type=float, default=20.0, help="before each timed run, wait up to this long for the machine to be quiet (default 20 s)")
    parser.add_argument("--quiet-cores", type=float, default=0.3, help="quiet: other programs use less than this many cores (default 0.3)")
    parser.add_argument("--render", action="store_true", help="only re-render the table from WORK/results.json")
    parser.add_argument("--pro-cases", type=int, default=None, metavar="N", help="pro: only the first N rows (a quick look; default all 1581)")
    parser.add_argument("--before", default=None, metavar="REV", help="pro: also run the default scenario once with guitest/ as it was at this git revision (e.g. the commit before a change)")
    # child modes
    parser.add_argument("--child", choices=sorted(CHILDREN))
    parser.add_argument("--json")
    parser.add_argument("--suite")
    parser.add_argument("--base-url")
    parser.add_argument("--client", choices=["openai", "httpx"], default="openai")
    parser.add_argument("--n", type=int, default=N_SMALL)
    parser.add_argument("--concurrency", type=int, default=CONC)
    parser.add_argument("--model", default="openai:bench")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--thumbnails", action="store_true")
    parser.add_argument("--resize", default="auto", help="harness child: the --resize setting (auto or client)")
    parser.add_argument("--only-size", default=None, help="harness child: only the rows of this image size, e.g. 3840x2160")
    args = parser.parse_args(argv)
    if args.child:
        data = CHILDREN[args.child](args)
        Path(args.json).write_text(json.dumps(data, default=str))
        return
    if args.render:
        res = json.loads(Path(args.work, "results.json").read_text())
        if any(not k.startswith("pro_") for k in res["runs"]):
            text = render(res)
            print(text)
            Path(args.out).write_text(text)
        if any(k.startswith("pro_") for k in res["runs"]):
            text = render_pro(res)
            print(text)
            Path(args.out_pro).write_text(text)
        return
    bench = Bench(args)
    bench.results["work"] = str(bench.work)
    bench.results["pythonpath"] = args.pythonpath
    bench.run()


if __name__ == "__main__":
    main()
