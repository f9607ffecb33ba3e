"""Minimum detectable effect: the smallest change a timing test would have seen.

A "not significant" verdict says little unless it also says how large a
change the test could have caught with the repetitions it had. This module
answers that from the cell's own repetitions, by resampling them:

1. The cell's noise is its repetitions relative to their median: each
   side's values divided by that side's median, pooled (unpaired), or the
   log ratios NEW/BASE of the paired repetitions less their median (paired).
2. TRIALS times (seeded, so the answer never changes for the same data),
   as many residuals as the cell has repetitions are drawn from that pool
   with replacement: a possible outcome of running the cell again on this
   machine with no change at all.
3. For each drawn outcome, the smallest change factor f (NEW = f x BASE)
   that the two-sided test at `alpha` would flag is found exactly, without
   searching: the rank tests count pairs, so the test flags f as soon as f
   passes one order statistic of the drawn values (for Mann-Whitney, the
   K-th smallest ratio base_j / new_i, K the critical U; for the
   signed-rank test, minus the matching Walsh average of the paired log
   ratios).
4. The detectable effect is the change that POWER (80%) of the trials
   would flag, upwards (slower, for a time) or downwards, whichever is the
   larger departure from 1.

The critical values are those of the tie-free test (timings do not tie),
exact where `mannwhitney` / `signedrank` count the exact distribution. No
test can flag anything with too few repetitions (Mann-Whitney with 3 per
side reaches p = 0.1 at best): then there is no detectable effect (None).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from .mannwhitney import EXACT_MAX_PER_SIDE, exact_u_counts, normal_two_sided_p
from .signedrank import critical_w

POWER = 0.8
TRIALS = 1000
SEED = 22
# A recommendation beyond this many repetitions per cell is no
# recommendation: a machine that needs it should count instructions.
MAX_USEFUL_REPETITIONS = 1000
# Repetition counts up to this are checked by resampling when recommended;
# above it the 1/sqrt(n) law extrapolates (resampling n^2 pairs gets slow).
VERIFY_MAX_REPETITIONS = 30
# Trials per candidate count while looking for the repetitions to recommend
# (an estimate, not a verdict: fewer trials keep it quick).
RECOMMEND_TRIALS = 300


@dataclass(frozen=True)
class Detectable:
    """The factors a test would flag in POWER of the trials.

    up: smallest factor above 1 (NEW = up x BASE) flagged; down: largest
    factor below 1 flagged. effect: max(up - 1, 1 - down), the relative
    change below which a change is not reliably detectable."""

    up: float
    down: float
    n_base: int
    n_new: int
    paired: bool

    @property
    def effect(self) -> float:
        return max(self.up - 1.0, 1.0 - self.down)


@lru_cache(maxsize=None)
def critical_u(n_x: int, n_y: int, alpha: float) -> int | None:
    """The smallest U of x whose two-sided Mann-Whitney p is below alpha
    for tie-free samples of n_x and n_y (exact distribution when
    `mann_whitney_u` would use it, else the normal one), or None when no U
    reaches it."""
    total = n_x * n_y
    if n_x <= EXACT_MAX_PER_SIDE and n_y <= EXACT_MAX_PER_SIDE:
        counts = exact_u_counts(n_x, n_y)
        outcomes = sum(counts)
        upper = 0
        for u in range(total, -1, -1):
            upper += counts[u]
            if 2.0 * upper / outcomes >= alpha:
                return None if u == total else u + 1
        return None
    for u in range((total + 1) // 2, total + 1):
        if normal_two_sided_p(u, n_x, n_y, []) < alpha:
            return u
    return None


def trial_factors_unpaired(base: Sequence[float], new: Sequence[float], k: int
                           ) -> tuple[float, float]:
    """(up, down) for one drawn outcome: NEW = f x new is flagged for
    f > up and for f < down by a Mann-Whitney test whose critical U is k.

    U of f*new = #{(i, j): f new_i > base_j} = #{ratios base_j/new_i < f};
    it reaches k once f passes the k-th smallest ratio, and falls to
    n_x n_y - k (the lower critical value) below the (n_x n_y - k + 1)-th."""
    ratios = sorted(b / x for x in new for b in base)
    return ratios[k - 1], ratios[len(ratios) - k]


def trial_factors_paired(residuals: Sequence[float], w: int) -> tuple[float, float]:
    """(up, down) for one drawn outcome of paired log ratios: adding log f
    to every residual is flagged for f > up and f < down by a signed-rank
    test whose critical W+ is w.

    W+ equals the number of Walsh averages (r_i + r_j)/2, i <= j, above 0
    (Tukey); shifted by log f it reaches w once log f passes minus the
    (M - w + 1)-th smallest of the M averages, and falls to M - w once log f
    is below minus the w-th smallest."""
    walsh = sorted((residuals[i] + residuals[j]) / 2.0
                   for i in range(len(residuals)) for j in range(i, len(residuals)))
    count = len(walsh)
    return math.exp(-walsh[count - w]), math.exp(-walsh[w - 1])


def _draw(rng: random.Random, pool: Sequence[float], n: int) -> list[float]:
    # int(random() * len) rather than choices(): random() is the part of
    # Python's generator whose sequence is kept stable across versions
    return [pool[int(rng.random() * len(pool))] for _ in range(n)]


def _quantiles(ups: list[float], downs: list[float], power: float) -> tuple[float, float]:
    """The factor flagged in `power` of the trials, each way."""
    ups.sort()
    downs.sort(reverse=True)
    index = max(0, math.ceil(power * len(ups)) - 1)
    return ups[index], downs[index]


def relative_residuals(values: Sequence[float]) -> list[float] | None:
    """values / their median, or None when a value is not positive."""
    if not values or min(values) <= 0:
        return None
    middle = statistics.median(values)
    return [v / middle for v in values]


def unpaired(base: Sequence[float], new: Sequence[float], alpha: float,
             n_base: int | None = None, n_new: int | None = None,
             trials: int = TRIALS, power: float = POWER) -> Detectable | None:
    """The detectable effect of a Mann-Whitney comparison of n_base and
    n_new repetitions (default: as many as given) whose noise is that of
    `base` and `new` (pooled relative residuals). None when the values are
    not all positive or no outcome can reach p < alpha."""
    n_base = len(base) if n_base is None else n_base
    n_new = len(new) if n_new is None else n_new
    pool_base, pool_new = relative_residuals(base), relative_residuals(new)
    if pool_base is None or pool_new is None or n_base == 0 or n_new == 0:
        return None
    k = critical_u(n_new, n_base, alpha)
    if k is None:
        return None
    pool = pool_base + pool_new
    rng = random.Random(SEED)
    ups, downs = [], []
    for _ in range(trials):
        up, down = trial_factors_unpaired(_draw(rng, pool, n_base), _draw(rng, pool, n_new), k)
        ups.append(up)
        downs.append(down)
    up, down = _quantiles(ups, downs, power)
    return Detectable(up, down, n_base, n_new, paired=False)


def paired(log_ratios: Sequence[float], alpha: float, n: int | None = None,
           trials: int = TRIALS, power: float = POWER) -> Detectable | None:
    """The detectable effect of a signed-rank test on n paired repetitions
    (default: as many as given) whose noise is that of `log_ratios`
    (log NEW_k/BASE_k, centred on their median). None when no outcome can
    reach p < alpha."""
    n = len(log_ratios) if n is None else n
    if not log_ratios or n == 0:
        return None
    w = critical_w(n, alpha)
    if w is None:
        return None
    middle = statistics.median(log_ratios)
    pool = [d - middle for d in log_ratios]
    rng = random.Random(SEED)
    ups, downs = [], []
    for _ in range(trials):
        up, down = trial_factors_paired(_draw(rng, pool, n), w)
        ups.append(up)
        downs.append(down)
    up, down = _quantiles(ups, downs, power)
    return Detectable(up, down, n, n, paired=True)


def repetitions_needed(base: Sequence[float], new: Sequence[float] | None, threshold: float,
                       alpha: float, log_ratios: Sequence[float] | None = None) -> int | None:
    """Repetitions per side that would bring the detectable effect of this
    cell (paired when log_ratios are given) to the threshold or below, with
    the same noise; None when more than MAX_USEFUL_REPETITIONS would be
    needed (or the noise gives no answer at all).

    The detectable effect of a rank test shrinks as 1/sqrt(n) once n is not
    tiny: from the effect at n, n (e / threshold)^2 repetitions are the
    guess. Guesses up to VERIFY_MAX_REPETITIONS are checked by resampling
    and raised until they hold; beyond it the guess is made from the effect
    resampled at VERIFY_MAX_REPETITIONS."""
    def effect(n: int) -> float | None:
        found = (paired(log_ratios, alpha, n, RECOMMEND_TRIALS) if log_ratios is not None
                 else unpaired(base, new or [], alpha, n, n, RECOMMEND_TRIALS))
        return None if found is None else found.effect

    have = len(log_ratios) if log_ratios is not None else min(len(base), len(new or []))
    n = max(have, 2)
    now = effect(n)
    while now is None and n < VERIFY_MAX_REPETITIONS:
        n += 1   # too few repetitions for any p < alpha: add until one is possible
        now = effect(n)
    if now is None or threshold <= 0:
        return None
    while now > threshold:
        guess = max(n + 1, math.ceil(n * (now / threshold) ** 2))
        if guess > VERIFY_MAX_REPETITIONS and n < VERIFY_MAX_REPETITIONS:
            guess = VERIFY_MAX_REPETITIONS
        elif guess > VERIFY_MAX_REPETITIONS:
            return guess if guess <= MAX_USEFUL_REPETITIONS else None
        found = effect(guess)
        if found is None:
            return None
        n, now = guess, found
    return n
