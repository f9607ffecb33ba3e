"""How `run.py test` counts results and chooses suites."""
from heaplab import cmd_test


def test_ctest_totals_are_parsed():
    out = "...\n83% tests passed, 2 tests failed out of 12\n\nTotal Test time (real) = 3.2 sec\n"
    count = cmd_test.parse_ctest(out, 8)
    assert (count.passed, count.failed) == (10, 2)


def test_ctest_with_one_test_failed_uses_singular():
    count = cmd_test.parse_ctest("0% tests passed, 1 test failed out of 1\n", 8)
    assert (count.passed, count.failed) == (0, 1)


def test_ctest_without_totals_and_an_error_counts_as_a_failure():
    count = cmd_test.parse_ctest("ctest: cannot find build folder\n", 1)
    assert (count.passed, count.failed) == (0, 1)


def test_pytest_summary_counts_errors_as_failures():
    out = "....F.E\n=== 1 failed, 5 passed, 2 skipped, 1 error in 1.10s ===\n"
    count = cmd_test.parse_pytest(out, 1)
    assert (count.passed, count.failed) == (5, 2)


def test_pytest_all_passed():
    count = cmd_test.parse_pytest("12 passed in 0.50s\n", 0)
    assert (count.passed, count.failed) == (12, 0)


def test_pytest_collecting_nothing_is_a_failure():
    count = cmd_test.parse_pytest("no tests ran in 0.01s\n", cmd_test.PYTEST_NO_TESTS)
    assert (count.passed, count.failed) == (0, 1)


def test_pytest_crashing_without_a_summary_is_a_failure():
    count = cmd_test.parse_pytest("ImportError while loading conftest\n", 4)
    assert count.failed == 1


def test_suites_in_order_and_filters():
    assert cmd_test.chosen_suites(None, False) == ["ctest", "asan", "tsan", "pytest"]
    assert cmd_test.chosen_suites(None, True) == ["ctest", "pytest"]
    assert cmd_test.chosen_suites("tsan", False) == ["tsan"]
