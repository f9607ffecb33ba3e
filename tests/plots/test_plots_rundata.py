"""Reading raw.jsonl: medians from every repetition, failed cells kept as
failures (never as zeros), and one-line errors for bad input."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from plots.rundata import RunError, Spread, cells, load_run, spread


def raw_values(run_dir: Path) -> dict[tuple[str, int, str], list[float]]:
    """Primary-metric values per (workload, threads, allocator), read from
    raw.jsonl directly, without the code under test."""
    result: dict[tuple[str, int, str], list[float]] = {}
    for line in (run_dir / "raw.jsonl").read_text().splitlines():
        doc = json.loads(line)
        if doc["status"] != "ok":
            continue
        key = (doc["workload"]["name"], doc["workload"]["threads"],
               doc["allocator"]["name"])
        value = doc["metrics"][doc["primary"]]["value"]
        result.setdefault(key, []).append(value)
    return result


def test_a_cells_median_min_and_max_come_from_all_three_repetitions(run) -> None:
    # the fixture's heaplab reps of tmalloc-st-64 are 5.62, 4.91, 5.17
    got = cells(run.docs_at("tmalloc-st-64", 1), lambda d: d.value)["heaplab"]
    assert got.stats() == Spread(median=5.17, min=4.91, max=5.62, n=3)


def test_every_cells_median_matches_the_median_of_its_raw_values(run, run_dir) -> None:
    expected = raw_values(run_dir)
    checked = 0
    for (workload, threads, allocator), values in expected.items():
        stats = cells(run.docs_at(workload, threads),
                      lambda d: d.value)[allocator].stats()
        assert stats == Spread(statistics.median(values), min(values),
                               max(values), len(values))
        checked += 1
    assert checked == len(expected) > 20


def test_a_cell_with_a_timed_out_rep_takes_its_median_from_the_others(run) -> None:
    cell = cells(run.docs_at("tmalloc-st-64", 1),
                 lambda d: d.value)["heaplab-nocache"]
    assert cell.stats().n == 2
    assert cell.reps == 3
    assert cell.failure_note() == "1 of 3 timeout"


def test_a_crashed_cell_has_no_figure_and_says_why(run) -> None:
    cell = cells(run.docs_at("tmalloc-st-random-100k", 1),
                 lambda d: d.value)["jemalloc"]
    assert cell.values == []
    assert cell.stats() is None
    assert cell.gap_label() == "crashed (SIGSEGV)"


def test_crashed_documents_borrow_group_metric_and_threads_from_their_workload(run) -> None:
    crashed = [d for d in run.docs if d.status.startswith("crashed")]
    assert len(crashed) == 3
    for doc in crashed:
        assert doc.group == "tmalloc"
        assert doc.metric is not None and doc.metric.name == "ns_per_pair"
        assert doc.threads == 1
        assert doc.value is None


def test_spread_of_nothing_is_none_not_zero() -> None:
    assert spread([]) is None


def test_machine_comes_from_the_documents_when_env_json_is_missing(run_dir) -> None:
    (run_dir / "env.json").unlink()
    assert "Xeon Platinum 8370C" in load_run(run_dir).machine()


def test_machine_joins_env_json_and_the_runners_own_record(run) -> None:
    # cores from env.json's "machine" (and the documents), glibc only from
    # the documents' env
    assert run.machine() == ("Intel Xeon Platinum 8370C @ 2.80GHz, 2 cores, "
                             "Linux 6.1.0-26-amd64, glibc 2.36")


def test_env_jsons_plan_names_the_allocators_that_were_not_installed(run) -> None:
    assert run.planned == ["system", "heaplab", "heaplab-nocache", "mimalloc",
                           "jemalloc", "tcmalloc"]
    assert run.unavailable == {"tcmalloc": "not installed"}
    assert not any(d.allocator == "tcmalloc" for d in run.docs)


def test_a_flat_env_json_with_an_allocator_list_is_read_too(tmp_path: Path) -> None:
    (tmp_path / "raw.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "env.json").write_text(json.dumps({
        "cpu_model": "AMD EPYC 7763 64-Core Processor", "cores": 4,
        "allocators": [{"name": "jemalloc", "available": False}]}))
    run = load_run(tmp_path)
    assert run.machine() == "AMD EPYC 7763 64-Core Processor, 4 cores"
    assert run.unavailable == {"jemalloc": "not installed"}


def test_threads_missing_from_a_document_are_read_from_its_cell_key(tmp_path: Path) -> None:
    doc = {"status": "timeout", "workload": {"name": "mt"},
           "allocator": {"name": "system"}, "cell": "mt/system/4t"}
    (tmp_path / "raw.jsonl").write_text(json.dumps(doc) + "\n")
    assert load_run(tmp_path).docs[0].threads == 4


@pytest.mark.parametrize("line, message", [
    ("{not json", "raw.jsonl:1: not valid JSON"),
    ("[1, 2]", "raw.jsonl:1: line is not a JSON object"),
    ('{"schema": "heaplab.run/2", "workload": "w", "allocator": "system"}',
     "schema 'heaplab.run/2' is not supported"),
    ('{"status": "ok", "workload": {"name": "w"}}', "no allocator name"),
])
def test_bad_raw_jsonl_lines_give_a_one_line_error_naming_the_line(
        tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "raw.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(RunError) as error:
        load_run(tmp_path)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_bad_env_json_is_named(tmp_path: Path) -> None:
    (tmp_path / "raw.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "env.json").write_text("{", encoding="utf-8")
    with pytest.raises(RunError, match="env.json: not readable JSON"):
        load_run(tmp_path)
