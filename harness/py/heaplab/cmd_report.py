"""write report.html of a run folder (or of a ci output folder) from the folder alone

`run.py report DIR`: DIR is a run folder (run, reproduce, merge), a parent
holding one (or its `latest`), or the output folder of `run.py ci`. The page
is self-contained: inline CSS and SVG, no network. The last line printed is
`report: PATH`. Exit status: 0 written, 1 when it cannot be (one line says why).
"""
from __future__ import annotations

import argparse
import pathlib

from . import report


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a results/runs/<id> folder, or results/ci")


def main(args: argparse.Namespace) -> int:
    return report.finish(pathlib.Path(args.run_dir))
