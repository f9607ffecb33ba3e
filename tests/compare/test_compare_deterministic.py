"""Instruction counts do not move between runs, so compare decides on the
threshold alone for them, even from a single repetition."""
from __future__ import annotations

from heaplab.compare import SLOWER, UNCHANGED, FASTER, NOT_SIGNIFICANT, Samples, compare_cell


def _samples(values: list[float], allocator: str = "heaplab") -> Samples:
    return Samples(workload="tmalloc-st-64", group="tmalloc", threads=1, allocator=allocator,
                   metric="instructions", unit="instructions", better="lower",
                   values=list(values))


def test_one_repetition_of_instructions_twenty_percent_more_is_slower() -> None:
    cell = compare_cell(_samples([1_000_000]), _samples([1_200_000]), "heaplab", 0.05, 0.05)
    assert cell.verdict == SLOWER
    assert cell.test == "deterministic"
    assert not cell.warnings


def test_instructions_within_the_threshold_are_unchanged() -> None:
    cell = compare_cell(_samples([1_000_000]), _samples([1_030_000]), "heaplab", 0.05, 0.05)
    assert cell.verdict == UNCHANGED


def test_fewer_instructions_beyond_the_threshold_are_faster() -> None:
    cell = compare_cell(_samples([1_000_000, 1_000_010]), _samples([800_000]), "heaplab",
                        0.05, 0.05)
    assert cell.verdict == FASTER


def test_instruction_counts_that_wander_are_not_trusted() -> None:
    # a side whose repetitions differ by 10% is not deterministic: no verdict
    cell = compare_cell(_samples([1_000_000, 1_100_000]), _samples([1_300_000]), "heaplab",
                        0.05, 0.05)
    assert cell.verdict == NOT_SIGNIFICANT
    assert any("varies" in w for w in cell.warnings)
