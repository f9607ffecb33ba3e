"""Instruction counts of real runner cells are deterministic enough to gate
CI on: two runs of the same single-threaded cell agree within 0.1%, for an
allocator linked in (heaplab) and for one the runner re-executes itself to
load (jemalloc: static TLS; mimalloc: preloaded)."""
from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from heaplab import instructions

REPO = pathlib.Path(__file__).resolve().parents[2]
RUNNER = pathlib.Path(os.environ.get("HEAPLAB_RUN", REPO / "build" / "heaplab-run"))

pytestmark = [
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(not RUNNER.exists(), reason=f"no runner at {RUNNER}"),
]


def count(allocator: str) -> int:
    argv = [str(RUNNER), "--alloc", allocator, "--workload", "tmalloc-st-reverse",
            "--param", "rounds=20"]
    return instructions.run_under_callgrind(argv, timeout=120).instructions


@pytest.mark.parametrize("allocator", ["heaplab", "jemalloc", "mimalloc"])
def test_two_runs_of_a_single_threaded_cell_agree_within_a_tenth_of_a_percent(allocator):
    first, second = count(allocator), count(allocator)
    assert first > 0
    assert abs(first - second) <= first * 0.001, (first, second)
