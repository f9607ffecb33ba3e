"""The Wilcoxon signed-rank test (two-sided), written out so heaplab needs no SciPy.

One sample of paired differences d (here: the log of NEW/BASE, repetition
by repetition); the null hypothesis is that d is symmetric about 0. The
differences that are exactly 0 are dropped (Wilcoxon's rule), the rest are
ranked by |d| (tied magnitudes share their mean rank), and W+ is the sum of
the ranks of the positive differences. Under the null hypothesis every sign
pattern is equally likely, which gives W+'s distribution:

- exact: up to EXACT_MAX_N differences, counted outright over the 2^n sign
  patterns (a dynamic programme over the ranks; tied ranks are doubled so
  they stay integers, which keeps the count exact with ties too);
- normal: otherwise, mean n(n+1)/4 and variance n(n+1)(2n+1)/24 less
  sum(t^3 - t)/48 over tied groups, with a continuity correction of 1/2.

Worked example (n = 5, d = 1, 2, 3, -4, 5): ranks 1..5, W+ = 11; 7 of the
32 sign patterns give W+ <= 4 (its mirror image), so p = 2 * 7/32 = 0.4375.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Sequence

from .mannwhitney import midranks, tie_group_sizes

# Up to this many non-zero differences the exact distribution is counted
# (2 * n(n+1)/2 + 1 sums at most: cheap); above it the normal one is used.
EXACT_MAX_N = 30

Method = Literal["auto", "exact", "normal"]


@dataclass(frozen=True)
class SignedRankResult:
    """Outcome of one two-sided Wilcoxon signed-rank test.

    w_plus / w_minus: rank sums of the positive / negative differences.
    n: differences used (zeros dropped); zeros: how many were dropped.
    p_value: two-sided, in [0, 1]; method: "exact" or "normal".
    """

    w_plus: float
    w_minus: float
    p_value: float
    method: str
    n: int
    zeros: int
    ties: bool


@lru_cache(maxsize=None)
def exact_sum_counts(doubled_ranks: tuple[int, ...]) -> tuple[int, ...]:
    """counts[s] = how many of the 2^n sign patterns give a positive-rank
    sum of s (in doubled-rank units: s = 2 W+)."""
    counts = [1]
    for rank in doubled_ranks:
        grown = counts + [0] * rank
        for s, c in enumerate(counts):
            grown[s + rank] += c
        counts = grown
    return tuple(counts)


def exact_two_sided_p(doubled_w_plus: int, doubled_ranks: tuple[int, ...]) -> float:
    """Twice the smaller tail of W+'s exact distribution, capped at 1."""
    counts = exact_sum_counts(tuple(sorted(doubled_ranks)))
    total = sum(counts)
    lower = sum(counts[: doubled_w_plus + 1])
    upper = sum(counts[doubled_w_plus:])
    return min(1.0, 2.0 * min(lower, upper) / total)


def normal_two_sided_p(w_plus: float, n: int, tie_sizes: Sequence[int],
                       continuity: bool = True) -> float:
    """Two-sided p of W+ from the normal approximation with tie correction."""
    mean = n * (n + 1) / 4.0
    variance = n * (n + 1) * (2 * n + 1) / 24.0 - sum(t ** 3 - t for t in tie_sizes) / 48.0
    if variance <= 0.0:
        return 1.0
    distance = abs(w_plus - mean)
    if continuity:
        distance = max(0.0, distance - 0.5)
    return min(1.0, math.erfc(distance / math.sqrt(2.0 * variance)))


def critical_w(n: int, alpha: float) -> int | None:
    """The smallest W+ whose two-sided p is below alpha when n tie-free,
    non-zero differences are tested (the same method `signed_rank` would
    use), or None when no W+ can reach it (n too small: n = 5 gives at best
    p = 2/32)."""
    total = n * (n + 1) // 2
    for w in range((total + 1) // 2, total + 1):
        if n <= EXACT_MAX_N:
            p = exact_two_sided_p(2 * w, tuple(2 * r for r in range(1, n + 1)))
        else:
            p = normal_two_sided_p(w, n, [])
        if p < alpha:
            return w
    return None


def signed_rank(differences: Sequence[float], method: Method = "auto",
                continuity: bool = True) -> SignedRankResult:
    """Two-sided Wilcoxon signed-rank test of `differences` against 0.

    "auto" counts the exact distribution up to EXACT_MAX_N non-zero
    differences, else uses the normal approximation. No non-zero difference
    at all gives p = 1. Non-finite values are refused (ValueError)."""
    for d in differences:
        if not math.isfinite(d):
            raise ValueError(f"signed_rank: difference {d!r} is not a finite number")
    nonzero = [d for d in differences if d != 0.0]
    zeros = len(differences) - len(nonzero)
    n = len(nonzero)
    if n == 0:
        return SignedRankResult(0.0, 0.0, 1.0, "exact", 0, zeros, False)
    ranks = midranks([abs(d) for d in nonzero])
    w_plus = sum(r for r, d in zip(ranks, nonzero) if d > 0)
    w_minus = n * (n + 1) / 2.0 - w_plus
    tie_sizes = tie_group_sizes([abs(d) for d in nonzero])
    if method == "auto":
        method = "exact" if n <= EXACT_MAX_N else "normal"
    if method == "exact":
        # midranks are whole or half numbers: doubled, they are integers
        p = exact_two_sided_p(int(round(2 * w_plus)), tuple(int(round(2 * r)) for r in ranks))
    elif method == "normal":
        p = normal_two_sided_p(w_plus, n, tie_sizes, continuity)
    else:
        raise ValueError(f"signed_rank: unknown method {method!r} (auto, exact, normal)")
    return SignedRankResult(w_plus=w_plus, w_minus=w_minus, p_value=p, method=method,
                            n=n, zeros=zeros, ties=bool(tie_sizes))
