"""`run.py export`: Google Benchmark JSON that gbench.py's reader (the one
`run.py gbench` uses) reads back to the run's own medians, CSV with one line
per cell, and the Bencher Metric Format."""
from __future__ import annotations

import csv
import io
import json
import pathlib
import subprocess
import sys

import pytest

from heaplab import export, gbench, report_data

REPO = pathlib.Path(__file__).resolve().parents[2]


def _export(run_dir: pathlib.Path, fmt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "export", str(run_dir), "--format", fmt, *extra],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_gbench_export_round_trips_through_the_gbench_reader(run_dir: pathlib.Path) -> None:
    _export(run_dir, "gbench")
    files = sorted((run_dir / "export-gbench").glob("gbench-*.json"))
    table = gbench.summarize(gbench.load_reports(files))
    folder = report_data.load_run(run_dir)
    cells = [c for c in folder.summary["cells"] if c["status"] == "ok"]
    checked = 0
    for cell in cells:
        factor = export.rate_factor(cell["unit"])
        if cell["unit"] == "ns":
            want = (cell["median"], cell["min"], cell["max"])
        elif factor is not None:   # a rate comes back as ns per item: 1e9 / rate
            want = (1e9 / (cell["median"] * factor), 1e9 / (cell["max"] * factor), 1e9 / (cell["min"] * factor))
        else:
            continue               # MB: not a figure Google Benchmark holds
        row_name = f"{cell['workload']}/{cell['threads']}t"
        row = next(r for r in table["rows"] if r["benchmark"] == row_name)
        got = row["cells"][cell["allocator"]]
        assert (got["median"], got["min"], got["max"]) == pytest.approx(want, rel=1e-12), cell["cell"]
        assert got["n"] == cell["n"]
        checked += 1
    assert checked >= 20
    assert any(export.rate_factor(c["unit"]) for c in cells)     # the fixture has Mpairs/s rows


def test_gbench_export_is_what_google_benchmark_writes(run_dir: pathlib.Path) -> None:
    reports, _ = export.gbench_reports(report_data.load_run(run_dir))
    report = reports["heaplab"]
    assert report["context"]["heaplab_allocator"] == "heaplab"
    iterations = [b for b in report["benchmarks"] if b["run_type"] == "iteration"]
    medians = [b for b in report["benchmarks"] if b.get("aggregate_name") == "median"]
    assert {b["run_name"] for b in iterations} == {b["run_name"] for b in medians}
    for b in report["benchmarks"]:
        assert {"name", "run_name", "run_type", "repetitions", "threads", "iterations",
                "real_time", "cpu_time", "time_unit", "family_index"} <= set(b), b
        assert b["time_unit"] in ("ns", "us", "ms", "s")


def test_gbench_export_leaves_out_what_it_cannot_hold_and_says_so(run_dir: pathlib.Path) -> None:
    folder = report_data.load_run(run_dir)
    cell = next(c for c in folder.summary["cells"] if c["status"] == "ok" and c["unit"] == "ns")
    cell["unit"], cell["metric"] = "instructions", "instructions"
    reports, left_out = export.gbench_reports(folder)
    assert f"{cell['cell']} (instructions in instructions)" in left_out
    assert all(b["run_name"] != cell["cell"] for r in reports.values() for b in r["benchmarks"])
    proc = _export(run_dir, "gbench")
    assert "cells left out (Google Benchmark's JSON holds times and rates only)" in proc.stderr


def test_csv_export_has_one_line_per_cell_with_its_median(run_dir: pathlib.Path) -> None:
    text = _export(run_dir, "csv", "--out", "-").stdout
    lines = list(csv.DictReader(io.StringIO(text)))
    cells = report_data.load_run(run_dir).summary["cells"]
    assert len(lines) == len(cells)
    for line, cell in zip(lines, cells):
        assert (line["workload"], int(line["threads"]), line["allocator"]) == (
            cell["workload"], cell["threads"], cell["allocator"])
        if cell["status"] == "ok":
            assert float(line["median"]) == cell["median"]
        else:
            assert line["median"] == "" and line["status"] == cell["status"]


def test_bmf_export_gives_median_and_range_per_benchmark_and_measure(run_dir: pathlib.Path) -> None:
    _export(run_dir, "bmf")
    document = json.loads((run_dir / "export-bmf.json").read_text())
    cells = {c["cell"]: c for c in report_data.load_run(run_dir).summary["cells"] if c["status"] == "ok"}
    assert set(document) == set(cells)
    st64 = document["tmalloc-st-64/heaplab/1t"]
    cell = cells["tmalloc-st-64/heaplab/1t"]
    assert st64["latency"] == {"value": cell["median"], "lower_value": cell["min"], "upper_value": cell["max"]}
    rate = document["tmalloc-mt-small/heaplab/2t"]["throughput"]
    assert rate["value"] == pytest.approx(cells["tmalloc-mt-small/heaplab/2t"]["median"] * 1e6)
    for measures in document.values():
        for m in measures.values():
            assert m["lower_value"] <= m["value"] <= m["upper_value"]
