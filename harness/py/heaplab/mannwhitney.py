"""The Mann-Whitney U test (two-sided), written out so heaplab needs no SciPy.

Two independent samples x and y; the null hypothesis is that both come from
the same distribution. U counts the pairs (x_i, y_j) with x_i > y_j, a tie
counting one half. Under the null hypothesis every way of interleaving the
pooled, sorted values between the two samples is equally likely, which gives
U's distribution:

- exact: when there are no ties and both samples are small, U's distribution is
  counted outright (a dynamic programme over who holds the largest value);
- normal: otherwise U is approximated by a normal distribution whose variance
  is reduced for tied values, with the usual continuity correction of 1/2.

This is the test Google Benchmark's compare tool runs on repetitions; it makes
no assumption about the shape of the timing distribution, which on a noisy VM
is anything but normal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

# Above this many values per side the exact distribution costs more than it is
# worth: the normal approximation is then within a few 1e-3 of it.
EXACT_MAX_PER_SIDE = 20

# Google Benchmark's compare tool warns when a side has fewer repetitions than
# this: below it the U test can rarely reach p < 0.05.
RECOMMENDED_REPETITIONS = 9

Method = Literal["auto", "exact", "normal"]


@dataclass(frozen=True)
class MannWhitneyResult:
    """Outcome of one two-sided Mann-Whitney U test.

    u_x: pairs with x > y (ties count 1/2); u_y = n_x * n_y - u_x.
    p_value: two-sided, in [0, 1].
    method: "exact" or "normal", the distribution actually used.
    ties: True when any value occurs more than once in the pooled sample.
    """

    u_x: float
    u_y: float
    p_value: float
    method: str
    n_x: int
    n_y: int
    ties: bool


def midranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n of `values` in their given order; tied values share the
    mean of the ranks they span (so [5, 3, 5] ranks as [2.5, 1, 2.5])."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        shared = (start + end) / 2.0 + 1.0  # mean of ranks start+1 .. end+1
        for k in range(start, end + 1):
            ranks[order[k]] = shared
        start = end + 1
    return ranks


def tie_group_sizes(values: Sequence[float]) -> list[int]:
    """Sizes of the groups of equal values that have more than one member."""
    counts: dict[float, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return [c for c in counts.values() if c > 1]


def u_statistic(x: Sequence[float], y: Sequence[float]) -> float:
    """U of x: the number of pairs with x_i > y_j, ties counting one half
    (computed from the rank sum of x, which is the same thing)."""
    ranks = midranks(list(x) + list(y))
    rank_sum_x = sum(ranks[: len(x)])
    return rank_sum_x - len(x) * (len(x) + 1) / 2.0


def exact_u_counts(n_x: int, n_y: int) -> list[int]:
    """counts[u] = how many of the C(n_x+n_y, n_x) interleavings of two
    tie-free samples give U of x equal to u (u = 0 .. n_x*n_y).

    The largest pooled value belongs either to x, in which case it beats all
    n_y values of y and adds n_y to U, or to y, in which case it adds nothing:
    table[i][j] = shift(table[i-1][j], j) + table[i][j-1].
    """
    # table[j] holds the counts for (i, j) while row i is being built.
    prev_row: list[list[int]] = [[1] for _ in range(n_y + 1)]  # i = 0: U is 0
    for i in range(1, n_x + 1):
        row: list[list[int]] = [[1]]  # j = 0: x holds everything, U is 0
        for j in range(1, n_y + 1):
            with_x_on_top = prev_row[j]       # shifted by j
            with_y_on_top = row[j - 1]        # not shifted
            size = i * j + 1
            counts = [0] * size
            for u, c in enumerate(with_x_on_top):
                counts[u + j] += c
            for u, c in enumerate(with_y_on_top):
                counts[u] += c
            row.append(counts)
        prev_row = row
    return prev_row[n_y]


def exact_two_sided_p(u_x: float, n_x: int, n_y: int) -> float:
    """Two-sided p-value of U of x = u_x from the exact distribution:
    twice the smaller tail, capped at 1."""
    counts = exact_u_counts(n_x, n_y)
    total = sum(counts)
    u = int(round(u_x))
    lower = sum(counts[: u + 1])   # P(U <= u) * total
    upper = sum(counts[u:])        # P(U >= u) * total
    return min(1.0, 2.0 * min(lower, upper) / total)


def normal_two_sided_p(u_x: float, n_x: int, n_y: int, tie_sizes: Sequence[int],
                       continuity: bool = True) -> float:
    """Two-sided p-value of U of x = u_x from the normal approximation.

    mean = n_x n_y / 2; variance = n_x n_y / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
    where t runs over the sizes of tied groups; the continuity correction
    moves |U - mean| half a unit towards the mean.
    """
    n = n_x + n_y
    mean = n_x * n_y / 2.0
    tie_term = sum(t ** 3 - t for t in tie_sizes) / (n * (n - 1)) if n > 1 else 0.0
    variance = n_x * n_y / 12.0 * ((n + 1) - tie_term)
    if variance <= 0.0:
        # Every value equal: nothing can be told apart.
        return 1.0
    distance = abs(u_x - mean)
    if continuity:
        distance = max(0.0, distance - 0.5)
    z = distance / math.sqrt(variance)
    # Two-sided normal tail: 2 * (1 - Phi(z)) = erfc(z / sqrt(2)).
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


def mann_whitney_u(x: Sequence[float], y: Sequence[float], method: Method = "auto",
                   continuity: bool = True) -> MannWhitneyResult:
    """Two-sided Mann-Whitney U test of samples x and y.

    method "auto" uses the exact distribution when the pooled sample has no
    ties and neither side has more than EXACT_MAX_PER_SIDE values, else the
    normal approximation with tie correction (and continuity correction unless
    continuity=False). "exact" with ties is refused (ValueError): the tie-free
    distribution would be wrong. Empty samples are refused too.
    """
    if not x or not y:
        raise ValueError("mann_whitney_u: both samples need at least one value")
    for v in list(x) + list(y):
        if not math.isfinite(v):
            raise ValueError(f"mann_whitney_u: sample value {v!r} is not a finite number")
    n_x, n_y = len(x), len(y)
    tie_sizes = tie_group_sizes(list(x) + list(y))
    ties = bool(tie_sizes)
    u_x = u_statistic(x, y)
    if method == "auto":
        small = n_x <= EXACT_MAX_PER_SIDE and n_y <= EXACT_MAX_PER_SIDE
        method = "exact" if small and not ties else "normal"
    if method == "exact":
        if ties:
            raise ValueError("mann_whitney_u: the exact distribution needs samples without ties")
        p = exact_two_sided_p(u_x, n_x, n_y)
    elif method == "normal":
        p = normal_two_sided_p(u_x, n_x, n_y, tie_sizes, continuity)
    else:
        raise ValueError(f"mann_whitney_u: unknown method {method!r} (auto, exact, normal)")
    return MannWhitneyResult(u_x=u_x, u_y=n_x * n_y - u_x, p_value=p, method=method,
                             n_x=n_x, n_y=n_y, ties=ties)
