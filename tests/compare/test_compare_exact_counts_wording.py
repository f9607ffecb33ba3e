"""Instruction counts are exact: a verdict on them names no p-value, no
Mann-Whitney test and no significance (issue #17 item 11)."""
from __future__ import annotations

from heaplab import compare


def test_an_instruction_count_regression_names_no_test(fixtures, cli):
    # instr-b needs 10% more instructions than instr-a in every cell
    code, out, _ = cli(compare, fixtures / "instr-a", fixtures / "instr-b", "--metric", "instructions")
    assert code == 1
    verdict = out.rstrip().splitlines()[-1]
    assert verdict.startswith("**Verdict: regression**") and "slower by more than 5%" in verdict
    for word in ("p <", "Mann-Whitney", "significan"):
        assert word not in verdict
    header = "\n".join(out.splitlines()[:8])
    assert "Mann-Whitney" not in header and "the counts are exact" in header


def test_no_instruction_count_regression_is_not_called_significant(fixtures, cli):
    code, out, _ = cli(compare, fixtures / "instr-a", fixtures / "instr-a", "--metric", "instructions")
    assert code == 0
    verdict = out.rstrip().splitlines()[-1]
    assert verdict.startswith("**Verdict: no regression beyond 5%** (exact counts)")


def test_timings_keep_their_test_and_p_value(fixtures, cli):
    code, out, _ = cli(compare, fixtures / "base", fixtures / "slower")
    assert "Mann-Whitney" in out and "(p < 0.05)" in out.rstrip().splitlines()[-1]


def test_instruction_count_rows_give_no_spread_or_detectable_effect(fixtures, cli):
    # counts do not vary by chance: spread, p and detectable all say "exact"
    _, out, _ = cli(compare, fixtures / "instr-a", fixtures / "instr-b", "--metric", "instructions")
    rows = [line for line in out.splitlines() if line.startswith("| tmalloc-st-64 | 1 |")]
    assert len(rows) == 3
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[6] == "exact" and cells[9] == "exact" and cells[10] == "exact", cells
    assert "cv " not in out
