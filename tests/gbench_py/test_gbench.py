"""`run.py gbench` (heaplab/gbench.py): the table from Google Benchmark JSON,
and the orchestration around heaplab-gbench.

fixtures/gbench-{system,mimalloc,missing}.json are real heaplab-gbench
reports (3 repetitions of three benchmarks; "missing" is
--alloc so:/nonexistent/libmissing.so). The expected figures below were read
off those files: items_per_second 109579270.1 is 9.1258 ns per item, etc.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import pathlib
import stat
import sys

import pytest

from heaplab import gbench

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
MISSING = "so:/nonexistent/libmissing.so"
THREADED = "batch/lifo/64/real_time/threads:2"


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"gbench-{name}.json").read_text())


@pytest.fixture
def reports() -> list[dict]:
    return [load("system"), load("mimalloc"), load("missing")]


def cell(summary: dict, row: str, alloc: str) -> dict:
    return next(r for r in summary["rows"] if r["benchmark"] == row)["cells"][alloc]


# ---- summarize ----

def test_rows_are_benchmarks_without_their_allocator(reports):
    summary = gbench.summarize(reports)
    assert [r["benchmark"] for r in summary["rows"]] == ["pair/16", "pair/1048576", THREADED]
    assert summary["allocators"] == ["system", "mimalloc", MISSING]


def test_median_min_max_come_from_the_raw_repetitions(reports):
    c = cell(gbench.summarize(reports), "pair/16", "system")
    # the three repetitions: 9.1258, 9.0197, 9.1293 ns/item; the report's own
    # mean aggregate (9.0916) must not be one of the values
    assert c["n"] == 3
    assert c["median"] == pytest.approx(9.125813660283704)
    assert c["min"] == pytest.approx(9.019707390370765)
    assert c["max"] == pytest.approx(9.129255463987606)


def test_threaded_rows_use_items_over_wall_clock_time(reports):
    summary = gbench.summarize(reports)
    c = cell(summary, THREADED, "mimalloc")
    assert c["median"] == pytest.approx(11.680917749970376)
    assert next(r for r in summary["rows"] if r["benchmark"] == THREADED)["unit"] == "ns/item"


def test_ratio_is_median_over_the_system_median(reports):
    c = cell(gbench.summarize(reports), "pair/1048576", "mimalloc")
    assert c["ratio_to_baseline"] == pytest.approx(170.41467978586303 / 16.705303673571887)


def test_allocator_that_could_not_load_shows_its_error(reports):
    summary = gbench.summarize(reports)
    for row in ("pair/16", "pair/1048576", THREADED):
        assert "dlopen failed" in cell(summary, row, MISSING)["error"]
    table = gbench.markdown(summary)
    assert "error: so:/nonexistent/libmissing.so: dlopen failed" in table


def test_markdown_has_a_row_per_benchmark_and_a_column_per_allocator(reports):
    table = gbench.markdown_from_reports(reports)
    lines = table.splitlines()
    header = f"| benchmark | unit | system | mimalloc | {MISSING} |"
    assert header in lines
    body = lines[lines.index(header) + 2:]
    assert [line.split(" | ")[0] for line in body] == ["| pair/16", "| pair/1048576", f"| {THREADED}"]
    pair_16 = body[0].split(" | ")
    assert pair_16[2] == "9.13 (9.02–9.13)"          # system: no ratio to itself
    assert pair_16[3] == "9.10 (9.08–9.12) ×1.00"    # mimalloc
    assert "median of 3 repetitions (min–max)" in table


def test_time_per_iteration_when_no_items_are_counted():
    report = {
        "context": {"host_name": "h", "heaplab_allocator": "system"},
        "benchmarks": [
            {"name": "x/system", "run_name": "x/system", "run_type": "iteration",
             "real_time": 9.0, "cpu_time": 2.5, "time_unit": "us"},
            {"name": "y/system/real_time", "run_name": "y/system/real_time", "run_type": "iteration",
             "real_time": 3.0, "cpu_time": 1.0, "time_unit": "ms"},
        ],
    }
    summary = gbench.summarize([report])
    assert cell(summary, "x", "system")["median"] == pytest.approx(2500.0)  # CPU time, in ns
    assert cell(summary, "y/real_time", "system")["median"] == pytest.approx(3e6)  # wall time
    assert summary["rows"][0]["unit"] == "ns"


def test_reports_from_different_hosts_are_refused(reports):
    other = copy.deepcopy(reports[1])
    other["context"]["host_name"] = "elsewhere"
    with pytest.raises(gbench.ReportError, match="different hosts"):
        gbench.summarize([reports[0], other])


def test_a_report_without_the_allocator_is_refused(reports):
    plain = copy.deepcopy(reports[0])
    del plain["context"]["heaplab_allocator"]
    with pytest.raises(gbench.ReportError, match="heaplab_allocator"):
        gbench.summarize([plain])


def test_two_reports_of_one_allocator_are_refused(reports):
    with pytest.raises(gbench.ReportError, match="two reports"):
        gbench.summarize([reports[0], reports[0]])


def test_benchmark_key_removes_allocators_with_slashes():
    assert gbench.benchmark_key("pair/so:/x/y.so/64", "so:/x/y.so") == "pair/64"
    assert gbench.benchmark_key("batch/fifo/system/64/real_time/threads:2", "system") == \
        "batch/fifo/64/real_time/threads:2"
    assert gbench.benchmark_key("calloc/jemalloc", "jemalloc") == "calloc"


# ---- running ----

def test_command_asks_for_raw_repetitions_in_json(tmp_path):
    cmd = gbench.gbench_command(pathlib.Path("/b/heaplab-gbench"), "mimalloc", 7,
                                tmp_path / "o.json", "pair/.*/64$", None)
    assert cmd[:3] == ["/b/heaplab-gbench", "--alloc", "mimalloc"]
    for flag in ("--benchmark_repetitions=7", "--benchmark_report_aggregates_only=false",
                 "--benchmark_format=json", f"--benchmark_out={tmp_path / 'o.json'}",
                 "--benchmark_filter=pair/.*/64$"):
        assert flag in cmd


FAKE_GBENCH = """#!{python}
# Stands in for heaplab-gbench: writes the fixture report of --alloc to
# --benchmark_out, or fails like a crash for the allocator "crash".
import sys, pathlib
args = sys.argv[1:]
alloc = args[args.index("--alloc") + 1]
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
if alloc == "crash":
    sys.stderr.write("heaplab-gbench: simulated crash\\n")
    sys.exit(3)
name = "missing" if alloc.startswith("so:") else alloc
pathlib.Path(out).write_text(pathlib.Path({fixtures!r}, "gbench-" + name + ".json").read_text())
"""


def fake_build(tmp_path: pathlib.Path) -> pathlib.Path:
    build = tmp_path / "build"
    build.mkdir()
    exe = build / gbench.BINARY
    exe.write_text(FAKE_GBENCH.format(python=sys.executable, fixtures=str(FIXTURES)))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return build


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    gbench.add_arguments(parser)
    return parser.parse_args(argv)


def test_main_keeps_each_report_and_writes_the_table(tmp_path, capsys):
    build = fake_build(tmp_path)
    out = tmp_path / "runs"
    rc = gbench.main(parse(["--alloc", f"system,mimalloc,{MISSING}", "--reps", "3",
                            "--build-dir", str(build), "--out", str(out)]))
    assert rc == 0
    (folder,) = out.iterdir()
    assert folder.name.endswith("-gbench")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["gbench-mimalloc.json", "gbench-so__nonexistent_libmissing.so.json",
                     "gbench-system.json", "summary.json", "tables.md"]
    assert json.loads((folder / "gbench-system.json").read_text()) == load("system")
    table = (folder / "tables.md").read_text()
    assert "| pair/16 | ns/item | 9.13 (9.02–9.13) |" in table
    assert table in capsys.readouterr().out


def test_main_reports_an_allocator_whose_process_failed(tmp_path, capsys):
    build = fake_build(tmp_path)
    out = tmp_path / "runs"
    rc = gbench.main(parse(["--alloc", "system,crash", "--build-dir", str(build), "--out", str(out)]))
    assert rc == 1
    assert "crash: heaplab-gbench failed: heaplab-gbench: simulated crash" in capsys.readouterr().err
    (folder,) = out.iterdir()
    # the failed allocator leaves no report, not even a partial one
    assert sorted(p.name for p in folder.iterdir()) == ["gbench-system.json", "summary.json", "tables.md"]


@pytest.mark.parametrize("flag,value,message", [
    ("--reps", "0", "--reps: must be at least 1, not 0"),
    ("--reps", "many", "--reps: 'many' is not a whole number"),
    ("--alloc", ",", "--alloc: no allocator named"),
])
def test_bad_options_get_one_line_errors(tmp_path, capsys, flag, value, message):
    rc = gbench.main(parse([flag, value, "--build-dir", str(tmp_path), "--out", str(tmp_path)]))
    assert rc == 2
    assert capsys.readouterr().err.strip() == f"gbench: {message}"


# What CMake leaves in the cache when find_package(benchmark) failed: the
# mark of harness/gbench/CMakeLists.txt, or find_package's own.
@pytest.mark.parametrize("cache_line", ["HEAPLAB_GBENCH_BUILT:INTERNAL=OFF",
                                        "benchmark_DIR:PATH=benchmark_DIR-NOTFOUND"])
def test_missing_google_benchmark_names_the_package(tmp_path, capsys, cache_line):
    build = tmp_path / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_text(cache_line + "\n")
    assert gbench.ensure_binary(build) is None
    assert "apt install libbenchmark-dev" in capsys.readouterr().err


def real_binary() -> pathlib.Path | None:
    value = os.environ.get("HEAPLAB_GBENCH")
    path = pathlib.Path(value) if value else gbench.REPO_ROOT / "build" / gbench.BINARY
    return path if path.is_file() else None


@pytest.mark.skipif(real_binary() is None, reason="heaplab-gbench is not built")
def test_real_heaplab_gbench_fills_a_table(tmp_path):
    binary = real_binary()
    assert binary is not None
    out = tmp_path / "runs"
    rc = gbench.main(parse(["--alloc", "system,heaplab", "--filter", "^pair/[^/]*/64$",
                            "--reps", "2", "--min-time", "0.01",
                            "--build-dir", str(binary.parent), "--out", str(out)]))
    assert rc == 0
    (folder,) = out.iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert [r["benchmark"] for r in summary["rows"]] == ["pair/64"]
    for alloc in ("system", "heaplab"):
        assert cell(summary, "pair/64", alloc)["n"] == 2


# --- the build, the allocator list, and the folder read back (issues #17, #18)

FAKE_CMAKE = """#!{python}
import pathlib, sys
with open({log!r}, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
"""


def test_a_configured_build_is_always_built_again(tmp_path, monkeypatch):
    """A source change must be measured: the binary being there is no reason
    to skip `cmake --build` (incremental, so nearly free when nothing changed)."""
    build = fake_build(tmp_path)
    (build / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=Release\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    log = tmp_path / "cmake.log"
    cmake = tools / "cmake"
    cmake.write_text(FAKE_CMAKE.format(python=sys.executable, log=str(log)))
    cmake.chmod(cmake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    assert gbench.ensure_binary(build) == build / gbench.BINARY
    assert log.read_text().split() == ["--build", str(build), "--target", gbench.BINARY, gbench.RUNNER]


def fake_runner_beside(build: pathlib.Path, tmp_path: pathlib.Path, monkeypatch) -> None:
    """heaplab-run next to the binary, listing the driver fixtures' allocators."""
    driver = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "driver"
    runner = build / gbench.RUNNER
    runner.write_text((driver / "fake_runner.py").read_text())
    runner.chmod(runner.stat().st_mode | stat.S_IXUSR)
    config = tmp_path / "fake.json"
    config.write_text(json.dumps({"list": json.loads((driver / "list.json").read_text())}))
    monkeypatch.setenv("FAKE_RUNNER_CONFIG", str(config))


def test_an_unknown_allocator_is_refused_before_a_run_folder_exists(tmp_path, capsys, monkeypatch):
    build = fake_build(tmp_path)
    fake_runner_beside(build, tmp_path, monkeypatch)
    out = tmp_path / "runs"
    rc = gbench.main(parse(["--alloc", "jemaloc", "--build-dir", str(build), "--out", str(out)]))
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown allocator 'jemaloc'" in err
    assert not out.exists()


def test_the_default_allocators_are_the_runners(tmp_path, capsys, monkeypatch):
    build = fake_build(tmp_path)
    fake_runner_beside(build, tmp_path, monkeypatch)
    out = tmp_path / "runs"
    gbench.main(parse(["--build-dir", str(build), "--out", str(out)]))
    # the fixture runner lists system, heaplab, mimalloc, jemalloc and floor
    # (floor only when named)
    assert "gbench: 4 allocator(s)" in capsys.readouterr().err


def gbench_folder(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "20260101-000000-gbench"
    folder.mkdir()
    for name in ("system", "mimalloc"):
        (folder / f"gbench-{name}.json").write_text(json.dumps(load(name)))
    return folder


def test_compare_reads_a_gbench_run_folder(tmp_path, capsys):
    from heaplab import cli
    folder = gbench_folder(tmp_path)
    rc = cli.main(["compare", str(folder), "--baseline-alloc", "system", "--format", "json"])
    assert rc in (0, 1), capsys.readouterr().err
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert {(c["workload"], c["allocator"]) for c in cells} >= {("pair/16", "mimalloc")}


def test_plot_reads_a_gbench_run_folder(tmp_path):
    from plots.rundata import load_run
    run = load_run(gbench_folder(tmp_path))
    assert "pair/16" in run.workloads()
    assert {d.allocator for d in run.docs} == {"system", "mimalloc"}
