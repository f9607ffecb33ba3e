"""`run.py plot RUN_DIR`: draw a run folder's charts with the `plots` package
(and, for a folder `run.py reproduce` wrote, its published-beside-measured
memory charts).

The driver itself needs only the standard library. When the interpreter
running it has no matplotlib, the same subcommand is re-run under
/usr/bin/python3 (Debian's, which has python3-matplotlib).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys

from . import paths, pythons

# Set in the re-run child so it never re-runs itself again.
REEXEC_ENV = "HEAPLAB_PLOT_CHILD"
MISSING_MATPLOTLIB = "plots: matplotlib is not installed (apt install python3-matplotlib); charts skipped"


def _draw_here(run_dir: pathlib.Path) -> int:
    if str(paths.REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(paths.REPO_ROOT))
    try:
        import plots  # lazily: only this subcommand needs matplotlib
    except ImportError as e:
        print(f"plots: cannot import the plots package: {e}", file=sys.stderr)
        return 1
    try:
        drawn = plots.draw_run(run_dir)
    except Exception as e:  # one line, not a traceback, for a chart that fails
        print(f"plots: drawing {run_dir} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    # one line, not one per chart: report.html shows them all
    print(f"charts: {len(drawn)} files in {run_dir}", file=sys.stderr)
    return _draw_reproduced_here(run_dir)


def reproduced_table_ids(run_dir: pathlib.Path) -> list[str]:
    """The published tables a `reproduce` run folder holds (its
    reproduced-<table id>.md files), in name order."""
    prefix, suffix = "reproduced-", ".md"
    return sorted(p.name[len(prefix):-len(suffix)] for p in run_dir.glob(f"{prefix}*{suffix}"))


def _draw_reproduced_here(run_dir: pathlib.Path) -> int:
    """A reproduce folder's published-beside-measured memory charts."""
    ids = reproduced_table_ids(run_dir)
    if not ids:
        return 0
    from . import cmd_reproduce  # only a reproduce folder needs it
    return cmd_reproduce.draw_charts_here(run_dir, ids)


def draw(run_dir: pathlib.Path) -> int:
    """Draws the charts of `run_dir`; 0 when drawn, 1 otherwise (one line said why)."""
    if not (run_dir / "raw.jsonl").exists():
        print(f"plots: {run_dir} is not a run folder (no raw.jsonl)", file=sys.stderr)
        return 1
    if pythons.has_module_here("matplotlib"):
        return _draw_here(run_dir)
    if os.environ.get(REEXEC_ENV):
        print(MISSING_MATPLOTLIB, file=sys.stderr)
        return 1
    python = pythons.python_with("matplotlib")
    if python is None:
        print(MISSING_MATPLOTLIB, file=sys.stderr)
        return 1
    env = dict(os.environ, **{REEXEC_ENV: "1"})
    return subprocess.run([str(python), str(paths.REPO_ROOT / "run.py"), "plot", str(run_dir)],
                          env=env, check=False).returncode


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="draw the charts of a run folder (PNG and SVG)")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a results/runs/<id> folder")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    return draw(pathlib.Path(args.run_dir))
