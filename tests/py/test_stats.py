from heaplab import stats


def test_median_of_odd_count_is_the_middle_value():
    assert stats.spread([5.0, 1.0, 3.0]).median == 3.0


def test_median_of_even_count_is_the_mean_of_the_middle_two():
    assert stats.spread([4.0, 1.0, 3.0, 2.0]).median == 2.5


def test_spread_keeps_min_max_and_count_without_filtering_outliers():
    s = stats.spread([10.0, 11.0, 1000.0])
    assert (s.min, s.max, s.n) == (10.0, 1000.0, 3)
    assert s.median == 11.0


def test_spread_of_nothing_is_none():
    assert stats.spread([]) is None


def test_ratio_is_median_over_baseline():
    assert stats.ratio(2.5, 5.0) == 0.5


def test_ratio_is_none_without_a_usable_baseline():
    assert stats.ratio(2.5, None) is None
    assert stats.ratio(None, 5.0) is None
    assert stats.ratio(2.5, 0.0) is None
