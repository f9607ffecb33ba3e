"""Sharding the matrix: `run --shard K/N` runs a deterministic share of the
cells, and `merge` joins the shards back (heaplab.merge)."""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from .runfolder import CellKey


def canonical_key(cell: Any) -> str:
    """A text form of a cell that is the same for equal cells whatever their
    Python type (tuple or list, dict key order), used to order and identify
    them. Only JSON values (str, numbers, lists, dicts) are accepted: the text
    of other objects may change from one process to the next. A CellKey
    stands for its label, as `run --shard` deals plan cells by theirs, so a
    document lands in the shard its cell was run in."""
    if isinstance(cell, CellKey):
        cell = cell.label()
    try:
        return json.dumps(cell, sort_keys=True, separators=(",", ":"))
    except TypeError:
        raise TypeError(f"cell {cell!r} is not a JSON value; pass key= to shard_of") from None


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N) with 1 <= K <= N; ValueError with a one-line message otherwise."""
    parts = text.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--shard {text!r}: expected K/N, e.g. 2/4")
    k, n = int(parts[0]), int(parts[1])
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"--shard {text!r}: K must be between 1 and N (N >= 1)")
    return k, n


def shard_of(cells: Sequence[Any], k: int, n: int,
             key: Callable[[Any], Any] | None = None) -> list[Any]:
    """The cells shard k of n runs (k counts from 1), in their given order.

    Each cell is identified by key(cell) (default: the cell itself), which
    must be a JSON value such as run.py's "workload/allocator/Nt" string. The
    distinct keys are sorted and dealt round-robin, so for a given cell set
    the shards are deterministic (whatever the input order or process), of
    sizes differing by at most one, and shards 1..n partition it. Cells with
    equal keys land in the same shard.
    """
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"shard {k}/{n}: K must be between 1 and N (N >= 1)")
    identify = (lambda c: canonical_key(key(c))) if key else canonical_key
    keys = [identify(c) for c in cells]
    mine = {ident for position, ident in enumerate(sorted(set(keys))) if position % n == k - 1}
    return [c for c, ident in zip(cells, keys) if ident in mine]
