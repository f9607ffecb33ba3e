"""Paired repetitions inside one run: allocator X's repetition k against the
baseline's repetition k.

A run interleaves its repetitions (repetition 1 of every cell, then
repetition 2, ...), so repetition k of two allocators ran back to back and
shares whatever the host was doing then: a slow minute slows both. The
ratio X_k / baseline_k cancels what they share, and the signed-rank test on
log(X_k / baseline_k) asks whether those ratios centre on 1. The ratio's
median, min and max say how large the difference is and how steady.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from . import detectable, stability
from .signedrank import signed_rank


def pairs_by_rep(base_values: Sequence[float], base_reps: Sequence[Any],
                 new_values: Sequence[float], new_reps: Sequence[Any]
                 ) -> list[tuple[float, float]] | None:
    """(base_k, new_k) for every repetition number k that both sides have,
    in repetition order; None when a side has a repetition without a number
    or the same number twice (then nothing says which ran beside which)."""
    sides = []
    for values, reps in ((base_values, base_reps), (new_values, new_reps)):
        if not stability.numbered(values, reps):
            return None
        sides.append(dict(zip(reps, values)))
    base, new = sides
    common = sorted(base.keys() & new.keys(), key=lambda r: (str(type(r)), r))
    return [(base[k], new[k]) for k in common]


@dataclass(frozen=True)
class PairedResult:
    """The signed-rank test of one cell's per-repetition ratios NEW_k/BASE_k."""

    n: int
    ratio_median: float
    ratio_min: float
    ratio_max: float
    w_plus: float
    p_value: float
    method: str
    detectable: detectable.Detectable | None
    log_ratios: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "ratio_median": self.ratio_median, "ratio_min": self.ratio_min,
                "ratio_max": self.ratio_max, "ratio_max_over_min": self.ratio_max / self.ratio_min,
                "w_plus": self.w_plus, "p_value": self.p_value, "test": f"signed-rank {self.method}"}


def paired_test(pairs: Sequence[tuple[float, float]], alpha: float) -> PairedResult | None:
    """The paired comparison of `pairs` (base_k, new_k); None when there is
    no pair or a value is not positive (a ratio needs both)."""
    if not pairs or min(min(b, x) for b, x in pairs) <= 0:
        return None
    ratios = [x / b for b, x in pairs]
    logs = tuple(math.log(r) for r in ratios)
    test = signed_rank(logs)
    return PairedResult(n=len(pairs), ratio_median=statistics.median(ratios),
                        ratio_min=min(ratios), ratio_max=max(ratios), w_plus=test.w_plus,
                        p_value=test.p_value, method=test.method,
                        detectable=detectable.paired(logs, alpha), log_ratios=logs)
