"""`./run.py compare` on the fixture run folders: verdicts, exit status,
Markdown and JSON, machine checks, bad input."""

from __future__ import annotations

import json

import pytest

from heaplab import compare
from heaplab.compare import (
    FASTER,
    NOT_SIGNIFICANT,
    SLOWER,
    UNCHANGED,
    compare_runs,
    decide,
)
from heaplab.merge import load_run_folder


def cells_by_key(document: dict) -> dict[tuple, dict]:
    return {(c["workload"], c["threads"], c["allocator"]): c for c in document["cells"]}


def run_json(cli, *argv) -> tuple[int, dict, str]:
    code, out, err = cli(compare, *argv, "--format", "json")
    return code, json.loads(out), err


# --- verdicts ---------------------------------------------------------------------

def test_identical_runs_are_unchanged_and_exit_0(cli, fixtures):
    code, out, err = cli(compare, fixtures / "base", fixtures / "base")
    assert code == 0, err
    assert "unchanged" in out
    assert "**slower**" not in out and "not significant" not in out
    assert out.rstrip().splitlines()[-1].startswith("**Verdict: no significant regression")


def test_a_rerun_with_fresh_noise_is_unchanged_everywhere(cli, fixtures):
    code, document, _ = run_json(cli, fixtures / "base", fixtures / "rerun")
    assert code == 0
    assert {c["verdict"] for c in document["cells"]} == {UNCHANGED}
    assert document["verdict"] == "ok" and document["exit_code"] == 0


def test_twenty_percent_slower_over_nine_repetitions_is_slower_and_exit_1(cli, fixtures):
    code, document, _ = run_json(cli, fixtures / "base", fixtures / "slower")
    assert code == 1
    cell = cells_by_key(document)[("tmalloc-st-64", 1, "heaplab")]
    assert cell["verdict"] == SLOWER
    assert cell["ratio"] == pytest.approx(1.2, abs=0.02)
    assert cell["p_value"] < 0.05 and cell["significant"]
    assert cell["base"]["n"] == cell["new"]["n"] == 9
    assert document["verdict"] == "regression"


def test_higher_is_better_metric_direction(cli, fixtures):
    _, document, _ = run_json(cli, fixtures / "base", fixtures / "slower")
    cells = cells_by_key(document)
    dropped = cells[("kevy-throughput", 2, "heaplab")]      # throughput down 20%
    raised = cells[("kevy-throughput", 2, "mimalloc")]      # throughput up 20%
    assert dropped["better"] == "higher" and dropped["ratio"] < 1 and dropped["verdict"] == SLOWER
    assert raised["ratio"] > 1 and raised["verdict"] == FASTER
    # and lower-is-better the other way round: time down 20% is faster
    assert cells[("tmalloc-st-64", 1, "mimalloc")]["verdict"] == FASTER


def test_overlapping_noisy_samples_are_not_significant(cli, fixtures):
    code, out, _ = cli(compare, fixtures / "noisy-base", fixtures / "noisy-new")
    assert code == 0
    assert "not significant" in out
    _, document, _ = run_json(cli, fixtures / "noisy-base", fixtures / "noisy-new")
    drifted = [c for c in document["cells"] if abs(c["change"]) > 0.05]
    assert drifted, "the fixture must have medians more than 5% apart"
    assert all(c["verdict"] == NOT_SIGNIFICANT and c["p_value"] >= 0.05 for c in drifted)


def test_verdict_counts_only_beyond_threshold_and_when_significant():
    # big change, significant -> slower; big change, p too high -> not significant;
    # small change, significant -> unchanged
    assert decide(100, 120, "lower", 0.001, 0.05, 0.05) == (1.2, SLOWER)
    assert decide(100, 120, "lower", 0.2, 0.05, 0.05) == (1.2, NOT_SIGNIFICANT)
    assert decide(100, 103, "lower", 0.001, 0.05, 0.05)[1] == UNCHANGED
    assert decide(100, 120, "higher", 0.001, 0.05, 0.05)[1] == FASTER
    assert decide(100, 103, "lower", 0.001, 0.02, 0.05)[1] == SLOWER  # tighter threshold


def test_threshold_and_alpha_options_change_the_verdict(cli, fixtures):
    # the noisy pair has no significant cell at alpha 0.05 but a 22.6% drift;
    # at alpha 0.5 such drifts count
    code, document, _ = run_json(cli, fixtures / "noisy-base", fixtures / "noisy-new",
                                 "--alpha", "0.5")
    assert code == 1
    assert any(c["verdict"] == SLOWER for c in document["cells"])
    # and with a 50% threshold the 20% regression no longer counts
    code, _, _ = run_json(cli, fixtures / "base", fixtures / "slower", "--threshold", "0.5")
    assert code == 0


def test_a_cell_failing_in_every_new_repetition_is_a_regression(cli, fixtures):
    code, document, _ = run_json(cli, fixtures / "base", fixtures / "crashed")
    assert code == 1
    cells = cells_by_key(document)
    crashed = cells[("tmalloc-mt-64", 2, "heaplab")]
    assert crashed["verdict"] == "new_failed"
    assert crashed["group"] == "tmalloc"  # taken from BASE: stand-ins name no group
    partly = cells[("tmalloc-st-64", 1, "system")]
    assert partly["new"]["n"] == 8 and partly["new"]["failed"] == 1
    assert any("gave no value" in w for w in partly["warnings"])


def test_fewer_than_nine_repetitions_warns(cli, fixtures):
    code, out, err = cli(compare, fixtures / "base", fixtures / "few-reps")
    assert code == 0
    assert "fewer than 9 repetitions" in out
    assert "fewer than 9 repetitions" in err
    # one summary line, not one per cell
    assert out.count("fewer than 9 repetitions") == 1, out
    _, document, _ = run_json(cli, fixtures / "base", fixtures / "few-reps")
    assert document["warnings"] and all(c["warnings"] for c in document["cells"])


def test_nine_repetitions_do_not_warn(cli, fixtures):
    _, document, _ = run_json(cli, fixtures / "base", fixtures / "rerun")
    assert document["warnings"] == []


# --- machines ----------------------------------------------------------------------

def test_timings_from_different_machines_are_refused(cli, fixtures):
    code, out, err = cli(compare, fixtures / "base", fixtures / "other-machine")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "different machines" in err and "runner-a" in err and "runner-b" in err


def test_force_compares_timings_across_machines_with_a_warning(cli, fixtures):
    code, out, _ = cli(compare, fixtures / "base", fixtures / "other-machine", "--force")
    assert code == 0
    assert "--force" in out and "**Warning:**" in out


def _resize(folder, workload, **params):
    """Rewrites a run folder's documents as if `workload` had run with `params`."""
    raw = folder / "raw.jsonl"
    docs = [json.loads(line) for line in raw.read_text().splitlines() if line.strip()]
    for d in docs:
        if d["workload"]["name"] == workload:
            d["workload"]["params"] = dict(d["workload"].get("params") or {}, **params)
    raw.write_text("".join(json.dumps(d) + "\n" for d in docs))


def test_a_cell_run_at_other_sizes_is_refused_in_one_line(cli, fixtures, copy_run):
    new = copy_run("base")
    _resize(new, "tmalloc-st-64", pairs=50)
    code, out, err = cli(compare, fixtures / "base", new)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "different workload parameters" in err and "BASE pairs=1000" in err and "NEW pairs=50" in err


def test_force_compares_other_sizes_with_a_warning(cli, fixtures, copy_run):
    new = copy_run("base")
    _resize(new, "tmalloc-st-64", pairs=50)
    code, out, _ = cli(compare, fixtures / "base", new, "--force")
    assert code == 0
    assert "**Warning:**" in out and "different parameters" in out


def test_instruction_counts_compare_across_machines(cli, fixtures):
    code, document, _ = run_json(cli, fixtures / "instr-a", fixtures / "instr-b")
    assert code == 1  # heaplab/tmalloc-st-64 executes 10% more instructions
    cells = cells_by_key(document)
    assert {c["metric"] for c in document["cells"]} == {"instructions"}
    assert cells[("tmalloc-st-64", 1, "heaplab")]["verdict"] == SLOWER
    others = [c for k, c in cells.items() if k != ("tmalloc-st-64", 1, "heaplab")]
    assert all(c["verdict"] == UNCHANGED for c in others)


def test_explicit_instructions_metric_is_allowed_but_timings_of_the_same_runs_are_not(cli, fixtures):
    code, _, _ = cli(compare, fixtures / "instr-a", fixtures / "instr-b", "--metric", "instructions")
    assert code == 1
    code, _, err = cli(compare, fixtures / "instr-a", fixtures / "instr-b", "--metric", "ns_per_pair")
    assert code == 2 and "different machines" in err


def test_a_run_that_mixes_machines_is_refused_for_timings(cli, copy_run, fixtures):
    mixed = copy_run("rerun")
    extra = (fixtures / "other-machine" / "raw.jsonl").read_text().splitlines()[0]
    with open(mixed / "raw.jsonl", "a") as raw:
        raw.write(extra + "\n")
    code, _, err = cli(compare, fixtures / "base", mixed)
    assert code == 2 and "different machines" in err


# --- baseline allocator -----------------------------------------------------------------

def test_allocators_against_a_baseline_within_one_run(cli, fixtures):
    code, document, _ = run_json(cli, fixtures / "base", "--baseline-alloc", "system")
    assert code == 0
    assert document["mode"] == "allocators" and document["baseline_alloc"] == "system"
    cells = cells_by_key(document)
    assert {k[2] for k in cells} == {"heaplab", "mimalloc"}
    # mimalloc is 30% better than system everywhere; heaplab within 2%
    assert all(c["verdict"] == FASTER for k, c in cells.items() if k[2] == "mimalloc")
    assert all(c["verdict"] == UNCHANGED for k, c in cells.items() if k[2] == "heaplab")
    assert all(c["base_allocator"] == "system" for c in document["cells"])
    geomeans = {g["allocator"]: g["ratio"] for g in document["geomean"]}
    assert geomeans["mimalloc"] < 0.8 and geomeans["heaplab"] == pytest.approx(1.0, abs=0.03)


def test_an_allocator_slower_than_the_baseline_exits_1(cli, fixtures):
    code, document, _ = run_json(cli, fixtures / "base", "--baseline-alloc", "mimalloc")
    assert code == 1
    assert {c["verdict"] for c in document["cells"]} == {SLOWER}


def test_unknown_baseline_allocator_is_bad_input(cli, fixtures):
    code, _, err = cli(compare, fixtures / "base", "--baseline-alloc", "tcmalloc")
    assert code == 2
    assert err.strip() == ("compare: error: allocator 'tcmalloc' is not in "
                           f"{fixtures / 'base'} (it has: heaplab, mimalloc, system)")


# --- output --------------------------------------------------------------------------------

def test_markdown_has_a_table_per_group_geomeans_and_one_verdict_line(cli, fixtures):
    _, out, _ = cli(compare, fixtures / "base", fixtures / "slower")
    lines = out.rstrip().splitlines()
    assert "### kevy" in lines and "### tmalloc" in lines
    assert sum(1 for line in lines if line.startswith("| workload |")) == 2
    table_rows = [line for line in lines if line.startswith("| tmalloc-") or line.startswith("| kevy-")]
    assert len(table_rows) == 9
    assert any(line.startswith("- heaplab: 1.2") and "worse" in line for line in lines)
    assert lines[-1].startswith("**Verdict: regression**")
    assert sum(1 for line in lines if line.startswith("**Verdict")) == 1


def test_json_is_versioned_and_complete(cli, fixtures):
    _, document, _ = run_json(cli, fixtures / "base", fixtures / "slower")
    assert document["schema"] == "heaplab.compare/1"
    assert document["threshold"] == 0.05 and document["alpha"] == 0.05
    assert len(document["cells"]) == 9
    assert document["counts"][SLOWER] == 3 and document["counts"][FASTER] == 2
    cell = document["cells"][0]
    for key in ("workload", "group", "threads", "allocator", "metric", "unit", "better",
                "base", "new", "ratio", "change", "p_value", "test", "significant", "verdict"):
        assert key in cell
    assert set(cell["base"]) >= {"n", "median", "min", "max", "failed"}


def test_json_and_markdown_files_are_written(cli, fixtures, tmp_path):
    json_path, md_path = tmp_path / "c.json", tmp_path / "c.md"
    code, out, _ = cli(compare, fixtures / "base", fixtures / "slower",
                       "--json-out", json_path, "--markdown-out", md_path)
    assert code == 1
    assert md_path.read_text() == out
    assert json.loads(json_path.read_text())["exit_code"] == 1


def test_compare_runs_is_usable_without_the_command_line(fixtures):
    comparison = compare_runs(load_run_folder(fixtures / "base"),
                              load_run_folder(fixtures / "slower"))
    assert comparison.exit_code() == 1
    assert {g.allocator for g in comparison.geomeans()} == {"heaplab", "mimalloc", "system"}


# --- bad input -------------------------------------------------------------------------------

def test_missing_run_folder_is_one_line_and_exit_2(cli, fixtures, tmp_path):
    code, out, err = cli(compare, fixtures / "base", tmp_path / "nope")
    assert code == 2 and out == ""
    assert err.strip() == f"compare: error: {tmp_path / 'nope'}: no such run folder"


def test_folder_without_raw_jsonl_is_refused(cli, fixtures, tmp_path):
    code, _, err = cli(compare, fixtures / "base", tmp_path)
    assert code == 2 and "not a run folder" in err


def test_malformed_line_names_file_and_line(cli, copy_run, fixtures):
    broken = copy_run("rerun")
    with open(broken / "raw.jsonl", "a") as raw:
        raw.write("{not json\n")
    code, _, err = cli(compare, fixtures / "base", broken)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert f"{broken / 'raw.jsonl'}:82: not valid JSON" in err


def test_wrong_number_of_runs_is_refused(cli, fixtures):
    code, _, err = cli(compare, fixtures / "base")
    assert code == 2 and "give two run folders" in err
    code, _, err = cli(compare, fixtures / "base", fixtures / "rerun", fixtures / "slower")
    assert code == 2


def test_bad_threshold_and_alpha_are_refused(cli, fixtures):
    code, _, err = cli(compare, fixtures / "base", fixtures / "rerun", "--threshold", "-1")
    assert code == 2 and "--threshold" in err
    code, _, err = cli(compare, fixtures / "base", fixtures / "rerun", "--alpha", "1.5")
    assert code == 2 and "--alpha" in err


def test_runs_without_a_common_cell_are_refused(cli, copy_run, fixtures):
    other = copy_run("rerun")
    lines = (other / "raw.jsonl").read_text().splitlines()
    renamed = [line.replace('"name": "tmalloc-', '"name": "renamed-')
                   .replace('"name": "kevy-', '"name": "renamed-kevy-') for line in lines]
    (other / "raw.jsonl").write_text("\n".join(renamed) + "\n")
    code, _, err = cli(compare, fixtures / "base", other)
    assert code == 2 and "no cell in common" in err


def test_a_metric_with_a_bad_direction_is_refused(cli, copy_run, fixtures):
    odd = copy_run("rerun")
    text = (odd / "raw.jsonl").read_text().replace('"better": "higher"', '"better": "faster"')
    (odd / "raw.jsonl").write_text(text)
    code, _, err = cli(compare, fixtures / "base", odd)
    assert code == 2 and "better='faster'" in err


def test_a_metric_no_document_has_is_refused(cli, fixtures):
    code, _, err = cli(compare, fixtures / "base", fixtures / "rerun", "--metric", "instructions")
    assert code == 2
    assert "no document has a value for metric 'instructions'" in err
    assert "(metrics present: mops, ns_per_pair)" in err
