"""Writing report.html (report_data reads the folder, report_html renders
it) and the line that names it.

run, reproduce, merge and ci call finish() on the folder they made, as the
last thing they do, so that `report: PATH` is their last line; `run.py
report DIR` is finish() alone; `compare --html-out FILE` calls
write_comparison().
"""
from __future__ import annotations

import pathlib
import sys
from typing import Any

from . import atomicio, report_data, report_html
from .runfolder import RunFolderError


def write(folder: pathlib.Path) -> pathlib.Path:
    """Writes the report of `folder` (a run folder or a ci output folder)
    and returns its path; RunFolderError or OSError when it cannot."""
    data = report_data.load(folder)
    atomicio.write_text(data.report_path, report_html.page(data))
    return data.report_path


def finish(folder: pathlib.Path | None) -> int:
    """The end of a command that made a folder: writes its report and
    prints the path as the last line; one line on stderr (and 1) when it
    cannot."""
    if folder is None:
        return 1
    try:
        path = write(folder)
    except (RunFolderError, OSError) as e:
        print(f"report: cannot write the report of {folder}: {e}", file=sys.stderr)
        return 1
    sys.stderr.flush()
    print(f"report: {path}", flush=True)
    return 0


def write_comparison(document: dict[str, Any], out: pathlib.Path) -> pathlib.Path:
    """The page of a comparison alone ("heaplab.compare/1"), written to `out`."""
    atomicio.write_text(out, report_html.page(report_data.comparison_only(document, out)))
    return out
