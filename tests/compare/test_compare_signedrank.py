"""The Wilcoxon signed-rank test on hand-checkable cases."""

from __future__ import annotations

import pytest

from heaplab.signedrank import critical_w, exact_sum_counts, signed_rank


def test_worked_example_of_five_differences():
    # ranks 1..5, the 4 is negative: W+ = 1+2+3+5 = 11; the subsets of
    # {1..5} summing to 4 or less are {}, 1, 2, 3, 4, 1+2, 1+3: 7 of 32
    result = signed_rank([1, 2, 3, -4, 5])
    assert (result.w_plus, result.w_minus, result.method) == (11, 4, "exact")
    assert result.p_value == pytest.approx(2 * 7 / 32)


def test_all_positive_differences_reach_two_over_two_to_the_n():
    assert signed_rank([1, 2, 3, 4, 5]).p_value == pytest.approx(2 / 32)
    assert signed_rank([1, 2, 3, 4, 5, 6]).p_value == pytest.approx(2 / 64)


def test_the_sign_of_every_difference_flipped_gives_the_same_p():
    data = [0.3, -0.1, 0.25, 0.4, -0.05, 0.2, 0.15]
    assert signed_rank(data).p_value == pytest.approx(signed_rank([-d for d in data]).p_value)
    assert signed_rank(data).w_plus == signed_rank([-d for d in data]).w_minus


def test_zero_differences_are_dropped():
    result = signed_rank([0, 1, 2, 3, 4, 5, 6])
    assert (result.n, result.zeros) == (6, 1)
    assert result.p_value == pytest.approx(2 / 64)


def test_tied_magnitudes_share_a_rank_and_stay_exact():
    # |d| = 1, 1, 1, 2 rank 2, 2, 2, 4; W+ = 2+2+4 = 8. Of the 16 sign
    # patterns, W+ >= 8 for {2,2,4} three ways and {2,2,2,4} once: p = 2*4/16
    result = signed_rank([1, 1, -1, 2])
    assert result.ties and result.w_plus == 8 and result.method == "exact"
    assert result.p_value == pytest.approx(0.5)


def test_exact_counts_are_the_subset_sums_of_the_doubled_ranks():
    # ranks 1, 2, 3 doubled: subset sums 0, 2, 4, 6 (twice: 6 and 2+4), 8, 10, 12
    counts = exact_sum_counts((2, 4, 6))
    assert [s for s, c in enumerate(counts) for _ in range(c)] == [0, 2, 4, 6, 6, 8, 10, 12]


def test_critical_values_match_the_published_table():
    # two-sided 0.05: the smaller rank sum may be at most 0, 2, 3, 5 for n = 6..9
    assert [critical_w(n, 0.05) for n in (6, 7, 8, 9)] == [21, 26, 33, 40]
    assert critical_w(5, 0.05) is None   # 2/32 is the best five can do


def test_the_normal_approximation_is_close_to_the_exact_count_at_thirty():
    data = [((i * 7919) % 31 - 12) / 10 for i in range(30)]
    exact = signed_rank(data, method="exact").p_value
    normal = signed_rank(data, method="normal").p_value
    assert abs(exact - normal) < 0.01


def test_nothing_to_test_gives_p_one_and_bad_input_is_refused():
    assert signed_rank([0.0, 0.0]).p_value == 1.0
    with pytest.raises(ValueError):
        signed_rank([1.0, float("nan")])
