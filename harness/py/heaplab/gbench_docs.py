"""A gbench run folder read as run documents, so that `compare` and `plot`
take it as they take any run folder.

Each raw repetition of a Google Benchmark report (gbench-<allocator>.json)
becomes one "heaplab.run/1"-shaped document: the benchmark (its name
without the allocator) is the workload, in group "gbench"; the figure is
gbench.py's (ns per item, else ns per iteration), lower is better; the
repetition number is its order in the report; the machine is the report's
host and CPU count.
"""
from __future__ import annotations

import pathlib
from typing import Any

from . import gbench

GROUP = "gbench"
METRIC = {"ns/item": "ns_per_item", "ns": "ns_per_iteration"}


def _document(report: dict[str, Any], alloc: str, entry: dict[str, Any], rep: int) -> dict[str, Any]:
    context = report.get("context") or {}
    name = gbench.benchmark_key(str(entry.get("run_name", entry.get("name"))), alloc)
    threads = entry.get("threads") if isinstance(entry.get("threads"), int) else 1
    doc: dict[str, Any] = {
        "schema": "heaplab.run/1", "status": "ok", "error": None,
        "workload": {"name": name, "group": GROUP, "kind": "gbench", "threads": threads},
        "allocator": {"name": alloc, "version": context.get(gbench.CONTEXT_VERSION)},
        "env": {"hostname": context.get("host_name"), "cpu_model": None,
                "cores": context.get("num_cpus")},
        "rep": rep, "phases": [], "samples": [], "metrics": {}}
    if entry.get("error_occurred"):
        doc.update(status="error", error=str(entry.get("error_message") or "error"))
        return doc
    value, unit = gbench._value_and_unit(entry)
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
        reports = gbench.load_reports(paths)
    except gbench.ReportError as e:
        raise RunFolderError(str(e)) from None
    docs: list[dict[str, Any]] = []
    for position, report in enumerate(reports):
        try:
            alloc = gbench._allocator_of(report, position)
        except gbench.ReportError as e:
            raise RunFolderError(f"{paths[position]}: {e}") from None
        reps: dict[str, int] = {}
        for entry in gbench._repetitions(report):
            name = str(entry.get("run_name", entry.get("name")))
            reps[name] = reps.get(name, 0) + 1
            docs.append(_document(report, alloc, entry, reps[name]))
    return docs
