"""The minimum detectable effect: critical values, the order statistics that
stand for a search over change factors, and the resampling around them."""

from __future__ import annotations

import math
import random

import pytest

from heaplab import detectable
from heaplab.detectable import (critical_u, paired, repetitions_needed, trial_factors_paired,
                                trial_factors_unpaired, unpaired)
from heaplab.mannwhitney import mann_whitney_u, u_statistic
from heaplab.signedrank import critical_w, signed_rank


def test_critical_u_is_the_first_u_the_exact_test_calls_significant():
    # 4 against 4: only U = 16 (every new value above every base one) has
    # p = 2/70 < 0.05; U = 15 has 4/70
    assert critical_u(4, 4, 0.05) == 16
    assert critical_u(9, 9, 0.05) == 64     # the table's 17 from the other end: 81 - 17
    assert critical_u(3, 3, 0.05) is None   # 2/20 is the best three can do


def test_worked_example_of_one_unpaired_outcome():
    # with U = 16 needed, f x new must put every new value above every base
    # value: f > 4/1 upwards; downwards every one below: f < 1/4
    assert trial_factors_unpaired([1, 2, 3, 4], [1, 2, 3, 4], 16) == (4.0, 0.25)


def test_worked_example_of_one_paired_outcome():
    # n = 6 needs W+ = 21, all of them: every Walsh average plus log f above
    # 0, so log f > 0.1 (the smallest average is -0.1); and below: log f < -0.4
    up, down = trial_factors_paired([-0.1, 0.0, 0.1, 0.2, 0.3, 0.4], 21)
    assert up == pytest.approx(math.exp(0.1)) and down == pytest.approx(math.exp(-0.4))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_unpaired_factor_is_where_the_real_test_turns_significant(seed):
    rng = random.Random(seed)
    base = [1 + 0.2 * rng.random() for _ in range(9)]
    new = [1 + 0.2 * rng.random() for _ in range(9)]
    k = critical_u(9, 9, 0.05)
    up, down = trial_factors_unpaired(base, new, k)
    for factor, significant in ((up * 1.0001, True), (up * 0.9999, False),
                                (down * 0.9999, True), (down * 1.0001, False)):
        shifted = [factor * x for x in new]
        assert (u_statistic(shifted, base) >= k or u_statistic(shifted, base) <= 81 - k) == significant
        assert (mann_whitney_u(shifted, base).p_value < 0.05) == significant


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_paired_factor_is_where_the_signed_rank_test_turns_significant(seed):
    rng = random.Random(seed)
    residuals = [0.1 * (rng.random() - 0.5) for _ in range(9)]
    up, down = trial_factors_paired(residuals, critical_w(9, 0.05))
    for factor, significant in ((up * 1.0001, True), (up * 0.9999, False),
                                (down * 0.9999, True), (down * 1.0001, False)):
        shifted = [r + math.log(factor) for r in residuals]
        assert (signed_rank(shifted).p_value < 0.05) == significant


def test_without_noise_any_change_is_detectable():
    found = unpaired([5.0] * 9, [5.0] * 9, 0.05)
    assert found is not None and found.effect == 0.0
    assert paired([0.0] * 9, 0.05).effect == 0.0


def test_too_few_repetitions_detect_nothing():
    assert unpaired([1.0, 1.1, 0.9], [1.0, 1.1, 0.9], 0.05) is None
    assert paired([0.01, -0.02, 0.0, 0.03, -0.01], 0.05) is None


def test_wider_noise_and_fewer_repetitions_hide_more():
    rng = random.Random(7)
    shape = [2 * rng.random() - 1 for _ in range(18)]
    tight = [1 + 0.05 * s for s in shape]
    wide = [1 + 0.3 * s for s in shape]
    assert unpaired(tight[:9], tight[9:], 0.05).effect < unpaired(wide[:9], wide[9:], 0.05).effect
    assert (unpaired(wide[:9], wide[9:], 0.05, 20, 20).effect
            < unpaired(wide[:9], wide[9:], 0.05).effect)


def test_the_answer_is_the_same_every_time():
    rng = random.Random(3)
    base = [1 + 0.3 * rng.random() for _ in range(9)]
    new = [1 + 0.3 * rng.random() for _ in range(9)]
    assert unpaired(base, new, 0.05) == unpaired(base, new, 0.05)


def test_about_eighty_percent_of_resampled_outcomes_flag_the_detectable_change():
    """The effect really is a power of 80%: drawing outcomes as the module
    does and running the real test on them at that change flags about 80%."""
    rng = random.Random(11)
    base = [50 * (1 + 0.1 * (2 * rng.random() - 1)) for _ in range(9)]
    new = [50 * (1 + 0.1 * (2 * rng.random() - 1)) for _ in range(9)]
    found = unpaired(base, new, 0.05)
    pool = [v / sorted(base)[4] for v in base] + [v / sorted(new)[4] for v in new]
    draw = random.Random(99)
    flagged = 0
    for _ in range(400):
        b = [pool[int(draw.random() * 18)] for _ in range(9)]
        x = [pool[int(draw.random() * 18)] * found.up * 1.0001 for _ in range(9)]
        flagged += mann_whitney_u(x, b).p_value < 0.05
    assert 0.7 < flagged / 400 < 0.9


def test_repetitions_needed_bring_the_effect_under_the_threshold():
    rng = random.Random(5)
    base = [1 + 0.08 * (2 * rng.random() - 1) for _ in range(9)]
    new = [1 + 0.08 * (2 * rng.random() - 1) for _ in range(9)]
    assert unpaired(base, new, 0.05).effect > 0.05
    needed = repetitions_needed(base, new, 0.05, 0.05)
    assert needed is not None and 9 < needed <= detectable.VERIFY_MAX_REPETITIONS
    assert unpaired(base, new, 0.05, needed, needed, detectable.RECOMMEND_TRIALS).effect <= 0.05


def test_a_hopeless_cell_needs_more_than_is_useful():
    rng = random.Random(5)
    base = [1 + 0.9 * rng.random() for _ in range(9)]
    new = [1 + 0.9 * rng.random() for _ in range(9)]
    assert repetitions_needed(base, new, 0.005, 0.05) is None
