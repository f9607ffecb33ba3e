"""Drawing a run folder's charts with the `plots` package, from the driver.

The driver itself needs only the standard library. When the interpreter
running it has no matplotlib, `python -m plots` runs under /usr/bin/python3
(Debian's, which has python3-matplotlib) instead.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import Sequence

from . import paths, pythons

MISSING_MATPLOTLIB = "plots: matplotlib is not installed (apt install python3-matplotlib); charts skipped"


def _draw_here(folder: pathlib.Path, only: Sequence[str] | None) -> int:
    if str(paths.REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(paths.REPO_ROOT))
    try:
        import plots  # lazily: only drawing needs matplotlib
    except ImportError as e:
        print(f"plots: cannot import the plots package: {e}", file=sys.stderr)
        return 1
    try:
        drawn = plots.draw_run(folder, tuple(only) if only else None)
    except Exception as e:  # one line, not a traceback, for a chart that fails
        print(f"plots: drawing {folder} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    summarize(len(drawn), folder)
    return 0


def draw(folder: pathlib.Path, only: Sequence[str] | None = None) -> int:
    """Draws the charts of the run folder `folder` (the families in `only`,
    when given); 0 when drawn, 1 otherwise (one line said why)."""
    if pythons.has_module_here("matplotlib"):
        return _draw_here(folder, only)
    python = pythons.python_with("matplotlib")
    if python is None:
        print(MISSING_MATPLOTLIB, file=sys.stderr)
        return 1
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(paths.REPO_ROOT), os.environ.get("PYTHONPATH")) if p))
    cmd = [str(python), "-m", "plots", str(folder)] + (["--only", ",".join(only)] if only else [])
    proc = subprocess.run(cmd, env=env, check=False, stdout=subprocess.PIPE, text=True)
    summarize(len([line for line in proc.stdout.splitlines() if line.strip()]), folder)
    return proc.returncode


def summarize(count: int, folder: pathlib.Path) -> None:
    """One line for every chart drawn, not one per chart: report.html shows
    them all, and the charts stay in the folder."""
    print(f"charts: {count} files in {folder}", file=sys.stderr)
