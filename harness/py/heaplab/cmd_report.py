"""write report.html of a run folder (or of a ci output folder) from the folder alone

`run.py report DIR`: DIR is a run folder (run, reproduce, merge) or the output folder of
`run.py ci`. The page is self-contained: inline CSS and SVG, no network.
run, reproduce, merge and ci write it at the end through finish(), which
prints its path as their last line; `compare --html-out FILE` through
write_comparison().
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

from . import atomicio, report_data, report_html


def write(folder: pathlib.Path) -> pathlib.Path:
    """Writes the report of `folder`; FolderError or OSError when it cannot."""
    data = report_data.load(folder)
    atomicio.write_text(data.report_path, report_html.page(data))
    return data.report_path


def finish(folder: pathlib.Path | None) -> int:
    """The hook at the end of a command: writes the report and prints its
    path as the last line; one line on stderr (and 1) when it cannot."""
    if folder is None:
        return 1
    try:
        path = write(folder)
    except (report_data.FolderError, OSError) as e:
        print(f"report: cannot write the report of {folder}: {e}", file=sys.stderr)
        return 1
    sys.stderr.flush()
    print(f"report: {path}", flush=True)
    return 0


def write_comparison(document: dict[str, Any], out: pathlib.Path) -> pathlib.Path:
    """The page of a comparison alone ("heaplab.compare/1"), written to `out`."""
    atomicio.write_text(out, report_html.page(report_data.comparison_only(document, out)))
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a results/runs/<id> folder, or results/ci")


def main(args: argparse.Namespace) -> int:
    return finish(pathlib.Path(args.run_dir))
