"""Spread and drift of a cell's repetitions, on hand-checkable cases."""

from __future__ import annotations

import pytest

from heaplab.stability import drift, format_variation, variation


def test_variation_is_max_over_min_and_stdev_over_mean():
    found = variation([4.0, 5.0, 6.0])
    assert found.max_over_min == pytest.approx(1.5)
    assert found.cv == pytest.approx(1.0 / 5.0)        # stdev 1, mean 5
    assert format_variation(found) == "×1.50, cv 20.0%"
    assert variation([3.0]).cv is None


def test_a_steady_ramp_drifts():
    # 50..58: slope 1 per repetition, 8 over the run, median 54; no scatter
    found = drift([50.0 + i for i in range(9)])
    assert found.rise == pytest.approx(8 / 54) and found.scatter == pytest.approx(0.0)
    assert found.beyond(0.05)


def test_the_same_values_shuffled_do_not_drift():
    found = drift([54.0, 50.0, 57.0, 52.0, 58.0, 51.0, 55.0, 53.0, 56.0])
    assert not found.beyond(0.05)


def test_one_slow_first_repetition_is_an_outlier_not_a_drift():
    found = drift([11.2, 7.5, 7.4, 7.5, 7.45, 7.5, 7.46, 7.44, 7.5])
    assert abs(found.rise) < 0.01 and not found.beyond(0.05)


def test_a_trend_within_the_scatter_is_not_drift():
    # rises 6% but the repetitions scatter by more than a third of that
    values = [100, 112, 92, 108, 96, 113, 99, 111, 106]
    found = drift([float(v) for v in values])
    assert found.rise > 0.05 and not found.beyond(0.05)


def test_too_few_repetitions_say_nothing():
    assert drift([1.0, 2.0, 3.0, 4.0]) is None
