"""Instructions per operation: an instruction count divided by the
allocator calls the workload made.

The runner's document says how many calls through the allocator table
(malloc, calloc, realloc, aligned_alloc, free, free_sized) the workload's
run() made: "operations" (heaplab.run/1, docs/schema.md). Instruction
counts cover the same stretch, run() less the harness's sampling, so the
quotient is what one allocator call costs with the workload's own work
around it (its loop, writing into blocks, its bookkeeping) -- not the
instructions inside the allocator alone. Program workloads (and documents
written before the field existed) have no count: their cells show the
total only.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from . import fmt
from .instructions import INSTRUCTIONS_METRIC

OPERATIONS_KEY = "operations"
SUFFIX = "/op"


def operations_of(doc: Mapping[str, Any]) -> int | None:
    """The document's count of allocator calls, or None (a program, an
    older document, a failed run)."""
    value = doc.get(OPERATIONS_KEY)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def applies(metric: str | None) -> bool:
    """Figures of this metric are shown per operation as well as in total."""
    return metric == INSTRUCTIONS_METRIC


def per_operation(total: float | None, operations: float | None) -> float | None:
    """total / operations, or None when either is missing or there were no
    operations."""
    if total is None or operations is None or operations <= 0:
        return None
    return total / operations


def text(value: float | None, number: Callable[[float], str] = fmt.number) -> str:
    """`72.1/op`, or '' for no figure."""
    return "" if value is None else f"{number(value)}{SUFFIX}"
