"""heaplab's charts: turns a run folder (raw.jsonl, env.json) into PNG and
SVG charts written beside the data.

    plots.draw_run(run_dir) -> list of the files written
    python -m plots RUN_DIR

Charts: memory by phase (memory-phases-<workload>), memory over time
(memory-time-<workload>), thread scaling (scaling-<workload>) and medians
relative to system (medians-<group>), and for a `reproduce` folder each
memory table's published and measured charts (reproduced-<table id>-*). plots.memory_phases.draw() draws a
memory-by-phase chart from plain series (for published tables), and
plots.style.save_figure() saves any chart as PNG + SVG.

matplotlib is imported only when a chart is drawn, so `python -m plots`
started by an interpreter without it can say so in one line.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

# the driver's package (heaplab) reads the run folder for the charts
_DRIVER = str(Path(__file__).resolve().parents[1] / "harness" / "py")
if _DRIVER not in sys.path:
    sys.path.insert(0, _DRIVER)

from .rundata import RunError, load_run  # noqa: E402  (needs the path above)

__all__ = ["draw_run", "RunError", "memory_phases", "memory_time", "scaling",
           "medians", "reproduced", "style"]

# Every chart module, in the order their charts are drawn and listed.
CHART_MODULES = ("memory_phases", "memory_time", "scaling", "medians", "reproduced")
_LAZY_MODULES = set(CHART_MODULES) | {"style"}


def __getattr__(name: str) -> ModuleType:
    """plots.memory_phases and the like, imported on first use."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def draw_run(run_dir: Path, only: tuple[str, ...] | None = None) -> list[Path]:
    """Draws every chart the run's data allows into run_dir (of the chart
    modules in `only`, when given), as PNG and SVG, and returns the paths
    written. Raises RunError (one-line message) when run_dir is not a
    readable run folder."""
    from . import style  # needs matplotlib

    run_dir = Path(run_dir)
    run = load_run(run_dir)
    written: list[Path] = []
    used: set[str] = set()
    with style.chart_style():
        for module_name in CHART_MODULES:
            if only is not None and module_name not in only:
                continue
            module = importlib.import_module(f".{module_name}", __name__)
            for stem, fig in module.figures(run):
                stem = style.unique_stem(stem, used)
                written += style.save_figure(fig, run_dir, stem)
                fig.clear()
    return written
