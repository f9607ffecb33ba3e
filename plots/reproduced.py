"""Charts of a `reproduce` run folder: for each memory-by-phase table it
reproduced, the published figures and the ones measured here, side by side
as two charts (reproduced-<table id>-published and -measured).

The series come from heaplab.reproduced (the folder read back against the
published tables); this module only draws them.
"""

from __future__ import annotations

from typing import Iterator

from matplotlib.figure import Figure

from heaplab import published, rundir
from heaplab.reproduced import chart_series, here_text, is_memory_table, results_of, runs_as, table_ids

from . import memory_phases
from .rundata import Run


def figures(run: Run) -> Iterator[tuple[str, Figure]]:
    """(file stem, figure): two per memory-by-phase table the folder reproduced."""
    ids = table_ids(run.folder)
    if not ids:
        return
    known = published.load_all()
    tables = [t for t in (published.find_table(known, tid) for tid in ids) if is_memory_table(t)]
    if not tables:
        return
    env = rundir.load_env(run.folder)
    for result in results_of(run.folder, tables):
        t = result.table
        mapping = ", ".join(f"{c.name} → {c.runs_as}" for c in t.columns
                            if c.role == published.ROLE_ALLOCATOR and c.runs_as and c.runs_as != c.name)
        machine = "; ".join(f"{k}: {v}" for k, v in t.machine.items() if k in ("os", "cpu"))
        phases, series, live, _, _ = chart_series(result, "published")
        yield f"reproduced-{t.id}-published", memory_phases.draw(
            phases, series, live, f"Published: {t.title}",
            subtitle=f"As {t.credit} ({machine}); figures copied as printed, {t.unit}; "
                     f"dashed: live bytes. Not measured here.",
            ylabel=t.unit)
        phases, series, live, spread, notes = chart_series(result, "measured")
        yield f"reproduced-{t.id}-measured", memory_phases.draw(
            phases, series, live, f"Measured here: {t.title}",
            subtitle=f"This machine: {here_text(env, runs_as(t))}. Bars: median, whiskers: "
                     f"min–max; dashed: live bytes requested. Stand-ins: {mapping or 'none'}.",
            spread=spread, notes=notes, ylabel=t.unit)
