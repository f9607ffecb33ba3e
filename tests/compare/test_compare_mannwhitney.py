"""The Mann-Whitney U test against values worked out by hand and against the
published examples of other implementations (SciPy, ClickHouse, DolphinDB,
NAG)."""

from __future__ import annotations

import math

import pytest

from heaplab.mannwhitney import (
    exact_two_sided_p,
    exact_u_counts,
    mann_whitney_u,
    midranks,
    u_statistic,
)


# --- by hand -------------------------------------------------------------------

def test_exact_distribution_of_two_against_two_is_counted_by_hand():
    # The 6 interleavings of {x,x,y,y} give U = 0,1,2,2,3,4.
    assert exact_u_counts(2, 2) == [1, 1, 2, 1, 1]


def test_exact_distribution_of_three_against_three_is_counted_by_hand():
    # Partitions of u into at most 3 parts, each at most 3.
    assert exact_u_counts(3, 3) == [1, 1, 2, 3, 3, 3, 3, 2, 1, 1]


@pytest.mark.parametrize("n_x,n_y", [(1, 1), (1, 5), (4, 7), (9, 9), (20, 20)])
def test_exact_distribution_covers_every_interleaving(n_x, n_y):
    counts = exact_u_counts(n_x, n_y)
    assert len(counts) == n_x * n_y + 1
    assert sum(counts) == math.comb(n_x + n_y, n_x)
    assert counts == counts[::-1]  # U and n_x n_y - U are equally likely


def test_separated_pairs_give_one_third():
    # U = 0 has probability 1/6; two-sided doubles it.
    result = mann_whitney_u([1, 2], [3, 4])
    assert result.method == "exact"
    assert result.u_x == 0
    assert result.p_value == pytest.approx(1 / 3)


def test_interleaved_pairs_give_two_thirds():
    # U = 1: P(U <= 1) = 2/6 is the smaller tail.
    result = mann_whitney_u([1, 3], [2, 4])
    assert result.u_x == 1
    assert result.p_value == pytest.approx(2 / 3)


def test_separated_triples_give_one_tenth_either_way_round():
    assert mann_whitney_u([1, 2, 3], [4, 5, 6]).p_value == pytest.approx(2 / 20)
    assert mann_whitney_u([4, 5, 6], [1, 2, 3]).p_value == pytest.approx(2 / 20)


def test_nine_against_nine_fully_separated_is_the_smallest_p():
    result = mann_whitney_u(list(range(9)), list(range(100, 109)))
    assert result.p_value == pytest.approx(2 / math.comb(18, 9))


def test_ties_use_the_normal_approximation_worked_by_hand():
    # pooled 1 2 2 2 3 3 -> ranks 1 3 3 3 5.5 5.5; R_x = 7, U_x = 1; mean 4.5;
    # tie term (24 + 6) / 30 = 1, variance 9/12 * (7 - 1) = 4.5;
    # z = (3.5 - 0.5) / sqrt(4.5) = sqrt(2), p = erfc(1).
    result = mann_whitney_u([1, 2, 2], [2, 3, 3])
    assert result.method == "normal" and result.ties
    assert result.u_x == 1
    assert result.p_value == pytest.approx(math.erfc(1.0))


def test_ties_without_continuity_correction():
    result = mann_whitney_u([1, 2, 2], [2, 3, 3], continuity=False)
    assert result.p_value == pytest.approx(math.erfc(3.5 / math.sqrt(4.5) / math.sqrt(2)))


def test_all_values_equal_is_never_significant():
    result = mann_whitney_u([3.0, 3.0, 3.0], [3.0, 3.0])
    assert result.p_value == 1.0


def test_swapping_the_samples_swaps_u_and_keeps_p():
    x, y = [1.5, 2.25, 9.0, 4.0], [3.0, 5.5, 6.0, 7.0, 8.0]
    a, b = mann_whitney_u(x, y), mann_whitney_u(y, x)
    assert (a.u_x, a.u_y) == (b.u_y, b.u_x)
    assert a.p_value == pytest.approx(b.p_value)


def test_u_counts_pairs_with_ties_as_halves():
    # pairs x > y: 3>1, 3>2, 2>1; 2 vs 2 is a tie: 3 + 0.5
    assert u_statistic([2, 3], [1, 2]) == 3.5


def test_midranks_share_tied_ranks():
    assert midranks([5, 3, 5]) == [2.5, 1.0, 2.5]


def test_large_samples_use_the_normal_approximation_close_to_exact():
    x = [float(i) for i in range(25)]
    y = [i + 7.5 for i in range(25)]
    normal = mann_whitney_u(x, y)
    assert normal.method == "normal"
    exact = exact_two_sided_p(normal.u_x, 25, 25)
    assert normal.p_value == pytest.approx(exact, abs=0.005)


def test_exact_is_refused_with_ties():
    with pytest.raises(ValueError, match="without ties"):
        mann_whitney_u([1, 2], [2, 3], method="exact")


def test_empty_and_non_finite_samples_are_refused():
    with pytest.raises(ValueError, match="at least one value"):
        mann_whitney_u([], [1.0])
    with pytest.raises(ValueError, match="not a finite number"):
        mann_whitney_u([1.0, math.nan], [1.0])


# --- published examples --------------------------------------------------------

MALES = [19, 22, 16, 29, 24]      # SciPy's mannwhitneyu documentation example
FEMALES = [20, 11, 17, 12]


def test_scipy_documentation_example_exact():
    result = mann_whitney_u(MALES, FEMALES)
    assert result.method == "exact"
    assert result.u_x == 17
    assert result.p_value == pytest.approx(0.1111111111111111, abs=1e-12)


def test_scipy_documentation_example_asymptotic():
    result = mann_whitney_u(MALES, FEMALES, method="normal")
    assert result.p_value == pytest.approx(0.11134688653314041, abs=1e-12)


def test_clickhouse_example_is_twice_its_one_sided_p():
    # ClickHouse mannWhitneyUTest('greater') on 10,11,12 vs 1,2,3 gives
    # (9, 0.04042779918503192) with continuity correction.
    result = mann_whitney_u([10, 11, 12], [1, 2, 3], method="normal")
    assert result.u_x == 9
    assert result.p_value == pytest.approx(2 * 0.04042779918503192, abs=1e-12)


def test_dolphindb_example_with_ties():
    # DolphinDB mannWhitneyUTest(5 1 4 3 5, 2 4 7 -1 0 4): two-sided 0.518023, U 11.
    result = mann_whitney_u([5, 1, 4, 3, 5], [2, 4, 7, -1, 0, 4])
    assert result.u_y == 11
    assert result.p_value == pytest.approx(0.518023, abs=1e-6)


def test_nag_example_with_many_ties():
    # NAG g08amc example: U = 86, normal statistic -2.8039, one tail 0.0025.
    group1 = [13, 6, 12, 7, 12, 7, 10, 7, 10, 7, 16, 7, 10, 8, 9, 8]
    group2 = [17, 6, 10, 8, 15, 8, 15, 10, 15, 10, 14, 10, 14, 11, 14, 11,
              13, 12, 13, 12, 13, 12, 12]
    result = mann_whitney_u(group1, group2)
    assert result.u_x == 86
    z = math.sqrt(2) * _erfc_inverse(result.p_value)
    assert z == pytest.approx(2.8039, abs=1e-4)
    assert round(result.p_value / 2, 4) == 0.0025


def _erfc_inverse(p: float) -> float:
    """x with erfc(x) = p, by bisection (erfc falls from 2 to 0)."""
    low, high = 0.0, 10.0
    for _ in range(200):
        mid = (low + high) / 2
        if math.erfc(mid) > p:
            low = mid
        else:
            high = mid
    return (low + high) / 2
