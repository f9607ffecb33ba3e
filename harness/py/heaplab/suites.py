"""Named sets of workloads (`--suite NAME` on run and list).

  seeds     the rows of the published seed tables (results/published/)
  classic   the classic multi-threaded benchmarks (group "classic")
  programs  the real programs (program workloads, workloads/prog-*.wl)
  all       every workload

A suite is computed from the catalog and the published tables, never a
hard-coded list of names, so a new script or table joins its suite.
"""
from __future__ import annotations

from typing import Callable, Sequence

from . import published
from .catalog import SelectionError, Workload

GROUP_CLASSIC = "classic"
KIND_PROGRAM = "program"


def _seed_names() -> set[str]:
    # the seeds' own tables only: other published sources (mimalloc's README)
    # measure the classic benchmarks, which have a suite of their own
    return {r.workload for t in published.load_all() if t.seed is not None
            for r in t.rows if r.workload}


def _seeds(workloads: Sequence[Workload]) -> list[Workload]:
    names = _seed_names()
    return [w for w in workloads if w.name in names]


SUITES: dict[str, tuple[str, Callable[[Sequence[Workload]], list[Workload]]]] = {
    "seeds": ("the rows of the published seed tables", _seeds),
    "classic": ("the classic multi-threaded benchmarks",
                lambda ws: [w for w in ws if w.group == GROUP_CLASSIC]),
    "programs": ("real programs from Debian packages, with evidence of the allocator",
                 lambda ws: [w for w in ws if w.kind == KIND_PROGRAM]),
    "all": ("every workload", list),
}


def select(workloads: Sequence[Workload], name: str) -> list[Workload]:
    """The workloads of suite `name`, in catalog order."""
    if name not in SUITES:
        raise SelectionError(f"unknown suite '{name}'; suites: {', '.join(SUITES)}")
    return SUITES[name][1](workloads)


def narrow(selected: Sequence[Workload], workloads: Sequence[Workload],
           suite: str | None) -> list[Workload]:
    """`selected` (from --workload) limited to the suite, when one is named."""
    if not suite:
        return list(selected)
    members = {w.name for w in select(workloads, suite)}
    return [w for w in selected if w.name in members]


def describe() -> str:
    return "; ".join(f"{name}: {text}" for name, (text, _) in SUITES.items())


# The program workloads a plain `./run.py` (no --workload, no --suite)
# includes: those whose quick size takes well under a second, so the
# default run stays about three minutes; `--suite programs` runs them all.
QUICK_PROGRAMS = ("prog-python-dict", "prog-sort", "prog-redis", "prog-sqlite", "prog-z3")


def choose(workloads: Sequence[Workload], selected: Sequence[Workload],
           workload_spec: str | None, suite: str | None) -> list[Workload]:
    """What a run runs: the suite (narrowed by --workload), or what
    --workload selected, or by default every workload but the slower programs."""
    if suite:
        return narrow(selected, workloads, suite)
    if workload_spec:
        return list(selected)
    return [w for w in selected if w.kind != KIND_PROGRAM or w.name in QUICK_PROGRAMS]
