"""`run.py ci` carries what compare reports per cell (detectable effect,
spread, recommendation) into summary.md and summary.json; built here from
the compare fixtures' instruction-count runs, without valgrind."""
from __future__ import annotations

import pathlib

from heaplab import cmd_ci, compare, merge

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "compare" / "fixtures"


def _comparisons() -> tuple[compare.Comparison, compare.Comparison]:
    base, new = (merge.load_run_folder(FIXTURES / name) for name in ("instr-a", "instr-b"))
    against = compare.compare_runs(base, new, cmd_ci.METRIC, force=True)
    return against, compare.compare_allocators(new, cmd_ci.BASELINE_ALLOC, cmd_ci.METRIC)


def test_summary_markdown_has_the_spread_and_detectable_columns():
    against, allocators = _comparisons()
    md = cmd_ci.summary_markdown(FIXTURES / "instr-b", FIXTURES / "instr-a", against, allocators,
                                 None, 0)
    heads = [line for line in md.splitlines() if line.startswith("| workload |")]
    assert heads and all("spread (max÷min, cv)" in h and "| detectable |" in h for h in heads)


def test_summary_json_carries_the_compare_fields():
    against, allocators = _comparisons()
    document = cmd_ci.summary_json(FIXTURES / "instr-b", FIXTURES / "instr-a", against,
                                   allocators, None, 0, 1)
    for side in ("against_baseline", "allocators"):
        part = document[side]
        assert "recommendation" in part and "detectable_method" in part
        assert all({"detectable", "too_noisy", "paired"} <= set(c) for c in part["cells"])
        assert all({"max_over_min", "cv"} <= set(c["base"]) for c in part["cells"])
