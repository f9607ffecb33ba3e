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
import signal
import sys
from typing import Any

from . import atomicio, deps, catalog as catalog_mod, cmd_plot, cmd_report, matrix, merge, paths, programs as programs_mod, rundir, runner as runner_mod, suites, tables
from .summary import plan_json
from .prepare import obtain_runner
from .progress import Progress

DEFAULT_REPS = 5
# Per-process limits: quick sizes take well under a second per cell.
DEFAULT_TIMEOUT_QUICK_S = 60.0
DEFAULT_TIMEOUT_FULL_S = 600.0
# valgrind's callgrind runs a program ~50x slower; its timeouts grow alike.
VALGRIND_SLOWDOWN = 50
EXIT_FAILED_CELLS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class OutputError(Exception):
    """The run folder cannot be written (a full disk): one line, no traceback."""


def add_output_options(p: argparse.ArgumentParser, plots_help: str) -> None:
    """The options every subcommand that runs the matrix shares (run, reproduce)."""
    p.add_argument("--out", metavar="DIR", help="parent of the run folder (default results/runs)")
    p.add_argument("--timeout", metavar="S", type=float,
                   help=f"seconds per process (default {DEFAULT_TIMEOUT_QUICK_S:g} quick, "
                        f"{DEFAULT_TIMEOUT_FULL_S:g} full)")
    p.add_argument("--no-install", action="store_true", help="never install Debian packages")
    p.add_argument("--no-plots", action="store_true", help=plots_help)
    p.add_argument("--runner", help="use this heaplab-run (default: $HEAPLAB_RUN or build it)")


def add_options(p: argparse.ArgumentParser) -> None:
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="full", action="store_false",
                      help="each parameter's quick size (default)")
    size.add_argument("--full", dest="full", action="store_true", help="the published sizes")
    p.add_argument("--workload", metavar="GLOB,...", help="workloads by name glob or group (default: all)")
    p.add_argument("--suite", metavar="NAME", choices=tuple(suites.SUITES),
                   help="a named set of workloads (" + suites.describe() + ")")
    p.add_argument("--alloc", metavar="NAME,...", help="allocators (default: every one the runner lists)")
    p.add_argument("--reps", metavar="N", default=str(DEFAULT_REPS),
                   help=f"repetitions per cell (default {DEFAULT_REPS})")
    p.add_argument("--param", metavar="KEY=VALUE", action="append", default=[],
                   help="set a workload parameter for every selected workload that has it "
                        "(repeatable; `run.py list` shows them), e.g. --param count=10000")
    p.add_argument("--threads", metavar="LIST",
                   help="thread counts for threaded workloads, e.g. 1,2,4 (default: the workload's)")
    add_output_options(p, plots_help="do not draw charts at the end")
    p.add_argument("--shard", metavar="K/N",
                   help="run only shard K of N of the cells (deterministic; join with `run.py merge`)")
    p.add_argument("--metric", choices=("time", "instructions"), default="time",
                   help="instructions: count each cell's instructions under valgrind "
                        "(deterministic; program workloads are left out)")
    p.set_defaults(full=False)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the benchmark matrix (default: --quick)")
    add_options(p)
    p.set_defaults(func=main)


class _Reporter:
    """Says each distinct runner error once, however many cells hit it."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.said: set[str] = set()

    def failure(self, doc: dict[str, Any], key: str, rep: int) -> None:
        label = runner_mod.failure_label(doc)
        message = doc.get("error") or label
        if doc.get("status") == "error":
            if message in self.said:
                return
            self.said.add(message)
            self.progress.note(f"runner error ({key}): {message}")
        elif self.progress.tty:
            # the bar overwrites its line; keep a line for every crash
            self.progress.note(f"{label}: {key} rep {rep}")


def _result_text(doc: dict[str, Any]) -> str:
    if doc.get("status") != "ok":
        return runner_mod.failure_label(doc)
    metric = (doc.get("metrics") or {}).get(doc.get("primary") or "") or {}
    value = metric.get("value")
    if not isinstance(value, (int, float)):
        return "ok"
    return f"{tables.fmt_number(float(value))} {metric.get('unit', '')}".strip()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def execute(runner: pathlib.Path, steps: list[matrix.Step], folder: pathlib.Path,
            quick: bool, timeout_s: float, count_instructions: bool = False) -> bool:
    """Runs `steps` in order, appending each document to raw.jsonl as it
    finishes. Returns True when Ctrl-C stopped it."""
    progress = Progress(len(steps), [s.cell.key for s in steps])
    reporter = _Reporter(progress)
    # Cells not run again: the runner refused their command line (it would
    # again), or they timed out (each retry would cost the whole timeout).
    abandoned: set[str] = set()
    interrupted = False
    # a polite kill (SIGTERM) stops the run the same way Ctrl-C does
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        for step in steps:
            if step.cell.key in abandoned:
                continue
            outcome = programs_mod.run_cell(runner, step.cell, quick=quick, timeout_s=timeout_s,
                                        count_instructions=count_instructions)
            doc = outcome.document
            doc["rep"] = step.rep
            doc["cell"] = step.cell.key
            try:
                atomicio.append_jsonl(folder / rundir.RAW, doc)
            except OSError as e:
                progress.finish()
                raise OutputError(f"cannot write {folder / rundir.RAW} ({e.strerror or e}): "
                                  f"stopped; every cell finished before it is kept") from None
            if outcome.status != "ok":
                reporter.failure(doc, step.cell.key, step.rep)
            progress.step(step.cell.key, outcome.seconds, step.rep, _result_text(doc))
            if outcome.usage_error or outcome.status in ("timeout", programs_mod.STATUS_NOT_INSTALLED):
                abandoned.add(step.cell.key)
                progress.drop(step.cell.key)
    except KeyboardInterrupt:
        interrupted = True
        progress.note("interrupted: keeping the finished cells")
    finally:
        signal.signal(signal.SIGTERM, previous)
    progress.finish()
    return interrupted


def main(args: argparse.Namespace) -> int:
    return run(args)[0]


def _finish_folder(folder: pathlib.Path, env: dict[str, Any], interrupted: bool
                   ) -> dict[str, Any] | None:
    """Writes env.json's end and the derived files; None (after one line on
    stderr) when the disk refuses them: raw.jsonl, already written, is what
    `run.py plot`, `compare` and `merge` read."""
    env["finished"] = rundir.now_iso()
    env["interrupted"] = interrupted
    try:
        atomicio.write_json(folder / rundir.ENV, env)
        return rundir.derive(folder)
    except OSError as e:
        print(f"run.py: cannot write the summary into {folder} ({e.strerror or e}); "
              f"raw.jsonl keeps every finished cell", file=sys.stderr)
        return None


def run(args: argparse.Namespace) -> tuple[int, pathlib.Path | None]:
    """Runs the matrix `args` describe: (exit status, the run folder it
    wrote, or None when it stopped before making one)."""
    made: list[pathlib.Path] = []
    status = _run_matrix(args, made)
    if made:
        cmd_report.finish(made[0])  # report.html, its path the last line
    return status, (made[0] if made else None)


def _run_matrix(args: argparse.Namespace, made: list[pathlib.Path]) -> int:
    """The body of `run`; appends the run folder to `made` once it exists."""
    try:
        reps = catalog_mod.parse_positive(args.reps, "--reps")
        threads = catalog_mod.parse_threads(args.threads)
        if args.timeout is not None and args.timeout <= 0:
            raise catalog_mod.SelectionError(f"--timeout: {args.timeout:g} is not a positive number of seconds")
        shard = merge.parse_shard(args.shard) if args.shard else None
    except (catalog_mod.SelectionError, ValueError) as e:
        print(f"run.py: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    count_instructions = args.metric == "instructions"
    if count_instructions and not shutil.which("valgrind"):
        print("run.py: --metric instructions needs valgrind (apt install valgrind)", file=sys.stderr)
        return EXIT_BAD_INPUT
    timeout = args.timeout or (DEFAULT_TIMEOUT_FULL_S if args.full else DEFAULT_TIMEOUT_QUICK_S)
    if count_instructions and not args.timeout:
        timeout *= VALGRIND_SLOWDOWN

    # replaying a trace needs zstd as well; only then is it installed
    traced = "trace:" in (getattr(args, "workload", None) or "")
    runner = obtain_runner(args.runner, not args.no_install,
                           deps.RUN_PACKAGES + (deps.TRACE_PACKAGES if traced else ()))
    if isinstance(runner, int):
        return runner
    try:
        cat = catalog_mod.load(runner)
    except RuntimeError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1
    try:
        allocators = catalog_mod.select_allocators(cat, args.alloc)
        workloads = suites.choose(cat.workloads, catalog_mod.select_workloads(cat, args.workload, runner),
                                  args.workload, getattr(args, "suite", None))
        params = catalog_mod.parse_params(getattr(args, "param", None) or [], workloads)
    except catalog_mod.SelectionError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if getattr(args, "suite", None) in ("programs", "all"):
        programs_mod.ensure_packages(not args.no_install)
    for b in cat.broken_scripts:
        print(f"run.py: skipping broken script {b.get('error')}", file=sys.stderr)

    alloc_info = []
    for name in allocators:
        a = cat.allocator(name)
        alloc_info.append({"name": name, "available": a.available if a else True,
                           "reason": a.reason if a else None, "version": a.version if a else None})
    unavailable = {a["name"] for a in alloc_info if not a["available"]}
    for a in alloc_info:
        if not a["available"]:
            print(f"run.py: {a['reason'] or a['name'] + ': not available'}; not run",
                  file=sys.stderr)

    if count_instructions:
        programs = [w.name for w in workloads if w.kind == "program"]
        if programs:
            print(f"run.py: --metric instructions leaves out program workloads: {', '.join(programs)}",
                  file=sys.stderr)
        workloads = [w for w in workloads if w.kind != "program"]
    cells = matrix.plan_cells(workloads, allocators, threads, params)
    if shard:
        cells = merge.shard_of(cells, shard[0], shard[1], key=lambda c: c.key)
    steps = [s for s in matrix.interleave(cells, reps) if s.cell.allocator not in unavailable]
    parent = pathlib.Path(args.out) if args.out else paths.results_runs()
    options = {"quick": not args.full, "reps": reps, "threads": threads, "timeout_s": timeout,
               "workload": args.workload, "alloc": args.alloc, "shard": args.shard,
               "param": list(getattr(args, "param", None) or []),
               "metric": args.metric}
    env = rundir.env_document(paths.REPO_ROOT, sys.argv, options, runner, cat.raw,
                              plan_json(cells, alloc_info, reps))
    try:
        folder = rundir.create(parent)
        made.append(folder)
        atomicio.write_json(folder / rundir.ENV, env)
        rundir.point_latest(folder)
    except OSError as e:
        print(f"run.py: cannot start a run folder under {parent} ({e.strerror or e})",
              file=sys.stderr)
        return EXIT_FAILED_CELLS
    print(f"run: {len(steps)} runs ({len(cells)} cells × {reps} reps) into {folder}", file=sys.stderr)
    for name, pairs in params.items():
        print(f"run: {name} with {catalog_mod.format_params(pairs)}", file=sys.stderr)

    try:
        interrupted = execute(runner, steps, folder, quick=not args.full, timeout_s=timeout,
                              count_instructions=count_instructions)
    except OutputError as e:
        print(f"run.py: {e}", file=sys.stderr)
        _finish_folder(folder, env, interrupted=True)
        return EXIT_FAILED_CELLS
    result = _finish_folder(folder, env, interrupted)
    if result is None:
        return EXIT_FAILED_CELLS
    print(tables.markdown(result))
    print(f"run folder: {folder}", file=sys.stderr)

    if interrupted:
        return EXIT_INTERRUPTED
    if not args.no_plots:
        cmd_plot.draw(folder)
    failed = [c for c in result["cells"] if c["failures"] and not programs_mod.not_installed_only(c)]
    if failed:
        print(f"run.py: {len(failed)} cell(s) had failed runs: "
              + ", ".join(f"{c['cell']} {c['failures'][0]['label']}" for c in failed), file=sys.stderr)
        return EXIT_FAILED_CELLS
    return 0
