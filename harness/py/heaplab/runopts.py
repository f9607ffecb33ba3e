"""Building a matrix plan from choices (what `run` and `ci` ask for), and the
command-line options the commands that run a plan share.

Every check of the user's input happens here, before a run folder exists:
a bad --threads, --reps, --seed, --param, --alloc (an so: library that is
not there) or --workload is one line and exit status 2.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Any

from . import catalog as catalog_mod, execution, matrix, programs as programs_mod, shards, suites
from .catalog import Catalog, SelectionError


def add_output_options(p: argparse.ArgumentParser, plots_help: str) -> None:
    """The options every subcommand that runs a plan shares (run, reproduce)."""
    p.add_argument("--out", metavar="DIR",
                   help="parent of the run folder (default results/runs); DIR/latest points at it")
    p.add_argument("--timeout", metavar="S", type=float,
                   help=f"seconds per process (default {execution.DEFAULT_TIMEOUT_QUICK_S:g} quick, "
                        f"{execution.DEFAULT_TIMEOUT_FULL_S:g} full)")
    p.add_argument("--no-install", action="store_true", help="never install Debian packages")
    p.add_argument("--no-plots", action="store_true", help=plots_help)
    p.add_argument("--runner", help="use this heaplab-run (default: $HEAPLAB_RUN or build it)")


def check_timeout(timeout: float | None) -> None:
    if timeout is not None and not timeout > 0:
        raise SelectionError(f"--timeout: {timeout:g} is not a positive number of seconds")


def parse_seed(text: str | None) -> int | None:
    """--seed S: a whole number >= 0 the runner mixes into every random stream."""
    if text is None:
        return None
    if not text.isdigit():
        raise SelectionError(f"--seed: '{text}' is not a whole number >= 0")
    return int(text)


@dataclass
class Choices:
    """What the user asked the matrix to be, as text from the command line."""
    quick: bool = True
    workload: str | None = None
    suite: str | None = None
    alloc: str | None = None
    reps: str = "5"
    params: list[str] = field(default_factory=list)
    threads: str | None = None
    shard: str | None = None
    metric: str = "time"
    seed: str | None = None
    timeout: float | None = None


@dataclass
class Checked:
    """Choices parsed before the runner is needed (no catalog yet)."""
    reps: int
    threads: list[int]
    shard: tuple[int, int] | None
    seed: int | None
    timeout_s: float


def check(choices: Choices) -> Checked:
    """SelectionError (one line) for input that is bad whatever the runner offers."""
    try:
        shard = shards.parse_shard(choices.shard) if choices.shard else None
    except ValueError as e:
        raise SelectionError(str(e)) from None
    check_timeout(choices.timeout)
    count = choices.metric == "instructions"
    return Checked(reps=catalog_mod.parse_positive(choices.reps, "--reps"),
                   threads=catalog_mod.parse_threads(choices.threads), shard=shard,
                   seed=parse_seed(choices.seed),
                   timeout_s=choices.timeout or execution.default_timeout(choices.quick, count))


def matrix_plan(choices: Choices, checked: Checked, cat: Catalog, runner: pathlib.Path,
                allow_install: bool, who: str = "run") -> execution.Plan:
    """The plan of a matrix run; SelectionError on a name the catalog lacks.
    Says on stderr what is left out (broken scripts, allocators that are not
    installed, programs under --metric instructions)."""
    allocators = catalog_mod.select_allocators(cat, choices.alloc)
    workloads = suites.choose(cat.workloads, catalog_mod.select_workloads(cat, choices.workload, runner),
                              choices.workload, choices.suite)
    params = catalog_mod.parse_params(choices.params, workloads)
    if choices.suite in ("programs", "all"):
        programs_mod.ensure_packages(allow_install)
    for b in cat.broken_scripts:
        print(f"{who}: skipping broken script {b.get('error')}", file=sys.stderr)
    # columns go by NAME for NAME=so:PATH (the cells carry what the runner gets)
    info = execution.allocator_info(cat, [catalog_mod.alloc_name(a) for a in allocators])
    for a in info:
        if not a["available"]:
            print(f"{who}: {a['reason'] or a['name'] + ': not available'}; not run", file=sys.stderr)
    count = choices.metric == "instructions"
    if count:
        programs = [w.name for w in workloads if w.kind == programs_mod.KIND_PROGRAM]
        if programs:
            print(f"{who}: --metric instructions leaves out program workloads: {', '.join(programs)}",
                  file=sys.stderr)
        workloads = [w for w in workloads if w.kind != programs_mod.KIND_PROGRAM]
    cells = matrix.plan_cells(workloads, allocators, checked.threads, params, checked.seed)
    if checked.shard:
        cells = shards.shard_of(cells, checked.shard[0], checked.shard[1], key=lambda c: c.label)
    for name, pairs in params.items():
        print(f"{who}: {name} with {catalog_mod.format_params(pairs)}", file=sys.stderr)
    options: dict[str, Any] = {
        "quick": choices.quick, "reps": checked.reps, "threads": checked.threads,
        "timeout_s": checked.timeout_s, "workload": choices.workload, "alloc": choices.alloc,
        "shard": choices.shard, "param": list(choices.params), "metric": choices.metric,
        "seed": checked.seed}
    return execution.Plan(cells=cells, allocators=info, reps=checked.reps, quick=choices.quick,
                          timeout_s=checked.timeout_s, count_instructions=count, options=options)
