"""`run.py run`: the benchmark matrix, one runner process per (workload,
allocator, repetition), into a new run folder.

Exit status: 0 when every cell ran; 1 when some repetition crashed, timed
out or reported an error (the rest still ran); 2 for bad input; 130 after
Ctrl-C (what finished is kept and summarised).
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

from . import adhoc_program, catalog as catalog_mod, charts, deps, execution, paths, report, runopts, suites, tables
from .execution import EXIT_BAD_INPUT, EXIT_FAILED_CELLS, EXIT_INTERRUPTED
from .prepare import obtain_runner

DEFAULT_REPS = 5


def add_options(p: argparse.ArgumentParser) -> None:
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="full", action="store_false",
                      help="each parameter's quick size (default)")
    size.add_argument("--full", dest="full", action="store_true", help="the published sizes")
    p.add_argument("--workload", metavar="GLOB,...", help="workloads by name glob or group (default: all)")
    p.add_argument("--suite", metavar="NAME", choices=tuple(suites.SUITES),
                   help="a named set of workloads (" + suites.describe() + ")")
    p.add_argument("--alloc", metavar="NAME,...",
                   help="allocators (default: every one the runner lists); so:PATH[:PREFIX] runs a "
                        "shared library, NAME=so:PATH[:PREFIX] runs it under the name NAME")
    p.add_argument("--reps", metavar="N", default=str(DEFAULT_REPS),
                   help=f"repetitions per cell (default {DEFAULT_REPS})")
    p.add_argument("--param", metavar="KEY=VALUE", action="append", default=[],
                   help="set a workload parameter for every selected workload that has it "
                        "(repeatable; `run.py list` shows them), e.g. --param count=10000")
    p.add_argument("--threads", metavar="LIST",
                   help="thread counts for threaded workloads, e.g. 1,2,4 (default: the workload's)")
    p.add_argument("--seed", metavar="S",
                   help="the runner's random seed for every cell (default: the runner's, 1); "
                        "a script's own `seed` line is mixed with it")
    runopts.add_output_options(p, plots_help="do not draw charts at the end")
    p.add_argument("--shard", metavar="K/N",
                   help="run only shard K of N of the cells (deterministic; join with `run.py merge`)")
    p.add_argument("--metric", choices=("time", "instructions"), default="time",
                   help="instructions: count each cell's instructions under valgrind "
                        "(deterministic; program workloads are left out)")
    p.set_defaults(full=False)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the benchmark matrix (default: --quick)")
    add_options(p)
    adhoc_program.add_arguments(p)
    p.set_defaults(func=main)


def choices_of(args: argparse.Namespace) -> runopts.Choices:
    return runopts.Choices(
        quick=not args.full, workload=args.workload, suite=getattr(args, "suite", None),
        alloc=args.alloc, reps=args.reps, params=list(getattr(args, "param", None) or []),
        threads=args.threads, shard=args.shard, metric=args.metric,
        seed=getattr(args, "seed", None), timeout=args.timeout)


def main(args: argparse.Namespace) -> int:
    try:
        adhoc_program.apply(args)
        choices = choices_of(args)
        checked = runopts.check(choices)
    except catalog_mod.SelectionError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if choices.metric == "instructions" and not shutil.which("valgrind"):
        print("run.py: --metric instructions needs valgrind (apt install valgrind)", file=sys.stderr)
        return EXIT_BAD_INPUT
    # replaying a trace needs zstd as well; only then is it installed
    traced = "trace:" in (args.workload or "")
    runner = obtain_runner(args.runner, not args.no_install,
                           deps.RUN_PACKAGES + (deps.TRACE_PACKAGES if traced else ()))
    if isinstance(runner, int):
        return runner
    try:
        cat = catalog_mod.load(runner)
    except RuntimeError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return EXIT_FAILED_CELLS
    try:
        plan = runopts.matrix_plan(choices, checked, cat, runner, not args.no_install)
    except catalog_mod.SelectionError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    parent = pathlib.Path(args.out) if args.out else paths.results_runs()
    result = execution.run_plan(plan, runner, cat, parent, sys.argv)
    if isinstance(result, int):
        return result
    status = _finish(args, result)
    report.finish(result.folder)  # report.html, its path the last line
    return status


def _finish(args: argparse.Namespace, result: execution.RunResult) -> int:
    """What `run` says about a run folder it made: the tables, the charts,
    the failed cells; the exit status."""
    if result.summary is None or result.output_error:
        return EXIT_FAILED_CELLS
    print(tables.markdown(result.summary))
    print(f"run folder: {result.folder}", file=sys.stderr)
    if result.interrupted:
        # the charts of what finished (`run.py plot` draws them again)
        if not args.no_plots:
            charts.draw(result.folder)
        return EXIT_INTERRUPTED
    if not args.no_plots:
        charts.draw(result.folder)
    execution.report_failed(result, "run.py")
    return result.exit_status()
