"""write a run's figures as Google Benchmark JSON, CSV or Bencher Metric Format

`run.py export RUN_DIR --format gbench|csv|bmf [--out PATH]`

- gbench: one Google Benchmark report per allocator, into the folder
  --out (default RUN_DIR/export-gbench/), named gbench-<allocator>.json as
  `run.py gbench` names them; Google Benchmark's tools/compare.py compares
  two runs file by file (`compare.py benchmarks A/gbench-heaplab.json
  B/gbench-heaplab.json`);
- csv: one line per cell (default RUN_DIR/export.csv);
- bmf: Bencher Metric Format JSON (default RUN_DIR/export-bmf.json).

--out - prints a csv or bmf export on stdout. Exit status: 0; 2 when
RUN_DIR is not a run folder or nothing could be exported.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

from . import atomicio, export, gbench_reports, report_data
from .runfolder import RunFolderError

FORMATS = ("gbench", "csv", "bmf")
DEFAULT_OUT = {"gbench": "export-gbench", "csv": "export.csv", "bmf": "export-bmf.json"}
EXIT_BAD_INPUT = 2
NAMED_LEFT_OUT = 5     # cells named in the note on what gbench leaves out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", metavar="RUN_DIR", help="a results/runs/<id> folder")
    p.add_argument("--format", choices=FORMATS, required=True, help="gbench, csv or bmf")
    p.add_argument("--out", metavar="PATH",
                   help="file (csv, bmf; - for stdout) or folder (gbench) to write "
                        "(default in RUN_DIR: " + ", ".join(DEFAULT_OUT.values()) + ")")


def write(folder: report_data.Folder, fmt: str, out: pathlib.Path) -> list[pathlib.Path]:
    """Writes the export; returns the files written."""
    if fmt == "gbench":
        reports, left_out = export.gbench_reports(folder)
        if left_out:
            named = ", ".join(left_out[:NAMED_LEFT_OUT]) + (", …" if len(left_out) > NAMED_LEFT_OUT else "")
            print(f"export: {len(left_out)} cells left out (Google Benchmark's JSON holds times "
                  f"and rates only): {named}", file=sys.stderr)
        written = []
        for alloc, report in reports.items():
            path = out / gbench_reports.report_file_name(alloc)
            atomicio.write_text(path, json.dumps(report, indent=2) + "\n")
            written.append(path)
        return written
    text = export.csv_text(folder) if fmt == "csv" else export.bmf_text(folder)
    atomicio.write_text(out, text)
    return [out]


def main(args: argparse.Namespace) -> int:
    try:
        folder = report_data.load_run(pathlib.Path(args.run_dir))
    except RunFolderError as e:
        print(f"export: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.out == "-" and args.format != "gbench":
        sys.stdout.write(export.csv_text(folder) if args.format == "csv" else export.bmf_text(folder))
        return 0
    out = pathlib.Path(args.out) if args.out else folder.path / DEFAULT_OUT[args.format]
    written = write(folder, args.format, out)
    if not written:
        print(f"export: nothing in {folder.path} can be written as {args.format}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for path in written:
        print(f"export: {path}")
    return 0
