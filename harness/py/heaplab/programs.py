"""Program workloads: running a cell with the evidence probe, and judging
whether the allocator under test served the program.

A program cell runs as any other (one heaplab-run process), with two more
variables in its environment: HEAPLAB_EVIDENCE_PROBE (the probe library,
build/libheaplab-evidence.so) and HEAPLAB_PROGRAM_REPORT (a file the helper
in workloads/programs/ writes). The report's figures are the served
process's own and replace the runner's (which would include the helper);
its RSS samples become the document's samples; its probe lines become the
document's "evidence". A cell whose served process left no probe line at
exit, or whose malloc resolved to another library than the one preloaded,
is "allocator not in use" instead of a number.
"""
from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import Any

from . import runner as runner_mod
from .matrix import Cell

PROBE_NAME = "libheaplab-evidence.so"
REPORT_SCHEMA = "heaplab.program-report/1"
KIND_PROGRAM = "program"
STATUS_NOT_IN_USE = "not_in_use"
STATUS_NOT_INSTALLED = "not_installed"
NOT_IN_USE = "allocator not in use"
# The Debian packages of the programs suite (workloads/prog-*.wl).
PACKAGES: tuple[str, ...] = ("redis-server", "redis-tools", "sqlite3", "z3", "ruby",
                             "ghostscript", "rocksdb-tools")
# What a library file is called when glibc's malloc serves the program.
GLIBC_NAMES = ("libc.so", "libc-")


def probe_path(runner: pathlib.Path) -> pathlib.Path:
    """The probe is built next to the runner."""
    return runner.resolve().parent / PROBE_NAME


def run_cell(runner: pathlib.Path, cell: Cell, quick: bool, timeout_s: float,
             count_instructions: bool = False) -> runner_mod.Outcome:
    """runner.run_cell, with the probe and the report for program cells."""
    if cell.workload.kind != KIND_PROGRAM or count_instructions:
        return runner_mod.run_cell(runner, cell, quick=quick, timeout_s=timeout_s,
                                   count_instructions=count_instructions)
    with tempfile.TemporaryDirectory(prefix="heaplab-report-") as folder:
        report_path = pathlib.Path(folder) / "report.json"
        env = dict(os.environ, HEAPLAB_PROGRAM_REPORT=str(report_path))
        probe = probe_path(runner)
        if probe.exists():
            env["HEAPLAB_EVIDENCE_PROBE"] = str(probe)
        outcome = runner_mod.run_cell(runner, cell, quick=quick, timeout_s=timeout_s, env=env)
        report = read_report(report_path)
    return runner_mod.Outcome(merge(outcome.document, report), outcome.seconds)


def read_report(path: pathlib.Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == REPORT_SCHEMA else None


def library_name(path: str) -> str:
    """'/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' -> 'jemalloc'."""
    base = os.path.basename(path)
    if base.startswith(GLIBC_NAMES):
        return "glibc"
    name = base.split(".so")[0]
    name = name[3:] if name.startswith("lib") else name
    return {"heaplab-preload": "heaplab", "tcmalloc_minimal": "tcmalloc"}.get(name, name)


def _same_library(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b) or os.path.basename(a) == os.path.basename(b)


def judge(report: dict[str, Any]) -> dict[str, Any]:
    """The evidence block of a document: which library served malloc in
    every served process that ended, and whether it is the one preloaded."""
    preload = str(report.get("preload") or "")
    exits = [r for r in report.get("evidence") or [] if r.get("event") == "exit"]
    served_by = sorted({str(r.get("malloc")) for r in exits})
    stats = [{k: v for k, v in r.items() if k not in ("event", "pid", "malloc")} for r in exits]
    block: dict[str, Any] = {"preload": preload or None, "processes": len(exits),
                             "served_by": served_by,
                             "served_by_name": sorted({library_name(m) for m in served_by}),
                             "stats": stats}
    if not report.get("probe"):
        block.update(in_use=None, reason="the evidence probe was not built")
    elif not exits:
        block.update(in_use=False, reason="no served process loaded the evidence probe "
                     "(LD_PRELOAD dropped, or a static or setuid program)")
    elif preload and not all(_same_library(m, preload) for m in served_by):
        block.update(in_use=False, reason=f"malloc resolved to {', '.join(served_by)}, "
                     f"not the preloaded {preload}")
    else:
        block.update(in_use=True, reason=None)
    return block


def merge(doc: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any]:
    """The runner's document with the helper's report folded in."""
    if report is None:
        return doc
    missing = report.get("not_installed")
    if missing:
        text = f"not installed (apt install {missing.get('package')})"
        doc.update(status=STATUS_NOT_INSTALLED, error=text, cell_label=text)
        return doc
    if report.get("failure") and doc.get("status") == "ok":
        doc.update(status="error", error=report["failure"])
    if doc.get("status") != "ok":
        doc.setdefault("error", report.get("failure"))
        return doc
    doc["metrics"] = {**(doc.get("metrics") or {}), **(report.get("metrics") or {})}
    doc["samples"] = list(report.get("samples") or [])
    doc["served"] = report.get("served")
    evidence = judge(report)
    doc["evidence"] = evidence
    if evidence["in_use"] is False:
        doc.update(status=STATUS_NOT_IN_USE, error=f"{NOT_IN_USE}: {evidence['reason']}",
                   cell_label=NOT_IN_USE)
    return doc


def served_notes(cells: list[dict[str, Any]]) -> list[str]:
    """Markdown notes under a table: each system cell of a program whose
    evidence shows a malloc other than glibc's (a program that brings its
    own allocator, as Debian's redis-server brings jemalloc)."""
    lines: list[str] = []
    for c in cells:
        served = [name for name in c.get("served_by") or [] if name != "glibc"]
        if c.get("allocator") == "system" and served:
            lines += [f"> **{c['workload']}: the system column is {', '.join(served)}, not "
                      f"glibc.** The program brings its own allocator: the evidence of its "
                      f"served process shows malloc resolved to {', '.join(served)} when "
                      f"nothing is preloaded.", ""]
    return lines


def not_installed_only(cell: dict[str, Any]) -> bool:
    """A summary cell whose every failure is a program that is not installed."""
    failures = cell.get("failures") or []
    return bool(failures) and all(f.get("status") == STATUS_NOT_INSTALLED for f in failures)


def ensure_packages(allow_install: bool, out: Any = None) -> None:
    """Installs the suite's missing packages with apt-get when root (and
    allowed); otherwise says the command and lets those cells report
    "not installed"."""
    from . import deps
    deps.ensure(PACKAGES, allow_install, out=out)
