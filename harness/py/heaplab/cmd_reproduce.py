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
(and .svg). A run folder is enough to redraw them: `./run.py plot RUN_DIR`.

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
import pathlib
import sys
from typing import Sequence

from . import catalog as catalog_mod, charts, execution, matrix, paths, published, report, rundir, runopts
from .prepare import obtain_runner
# the folder read back (tests and plots/reproduced.py use these)
from .reproduced import (FOLDER_SUFFIX, REPRODUCED_ALL, chart_series,  # noqa: F401  (chart_series: tests)
                         is_memory_table, render, results_of, write_tables)

ALL = "all"
DEFAULT_REPS = 5
# Quick sizes are for a look, not for a verdict: three repetitions still give
# a median and a min-max range per cell, at 60% of the cost.
DEFAULT_REPS_QUICK = 3
EXIT_OK = execution.EXIT_OK
EXIT_FAILED_CELLS = execution.EXIT_FAILED_CELLS
EXIT_BAD_INPUT = execution.EXIT_BAD_INPUT
EXIT_INTERRUPTED = execution.EXIT_INTERRUPTED

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
    runopts.add_output_options(p, plots_help="do not draw the memory charts")


def _error(message: str) -> int:
    print(f"reproduce: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(args: argparse.Namespace) -> int:
    try:
        tables = select_tables(args.name)
        reps = catalog_mod.parse_positive(args.reps, "--reps") if args.reps else (
            DEFAULT_REPS_QUICK if args.quick else DEFAULT_REPS)
        runopts.check_timeout(args.timeout)
    except (published.PublishedError, catalog_mod.SelectionError, ReproduceError) as e:
        return _error(str(e))
    timeout = args.timeout or execution.default_timeout(args.quick)

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
    options = {"command": "reproduce", "tables": [t.id for t in tables], "quick": args.quick,
               "reps": reps, "threads": [], "timeout_s": timeout, "metric": "time"}
    run_plan = execution.Plan(cells=cells, allocators=execution.allocator_info(cat, alloc_names, unavailable),
                              reps=reps, quick=args.quick, timeout_s=timeout, options=options,
                              folder_suffix=FOLDER_SUFFIX)
    print(f"reproduce: {', '.join(t.id for t in tables)}", file=sys.stderr)
    parent = pathlib.Path(args.out) if args.out else paths.results_runs()
    result = execution.run_plan(run_plan, runner, cat, parent, sys.argv, who="reproduce")
    if isinstance(result, int):
        return result
    status = _finish(args, tables, missing, result)
    report.finish(result.folder)  # report.html, its path the last line
    return status


def _finish(args: argparse.Namespace, tables: Sequence[published.PublishedTable],
            missing: Sequence[str], result: execution.RunResult) -> int:
    """The tables reproduced from the run folder, its charts, what failed;
    the exit status."""
    folder = result.folder
    env = rundir.load_env(folder)
    rendered = render(results_of(folder, tables), env)
    write_tables(folder, rendered, result.interrupted)
    print("\n".join(rendered.values()))
    if result.interrupted:
        print("reproduce: interrupted; the tables hold what finished", file=sys.stderr)
    if not args.no_plots and any(is_memory_table(t) for t in tables):
        charts.draw(folder, only=("reproduced",))
    print(f"reproduced tables: {folder / REPRODUCED_ALL}", file=sys.stderr)
    print(f"run folder: {folder}", file=sys.stderr)

    if result.interrupted:
        return EXIT_INTERRUPTED
    failed = [c for c in (result.summary or {}).get("cells", []) if c["failures"]]
    if failed:
        print(f"reproduce: {len(failed)} cell(s) had failed runs: "
              + ", ".join(f"{c['cell']} {c['failures'][0]['label']}" for c in failed), file=sys.stderr)
    return EXIT_FAILED_CELLS if failed or missing or result.summary is None else EXIT_OK
