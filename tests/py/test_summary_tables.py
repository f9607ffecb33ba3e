"""Summaries and tables rebuilt from a fixture run folder (raw.jsonl + env.json)."""
import csv
import io
import json
import shutil

import pytest

from heaplab import rundir, summary, tables


@pytest.fixture
def run_folder(tmp_path, driver_fixtures):
    folder = tmp_path / "run"
    shutil.copytree(driver_fixtures / "run", folder)
    return folder


@pytest.fixture
def result(run_folder):
    return rundir.derive(run_folder)


def cell(result, workload, alloc):
    return next(c for c in result["cells"] if c["workload"] == workload and c["allocator"] == alloc)


def test_summary_has_median_min_max_n_and_every_value(result):
    c = cell(result, "tmalloc-st-64", "system")
    assert (c["median"], c["min"], c["max"], c["n"]) == (5.0, 4.0, 6.0, 3)
    assert sorted(c["values"]) == [4.0, 5.0, 6.0]
    assert (c["unit"], c["better"]) == ("ns", "lower")


def test_ratio_to_system_is_ratio_of_medians(result):
    assert cell(result, "tmalloc-st-64", "heaplab")["ratio_to_system"] == pytest.approx(0.5)
    assert cell(result, "tmalloc-mt-64", "mimalloc")["ratio_to_system"] == pytest.approx(21.0 / 11.0)


def test_no_ratio_when_system_failed(result):
    assert cell(result, "phases-demo", "heaplab")["ratio_to_system"] is None


def test_secondary_metrics_are_summarised_too(result):
    extra = cell(result, "tmalloc-st-64", "system")["metrics"]["rss_over_live"]
    assert extra["n"] == 3 and extra["median"] == pytest.approx(1.7)


def test_failure_statuses(result):
    assert cell(result, "tmalloc-st-64", "mimalloc")["status"] == "crashed (SIGSEGV)"
    assert cell(result, "tmalloc-mt-64", "heaplab")["status"] == "timeout"
    assert cell(result, "phases-demo", "system")["status"] == "error"
    jem = cell(result, "tmalloc-st-64", "jemalloc")
    assert jem["status"] == "not installed" and "apt install libjemalloc2" in jem["message"]


def test_partial_failure_keeps_the_successful_values(result):
    c = cell(result, "tmalloc-mt-64", "mimalloc")
    assert c["status"] == "ok" and c["n"] == 2
    assert [f["label"] for f in c["failures"]] == ["crashed (SIGABRT)"]


def test_failed_cells_lists_cells_with_any_failed_repetition(result):
    names = {c["cell"] for c in summary.failed_cells(result)}
    assert names == {"tmalloc-st-64/mimalloc/1t", "tmalloc-mt-64/heaplab/2t",
                     "tmalloc-mt-64/mimalloc/2t", "phases-demo/system/1t"}


def test_markdown_has_one_table_per_group_with_allocator_columns(result):
    md = tables.markdown(result)
    assert md.count("## tmalloc") == 1 and md.count("## script") == 1
    header = "| workload | threads | metric | system | heaplab | mimalloc | jemalloc |"
    assert md.count(header) == 3          # two groups, then the spread of the repetitions
    assert md.index("## script") < md.index("## Spread of the repetitions")
    # tmalloc rows come under the tmalloc heading, before the script heading
    assert md.index("tmalloc-mt-64") < md.index("## script") < md.index("| phases-demo")


def test_markdown_cells_show_median_spread_and_ratio(result):
    md = tables.markdown(result)
    row = next(line for line in md.splitlines() if line.startswith("| tmalloc-st-64"))
    assert "2.50 (2.00–3.00) ×0.50" in row
    assert "5.00 (4.00–6.00) |" in row       # the baseline gets no ×1.00
    assert "crashed (SIGSEGV)" in row
    assert "not installed (apt install libjemalloc2)" in row
    assert "ns_per_pair (ns, lower is better)" in row


def test_markdown_failure_cells(result):
    md = tables.markdown(result)
    mt = next(line for line in md.splitlines() if line.startswith("| tmalloc-mt-64"))
    assert "| timeout |" in mt
    assert "1 of 3 crashed (SIGABRT)" in mt
    ph = next(line for line in md.splitlines() if line.startswith("| phases-demo"))
    # the runner's message is shown, with the Markdown pipe escaped
    assert "error: workloads/phases-demo.wl:7: live set \\| exceeds limit" in ph


def test_markdown_rows_have_as_many_cells_as_the_header(result):
    for line in tables.markdown(result).splitlines():
        if line.startswith("| "):
            assert len(line.replace("\\|", "").split("|")) == 9


def test_csv_has_per_allocator_columns_and_statuses(result):
    rows = list(csv.DictReader(io.StringIO(tables.csv_text(result))))
    assert [r["workload"] for r in rows] == ["tmalloc-st-64", "tmalloc-mt-64", "phases-demo"]
    st = rows[0]
    assert float(st["heaplab_median"]) == 2.5 and float(st["heaplab_min"]) == 2.0
    assert float(st["heaplab_ratio_to_system"]) == 0.5
    assert st["heaplab_status"] == "ok" and st["heaplab_n"] == "3"
    assert st["mimalloc_status"] == "crashed (SIGSEGV)" and st["mimalloc_median"] == ""
    assert st["jemalloc_status"].startswith("not installed")
    assert rows[1]["threads"] == "2" and rows[1]["better"] == "higher"
    assert rows[1]["mimalloc_status"] == "ok; 1 failed"


def test_derive_writes_every_derived_file_from_the_folder_alone(run_folder, result):
    for name in ("summary.json", "tables.md", "tables.csv"):
        assert (run_folder / name).stat().st_size > 0
    again = json.loads((run_folder / "summary.json").read_text())
    assert again == json.loads(json.dumps(result))
    assert not [p for p in run_folder.iterdir() if p.name.endswith(".tmp")]


def test_cells_that_never_ran_say_not_run(run_folder):
    env = json.loads((run_folder / "env.json").read_text())
    result = summary.summarize([], env["plan"])
    assert {c["status"] for c in result["cells"] if c["allocator"] == "system"} == {"not run"}


def test_number_format_is_readable():
    assert tables.fmt_number(1234.4) == "1234"
    assert tables.fmt_number(12.34) == "12.3"
    assert tables.fmt_number(1.234) == "1.23"
    assert tables.fmt_number(0.01234) == "0.0123"
    assert tables.fmt_number(None) == "–"


def test_rows_come_from_the_cell_key_even_for_so_allocators():
    doc = {"status": "ok", "cell": "w1/so:/opt/lib/x.so/3t", "primary": "ns",
           "workload": {"name": "w1", "group": "g", "threads": 1},
           "allocator": {"name": "so:/opt/lib/x.so"},
           "metrics": {"ns": {"value": 2.0, "unit": "ns", "better": "lower"}}}
    result = summary.summarize([doc], {"reps": 1, "allocators": [], "rows": []})
    assert [(r["workload"], r["threads"]) for r in result["rows"]] == [("w1", 3)]
    assert result["cells"][0]["median"] == 2.0


def test_large_numbers_get_a_suffix():
    assert tables.fmt_number(309038895.0) == "309M"
    assert tables.fmt_number(2.5e9) == "2.5G"


def test_a_single_run_shows_no_spread():
    c = {"status": "ok", "median": 3.0, "min": 3.0, "max": 3.0, "n": 1, "ratio_to_system": 0.5,
         "allocator": "heaplab", "failures": []}
    assert tables.cell_text(c) == "3.00 ×0.50"


def test_parameters_set_for_a_row_show_in_both_tables(run_folder):
    env = json.loads((run_folder / "env.json").read_text())
    for row in env["plan"]["rows"]:
        if row["workload"] == "tmalloc-st-64":
            row["params"] = {"pairs": 1000, "size": 32}
    (run_folder / "env.json").write_text(json.dumps(env))
    result = rundir.derive(run_folder)
    md = (run_folder / "tables.md").read_text()
    assert "| tmalloc-st-64 (pairs=1000, size=32) | 1 |" in md
    assert "| tmalloc-mt-64 | 2 |" in md   # a row without parameters reads as before
    rows = list(csv.DictReader(io.StringIO(tables.csv_text(result))))
    assert rows[0]["params"] == "pairs=1000, size=32" and rows[1]["params"] == ""


def test_a_program_cell_in_nanoseconds_reads_in_seconds():
    """A program's whole run (177,000,000 ns) reads 0.177 s, not "177M ns"."""
    doc = {"status": "ok", "cell": "prog-x/system/1t", "primary": "wall_ns",
           "workload": {"name": "prog-x", "group": "programs", "threads": 1},
           "allocator": {"name": "system"},
           "metrics": {"wall_ns": {"value": 177e6, "unit": "ns", "better": "lower"}}}
    md = tables.markdown(summary.summarize([doc], {"reps": 1, "allocators": [], "rows": []}))
    row = next(line for line in md.splitlines() if line.startswith("| prog-x |"))
    assert "wall_ns (s, lower is better)" in row and "| 0.177 |" in row and "177M" not in row
    assert tables.value_text(177e6, "ns") == "0.177 s"
    assert tables.value_text(48.6, "ns") == "48.6 ns"
