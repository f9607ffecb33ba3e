"""`./run.py gbench`: the Google Benchmark microbenchmarks, every allocator.

build/heaplab-gbench measures one allocator per process (`--alloc NAME`), so
this runs it once per allocator, with Google Benchmark's repetitions, and
keeps each raw JSON report in a run folder:

    results/runs/<timestamp>-gbench/
        gbench-<allocator>.json   the report, as heaplab-gbench wrote it
        summary.json              medians, min, max per benchmark and allocator
        tables.md                 the same as a Markdown table

The table (`markdown_from_reports`) is a pure function of the reports; its
rows are benchmarks, its columns allocators, a cell the median of the
repetitions with its min–max and its ratio to system's median.

The binary is always brought up to date first (`cmake --build`, incremental,
so a source change is measured, never a stale binary). The allocators are
the runner's (`heaplab-run --list-json` from the same build folder): by
default every one it runs by default, and a name it does not know is
refused before a run folder exists. `compare` and `plot` read a gbench run
folder through heaplab.gbench_reports.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, Sequence

from . import atomicio, catalog as catalog_mod, fmt, runfolder, stats
# reading the reports (gbench_reports), by the names this command's users know
from .gbench_reports import (BINARY, CONTEXT_VERSION, ReportError, allocator_of, report_file_name,  # noqa: F401
                             benchmark_key, load_reports, repetitions, value_and_unit)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
PACKAGE = "libbenchmark-dev"
RUNNER = "heaplab-run"   # lists the allocators heaplab-gbench shares with it
BASELINE = "system"
DEFAULT_REPS = 5
RUN_SUFFIX = "gbench"
SUMMARY_SCHEMA = "heaplab.gbench-summary/1"

# Characters kept as they are in a report's file name; the rest become "_".


# ---------------------------------------------------------------- the table


def summarize(reports: Sequence[dict[str, Any]], baseline: str = BASELINE) -> dict[str, Any]:
    """Medians, min and max per (benchmark, allocator) from Google Benchmark
    JSON reports of heaplab-gbench, one report per allocator. Refuses reports
    from different hosts: their figures do not compare."""
    hosts = sorted({str(r.get("context", {}).get("host_name")) for r in reports})
    if len(hosts) > 1:
        raise ReportError(f"reports come from different hosts ({', '.join(hosts)}); "
                          "they cannot share a table")
    allocators: list[str] = []
    versions: dict[str, str] = {}
    rows: list[str] = []
    values: dict[tuple[str, str], list[float]] = {}
    units: dict[str, str] = {}
    errors: dict[tuple[str, str], str] = {}
    for position, report in enumerate(reports):
        alloc = allocator_of(report, position)
        if alloc in allocators:
            raise ReportError(f"two reports for allocator '{alloc}'")
        allocators.append(alloc)
        context = report.get("context", {})
        versions[alloc] = str(context.get(CONTEXT_VERSION, ""))
        for entry in repetitions(report):
            row = benchmark_key(str(entry.get("run_name", entry["name"])), alloc)
            if row not in rows:
                rows.append(row)
            if entry.get("error_occurred"):
                errors[(row, alloc)] = str(entry.get("error_message") or "error")
                continue
            value, unit = value_and_unit(entry)
            units.setdefault(row, unit)
            values.setdefault((row, alloc), []).append(value)

    out_rows = []
    for row in rows:
        cells: dict[str, dict[str, Any]] = {}
        base = stats.spread(values.get((row, baseline)) or [])
        for alloc in allocators:
            got = stats.spread(values.get((row, alloc)) or [])
            if got is not None:
                ratio = stats.ratio(got.median, base.median if base else None)
                cells[alloc] = {"median": got.median, "min": got.min, "max": got.max,
                                "n": got.n, "ratio_to_baseline": ratio}
            elif (row, alloc) in errors:
                cells[alloc] = {"error": errors[(row, alloc)]}
            else:
                cells[alloc] = {"missing": True}
        out_rows.append({"benchmark": row, "unit": units.get(row, ""), "cells": cells})
    return {"schema": SUMMARY_SCHEMA, "baseline": baseline, "allocators": allocators,
            "versions": versions, "host": hosts[0] if hosts else None, "rows": out_rows}


def cell_text(cell: dict[str, Any], is_baseline: bool) -> str:
    if "error" in cell:
        return f"error: {fmt.one_line(cell['error'])}"
    if cell.get("missing"):
        return "–"
    text = fmt.number(cell["median"])
    if cell["n"] > 1:
        text += f" ({fmt.number(cell['min'])}–{fmt.number(cell['max'])})"
    if not is_baseline and cell.get("ratio_to_baseline") is not None:
        text += " " + fmt.ratio(cell["ratio_to_baseline"])
    return text


def markdown(summary: dict[str, Any]) -> str:
    allocs = summary["allocators"]
    baseline = summary["baseline"]
    reps = sorted({c["n"] for r in summary["rows"] for c in r["cells"].values() if "n" in c})
    runs = "1 repetition" if reps == [1] else f"{'/'.join(map(str, reps)) or 'no'} repetitions (min–max)"
    lines = [
        "## Google Benchmark microbenchmarks (heaplab-gbench)",
        "",
        f"Each cell: median of {runs}, then ×ratio of that median to {baseline}'s; "
        "lower is better. ns/item: nanoseconds per allocation with its free "
        "(threaded rows: every thread's items over wall-clock time).",
        "",
        "| benchmark | unit | " + " | ".join(fmt.md(a) for a in allocs) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in allocs) + " |",
    ]
    for row in summary["rows"]:
        texts = [fmt.md(cell_text(row["cells"][a], a == baseline)) for a in allocs]
        lines.append(f"| {fmt.md(row['benchmark'])} | {row['unit']} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def markdown_from_reports(reports: Sequence[dict[str, Any]], baseline: str = BASELINE) -> str:
    """The Markdown table of a set of heaplab-gbench JSON reports."""
    return markdown(summarize(reports, baseline))


# ---------------------------------------------------------------- running


def _benchmark_missing_from_cache(build_dir: pathlib.Path) -> bool:
    """True when CMake configured build_dir without finding Google Benchmark."""
    cache = build_dir / "CMakeCache.txt"
    try:
        text = cache.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    # harness/gbench/CMakeLists.txt's own mark, or find_package's trace
    return ("HEAPLAB_GBENCH_BUILT:INTERNAL=OFF" in text
            or "benchmark_DIR:PATH=benchmark_DIR-NOTFOUND" in text)


def ensure_binary(build_dir: pathlib.Path) -> pathlib.Path | None:
    """build_dir/heaplab-gbench brought up to date: a CMake build folder is
    always built again (incremental: free when nothing changed, and never a
    stale binary after a source change); a folder that only holds a binary
    (no CMakeCache.txt) is used as it is, as `--runner` is. Prints why and
    returns None when it cannot be had."""
    binary = build_dir / BINARY
    configured = (build_dir / "CMakeCache.txt").is_file()
    if binary.is_file() and not configured:
        return binary
    cmake = shutil.which("cmake")
    if not cmake:
        print(f"gbench: cannot build {binary}: cmake is not installed (apt install cmake)",
              file=sys.stderr)
        return None
    if _benchmark_missing_from_cache(build_dir):
        print(f"gbench: {BINARY} needs Google Benchmark (apt install {PACKAGE})", file=sys.stderr)
        return None
    steps = []
    if not configured:
        steps.append([cmake, "-S", str(REPO_ROOT), "-B", str(build_dir)])
    steps.append([cmake, "--build", str(build_dir), "--target", BINARY, RUNNER])
    for step in steps:
        print("gbench: " + " ".join(step), file=sys.stderr)
        if subprocess.run(step, stdout=subprocess.DEVNULL).returncode != 0:
            print(f"gbench: could not build {binary} (`{' '.join(step)}` failed)", file=sys.stderr)
            return None
    if binary.is_file():
        return binary
    if _benchmark_missing_from_cache(build_dir):
        print(f"gbench: {BINARY} needs Google Benchmark (apt install {PACKAGE})", file=sys.stderr)
    else:
        print(f"gbench: could not build {binary} (see the build output above)", file=sys.stderr)
    return None


def gbench_command(binary: pathlib.Path, allocator: str, reps: int, out: pathlib.Path,
                   bench_filter: str | None, min_time: float | None) -> list[str]:
    cmd = [str(binary), "--alloc", allocator,
           f"--benchmark_repetitions={reps}",
           "--benchmark_report_aggregates_only=false",
           "--benchmark_format=json",
           f"--benchmark_out={out}",
           "--benchmark_out_format=json"]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    if min_time is not None:
        cmd.append(f"--benchmark_min_time={min_time}")
    return cmd


def run_one(binary: pathlib.Path, allocator: str, folder: pathlib.Path, reps: int,
            bench_filter: str | None, min_time: float | None) -> str | None:
    """Runs heaplab-gbench for one allocator; its report lands in folder
    only once complete. Returns None, or a one-line reason it failed."""
    final = folder / report_file_name(allocator)
    partial = folder / ("." + final.name + ".partial")
    cmd = gbench_command(binary, allocator, reps, partial, bench_filter, min_time)
    # stdout is the same JSON as the report file; stderr is kept for errors
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Google Benchmark exits 0 with an empty report when the filter matched nothing
    if proc.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        why = lines[-1] if lines else f"exit status {proc.returncode}"
        return f"{allocator}: {BINARY} failed: {why}"
    os.replace(partial, final)
    return None


def _named(text: str | None) -> list[str] | None:
    """The --alloc names in order, without repeats; None for the default."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("--alloc: no allocator named")
    return list(dict.fromkeys(names))


def allocators(named: list[str] | None, runner: pathlib.Path) -> list[str]:
    """The allocators to measure: the runner's defaults, or `named` checked
    against the runner's list (catalog.SelectionError, one line). Without a
    runner beside the binary the names go to heaplab-gbench as given."""
    if not runner.is_file():
        if named is None:
            raise catalog_mod.SelectionError(f"no {RUNNER} beside {BINARY} to list the "
                                             f"allocators: give --alloc")
        return named
    try:
        cat = catalog_mod.load(runner)
    except RuntimeError as e:
        raise catalog_mod.SelectionError(str(e)) from None
    return catalog_mod.select_allocators(cat, None if named is None else ",".join(named))


def _positive_int(text: str, flag: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{flag}: '{text}' is not a whole number") from None
    if value < 1:
        raise ValueError(f"{flag}: must be at least 1, not {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--alloc", metavar="NAME,...",
                        help="allocators, comma-separated (default: every one `heaplab-run "
                             "--list-json` runs by default); so:PATH[:PREFIX] too")
    parser.add_argument("--filter", metavar="REGEX",
                        help="Google Benchmark's --benchmark_filter; names read "
                             "<family>/<allocator>/<args>, e.g. 'pair/.*/64$'")
    parser.add_argument("--reps", metavar="N", default=str(DEFAULT_REPS),
                        help=f"repetitions per benchmark (default {DEFAULT_REPS})")
    parser.add_argument("--min-time", metavar="S", type=float,
                        help="Google Benchmark's --benchmark_min_time per repetition, in seconds")
    parser.add_argument("--build-dir", metavar="DIR", default=str(REPO_ROOT / "build"),
                        help="build folder holding heaplab-gbench (default build/)")
    parser.add_argument("--out", metavar="DIR", default=str(REPO_ROOT / "results" / "runs"),
                        help="parent of the run folder (default results/runs)")


def register(subparsers: Any) -> None:
    """For a cli built from register(subparsers) modules."""
    p = subparsers.add_parser("gbench", help="Google Benchmark microbenchmarks, every allocator")
    add_arguments(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        named = _named(args.alloc)
        reps = _positive_int(str(args.reps), "--reps")
        if args.min_time is not None and not args.min_time > 0:
            raise ValueError(f"--min-time: must be positive, not {args.min_time}")
    except ValueError as e:
        print(f"gbench: {e}", file=sys.stderr)
        return 2
    binary = ensure_binary(pathlib.Path(args.build_dir))
    if binary is None:
        return 1
    try:
        chosen = allocators(named, binary.parent / RUNNER)
    except catalog_mod.SelectionError as e:
        print(f"gbench: {e}", file=sys.stderr)
        return 2
    folder = runfolder.create(pathlib.Path(args.out), RUN_SUFFIX, raw=False)
    print(f"gbench: {len(chosen)} allocator(s), {reps} repetition(s) each, into {folder}",
          file=sys.stderr)
    failures = []
    for i, alloc in enumerate(chosen, 1):
        print(f"gbench: [{i}/{len(chosen)}] {alloc}", file=sys.stderr, flush=True)
        failure = run_one(binary, alloc, folder, reps, args.filter, args.min_time)
        if failure:
            print(f"gbench: {failure}", file=sys.stderr)
            failures.append(failure)
    paths = [folder / report_file_name(a) for a in chosen]
    reports = load_reports(p for p in paths if p.is_file())
    if not reports:
        folder.rmdir()  # nothing in it: no empty run folder left behind
        print("gbench: no allocator produced a report", file=sys.stderr)
        return 1
    try:
        summary = summarize(reports)
    except ReportError as e:
        print(f"gbench: {e}", file=sys.stderr)
        return 1
    table = markdown(summary)
    atomicio.write_json(folder / runfolder.SUMMARY, summary)
    atomicio.write_text(folder / runfolder.TABLES_MD, table)
    print(table)
    print(f"gbench: reports and tables in {folder}", file=sys.stderr)
    return 1 if failures else 0
