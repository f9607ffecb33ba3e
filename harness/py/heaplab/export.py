"""A run's figures in formats other tools read (`run.py export`).

- gbench: Google Benchmark's JSON, one report per allocator as
  heaplab-gbench writes them (context.heaplab_allocator), every repetition
  an "iteration" entry and the median an "aggregate" one, so that Google
  Benchmark's tools/compare.py compares two heaplab runs (and gbench.py's
  reader tabulates them). Only figures Google Benchmark can hold go in:
  times (ns, us, ms, s) as real_time and cpu_time, and rates (per second)
  as items_per_second with real_time the time per item; other metrics
  (instruction counts) are left out and said so.
- csv: one line per cell (workload, threads, allocator), long format for
  pandas, R or a spreadsheet; tables.csv beside it is the wide table.
- bmf: the Bencher Metric Format, {benchmark: {measure: {value,
  lower_value, upper_value}}}: the median with its min and max, for
  continuous-benchmarking services (Bencher's `json` adapter).

All are pure functions of a report_data.Folder.
"""
from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from .gbench_reports import CONTEXT_ALLOCATOR as GBENCH_CONTEXT_ALLOCATOR
from .gbench_reports import CONTEXT_VERSION as GBENCH_CONTEXT_VERSION
from .gbench_reports import NS_PER_S, NS_PER_UNIT
from .report_data import Folder
from .summary import STATUS_OK
from .tables import _csv_value

TIME_UNITS = tuple(NS_PER_UNIT)
# A rate's unit: "Mops/s", "Mpairs/s", "requests/s"; the prefix scales it.
RATE = re.compile(r"^(?P<prefix>[kMG]?)(?P<what>[A-Za-z_]+)/s$")
RATE_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
CSV_FIELDS = ("group", "workload", "threads", "allocator", "metric", "unit", "better",
              "median", "min", "max", "n", "ratio_to_baseline", "status", "peak_rss_bytes")


def _ok_cells(folder: Folder) -> list[dict[str, Any]]:
    return [c for c in folder.summary.get("cells") or [] if c.get("status") == STATUS_OK]


def rate_factor(unit: str) -> float | None:
    """Items per second in one unit of a rate ("Mops/s" -> 1e6); None otherwise."""
    m = RATE.match(unit or "")
    return RATE_PREFIX[m.group("prefix")] if m else None


# ------------------------------------------------------------------ gbench

def _gbench_entry(cell: dict[str, Any], value: float, index: int, n: int,
                  run_type: str, family: int) -> dict[str, Any] | None:
    """One benchmark entry as Google Benchmark writes it: `family` is the
    cell's position in its report (Google Benchmark's tools sort by it)."""
    unit = cell.get("unit") or ""
    entry: dict[str, Any] = {"name": cell["cell"], "family_index": family,
                             "per_family_instance_index": 0, "run_name": cell["cell"],
                             "run_type": run_type, "repetitions": n,
                             "threads": int(cell["threads"]), "iterations": 1}
    if run_type == "iteration":
        entry["repetition_index"] = index
    else:
        entry["name"] += "_median"
        entry["aggregate_name"] = "median"
        entry["aggregate_unit"] = "time"
    if unit in TIME_UNITS:
        entry.update(real_time=value, cpu_time=value, time_unit=unit)
    elif rate_factor(unit) is not None:
        per_second = value * rate_factor(unit)
        entry.update(real_time=NS_PER_S / per_second, cpu_time=NS_PER_S / per_second,
                     time_unit="ns", items_per_second=per_second)
    else:
        return None
    return entry


def gbench_reports(folder: Folder) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """({allocator: Google Benchmark report}, cells left out and why)."""
    env = folder.env
    machine = env.get("machine") or {}
    versions = {a["name"]: a.get("version") for a in folder.summary.get("allocators") or []}
    reports: dict[str, dict[str, Any]] = {}
    left_out: list[str] = []
    for cell in _ok_cells(folder):
        values = cell.get("values") or []
        alloc = cell["allocator"]
        family = len({e["name"] for e in (reports.get(alloc) or {}).get("benchmarks", [])
                      if e["run_type"] == "iteration"})
        entries = [_gbench_entry(cell, v, i, len(values), "iteration", family)
                   for i, v in enumerate(values)]
        if not entries or entries[0] is None:
            left_out.append(f"{cell['cell']} ({cell.get('metric')} in {cell.get('unit') or 'no unit'})")
            continue
        report = reports.setdefault(alloc, {
            "context": {"date": env.get("started"), "host_name": machine.get("hostname"),
                        "executable": env.get("runner"), "num_cpus": machine.get("cores"),
                        "library_build_type": "release", "heaplab_run": str(folder.path),
                        GBENCH_CONTEXT_ALLOCATOR: alloc,
                        GBENCH_CONTEXT_VERSION: versions.get(alloc) or ""},
            "benchmarks": []})
        report["benchmarks"] += entries
        report["benchmarks"].append(_gbench_entry(cell, cell["median"], 0, len(values), "aggregate", family))
    return reports, left_out


# --------------------------------------------------------------------- csv

def _peak(cell: dict[str, Any]) -> float | None:
    return ((cell.get("figures") or {}).get("peak_rss_bytes") or {}).get("median")


def csv_text(folder: Folder) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for c in folder.summary.get("cells") or []:
        ok = c.get("status") == STATUS_OK
        values = [c.get("group") or "", c["workload"], c["threads"], c["allocator"], c.get("metric") or "",
                  c.get("unit") or "", c.get("better") or "",
                  c.get("median") if ok else None, c.get("min") if ok else None,
                  c.get("max") if ok else None, c.get("n"), c.get("ratio_to_system"),
                  c.get("status"), _peak(c)]
        writer.writerow([_csv_value(v) for v in values])
    return buf.getvalue()


# --------------------------------------------------------------------- bmf

def bmf_measure(metric: str, unit: str) -> tuple[str, float]:
    """(measure slug, factor to its unit): Bencher's built-in `latency` (ns)
    and `throughput` (operations per second) where the unit allows, else the
    metric's own name in kebab case."""
    if unit in TIME_UNITS:
        return "latency", NS_PER_UNIT[unit]
    factor = rate_factor(unit)
    if factor is not None:
        return "throughput", factor
    return metric.replace("_", "-"), 1.0


def bmf(folder: Folder) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in _ok_cells(folder):
        slug, factor = bmf_measure(c.get("metric") or "value", c.get("unit") or "")
        measures = out.setdefault(c["cell"], {})
        measures[slug] = {"value": c["median"] * factor, "lower_value": c["min"] * factor,
                          "upper_value": c["max"] * factor}
        peak = (c.get("figures") or {}).get("peak_rss_bytes") or {}
        if peak.get("median") is not None:
            measures["peak-rss-bytes"] = {"value": peak["median"], "lower_value": peak["min"],
                                          "upper_value": peak["max"]}
    return out


def bmf_text(folder: Folder) -> str:
    return json.dumps(bmf(folder), indent=2) + "\n"
