"""reproduce a published table: run its workloads, show it beside the published figures

`run.py reproduce NAME|all` runs exactly the cells a published table needs
(results/published/<id>.json: its workloads at its thread counts, on the
allocators that stand in for its columns), through the same machinery as
`run.py run`: a new run folder with raw.jsonl, env.json, summary.json and
tables. It then prints each table in its published layout, every cell with
the published figure and the one measured here, both as ratios to the
table's baseline column, and whether each published ordering holds here.

Written into the run folder: reproduced-<table id>.md for each table,
reproduced.md with all of them, and for a memory-by-phase table two charts,
reproduced-<table id>-published.png and reproduced-<table id>-measured.png
(and .svg). A run folder is enough to redraw them:
`python -m heaplab.cmd_reproduce RUN_DIR TABLE_ID...`.

Sizes: by default the published sizes (each workload's default parameters),
which take minutes per table. --quick uses each parameter's quick size and
every output says so: absolute figures then are not the published
workloads', and only the ratios and orderings can be compared.

Exit status: 0 when every cell ran (orderings that differ are findings, not
failures; allocators that are not installed are shown as such); 1 when some
cell failed (crashed, timed out, errored) or a workload is missing from the
runner; 2 for bad input (an unknown table lists the known ones); 130 after
Ctrl-C, with the tables written from what finished.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
from typing import Any, Iterable, Sequence

from . import atomicio, catalog as catalog_mod, cmd_report, cmd_run, matrix, paths, published, pythons, rawlog, rundir
from .prepare import obtain_runner
from .reproduce_table import TableResult, measured_from_documents, render_markdown, reproduce
from .summary import plan_json

ALL = "all"
DEFAULT_REPS = 5
# Quick sizes are for a look, not for a verdict: three repetitions still give
# a median and a min-max range per cell, at 60% of the cost.
DEFAULT_REPS_QUICK = 3
EXIT_OK = 0
EXIT_FAILED_CELLS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

REPRODUCED_ALL = "reproduced.md"
# Run folders of this command are told apart from `run`'s by this suffix.
FOLDER_SUFFIX = "reproduce"
# Set in the chart-drawing child (under an interpreter with matplotlib).
CHART_CHILD_ENV = "HEAPLAB_REPRODUCE_CHART_CHILD"
MISSING_MATPLOTLIB = ("reproduce: matplotlib is not installed (apt install python3-matplotlib); "
                      "memory charts skipped")
QUICK_WARNING = ("QUICK SIZES: each workload ran at its parameters' quick sizes, not the published "
                 "sizes; absolute figures are not comparable with the published ones, only ratios "
                 "and orderings are")
NOT_OFFERED = "not offered by this runner"


class ReproduceError(ValueError):
    """Bad input or an inconsistent table; the message is one line."""


# ------------------------------------------------------------------ planning

def select_tables(name: str, folder: pathlib.Path = published.PUBLISHED_DIR
                  ) -> list[published.PublishedTable]:
    """The tables NAME asks for: one by id (with or without its seed number),
    or every table for 'all'. Raises published.PublishedError (one line that
    lists the known tables)."""
    tables = published.load_all(folder)
    if name == ALL:
        return tables
    return [published.find_table(tables, name)]


def _unavailable_reason(name: str, cat: catalog_mod.Catalog) -> str | None:
    """Why allocator `name` cannot run here, or None when it can."""
    if name.startswith(catalog_mod.SO_PREFIX):
        return None
    a = cat.allocator(name)
    if a is None:
        return f"not installed ({name}: {NOT_OFFERED})"
    if a.available:
        return None
    reason = a.reason or name
    return reason if reason.startswith("not installed") else f"not installed ({reason})"


def plan(tables: Sequence[published.PublishedTable], cat: catalog_mod.Catalog
         ) -> tuple[list[matrix.Cell], list[str], dict[str, str]]:
    """(cells to run, workloads the runner lacks, allocator -> why it cannot run).

    Cells come from published.run_specs, deduplicated over the tables, in
    catalog order of workloads, then threads, then allocators as the tables
    name them. Raises ReproduceError when a table needs something the run
    matrix cannot express."""
    specs: set[published.RunSpec] = set()
    # a cell is told apart by workload, threads and allocator only, so every
    # row that needs one cell must ask for the same parameters
    asked: dict[tuple[str, int, str], tuple[str, published.RunSpec]] = {}
    for t in tables:
        for spec in published.run_specs(t):
            key = (spec.workload, spec.threads, spec.allocator)
            first = asked.setdefault(key, (t.id, spec))
            if first[1].params != spec.params:
                raise ReproduceError(
                    f"{t.id}: a row of {spec.workload} sets parameters "
                    f"({catalog_mod.format_params(spec.params) or 'none'}) that {first[0]}'s row "
                    f"of the same cell does not ({catalog_mod.format_params(first[1].params) or 'none'})")
            specs.add(spec)
    alloc_order: list[str] = []
    for t in tables:
        for c in t.columns:
            if c.runs_as and c.runs_as not in alloc_order:
                alloc_order.append(c.runs_as)
    workload_order = {w.name: i for i, w in enumerate(cat.workloads)}
    by_name = {w.name: w for w in cat.workloads}
    missing = sorted({s.workload for s in specs if s.workload not in by_name})
    unavailable = {a: r for a in alloc_order
                   for r in [_unavailable_reason(a, cat)] if r is not None}
    cells: list[matrix.Cell] = []
    for s in sorted((s for s in specs if s.workload in by_name),
                    key=lambda s: (workload_order[s.workload], s.threads,
                                   alloc_order.index(s.allocator))):
        w = by_name[s.workload]
        if not w.threaded and s.threads != w.default_threads:
            raise ReproduceError(f"a table needs {w.name} at {s.threads} threads, but it always "
                                 f"runs {w.default_threads}")
        cells.append(matrix.Cell(w, s.allocator, s.threads, pass_threads=w.threaded,
                                 params=s.params))
    return cells, missing, unavailable


# ----------------------------------------------------------- reading a folder

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
    raw = folder / rundir.RAW
    docs = rawlog.read(raw).documents if raw.exists() else []
    measured = measured_from_documents(docs, _needs(tables), unavailable_from_env(env))
    return [reproduce(t, measured) for t in tables]


def _with_version(alloc: dict[str, Any]) -> str:
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
    allocs = [_with_version(a) for a in (env.get("plan") or {}).get("allocators") or []
              if isinstance(a, dict) and a.get("version")
              and (wanted is None or a.get("name") in wanted)]
    if allocs:
        parts.append(", ".join(allocs))
    parts.append(f"{opts.get('reps', '?')} repetitions per cell, one process each")
    parts.append("QUICK sizes (not the published ones)" if opts.get("quick") else "the published sizes")
    return "; ".join(parts)


def _runs_as(table: published.PublishedTable) -> list[str]:
    return [c.runs_as for c in table.columns if c.runs_as]


def render(results: Sequence[TableResult], env: dict[str, Any]) -> dict[str, str]:
    """Markdown per table id (the quick warning on top when it applies)."""
    quick = bool((env.get("options") or {}).get("quick"))
    out: dict[str, str] = {}
    for r in results:
        text = render_markdown(r, here=here_text(env, _runs_as(r.table)))
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


# ------------------------------------------------------------------ charts

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


def _draw_memory_charts(folder: pathlib.Path, result: TableResult, env: dict[str, Any]) -> list[pathlib.Path]:
    """Needs matplotlib: the published and the measured chart of one table."""
    if str(paths.REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(paths.REPO_ROOT))
    from plots import memory_phases, style  # only here: matplotlib

    t = result.table
    mapping = ", ".join(f"{c.name} → {c.runs_as}" for c in t.columns
                        if c.role == published.ROLE_ALLOCATOR and c.runs_as and c.runs_as != c.name)
    machine = "; ".join(f"{k}: {v}" for k, v in t.machine.items() if k in ("os", "cpu"))
    written: list[pathlib.Path] = []
    phases, series, live, _, _ = chart_series(result, "published")
    fig = memory_phases.draw(
        phases, series, live, f"Published: {t.title}",
        subtitle=f"As {t.credit} ({machine}); figures copied as printed, {t.unit}; "
                 f"dashed: live bytes. Not measured here.",
        ylabel=t.unit)
    written += style.save_figure(fig, folder, f"reproduced-{t.id}-published")
    phases, series, live, spread, notes = chart_series(result, "measured")
    fig = memory_phases.draw(
        phases, series, live, f"Measured here: {t.title}",
        subtitle=f"This machine: {here_text(env, _runs_as(t))}. Bars: median, whiskers: min–max; "
                 f"dashed: live bytes requested. Stand-ins: {mapping or 'none'}.",
        spread=spread, notes=notes, ylabel=t.unit)
    written += style.save_figure(fig, folder, f"reproduced-{t.id}-measured")
    return written


def draw_charts_here(folder: pathlib.Path, table_ids: Sequence[str]) -> int:
    """Draws the memory charts of `table_ids` from the run folder (needs
    matplotlib in this interpreter); 0 when drawn."""
    try:
        tables = [published.find_table(published.load_all(), tid) for tid in table_ids]
        env = rundir.load_env(folder)
        drawn = [path for result in results_of(folder, [t for t in tables if is_memory_table(t)])
                 for path in _draw_memory_charts(folder, result, env)]
        print(f"charts: {len(drawn)} published-beside-measured files in {folder}", file=sys.stderr)
    except Exception as e:  # one line, not a traceback, for a chart that fails
        print(f"reproduce: drawing charts in {folder} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def draw_charts(folder: pathlib.Path, tables: Sequence[published.PublishedTable]) -> int:
    """Draws the memory charts, re-running under /usr/bin/python3 when this
    interpreter has no matplotlib (as `run.py plot` does)."""
    ids = [t.id for t in tables if is_memory_table(t)]
    if not ids:
        return 0
    if pythons.has_module_here("matplotlib"):
        return draw_charts_here(folder, ids)
    python = None if os.environ.get(CHART_CHILD_ENV) else pythons.python_with("matplotlib")
    if python is None:
        print(MISSING_MATPLOTLIB, file=sys.stderr)
        return 1
    py_path = str(paths.REPO_ROOT / "harness" / "py")
    env = dict(os.environ, **{CHART_CHILD_ENV: "1",
                              "PYTHONPATH": os.pathsep.join(
                                  p for p in (py_path, os.environ.get("PYTHONPATH")) if p)})
    return subprocess.run([str(python), "-m", "heaplab.cmd_reproduce", str(folder), *ids],
                          env=env, check=False).returncode


# ------------------------------------------------------------- command line

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME|all",
                   help="a published table id (e.g. 004-kevy-alloc or kevy-alloc), or 'all'")
    p.add_argument("--quick", action="store_true",
                   help="each parameter's quick size instead of the published size (seconds, not "
                        "minutes); the output says so, and only ratios and orderings compare")
    p.add_argument("--reps", metavar="N",
                   help=f"repetitions per cell (default {DEFAULT_REPS}; {DEFAULT_REPS_QUICK} with "
                        f"--quick, which is for a look rather than a verdict)")
    cmd_run.add_output_options(p, plots_help="do not draw the memory charts")


def _error(message: str) -> int:
    print(f"reproduce: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(args: argparse.Namespace) -> int:
    try:
        tables = select_tables(args.name)
        reps = catalog_mod.parse_positive(args.reps, "--reps") if args.reps else (
            DEFAULT_REPS_QUICK if args.quick else DEFAULT_REPS)
        if args.timeout is not None and not args.timeout > 0:
            raise ReproduceError(f"--timeout: {args.timeout:g} is not a positive number of seconds")
    except (published.PublishedError, catalog_mod.SelectionError, ReproduceError) as e:
        return _error(str(e))
    timeout = args.timeout or (cmd_run.DEFAULT_TIMEOUT_QUICK_S if args.quick
                               else cmd_run.DEFAULT_TIMEOUT_FULL_S)

    runner = obtain_runner(args.runner, not args.no_install)
    if isinstance(runner, int):
        return runner
    try:
        cat = catalog_mod.load(runner)
    except RuntimeError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return EXIT_FAILED_CELLS
    try:
        cells, missing, unavailable = plan(tables, cat)
    except ReproduceError as e:
        return _error(str(e))
    for w in missing:
        print(f"reproduce: workload {w} is not in this runner; its cells are not measured",
              file=sys.stderr)
    for name, reason in unavailable.items():
        print(f"reproduce: {name}: {reason}; shown as such, not run", file=sys.stderr)

    alloc_names = list(dict.fromkeys(c.allocator for c in cells))
    alloc_info = []
    for name in alloc_names:
        a = cat.allocator(name)
        alloc_info.append({"name": name, "available": name not in unavailable,
                           "reason": unavailable.get(name), "version": a.version if a else None})
    steps = [s for s in matrix.interleave(cells, reps) if s.cell.allocator not in unavailable]
    parent = pathlib.Path(args.out) if args.out else paths.results_runs()
    folder = rundir.create(parent, f"{rundir.utc_stamp()}-{FOLDER_SUFFIX}")
    options = {"command": "reproduce", "tables": [t.id for t in tables], "quick": args.quick,
               "reps": reps, "threads": [], "timeout_s": timeout, "metric": "time"}
    env = rundir.env_document(paths.REPO_ROOT, sys.argv, options, runner, cat.raw,
                              plan_json(cells, alloc_info, reps))
    atomicio.write_json(folder / rundir.ENV, env)
    rundir.point_latest(folder)
    sizes = "QUICK sizes (not the published ones)" if args.quick else "the published sizes"
    print(f"reproduce: {', '.join(t.id for t in tables)}: {len(steps)} runs ({len(cells)} cells "
          f"× {reps} reps) at {sizes} into {folder}", file=sys.stderr)

    interrupted = cmd_run.execute(runner, steps, folder, quick=args.quick, timeout_s=timeout)

    env["finished"] = rundir.now_iso()
    env["interrupted"] = interrupted
    atomicio.write_json(folder / rundir.ENV, env)
    summary = rundir.derive(folder)
    rendered = render(results_of(folder, tables), env)
    write_tables(folder, rendered, interrupted)
    print("\n".join(rendered.values()))
    if interrupted:
        print("reproduce: interrupted; the tables hold what finished", file=sys.stderr)
    elif not args.no_plots:
        draw_charts(folder, tables)
    print(f"reproduced tables: {folder / REPRODUCED_ALL}", file=sys.stderr)
    print(f"run folder: {folder}", file=sys.stderr)

    if interrupted:
        cmd_report.finish(folder)  # report.html, its path the last line
        return EXIT_INTERRUPTED
    failed = [c for c in summary["cells"] if c["failures"]]
    if failed:
        print(f"reproduce: {len(failed)} cell(s) had failed runs: "
              + ", ".join(f"{c['cell']} {c['failures'][0]['label']}" for c in failed), file=sys.stderr)
    cmd_report.finish(folder)
    return EXIT_FAILED_CELLS if failed or missing else EXIT_OK


def _chart_child(argv: Sequence[str]) -> int:
    """`python -m heaplab.cmd_reproduce RUN_DIR TABLE_ID...`: (re)draws the
    memory charts of those tables from a run folder."""
    if len(argv) < 2:
        print("usage: python -m heaplab.cmd_reproduce RUN_DIR TABLE_ID...", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not pythons.has_module_here("matplotlib"):
        print(MISSING_MATPLOTLIB, file=sys.stderr)
        return 1
    return draw_charts_here(pathlib.Path(argv[0]), argv[1:])


if __name__ == "__main__":
    sys.exit(_chart_child(sys.argv[1:]))
