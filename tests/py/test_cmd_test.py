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


def test_a_ctest_run_that_finds_no_tests_is_a_failure():
    count = cmd_test.parse_ctest("Test project /b\nNo tests were found!!!\n", 0)
    assert (count.passed, count.failed) == (0, 1)


def test_ctest_skipped_tests_are_counted_apart_with_their_names():
    out = ("100% tests passed, 0 tests failed out of 3\n\nThe following tests did not run:\n"
           "\t  2 - memcheck (Skipped)\n")
    count = cmd_test.parse_ctest(out, 0)
    assert (count.passed, count.failed, count.skipped) == (2, 0, 1)
    assert count.skips == ["memcheck (Skipped)"]


def test_pytest_skips_are_counted_with_their_reasons():
    out = ("..s.s\nSKIPPED [2] tests/x.py:12: valgrind is not installed\n"
           "=== 3 passed, 2 skipped in 1.0s ===\n")
    count = cmd_test.parse_pytest(out, 0)
    assert (count.passed, count.failed, count.skipped) == (3, 0, 2)
    assert count.skips == ["tests/x.py:12: valgrind is not installed"] * 2


def _skipping(reason: str) -> "cmd_test.Count":
    return cmd_test.Count(passed=3, skipped=1, skips=[f"tests/x.py:1: {reason}"])


def test_the_last_line_counts_skips_and_the_skips_are_listed(capsys):
    cmd_test.report(_skipping("valgrind is not installed"), ci=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "tests: 3 passed, 0 failed, 1 skipped"
    assert lines[0] == "skipped: tests/x.py:1: valgrind is not installed"


def test_in_ci_a_skip_for_a_tool_the_ci_installs_is_a_failure(capsys):
    cmd_test.report(_skipping("valgrind is not installed"), ci=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "tests: 3 passed, 1 failed, 0 skipped"
    assert "counted as a failure" in lines[0]


def test_in_ci_a_skip_for_a_tool_the_ci_does_not_install_stays_a_skip(capsys):
    cmd_test.report(_skipping("PyYAML not installed"), ci=True)
    assert capsys.readouterr().out.splitlines()[-1] == "tests: 3 passed, 0 failed, 1 skipped"
