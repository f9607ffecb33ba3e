"""How steady a cell's repetitions are: their spread, and whether they drift.

- variation: max / min of the repetitions (1.0 = identical) and their
  coefficient of variation (sample standard deviation / mean);
- drift: the repetitions in the order they ran, fitted with a Theil-Sen
  line (the median of the slopes between every two repetitions, which one
  outlier cannot tilt). `rise` is the line's change from the first
  repetition to the last, relative to the median; `scatter` is the spread
  of the repetitions around the line (1.4826 x their median absolute
  residual, a standard deviation that outliers do not inflate), relative to
  the median too. A cell drifts when the rise is beyond the threshold that
  matters and beyond DRIFT_SCATTERS times the scatter: the machine changed
  during the run by more than the repetitions disagree among themselves
  (the check pyperf makes as `check`, for a trend rather than a spread).

Worked example: 50, 51, 52, ..., 58 (nine repetitions) rise 8/54 = 14.8%
with no scatter, so they drift; the same values in a shuffled order have a
flat line and do not.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Sequence

# A trend must exceed this many scatters to count as drift: random order
# gives a Theil-Sen rise of about one scatter over nine repetitions.
DRIFT_SCATTERS = 3.0
DRIFT_MIN_REPETITIONS = 5
# 1.4826 x the median absolute deviation estimates a normal standard deviation.
MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class Variation:
    """max / min and the coefficient of variation of one cell's repetitions."""

    max_over_min: float | None
    cv: float | None


def variation(values: Sequence[float]) -> Variation:
    """max / min (None unless every value is positive) and stdev / mean
    (None for fewer than two values or a mean of 0)."""
    ratio = max(values) / min(values) if values and min(values) > 0 else None
    cv = None
    if len(values) >= 2:
        mean = statistics.fmean(values)
        cv = statistics.stdev(values) / abs(mean) if mean != 0 else None
    return Variation(ratio, cv)


def numbered(values: Sequence[float], reps: Sequence[Any]) -> bool:
    """True when every value has a repetition number, none twice."""
    return len(reps) == len(values) and None not in reps and len(set(reps)) == len(reps)


def in_run_order(values: Sequence[float], reps: Sequence[Any]) -> list[float]:
    """The values sorted by repetition number when `numbered`, else as
    given (the order a run wrote them in)."""
    if numbered(values, reps):
        return [v for _, v in sorted(zip(reps, values), key=lambda rv: rv[0])]
    return list(values)


@dataclass(frozen=True)
class Drift:
    """A Theil-Sen trend through repetitions in run order (see module doc)."""

    rise: float       # (last - first point of the line) / median
    scatter: float    # robust standard deviation around the line / median
    n: int

    def beyond(self, threshold: float) -> bool:
        return abs(self.rise) > threshold and abs(self.rise) > DRIFT_SCATTERS * self.scatter


def drift(values_in_order: Sequence[float]) -> Drift | None:
    """The trend of repetitions in the order they ran; None for fewer than
    DRIFT_MIN_REPETITIONS or a median that is not positive."""
    n = len(values_in_order)
    if n < DRIFT_MIN_REPETITIONS:
        return None
    middle = statistics.median(values_in_order)
    if middle <= 0:
        return None
    slope = statistics.median((values_in_order[j] - values_in_order[i]) / (j - i)
                              for i in range(n) for j in range(i + 1, n))
    intercept = statistics.median(v - slope * i for i, v in enumerate(values_in_order))
    residuals = [v - (intercept + slope * i) for i, v in enumerate(values_in_order)]
    scatter = MAD_TO_SD * statistics.median(abs(r) for r in residuals)
    return Drift(rise=slope * (n - 1) / middle, scatter=scatter / middle, n=n)


def describe_drift(found: Drift) -> str:
    """`rise 14.8% from the first repetition to the last (scatter 0.0%)`."""
    way = "rise" if found.rise > 0 else "fall"
    return (f"{way} {abs(found.rise):.1%} from the first of {found.n} repetitions to the last "
            f"(scatter around the trend {found.scatter:.1%})")


def format_variation(found: Variation) -> str:
    """`×1.57, cv 15.2%` (– for a figure that does not exist)."""
    ratio = "–" if found.max_over_min is None else f"×{found.max_over_min:.2f}"
    cv = "–" if found.cv is None else f"{found.cv:.1%}"
    return f"{ratio}, cv {cv}"
