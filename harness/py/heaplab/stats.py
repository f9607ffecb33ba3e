"""Statistics over repetitions: median, min, max, and ratios of medians.

Every value is kept; nothing is filtered out before or after storing, so a
wide min–max is visible rather than hidden.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Spread:
    median: float
    min: float
    max: float
    n: int


def spread(values: Iterable[float]) -> Spread | None:
    """Median, min, max and count of every value given (the one place they
    are computed; nothing is filtered out); None for no values."""
    values = list(values)
    if not values:
        return None
    return Spread(float(statistics.median(values)), float(min(values)), float(max(values)), len(values))


def ratio(median: float | None, baseline: float | None) -> float | None:
    """median / baseline, or None when either is missing or the baseline is 0."""
    if median is None or baseline is None or baseline == 0:
        return None
    return median / baseline
