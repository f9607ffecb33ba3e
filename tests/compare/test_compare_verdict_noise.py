"""Verdicts that say what they could have seen: the detectable effect beside
"not significant", the recommendation, paired repetitions, drift.

Fixtures (make_fixtures.py): noisy-base/noisy-slower (30% noise, heaplab
30% slower), base/slower-30 (1% noise, the same shift), drifting (a host
that slows by 60% during the run, heaplab 10% slower than system)."""

from __future__ import annotations

import json

from heaplab import compare
from heaplab.compare import NOT_SIGNIFICANT, SLOWER, UNCHANGED, compare_allocators, compare_runs
from heaplab.merge import load_run_folder


def _cells(comparison, allocator="heaplab"):
    return {c.workload: c for c in comparison.cells if c.allocator == allocator}


def test_a_true_30_percent_shift_in_wide_noise_is_undetectable_and_more_reps_are_recommended(fixtures):
    c = compare_runs(load_run_folder(fixtures / "noisy-base"), load_run_folder(fixtures / "noisy-slower"))
    cell = _cells(c)["tmalloc-st-64"]
    assert cell.verdict in (UNCHANGED, NOT_SIGNIFICANT)
    assert cell.detectable.effect > 0.30
    assert cell.noisy is not None and cell.noisy.needed > 9
    line = c.recommendation()
    assert line is not None and f"`--reps {max(n.needed for n in c.noisy())}`" in line
    assert "not detectable with 9 repetitions here" in compare.verdict_line(c)


def test_the_same_shift_in_tight_noise_is_slower(fixtures):
    c = compare_runs(load_run_folder(fixtures / "base"), load_run_folder(fixtures / "slower-30"))
    for cell in _cells(c).values():
        assert cell.verdict == SLOWER
        assert cell.detectable.effect < 0.30 and cell.noisy is None


def test_markdown_puts_the_detectable_effect_beside_not_significant(cli, fixtures):
    code, out, _ = cli(compare, fixtures / "noisy-base", fixtures / "noisy-new")
    assert code == 0
    rows = [line for line in out.splitlines() if "| not significant" in line]
    assert rows and all("are not detectable with 9 repetitions" in row for row in rows)
    assert any(line.startswith("**Recommendation:**") for line in out.splitlines())
    assert out.rstrip().splitlines()[-1].startswith("**Verdict")


def test_paired_repetitions_see_a_10_percent_gap_that_shared_drift_hides_from_the_unpaired_test(fixtures):
    run = load_run_folder(fixtures / "drifting")
    paired = _cells(compare_allocators(run, "system"))
    unpaired = _cells(compare_allocators(run, "system", pair=False))
    for workload, cell in paired.items():
        assert cell.verdict == SLOWER and cell.test.startswith("signed-rank")
        gap = 1.1 if cell.better == "lower" else 1 / 1.1   # throughput: 10% less
        assert abs(cell.paired.ratio_median - gap) < 0.02
        assert unpaired[workload].verdict == NOT_SIGNIFICANT
        # pairing cancels the shared drift: the ratios spread far less than either side
        assert cell.paired.ratio_max / cell.paired.ratio_min < min(cell.base.max_over_min,
                                                                   cell.new.max_over_min)
        assert cell.detectable.effect < unpaired[workload].detectable.effect


def test_the_baseline_drift_is_one_warning_per_baseline_cell(fixtures):
    c = compare_allocators(load_run_folder(fixtures / "drifting"), "system")
    drifts = [w for w in c.warnings if "drifted" in w]
    assert len(drifts) == 3 and all(w.startswith("system's repetitions of") for w in drifts)
    steady = compare_allocators(load_run_folder(fixtures / "base"), "system")
    assert not any("drifted" in w for w in steady.warnings)


def test_two_runs_warn_on_the_cell_whose_side_drifted(fixtures):
    c = compare_runs(load_run_folder(fixtures / "base"), load_run_folder(fixtures / "drifting"))
    assert all(any("NEW's repetitions" in w and "drifted" in w for w in cell.warnings)
               for cell in c.cells)


def test_json_carries_detectable_paired_spread_and_recommendation(cli, fixtures):
    code, out, _ = cli(compare, fixtures / "drifting", "--baseline-alloc", "system",
                       "--format", "json")
    assert code == 1
    document = json.loads(out)
    cell = next(c for c in document["cells"] if c["allocator"] == "heaplab")
    assert cell["detectable"]["paired"] is True and 0 < cell["detectable"]["effect"] < 0.1
    assert cell["paired"]["test"].startswith("signed-rank") and cell["paired"]["n"] == 9
    assert cell["unpaired"]["p_value"] >= 0.05 and cell["unpaired"]["detectable"]["effect"] > 0.1
    assert {"max_over_min", "cv"} <= set(cell["base"])
    assert document["detectable_method"]["power"] == 0.8
    assert set(document["recommendation"]) >= {"cells_too_noisy", "reps", "use_instructions", "text"}


def test_unpaired_is_for_one_run_only(cli, fixtures):
    code, _, err = cli(compare, fixtures / "base", fixtures / "rerun", "--unpaired")
    assert code == 2 and "--unpaired goes with --baseline-alloc" in err


def test_unpaired_flag_gives_the_mann_whitney_verdicts(cli, fixtures):
    _, out, _ = cli(compare, fixtures / "drifting", "--baseline-alloc", "system", "--unpaired",
                    "--format", "json")
    cells = [c for c in json.loads(out)["cells"] if c["allocator"] == "heaplab"]
    assert all(c["paired"] is None and c["verdict"] == NOT_SIGNIFICANT for c in cells)


def test_repetitions_without_numbers_are_tested_unpaired_with_a_warning(copy_run):
    folder = copy_run("drifting")
    lines = (folder / "raw.jsonl").read_text().splitlines()
    docs = [json.loads(line) for line in lines]
    for doc in docs:
        doc.pop("rep")
    (folder / "raw.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    c = compare_allocators(load_run_folder(folder), "system")
    assert all(cell.paired is None and any("cannot be paired" in w for w in cell.warnings)
               for cell in c.cells)


def test_instruction_counts_have_no_detectable_effect_to_report(fixtures):
    c = compare_runs(load_run_folder(fixtures / "instr-a"), load_run_folder(fixtures / "instr-b"),
                     metric="instructions", force=True)
    assert all(cell.detectable is None and cell.noisy is None for cell in c.cells)
    assert "| exact | " in compare.to_markdown(c)
