"""A `reproduce` run folder read back: each published table beside what the
folder measured (TableResult), rendered as Markdown, and the series its
memory-by-phase charts draw (plots/reproduced.py draws them).

Everything here reads the folder's files only (raw.jsonl through
heaplab.runfolder, env.json), so a folder is enough to redo the tables
and charts: `./run.py plot RUN_DIR`.
"""
from __future__ import annotations

import pathlib
from typing import Any, Iterable, Sequence

from . import atomicio, published, rundir, runfolder
from .reproduce_table import TableResult, measured_from_documents, render_markdown, reproduce

REPRODUCED_ALL = "reproduced.md"
# `reproduce` names its run folders <timestamp>-reproduce (runfolder.create)
FOLDER_SUFFIX = "reproduce"
TABLE_PREFIX, TABLE_SUFFIX = "reproduced-", ".md"
QUICK_WARNING = ("QUICK SIZES: each workload ran at its parameters' quick sizes, not the published "
                 "sizes; absolute figures are not comparable with the published ones, only ratios "
                 "and orderings are")


def table_ids(run_dir: pathlib.Path) -> list[str]:
    """The published tables a `reproduce` run folder holds (its
    reproduced-<table id>.md files), in name order."""
    return sorted(p.name[len(TABLE_PREFIX):-len(TABLE_SUFFIX)]
                  for p in run_dir.glob(f"{TABLE_PREFIX}*{TABLE_SUFFIX}"))


def _needs(tables: Iterable[published.PublishedTable]) -> set[published.Need]:
    needs: set[published.Need] = set()
    for t in tables:
        needs |= published.needed_cells(t)
    return needs


def unavailable_from_env(env: dict[str, Any]) -> dict[str, str]:
    """allocator -> reason, for the allocators the plan marked as not run."""
    out: dict[str, str] = {}
    for a in (env.get("plan") or {}).get("allocators") or []:
        if isinstance(a, dict) and not a.get("available", True) and a.get("name"):
            out[a["name"]] = a.get("reason") or "not installed"
    return out


def results_of(folder: pathlib.Path, tables: Sequence[published.PublishedTable]
               ) -> list[TableResult]:
    """Every table reproduced from a run folder's raw.jsonl and env.json."""
    env = rundir.load_env(folder)
    raw = folder / runfolder.RAW
    docs = runfolder.read_raw(raw, warn=False).documents if raw.exists() else []
    measured = measured_from_documents(docs, _needs(tables), unavailable_from_env(env))
    return [reproduce(t, measured) for t in tables]


def with_version(alloc: dict[str, Any]) -> str:
    """'system glibc 2.36', 'heaplab 0.1.0' (no name twice)."""
    name, version = str(alloc.get("name")), str(alloc.get("version"))
    return version if version.startswith(name) else f"{name} {version}"


def here_text(env: dict[str, Any], allocators: Iterable[str] | None = None) -> str:
    """The machine, the allocators' versions (of `allocators` only, when
    given) and the sizes, for the table header's "Measured here on"."""
    wanted = set(allocators) if allocators is not None else None
    m = env.get("machine") or {}
    opts = env.get("options") or {}
    parts = [str(m.get("cpu_model") or "unknown CPU")]
    if m.get("cores"):
        parts.append(f"{m['cores']} cores")
    parts.append(f"Linux {m.get('kernel') or '?'}")
    allocs = [with_version(a) for a in (env.get("plan") or {}).get("allocators") or []
              if isinstance(a, dict) and a.get("version")
              and (wanted is None or a.get("name") in wanted)]
    if allocs:
        parts.append(", ".join(allocs))
    parts.append(f"{opts.get('reps', '?')} repetitions per cell, one process each")
    parts.append("QUICK sizes (not the published ones)" if opts.get("quick") else "the published sizes")
    return "; ".join(parts)


def runs_as(table: published.PublishedTable) -> list[str]:
    return [c.runs_as for c in table.columns if c.runs_as]


def render(results: Sequence[TableResult], env: dict[str, Any]) -> dict[str, str]:
    """Markdown per table id (the quick warning on top when it applies)."""
    quick = bool((env.get("options") or {}).get("quick"))
    out: dict[str, str] = {}
    for r in results:
        cores = (env.get("machine") or {}).get("cores")
        text = render_markdown(r, here=here_text(env, runs_as(r.table)),
                               cores=cores if isinstance(cores, int) else None)
        if quick:
            text = f"> **{QUICK_WARNING}.**\n\n{text}"
        out[r.table.id] = text
    return out


def write_tables(folder: pathlib.Path, rendered: dict[str, str], interrupted: bool) -> list[pathlib.Path]:
    written = []
    for tid, text in rendered.items():
        path = folder / f"reproduced-{tid}.md"
        atomicio.write_text(path, text)
        written.append(path)
    head = "# heaplab: published tables reproduced\n\n"
    if interrupted:
        head += "> Interrupted: the tables hold what finished before Ctrl-C.\n\n"
    atomicio.write_text(folder / REPRODUCED_ALL, head + "\n".join(rendered.values()))
    written.append(folder / REPRODUCED_ALL)
    return written


def is_memory_table(table: published.PublishedTable) -> bool:
    """A memory-by-phase table: a reference column (live bytes) and phase rows."""
    return any(c.role == published.ROLE_REFERENCE for c in table.columns)


def chart_series(result: TableResult, side: str
                 ) -> tuple[list[str], dict[str, list[float | None]], list[float | None],
                            dict[str, list[tuple[float, float] | None]], dict[str, str]]:
    """(phases, series, live, spread, notes) for plots.memory_phases.draw, from
    the published figures (side "published", keyed by column name) or the
    measured ones (side "measured", keyed by the allocator run here)."""
    t = result.table
    rows = [rr for rr in result.rows if rr.row.metric is not None]
    phases = [rr.row.label for rr in rows]
    live_col = next(c for c in t.columns if c.role == published.ROLE_REFERENCE)
    series: dict[str, list[float | None]] = {}
    spread: dict[str, list[tuple[float, float] | None]] = {}
    notes: dict[str, str] = {}
    if side == "published":
        live = [rr.cells[live_col.name].published for rr in rows]
        for c in t.columns:
            if c.role == published.ROLE_ALLOCATOR:
                series[c.name] = [rr.cells[c.name].published for rr in rows]
        return phases, series, live, spread, notes
    live = [rr.cells[live_col.name].measured for rr in rows]
    for c in t.columns:
        if c.role != published.ROLE_ALLOCATOR or c.runs_as is None:
            continue
        cells = [rr.cells[c.name] for rr in rows]
        series[c.runs_as] = [cell.measured for cell in cells]
        spread[c.runs_as] = [(cell.measured_min, cell.measured_max)
                             if cell.measured_min is not None and cell.measured_max is not None
                             else None for cell in cells]
        failure = next((cell.failure for cell in cells if cell.measured is None and cell.failure), None)
        if failure:
            notes[c.runs_as] = failure
    return phases, series, live, spread, notes
