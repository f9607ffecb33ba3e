"""Google Benchmark reports of heaplab-gbench (gbench-<allocator>.json):
reading them, and a gbench run folder's reports as run documents, so that
`compare` and `plot` take it as they take any run folder.

Each raw repetition of a report becomes one "heaplab.run/1"-shaped
document: the benchmark (its name without the allocator) is the workload, in
group "gbench"; the figure is ns per item, else ns per iteration, lower is
better; the repetition number is its order in the report; the machine is the
report's host and CPU count.
"""
from __future__ import annotations

import json
import re
import pathlib
from typing import Any, Iterable

BINARY = "heaplab-gbench"
GROUP = "gbench"
METRIC = {"ns/item": "ns_per_item", "ns": "ns_per_iteration"}

# Keys of heaplab-gbench's report context (gbench_main.c).
CONTEXT_ALLOCATOR = "heaplab_allocator"
CONTEXT_VERSION = "heaplab_allocator_version"
CONTEXT_ERROR = "heaplab_allocator_error"

# a report's file name: gbench-<allocator>.json, the name made safe for a path
UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]")

NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
NS_PER_S = 1e9


def report_file_name(allocator: str) -> str:
    return f"gbench-{UNSAFE_FILE_CHARS.sub('_', allocator)}.json"


class ReportError(ValueError):
    """A report that cannot be tabulated, with a one-line reason."""


def benchmark_key(name: str, allocator: str) -> str:
    """The benchmark's name without its allocator: "pair/mimalloc/64" and
    "pair/system/64" are both the row "pair/64"."""
    marker = "/" + allocator
    at = name.find(marker + "/")
    if at >= 0:
        return name[:at] + name[at + len(marker):]
    if name.endswith(marker):
        return name[: -len(marker)]
    return name


def allocator_of(report: dict[str, Any], position: int) -> str:
    context = report.get("context")
    if not isinstance(context, dict) or not context.get(CONTEXT_ALLOCATOR):
        raise ReportError(f"report {position + 1} has no context.{CONTEXT_ALLOCATOR} "
                          f"(not written by {BINARY}?)")
    return str(context[CONTEXT_ALLOCATOR])


def value_and_unit(entry: dict[str, Any]) -> tuple[float, str]:
    """One repetition's figure. Nanoseconds per item when the benchmark counts
    items (one allocation with its free, for heaplab-gbench): benchmarks of
    different shapes then read alike. Otherwise Google Benchmark's time per
    iteration (wall clock for /real_time benchmarks, else CPU), in ns."""
    rate = entry.get("items_per_second")
    if isinstance(rate, (int, float)) and rate > 0:
        return NS_PER_S / rate, "ns/item"
    unit = entry.get("time_unit", "ns")
    if unit not in NS_PER_UNIT:
        raise ReportError(f"benchmark '{entry.get('name')}' has an unknown time_unit '{unit}'")
    key = "real_time" if "/real_time" in str(entry.get("run_name", entry.get("name", ""))) else "cpu_time"
    return float(entry[key]) * NS_PER_UNIT[unit], "ns"


def repetitions(report: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """The raw repetitions: aggregates (mean, median, ...) are recomputed here
    from them, never taken from the report."""
    for entry in report.get("benchmarks", []):
        if entry.get("run_type", "iteration") == "iteration":
            yield entry


def load_reports(paths: Iterable[pathlib.Path]) -> list[dict[str, Any]]:
    reports = []
    for path in paths:
        try:
            reports.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as e:
            raise ReportError(f"{path}: cannot read the report: {e}") from e
    return reports


def _document(report: dict[str, Any], alloc: str, entry: dict[str, Any], rep: int) -> dict[str, Any]:
    context = report.get("context") or {}
    name = benchmark_key(str(entry.get("run_name", entry.get("name"))), alloc)
    threads = entry.get("threads") if isinstance(entry.get("threads"), int) else 1
    doc: dict[str, Any] = {
        "schema": "heaplab.run/1", "status": "ok", "error": None,
        "workload": {"name": name, "group": GROUP, "kind": "gbench", "threads": threads},
        "allocator": {"name": alloc, "version": context.get(CONTEXT_VERSION)},
        "env": {"hostname": context.get("host_name"), "cpu_model": None,
                "cores": context.get("num_cpus")},
        "rep": rep, "phases": [], "samples": [], "metrics": {}}
    if entry.get("error_occurred"):
        doc.update(status="error", error=str(entry.get("error_message") or "error"))
        return doc
    value, unit = value_and_unit(entry)
    metric = METRIC.get(unit, "ns")
    doc["primary"] = metric
    doc["metrics"] = {metric: {"value": value, "unit": "ns", "better": "lower"}}
    return doc


def documents(folder: pathlib.Path) -> list[dict[str, Any]]:
    """Every repetition of every report in the folder, as documents;
    RunFolderError (one line) when there is none or one cannot be read."""
    from .runfolder import RunFolderError
    paths = sorted(folder.glob("gbench-*.json"))
    if not paths:
        raise RunFolderError(f"{folder}: not a run folder (no raw.jsonl, no gbench reports)")
    try:
        reports = load_reports(paths)
    except ReportError as e:
        raise RunFolderError(str(e)) from None
    docs: list[dict[str, Any]] = []
    for position, report in enumerate(reports):
        try:
            alloc = allocator_of(report, position)
        except ReportError as e:
            raise RunFolderError(f"{paths[position]}: {e}") from None
        reps: dict[str, int] = {}
        for entry in repetitions(report):
            name = str(entry.get("run_name", entry.get("name")))
            reps[name] = reps.get(name, 0) + 1
            docs.append(_document(report, alloc, entry, reps[name]))
    return docs
