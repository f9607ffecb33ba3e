"""The run matrix: which cells exist and in which order they run.

A cell is one (workload, thread count, allocator); each repetition of a cell
is one runner process. Repetitions are interleaved: repetition 1 of every
cell, then repetition 2 of every cell, and so on, so slow drift of the
machine (thermal, other tenants) spreads over all allocators alike instead
of favouring whichever ran first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .catalog import Workload, alloc_name
from .runfolder import CellKey


@dataclass(frozen=True)
class Cell:
    workload: Workload
    allocator: str
    threads: int
    # Whether to pass --threads to the runner (only for a threaded workload
    # when the user gave --threads); otherwise the runner's default is used.
    pass_threads: bool = False
    # Workload parameters set by the user (--param), as sorted (name, value)
    # pairs; every cell of a run has the same ones for its workload, so they
    # are not part of the key.
    params: tuple[tuple[str, int], ...] = ()
    # the runner's --seed, when the user gave one (the same for every cell)
    seed: int | None = None
    # what the runner's --alloc gets when it differs from the name
    # (NAME=so:PATH[:PREFIX] runs as that, is called NAME)
    alloc_arg: str = ""

    @property
    def key(self) -> CellKey:
        """The key its documents are stored under (and read back by)."""
        return CellKey(self.workload.name, self.threads, self.allocator, self.params)

    @property
    def label(self) -> str:
        """'workload/allocator/Nt', for progress lines and messages."""
        return self.key.label()

    @property
    def row(self) -> tuple[str, int]:
        return (self.workload.name, self.threads)


@dataclass(frozen=True)
class Step:
    rep: int        # 1-based repetition number
    cell: Cell


def plan_cells(workloads: Sequence[Workload], allocators: Sequence[str],
               threads: Sequence[int],
               params: Mapping[str, tuple[tuple[str, int], ...]] | None = None,
               seed: int | None = None) -> list[Cell]:
    """Cells in table order: workload, then thread count, then allocator.
    `params` maps a workload's name to the parameters set for it;
    `allocators` are --alloc entries (NAME=so:PATH becomes NAME's cells)."""
    cells: list[Cell] = []
    for w in workloads:
        counts = list(threads) if (w.threaded and threads) else [w.default_threads]
        mine = (params or {}).get(w.name, ())
        for t in counts:
            for spec in allocators:
                a = alloc_name(spec)
                cells.append(Cell(w, a, t, pass_threads=bool(w.threaded and threads), params=mine,
                                  seed=seed, alloc_arg="" if a == spec else spec))
    return cells


def interleave(cells: Sequence[Cell], reps: int) -> list[Step]:
    """Repetition-major order: every cell once, then every cell again, ..."""
    return [Step(rep, cell) for rep in range(1, reps + 1) for cell in cells]
