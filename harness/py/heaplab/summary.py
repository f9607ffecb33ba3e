"""From raw documents to per-cell summaries ("heaplab.summary/1").

Inputs are the documents of raw.jsonl and the run's plan (stored in
env.json), so a run folder alone is enough to rebuild the summary: the plan
says which rows and allocators exist (including allocators that are not
installed, which have no documents at all).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from . import perop, stats
from .matrix import Cell
from .runfolder import CellKey, Failure, key_of

SUMMARY_SCHEMA = "heaplab.summary/1"
BASELINE = "system"

STATUS_OK = "ok"
STATUS_NOT_INSTALLED = "not installed"
STATUS_NOT_RUN = "not run"


def plan_json(cells: Sequence[Cell], allocators: Sequence[dict[str, Any]], reps: int,
              quick: bool | None = None) -> dict[str, Any]:
    """The part of env.json that summaries and tables are rebuilt from."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for c in cells:
        if c.row in seen:
            continue
        seen.add(c.row)
        w = c.workload
        row = {"workload": w.name, "group": w.group, "threads": c.threads,
               "metric": w.metric, "unit": w.unit, "better": w.better,
               "describe": w.describe, "kind": w.kind}
        if c.params:
            row["params"] = dict(c.params)  # set by the user (--param)
        rows.append(row)
    plan: dict[str, Any] = {"reps": reps, "allocators": list(allocators), "rows": rows}
    if quick is not None:
        plan["quick"] = quick
    return plan


@dataclass
class _Acc:
    """Documents collected for one cell."""
    values: dict[str, list[float]] = field(default_factory=dict)
    reps: dict[str, list[Any]] = field(default_factory=dict)   # each value's "rep"
    units: dict[str, tuple[str, str]] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    primary: str | None = None
    # per successful document: figures that are not metrics
    figures: dict[str, list[float]] = field(default_factory=dict)
    # program cells: the libraries their evidence says served malloc
    served_by: set[str] = field(default_factory=set)


# Figures of a document kept per cell besides its metrics: name -> the path
# to it in the document. `frees` exists only for workloads that count them;
# `operations` (allocator calls) for built-in, script and trace workloads
# of runners that report it.
DOC_FIGURES = {
    "peak_rss_bytes": ("process", "peak_rss_bytes"),
    "rss_start_bytes": ("process", "rss_start_bytes"),
    "frees": ("frees", "total"),
    "cross_thread_frees": ("frees", "cross_thread"),
    "operations": (perop.OPERATIONS_KEY,),
}


def _figure(doc: dict[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = doc
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _doc_row(doc: dict[str, Any]) -> tuple[str, int] | None:
    """(workload, threads) of a document: its cell key's row."""
    key = key_of(doc)
    return key.row if key is not None else None


def _collect(docs: Iterable[dict[str, Any]]) -> dict[tuple[str, int, str], _Acc]:
    """Documents by (workload, threads, allocator): the plan gives a workload
    one set of parameters, so they do not split its cells here."""
    accs: dict[tuple[str, int, str], _Acc] = {}
    for doc in docs:
        key = key_of(doc)
        if key is None:
            continue
        acc = accs.setdefault((*key.row, key.allocator), _Acc())
        if doc.get("status") != STATUS_OK:
            acc.failures.append(Failure.of(doc).to_json())
            continue
        acc.primary = acc.primary or doc.get("primary")
        acc.served_by.update((doc.get("evidence") or {}).get("served_by_name") or [])
        for name, path in DOC_FIGURES.items():
            value = _figure(doc, path)
            if value is not None:
                acc.figures.setdefault(name, []).append(value)
        for name, m in (doc.get("metrics") or {}).items():
            value = m.get("value") if isinstance(m, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                acc.values.setdefault(name, []).append(float(value))
                acc.reps.setdefault(name, []).append(doc.get("rep"))
                acc.units.setdefault(name, (m.get("unit") or "", m.get("better") or "lower"))
    return accs


def _spread_json(values: list[float]) -> dict[str, Any]:
    s = stats.spread(values)
    return {"n": len(values), "values": values,
            "median": s.median if s else None, "min": s.min if s else None, "max": s.max if s else None}


def _not_installed_text(alloc: dict[str, Any]) -> str:
    reason = alloc.get("reason") or ""
    # the runner says "jemalloc: not installed (apt install libjemalloc2)"
    prefix = f"{alloc.get('name')}: "
    return reason[len(prefix):] if reason.startswith(prefix) else (reason or STATUS_NOT_INSTALLED)


def _rows_with_extras(plan: dict[str, Any], accs: dict[tuple[str, int, str], _Acc],
                      docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Planned rows, plus any row that has documents but is not in the plan."""
    rows = list(plan.get("rows") or [])
    known = {(r["workload"], int(r["threads"])) for r in rows}
    for doc in docs:
        w = doc.get("workload") or {}
        row = _doc_row(doc)
        if row is None:
            continue
        if row not in known:
            known.add(row)
            metric = doc.get("primary") or ""
            m = (doc.get("metrics") or {}).get(metric) or {}
            rows.append({"workload": row[0], "group": w.get("group") or "", "threads": row[1],
                         "metric": metric, "unit": m.get("unit") or "",
                         "better": m.get("better") or "lower", "describe": w.get("describe") or ""})
    return rows


def _allocators_with_extras(plan: dict[str, Any], docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    allocs = list(plan.get("allocators") or [])
    names = {a["name"] for a in allocs}
    for doc in docs:
        key = key_of(doc)   # the driver's name (NAME of NAME=so:PATH), not the runner's
        name = key.allocator if key is not None else None
        if name and name not in names:
            names.add(name)
            allocs.append({"name": name, "available": True, "reason": None, "version": None})
    return allocs


def _touch_by_row(docs: Iterable[dict[str, Any]]) -> dict[tuple[str, int], str]:
    """What each row's runs wrote into their blocks, as the runner's documents
    say (`workload.param_names.touch`): rows of workloads without the
    parameter (scripts) have none."""
    touch: dict[tuple[str, int], str] = {}
    for doc in docs:
        row = _doc_row(doc)
        names = (doc.get("workload") or {}).get("param_names")
        value = names.get("touch") if isinstance(names, dict) else None
        if row is not None and isinstance(value, str):
            touch.setdefault(row, value)
    return touch


def _ran_by_row(docs: Iterable[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """The parameters each row's runs had (`workload.params`), sizes included."""
    ran: dict[tuple[str, int], dict[str, Any]] = {}
    for doc in docs:
        row = _doc_row(doc)
        params = (doc.get("workload") or {}).get("params")
        if row is not None and isinstance(params, dict) and params:
            ran.setdefault(row, params)
    return ran


def summarize(docs: Sequence[dict[str, Any]], plan: dict[str, Any]) -> dict[str, Any]:
    accs = _collect(docs)
    touch = _touch_by_row(docs)
    ran = _ran_by_row(docs)
    rows = []
    for r in _rows_with_extras(plan, accs, docs):
        row, at = dict(r), (r["workload"], int(r["threads"]))
        if at in touch:
            row["touch"] = touch[at]
        if at in ran:
            row["ran"] = {k: v for k, v in ran[at].items() if k != "touch"}
        rows.append(row)
    allocs = _allocators_with_extras(plan, docs)
    cells: list[dict[str, Any]] = []
    for row in rows:
        threads = int(row["threads"])
        row_cells: list[dict[str, Any]] = []
        for alloc in allocs:
            label = CellKey(row["workload"], threads, alloc["name"]).label()
            acc = accs.get((row["workload"], threads, alloc["name"]), _Acc())
            metric = acc.primary or row.get("metric") or ""
            unit, better = acc.units.get(metric, (row.get("unit") or "", row.get("better") or "lower"))
            primary = _spread_json(acc.values.get(metric, []))
            cell: dict[str, Any] = {
                "cell": label, "workload": row["workload"], "group": row.get("group") or "",
                "threads": threads, "allocator": alloc["name"],
                "metric": metric, "unit": unit, "better": better, **primary,
                "reps": acc.reps.get(metric, []),
                "ratio_to_system": None, "failures": acc.failures, "message": None,
                "metrics": {name: {**_spread_json(vals), "unit": acc.units[name][0],
                                   "better": acc.units[name][1]}
                            for name, vals in acc.values.items()},
                "figures": {name: _spread_json(vals) for name, vals in acc.figures.items()},
                "served_by": sorted(acc.served_by),
            }
            # instructions per allocator call beside the total (perop)
            operations = cell["figures"].get("operations", {}).get("median")
            cell["per_operation"] = (perop.per_operation(cell["median"], operations)
                                     if perop.applies(metric) else None)
            if primary["n"]:
                cell["status"] = STATUS_OK
            elif acc.failures:
                cell["status"] = acc.failures[0]["label"]
                cell["message"] = acc.failures[0]["error"]
            elif not alloc.get("available", True):
                cell["status"] = STATUS_NOT_INSTALLED
                cell["message"] = _not_installed_text(alloc)
            else:
                cell["status"] = STATUS_NOT_RUN
            row_cells.append(cell)
        base = next((c for c in row_cells if c["allocator"] == BASELINE), None)
        for c in row_cells:
            if base is not None and base["metric"] == c["metric"]:
                c["ratio_to_system"] = stats.ratio(c["median"], base["median"])
        cells += row_cells
    return {"schema": SUMMARY_SCHEMA, "baseline": BASELINE, "reps": plan.get("reps"),
            "quick": plan.get("quick"),
            "cores": _cores(docs), "allocators": allocs, "rows": rows, "cells": cells}


def _cores(docs: Sequence[dict[str, Any]]) -> int | None:
    """The machine's core count, as the runner documents say (None if none does)."""
    for doc in docs:
        cores = (doc.get("env") or {}).get("cores")
        if isinstance(cores, int) and not isinstance(cores, bool) and cores > 0:
            return cores
    return None


def failed_cells(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Cells with at least one crashed, timed-out or error repetition."""
    return [c for c in summary["cells"] if c["failures"]]
