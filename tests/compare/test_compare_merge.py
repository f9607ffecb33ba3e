"""Sharding the matrix and merging shard run folders (`./run.py merge`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from heaplab import compare, merge
from heaplab.merge import (
    RunFolderError,
    document_cell,
    load_run_folder,
    merge_runs,
    parse_shard,
    shard_of,
)

MATRIX = [(w, t, a) for w, t in (("tmalloc-st-64", 1), ("tmalloc-mt-64", 2), ("tmalloc-mt-64", 4),
                                  ("kevy-throughput", 2), ("script:phases", 1))
          for a in ("system", "heaplab", "mimalloc", "jemalloc", "tcmalloc")]


# --- shard_of ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, len(MATRIX), len(MATRIX) + 3])
def test_shards_partition_the_cell_set(n):
    shards = [shard_of(MATRIX, k, n) for k in range(1, n + 1)]
    seen = [cell for shard in shards for cell in shard]
    assert sorted(seen) == sorted(MATRIX)        # every cell once: disjoint and complete
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1          # balanced


def test_shards_do_not_depend_on_input_order():
    shuffled = MATRIX[:]
    random.Random(7).shuffle(shuffled)
    for k in (1, 2, 3):
        assert sorted(shard_of(shuffled, k, 3)) == sorted(shard_of(MATRIX, k, 3))


def test_shard_keeps_the_given_order_of_its_cells():
    shard = shard_of(MATRIX, 2, 3)
    assert shard == [c for c in MATRIX if c in shard]


def test_equal_cells_of_different_types_land_in_the_same_shard():
    cells = [("a", 1, "x"), ["a", 1, "x"], ("b", 2, "y")]
    for k in (1, 2):
        shard = shard_of(cells, k, 2)
        assert (("a", 1, "x") in shard) == (["a", 1, "x"] in shard)


def test_bad_shard_numbers_are_refused():
    for k, n in ((0, 3), (4, 3), (1, 0)):
        with pytest.raises(ValueError, match="between 1 and N"):
            shard_of(MATRIX, k, n)


def test_parse_shard():
    assert parse_shard("2/4") == (2, 4)
    assert parse_shard("1/1") == (1, 1)
    for bad in ("0/4", "5/4", "a/b", "3", "1/2/3", "-1/2", ""):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


# --- merge --------------------------------------------------------------------------------

def split_into_shards(source: Path, out: Path, n: int) -> list[Path]:
    """Writes n shard run folders holding source's documents, the way
    `run --shard K/N` would have produced them."""
    run = load_run_folder(source)
    cells = [document_cell(d) for d in run.documents]
    folders = []
    for k in range(1, n + 1):
        mine = set(shard_of(cells, k, n))
        folder = out / f"shard-{k}"
        folder.mkdir(parents=True)
        (folder / "raw.jsonl").write_text(
            "".join(json.dumps(d) + "\n" for d in run.documents if document_cell(d) in mine))
        (folder / "env.json").write_text(json.dumps(run.env))
        folders.append(folder)
    return folders


def keyed(documents: list[dict]) -> dict:
    return {(document_cell(d), d["rep"]): d for d in documents}


def test_merged_shards_equal_the_unsharded_run(tmp_path, fixtures):
    shards = split_into_shards(fixtures / "base", tmp_path, 4)
    assert all((s / "raw.jsonl").stat().st_size > 0 for s in shards)
    result = merge_runs(shards, tmp_path / "merged")
    unsharded = load_run_folder(fixtures / "base").documents
    merged = load_run_folder(tmp_path / "merged")
    assert keyed(merged.documents) == keyed(unsharded)
    assert len(merged.documents) == len(unsharded)
    assert merged.env == load_run_folder(fixtures / "base").env
    assert result.duplicates_dropped == 0


def test_a_merged_folder_has_the_summary_and_tables_of_the_unsharded_run(tmp_path, fixtures, cli):
    from heaplab import rundir
    whole = tmp_path / "whole"
    whole.mkdir()
    for name in ("raw.jsonl", "env.json"):
        if (fixtures / "base" / name).exists():
            (whole / name).write_bytes((fixtures / "base" / name).read_bytes())
    rundir.derive(whole)
    shards = split_into_shards(fixtures / "base", tmp_path, 3)
    code, out, err = cli(merge, *shards, "--out", tmp_path / "merged")
    assert code == 0, err
    for name in ("summary.json", "tables.md", "tables.csv"):
        assert (tmp_path / "merged" / "latest" / name).read_text() == (whole / name).read_text(), name
    assert (whole / "tables.md").read_text().strip() in out


def test_merged_shards_compare_unchanged_against_the_unsharded_run(tmp_path, fixtures, cli):
    shards = split_into_shards(fixtures / "base", tmp_path, 3)
    code, _, err = cli(merge, *shards, "--out", tmp_path / "merged")
    assert code == 0, err
    code, out, _ = cli(compare, fixtures / "base", tmp_path / "merged")
    assert code == 0 and "**slower**" not in out


def test_merge_reports_what_it_did(tmp_path, fixtures, cli):
    shards = split_into_shards(fixtures / "base", tmp_path, 2)
    code, out, _ = cli(merge, *shards, "--out", tmp_path / "merged")
    assert code == 0
    # --out is the parent of the merged run folder, as for `run --out`
    folder = (tmp_path / "merged" / "latest").resolve()
    assert folder.parent == tmp_path / "merged" and folder.name.endswith("-merge")
    # the last line is the report's path (tests/report checks it)
    assert out.strip().splitlines()[-2] == (f"merged 2 run folders: 81 documents, 9 cells, "
                                            f"0 duplicates dropped -> {folder}")
    provenance = json.loads((folder / "merge.json").read_text())
    assert provenance["schema"] == "heaplab.merge/1" and provenance["documents"] == 81


def test_duplicate_cell_and_rep_is_kept_once(tmp_path, fixtures, copy_run):
    again = copy_run("base")
    result = merge_runs([fixtures / "base", again], tmp_path / "merged")
    assert result.duplicates_dropped == 81
    assert len(result.documents) == 81


def test_a_retried_repetition_replaces_the_failed_one(tmp_path, fixtures, copy_run):
    crashed = copy_run("crashed")
    retry = tmp_path / "retry"
    retry.mkdir()
    good = [d for d in load_run_folder(fixtures / "rerun").documents
            if d["cell"] == "tmalloc-mt-64/2/heaplab"]
    (retry / "raw.jsonl").write_text("".join(json.dumps(d) + "\n" for d in good))
    result = merge_runs([crashed, retry], tmp_path / "merged")
    mine = [d for d in result.documents if d["cell"] == "tmalloc-mt-64/2/heaplab"]
    assert len(mine) == 9 and all(d["status"] == "ok" for d in mine)


def test_timings_from_different_machines_do_not_merge(tmp_path, fixtures, cli):
    with pytest.raises(RunFolderError, match="different machines"):
        merge_runs([fixtures / "base", fixtures / "other-machine"], tmp_path / "merged")
    code, out, err = cli(merge, fixtures / "base", fixtures / "other-machine",
                         "--out", tmp_path / "merged")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "runner-a" in err and "runner-b" in err
    assert not (tmp_path / "merged").exists()


def test_force_merges_timings_from_different_machines(tmp_path, fixtures, cli):
    a_shards = split_into_shards(fixtures / "base", tmp_path / "a", 2)
    b_shards = split_into_shards(fixtures / "other-machine", tmp_path / "b", 2)
    code, _, _ = cli(merge, a_shards[0], b_shards[1], "--out", tmp_path / "merged", "--force")
    assert code == 0
    assert json.loads((tmp_path / "merged" / "latest" / "merge.json").read_text())["forced"] is True
    # compare still sees the mixture and refuses timings from it
    code, _, err = cli(compare, fixtures / "base", tmp_path / "merged")
    assert code == 2 and "different machines" in err


def test_instruction_counts_from_different_machines_merge(tmp_path, fixtures, cli):
    code, _, err = cli(merge, fixtures / "instr-a", fixtures / "instr-b", "--out", tmp_path / "m")
    assert code == 0, err
    merged = load_run_folder(tmp_path / "m")
    assert len(merged.documents) == 81  # same (cell, rep) in both: the first kept
    assert {d["env"]["hostname"] for d in merged.documents} == {"runner-a"}


def test_instruction_shards_from_different_machines_merge_into_the_whole(tmp_path, fixtures):
    a_shards = split_into_shards(fixtures / "instr-a", tmp_path / "a", 2)
    b_shards = split_into_shards(fixtures / "instr-b", tmp_path / "b", 2)
    result = merge_runs([a_shards[0], b_shards[1]], tmp_path / "merged")
    hosts = {d["env"]["hostname"] for d in result.documents}
    assert hosts == {"runner-a", "runner-b"} and len(result.machines) == 2
    assert len(result.documents) == 81


def test_out_folder_holding_a_run_is_refused(tmp_path, fixtures, copy_run, cli):
    existing = copy_run("rerun")
    code, _, err = cli(merge, fixtures / "base", "--out", existing)
    assert code == 2 and "already holds a run" in err


def test_the_same_folder_twice_is_refused(tmp_path, fixtures):
    with pytest.raises(RunFolderError, match="given twice"):
        merge_runs([fixtures / "base", fixtures / "base"], tmp_path / "merged")


def test_document_without_rep_is_refused(tmp_path, fixtures):
    folder = tmp_path / "norep"
    folder.mkdir()
    doc = load_run_folder(fixtures / "base").documents[0]
    del doc["rep"]
    (folder / "raw.jsonl").write_text(json.dumps(doc) + "\n")
    with pytest.raises(RunFolderError, match="has no 'rep'"):
        merge_runs([folder], tmp_path / "merged")


def test_missing_input_folder_is_one_line_and_exit_2(tmp_path, cli):
    code, _, err = cli(merge, tmp_path / "nope", "--out", tmp_path / "merged")
    assert code == 2
    assert err.strip() == f"merge: error: {tmp_path / 'nope'}: no such run folder"


# --- machines ---------------------------------------------------------------------------------

def test_machine_is_read_from_run_py_env_json_when_documents_have_none(tmp_path):
    from heaplab.merge import machines_of
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "raw.jsonl").write_text(json.dumps(
        {"status": "crashed", "workload": {"name": "w", "threads": 1},
         "allocator": {"name": "system"}, "rep": 0, "cell": "w/system/1t"}) + "\n")
    (folder / "env.json").write_text(json.dumps(
        {"schema": "heaplab.env/1", "machine": {"hostname": "box", "cpu_model": "CPU ",
                                                "cores": 2}}))
    assert machines_of(load_run_folder(folder)) == [("box", "CPU", 2)]


def test_documents_env_wins_over_env_json(fixtures, copy_run):
    from heaplab.merge import machines_of
    run = copy_run("rerun")
    (run / "env.json").write_text(json.dumps({"machine": {"hostname": "elsewhere"}}))
    assert [m[0] for m in machines_of(load_run_folder(run))] == ["runner-a"]


def test_an_unknown_value_is_not_a_different_machine():
    from heaplab.merge import distinct_machines, same_machine
    assert same_machine(("a", None, 2), ("a", "Xeon", 2))
    assert not same_machine(("a", "Xeon", 2), ("a", "Xeon", 4))
    assert distinct_machines([("a", None, 2), ("a", "Xeon", 2), ("b", "Xeon", 2)]) == \
        [("a", None, 2), ("b", "Xeon", 2)]


def test_shard_of_takes_a_key_for_cells_that_are_objects():
    class Cell:
        def __init__(self, key: str) -> None:
            self.key = key
    cells = [Cell(k) for k in ("w/system/1t", "w/heaplab/1t", "w/mimalloc/1t")]
    shards = [shard_of(cells, k, 2, key=lambda c: c.key) for k in (1, 2)]
    assert sorted(c.key for s in shards for c in s) == sorted(c.key for c in cells)
    with pytest.raises(TypeError, match="pass key= to shard_of"):
        shard_of(cells, 1, 2)


def test_the_shards_plans_join_rows_and_allocators_in_order_with_the_most_repetitions():
    from heaplab.merge import merge_plans
    shard1 = {"plan": {"reps": 5, "allocators": [{"name": "system"}, {"name": "heaplab"}],
                       "rows": [{"workload": "a", "threads": 1}, {"workload": "b", "threads": 1}]}}
    shard2 = {"plan": {"reps": 3, "allocators": [{"name": "heaplab"}, {"name": "mimalloc"}],
                       "rows": [{"workload": "b", "threads": 1}, {"workload": "b", "threads": 2}]}}
    plan = merge_plans([shard1, {}, shard2])
    assert plan == {"reps": 5,
                    "allocators": [{"name": "system"}, {"name": "heaplab"}, {"name": "mimalloc"}],
                    "rows": [{"workload": "a", "threads": 1}, {"workload": "b", "threads": 1},
                             {"workload": "b", "threads": 2}]}
    assert merge_plans([{}, {"hostname": "x"}]) is None


def _resized(shard: Path, reps: int | None = None, scale: int = 1) -> None:
    """Rewrites a shard as if it had run at other sizes or --reps."""
    env = json.loads((shard / "env.json").read_text())
    if reps is not None:
        env.setdefault("options", {})["reps"] = reps
    (shard / "env.json").write_text(json.dumps(env))
    docs = [json.loads(line) for line in (shard / "raw.jsonl").read_text().splitlines()]
    for d in docs:
        params = (d.get("workload") or {}).setdefault("params", {})
        params["rounds"] = 2500 * scale
    (shard / "raw.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))


@pytest.mark.parametrize("first,second,says", [
    ({"scale": 1}, {"scale": 8}, r"different parameters \(rounds=2500 in .* but 20000"),
    ({"reps": 2}, {"reps": 3}, r"different --reps \(2, 3\)"),
])
def test_merge_refuses_shards_of_other_sizes_or_reps_unless_forced(tmp_path, fixtures, first,
                                                                    second, says):
    one, two = split_into_shards(fixtures / "base", tmp_path, 2)
    _resized(one, **first)
    _resized(two, **second)
    with pytest.raises(RunFolderError, match=says):
        merge_runs([one, two], tmp_path / "merged")
    assert not (tmp_path / "merged" / "raw.jsonl").exists()
    merge_runs([one, two], tmp_path / "forced", force=True)
