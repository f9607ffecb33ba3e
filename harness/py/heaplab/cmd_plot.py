"""`run.py plot RUN`: draw a run folder's charts (PNG and SVG, beside the
data) with the `plots` package: memory by phase and over time, thread
scaling, medians relative to system, and for a `reproduce` folder its
published-beside-measured memory charts.

RUN is a run folder, or a parent of run folders (`--out DIR`) holding one
or a `latest`. Exit status: 0 drawn, 1 a chart failed or matplotlib is
missing, 2 RUN is not a run folder.
"""
from __future__ import annotations

import argparse
import sys

from . import charts, runfolder

EXIT_BAD_INPUT = 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="draw the charts of a run folder (PNG and SVG)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", metavar="RUN",
                   help="a results/runs/<id> folder, or a parent holding one (or its latest)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        folder = runfolder.resolve(args.run_dir)
    except runfolder.RunFolderError as e:
        print(f"plot: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if folder.is_file():
        folder = folder.parent
    return charts.draw(folder)
draw = charts.draw  # what `run` and the tests call
