"""Rendering a summary as Markdown and CSV tables.

One table per workload group; a row per workload and thread count; a column
per allocator. A cell shows the median with its min–max and the ratio of
medians to `system`; a cell that did not produce numbers says why
("crashed (SIGSEGV)", "timeout", "error: …", "not installed (apt install …)").
"""
from __future__ import annotations

import csv
import io
import math
from typing import Any

from . import run_notes
from .catalog import format_params
from .summary import BASELINE, STATUS_NOT_INSTALLED, STATUS_OK

# Above a million, figures read better with a suffix (309M ns, not 309038895).
LARGE_SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"))
# Longest runner error message quoted inside a Markdown cell.
MESSAGE_MAX_CHARS = 80


def fmt_number(value: float | None) -> str:
    """Three significant figures without exponents, for reading."""
    if value is None or not math.isfinite(value):
        return "–" if value is None else str(value)
    magnitude = abs(value)
    for scale, suffix in LARGE_SCALES:
        if magnitude >= scale:
            return f"{value / scale:.3g}{suffix}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def fmt_ratio(value: float | None) -> str:
    return "" if value is None else f"×{value:.2f}"


def _one_line(text: str | None) -> str:
    line = " ".join((text or "").split())
    if len(line) > MESSAGE_MAX_CHARS:
        line = line[: MESSAGE_MAX_CHARS - 1] + "…"
    return line


def cell_text(cell: dict[str, Any], baseline: str = BASELINE) -> str:
    """What one table cell says (Markdown and plain text)."""
    status = cell["status"]
    if status == STATUS_OK:
        text = fmt_number(cell["median"])
        if cell["n"] > 1:
            text += f" ({fmt_number(cell['min'])}–{fmt_number(cell['max'])})"
        if cell.get("ratio_to_system") is not None and cell["allocator"] != baseline:
            text += " " + fmt_ratio(cell["ratio_to_system"])
        if cell["failures"]:
            labels = sorted({f["label"] for f in cell["failures"]})
            text += f"; {len(cell['failures'])} of {len(cell['failures']) + cell['n']} {', '.join(labels)}"
        return text
    if status == STATUS_NOT_INSTALLED:
        message = cell.get("message") or STATUS_NOT_INSTALLED
        return message if message.startswith(STATUS_NOT_INSTALLED) else f"{STATUS_NOT_INSTALLED}: {message}"
    if status == "error" and cell.get("message"):
        return f"error: {_one_line(cell['message'])}"
    return status


def _groups(summary: dict[str, Any]) -> list[str]:
    groups: list[str] = []
    for row in summary["rows"]:
        if row.get("group", "") not in groups:
            groups.append(row.get("group", ""))
    return groups


def _index(summary: dict[str, Any]) -> dict[tuple[str, int, str], dict[str, Any]]:
    return {(c["workload"], int(c["threads"]), c["allocator"]): c for c in summary["cells"]}


def _metric_label(row: dict[str, Any], cells: list[dict[str, Any]]) -> str:
    metric = next((c["metric"] for c in cells if c["status"] == STATUS_OK), row.get("metric") or "")
    unit = next((c["unit"] for c in cells if c["status"] == STATUS_OK), row.get("unit") or "")
    better = next((c["better"] for c in cells if c["status"] == STATUS_OK), row.get("better") or "lower")
    return f"{metric} ({unit}, {better} is better)" if unit else f"{metric} ({better} is better)"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def params_text(row: dict[str, Any]) -> str:
    """`count=2000, rounds=10`: the parameters the user set for a row, or ''."""
    return format_params((row.get("params") or {}).items())


def workload_label(row: dict[str, Any]) -> str:
    """The workload's name, and the parameters set for it in brackets."""
    given = params_text(row)
    return f"{row['workload']} ({given})" if given else row["workload"]


def markdown(summary: dict[str, Any]) -> str:
    allocs = [a["name"] for a in summary["allocators"]]
    index = _index(summary)
    reps = summary.get("reps")
    out: list[str] = []
    for group in _groups(summary):
        out.append(f"## {group or '(no group)'}")
        out.append("")
        runs = "1 run" if reps == 1 else f"{reps} runs (min–max)"
        out.append(f"Each cell: median of {runs}, then ×ratio of that median to {summary['baseline']}'s.")
        out.append("")
        out.append("| workload | threads | metric | " + " | ".join(allocs) + " |")
        out.append("| --- | ---: | --- | " + " | ".join("---:" for _ in allocs) + " |")
        for row in summary["rows"]:
            if row.get("group", "") != group:
                continue
            cells = [index[(row["workload"], int(row["threads"]), a)] for a in allocs]
            texts = [_md_escape(cell_text(c)) for c in cells]
            out.append(f"| {_md_escape(workload_label(row))} | {row['threads']} | "
                       f"{_md_escape(_metric_label(row, cells))} | " + " | ".join(texts) + " |")
        out.append("")
    out.append(run_notes.markdown(summary))
    return "\n".join(out)


CSV_ROW_FIELDS = ("group", "workload", "threads", "metric", "unit", "better", "params")
CSV_CELL_FIELDS = ("median", "min", "max", "n", "ratio_to_system", "status")


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _csv_status(cell: dict[str, Any]) -> str:
    if cell["status"] != STATUS_OK:
        return cell_text(cell)
    if cell["failures"]:
        return f"ok; {len(cell['failures'])} failed"
    return STATUS_OK


def csv_text(summary: dict[str, Any]) -> str:
    """One CSV: a row per (workload, threads) with the parameters set for it
    (`params`, empty for the workload's own), rows of a group together, and
    per allocator the columns <alloc>_median, _min, _max, _n, _ratio_to_system,
    _status (status is "ok" or what the Markdown cell says)."""
    allocs = [a["name"] for a in summary["allocators"]]
    index = _index(summary)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(list(CSV_ROW_FIELDS) + [f"{a}_{f}" for a in allocs for f in CSV_CELL_FIELDS])
    for group in _groups(summary):
        for row in summary["rows"]:
            if row.get("group", "") != group:
                continue
            cells = [index[(row["workload"], int(row["threads"]), a)] for a in allocs]
            ok = next((c for c in cells if c["status"] == STATUS_OK), None)
            line = [group, row["workload"], str(row["threads"]),
                    ok["metric"] if ok else row.get("metric", ""),
                    ok["unit"] if ok else row.get("unit", ""),
                    ok["better"] if ok else row.get("better", ""), params_text(row)]
            for c in cells:
                line += [_csv_value(c["median"]), _csv_value(c["min"]), _csv_value(c["max"]),
                         str(c["n"]), _csv_value(c["ratio_to_system"]), _csv_status(c)]
            writer.writerow(line)
    return buf.getvalue()
