"""`run.py reproduce`: runs exactly a published table's cells, writes a run
folder like `run` does, and renders the table beside the published figures.

End-to-end tests use --quick on the smallest table (001-memalloc-latency: one
workload, two allocators) and the memory table for its charts."""
from __future__ import annotations

import dataclasses
import json
import pathlib
import statistics
from typing import Any

import pytest

from heaplab import catalog as catalog_mod, cmd_plot, cmd_reproduce, published, pythons, runner as runner_mod
from heaplab import reproduce_table
from heaplab.reproduce_table import fmt_measured

LATENCY = "001-memalloc-latency"
MEMORY = "000-tmalloc-memory"


def _docs(folder: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "raw.jsonl").read_text().splitlines() if line.strip()]


# ------------------------------------------------------------- bad input

def test_unknown_table_is_one_line_listing_the_tables_and_exit_2(reproduce, tmp_path):
    status, out, err = reproduce("no-such-table", "--quick", "--out", str(tmp_path))
    assert status == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert "no-such-table" in lines[0]
    for t in published.load_all():
        assert t.id in lines[0]
    assert not any(tmp_path.iterdir()), "nothing may be run or written for a bad name"


def test_bad_reps_is_refused_with_exit_2(reproduce, tmp_path):
    status, _, err = reproduce(LATENCY, "--reps", "zero", "--out", str(tmp_path))
    assert status == 2
    assert "--reps" in err


def test_a_row_with_parameters_is_refused_since_cells_cannot_pass_them(runner):
    doc = json.loads(published.find_table(published.load_all(), LATENCY).path.read_text())
    doc["rows"][0]["params"] = {"samples": 1000}
    table = published.parse_table(doc, pathlib.Path(f"{LATENCY}.json"))
    with pytest.raises(cmd_reproduce.ReproduceError, match="samples=1000"):
        cmd_reproduce.plan([table], catalog_mod.load(runner))


# ----------------------------------------------------------------- planning

def test_plan_runs_each_needed_cell_once_with_its_thread_count(runner):
    cat = catalog_mod.load(runner)
    tables = [published.find_table(published.load_all(), "000-tmalloc-mt")]
    cells, missing, unavailable = cmd_reproduce.plan(tables, cat)
    assert missing == [] and unavailable == {}
    got = {(c.workload.name, c.threads, c.allocator) for c in cells}
    want = {(s.workload, s.threads, s.allocator) for s in published.run_specs(tables[0])}
    assert got == want
    assert len(cells) == len(got)
    # a threaded workload is told its thread count; a fixed-thread one is not
    assert all(c.pass_threads for c in cells if c.workload.name == "tmalloc-mt")
    assert {c.threads for c in cells if c.workload.name == "tmalloc-mt"} == {1, 4, 8, 16}
    assert not any(c.pass_threads for c in cells if c.workload.name == "tmalloc-xthread")


def test_plan_of_all_tables_shares_cells_between_tables(runner):
    cat = catalog_mod.load(runner)
    tables = cmd_reproduce.select_tables("all")
    cells, _, _ = cmd_reproduce.plan(tables, cat)
    keys = [c.label for c in cells]
    assert len(keys) == len(set(keys))
    assert set(keys) == {f"{s.workload}/{s.allocator}/{s.threads}t"
                         for t in tables for s in published.run_specs(t)}


# --------------------------------------------------------------- end to end

def test_quick_reproduction_runs_only_the_table_cells_and_writes_its_tables(reproduce, runner, tmp_path,
                                                                            only_folder):
    status, out, err = reproduce(LATENCY, "--quick", "--reps", "2", "--out", str(tmp_path),
                                 "--runner", str(runner))
    assert status == 0, err
    folder = only_folder(tmp_path)
    for name in ("raw.jsonl", "env.json", "summary.json", "tables.md", "tables.csv",
                 f"reproduced-{LATENCY}.md", "reproduced.md"):
        assert (folder / name).is_file(), name
    docs = _docs(folder)
    assert sorted((d["workload"]["name"], d["allocator"]["name"]) for d in docs) == sorted(
        [("memalloc-latency", "system"), ("memalloc-latency", "heaplab")] * 2)
    env = json.loads((folder / "env.json").read_text())
    assert env["options"]["quick"] is True and env["options"]["tables"] == [LATENCY]

    table_md = (folder / f"reproduced-{LATENCY}.md").read_text()
    assert "QUICK SIZES" in out and "QUICK SIZES" in table_md
    assert "memalloc → heaplab" in table_md          # the mapping header
    assert "published 834" in table_md               # a published figure
    assert "orderings hold" in table_md
    # the measured p99 median of system appears as measured here
    p99 = statistics.median(d["metrics"]["p99_ns"]["value"] for d in docs
                            if d["allocator"]["name"] == "system")
    assert f"here {fmt_measured(p99)}" in table_md
    assert table_md in (folder / "reproduced.md").read_text()


def test_an_allocator_not_installed_is_shown_as_such_never_as_a_published_figure(
        reproduce, runner, tmp_path, monkeypatch, only_folder):
    real_load = catalog_mod.load

    def without_heaplab(path: pathlib.Path) -> catalog_mod.Catalog:
        cat = real_load(path)
        cat.allocators = [dataclasses.replace(a, available=False, reason="heaplab: test says missing")
                          if a.name == "heaplab" else a for a in cat.allocators]
        return cat
    monkeypatch.setattr(catalog_mod, "load", without_heaplab)
    status, out, err = reproduce(LATENCY, "--quick", "--reps", "1", "--out", str(tmp_path),
                                 "--runner", str(runner))
    assert status == 0, err
    folder = only_folder(tmp_path)
    assert {d["allocator"]["name"] for d in _docs(folder)} == {"system"}
    row = next(ln for ln in (folder / f"reproduced-{LATENCY}.md").read_text().splitlines()
               if ln.startswith("| memalloc"))
    assert "here not installed (heaplab: test says missing)" in row
    assert "here 834" not in row and "here 42" not in row


def test_failed_cells_give_exit_1_and_say_why_in_the_table(reproduce, runner, tmp_path, monkeypatch,
                                                           only_folder):
    real_run_cell = runner_mod.run_cell

    def crash_heaplab(runner_path, cell, **kw):
        if cell.allocator == "heaplab":
            doc = runner_mod._stand_in(cell, "crashed", "", signal="SIGSEGV", exit_code=-11,
                                       error="crashed (SIGSEGV)")
            return runner_mod.Outcome(doc, 0.0)
        return real_run_cell(runner_path, cell, **kw)
    monkeypatch.setattr(runner_mod, "run_cell", crash_heaplab)
    status, _, err = reproduce(LATENCY, "--quick", "--reps", "1", "--out", str(tmp_path),
                               "--runner", str(runner))
    assert status == 1
    assert "failed runs" in err
    table_md = (only_folder(tmp_path) / f"reproduced-{LATENCY}.md").read_text()
    assert "here crashed (SIGSEGV)" in table_md


def test_ctrl_c_keeps_what_finished_writes_the_tables_and_exits_130(reproduce, runner, tmp_path,
                                                                   monkeypatch, only_folder):
    real_run_cell = runner_mod.run_cell
    calls = []

    def interrupt_third(runner_path, cell, **kw):
        calls.append(cell.key)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_run_cell(runner_path, cell, **kw)
    monkeypatch.setattr(runner_mod, "run_cell", interrupt_third)
    status, _, _ = reproduce(LATENCY, "--quick", "--reps", "3", "--out", str(tmp_path),
                             "--runner", str(runner))
    assert status == 130
    folder = only_folder(tmp_path)
    assert len(_docs(folder)) == 2
    assert "Interrupted" in (folder / "reproduced.md").read_text()
    assert "here " in (folder / f"reproduced-{LATENCY}.md").read_text()


def test_memory_table_gets_a_published_and_a_measured_chart(reproduce, runner, tmp_path, only_folder):
    if pythons.python_with("matplotlib") is None:
        pytest.skip("no interpreter with matplotlib (apt install python3-matplotlib)")
    status, out, err = reproduce(MEMORY, "--quick", "--reps", "1", "--out", str(tmp_path),
                                 "--runner", str(runner))
    assert status == 0, err
    folder = only_folder(tmp_path)
    for side in ("published", "measured"):
        png = folder / f"reproduced-{MEMORY}-{side}.png"
        assert png.is_file() and png.stat().st_size > 0, side
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # `run.py plot` on the folder draws them again, beside the run's own charts
    for side in ("published", "measured"):
        (folder / f"reproduced-{MEMORY}-{side}.png").unlink()
    assert cmd_plot.draw(folder) == 0
    for side in ("published", "measured"):
        assert (folder / f"reproduced-{MEMORY}-{side}.png").is_file(), side


def test_chart_series_keeps_published_and_measured_apart():
    table = published.find_table(published.load_all(), MEMORY)
    result = reproduce_table.reproduce(table, {})   # nothing measured
    phases, series, live, _, _ = cmd_reproduce.chart_series(result, "published")
    assert phases == [r.label for r in table.rows]
    assert series["tmalloc"][0] == 1320 and live[0] == 1281
    phases, series, live, spread, notes = cmd_reproduce.chart_series(result, "measured")
    assert set(series) == {"heaplab", "system", "mimalloc"}
    assert all(v is None for values in series.values() for v in values)
    assert all(v is None for v in live)
    assert notes["heaplab"] == "not measured"


def test_the_redraw_command_in_reproduce_help_exists(capsys):
    """reproduce --help tells how to redraw a folder's charts; that command
    must be one run.py has (it named a module that cannot be run)."""
    from heaplab import cli
    try:
        cli.main(["reproduce", "--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "`./run.py plot RUN_DIR`" in out
    assert "python -m heaplab" not in out
    assert "plot" in dict(cli.SUBCOMMANDS)
