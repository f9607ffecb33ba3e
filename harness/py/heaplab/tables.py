"""Rendering a summary as Markdown and CSV tables.

One table per workload group; a row per workload and thread count; a column
per allocator. A cell shows the median with its min–max and the ratio of
medians to `system`; a cell that did not produce numbers says why
("crashed (SIGSEGV)", "timeout", "error: …", "not installed (apt install …)").
A row with more threads than the machine has cores says so beside its
thread count. An instruction count is followed by instructions per
operation (`66.3M (72.1/op)`: heaplab.perop) where the documents count
the workload's allocator calls. A group whose workloads count their cross-thread frees (the
classic multi-threaded benchmarks) gets a second table: peak RSS per
allocator, and how many blocks were freed on another thread than the one
that allocated them.
"""
from __future__ import annotations

import csv
import io
from typing import Any

from . import fmt, perop, programs, run_notes
from .catalog import format_params
from .summary import BASELINE, STATUS_NOT_INSTALLED, STATUS_OK

# the formatters tables use, by the names other modules know them
fmt_number = fmt.number
fmt_count = fmt.count
fmt_ratio = fmt.ratio
value_text = fmt.value
_one_line = fmt.one_line
_md_escape = fmt.md


def range_parts(figure: dict[str, Any], divisor: float = 1.0) -> list[str]:
    """What goes beside a median (a table cell's or a compare side's): its
    min–max when it has more than one repetition, and instructions per
    operation when it has them; figures divided by `divisor`."""
    parts = []
    if (figure.get("n") or 0) > 1:
        parts.append(f"{fmt_number(figure['min'] / divisor)}–{fmt_number(figure['max'] / divisor)}")
    if figure.get("per_operation") is not None:
        parts.append(perop.text(figure["per_operation"]))
    return parts


def cell_text(cell: dict[str, Any], baseline: str = BASELINE, reps: int | None = None,
              divisor: float = 1.0) -> str:
    """What one table cell says (Markdown and plain text): the median, in
    brackets its min–max and, for an instruction count, instructions per
    operation; `n=4` when it has fewer repetitions than `reps` (an
    interrupted run); figures divided by `divisor` (nanoseconds shown as
    seconds)."""
    status = cell["status"]
    if status == STATUS_OK:
        text = fmt_number(cell["median"] / divisor)
        inside = range_parts(cell, divisor)
        if inside:
            text += f" ({', '.join(inside)})"
        if isinstance(reps, int) and cell["n"] < reps:
            text += f" n={cell['n']}"
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


def row_scale(row: dict[str, Any], cells: list[dict[str, Any]]) -> tuple[str, float]:
    """(unit shown, divisor) of a row: nanoseconds of a program's whole run in seconds."""
    unit = next((c["unit"] for c in cells if c["status"] == STATUS_OK), row.get("unit") or "")
    medians = [c["median"] for c in cells if c["status"] == STATUS_OK and c["median"] is not None]
    return fmt.seconds_scale(unit, medians)


def _metric_label(row: dict[str, Any], cells: list[dict[str, Any]]) -> str:
    metric = next((c["metric"] for c in cells if c["status"] == STATUS_OK), row.get("metric") or "")
    unit = row_scale(row, cells)[0]
    better = next((c["better"] for c in cells if c["status"] == STATUS_OK), row.get("better") or "lower")
    return f"{metric} ({unit}, {better} is better)" if unit else f"{metric} ({better} is better)"


TOUCH = "touch"


def params_text(row: dict[str, Any]) -> str:
    """`count=2000, rounds=10`: the parameters the user set for a row, or ''
    (`touch` by its name, as `touch_text` says it)."""
    return format_params((k, v) for k, v in (row.get("params") or {}).items() if k != TOUCH)


def touch_text(row: dict[str, Any]) -> str:
    """`touch=first`: what the row's runs wrote into each block they
    allocated (every table says it), or '' for a row that does not say."""
    return f"{TOUCH}={row[TOUCH]}" if row.get(TOUCH) else ""


def workload_label(row: dict[str, Any]) -> str:
    """The workload's name, then in brackets what its blocks had written
    into them and the parameters set for it."""
    given = ", ".join(t for t in (touch_text(row), params_text(row)) if t)
    return f"{row['workload']} ({given})" if given else row["workload"]


BYTES_PER_MB = 1e6


def threads_text(threads: int, cores: int | None) -> str:
    """`4 (oversubscribed: 2 cores)` when a row has more threads than cores."""
    if isinstance(cores, int) and threads > cores:
        return f"{threads} (oversubscribed: {cores} cores)"
    return str(threads)


def _figure_median(cell: dict[str, Any], name: str) -> float | None:
    if cell["status"] != STATUS_OK:
        return None
    return ((cell.get("figures") or {}).get(name) or {}).get("median")


def _counts_frees(cells: list[dict[str, Any]]) -> bool:
    return any(_figure_median(c, "frees") is not None for c in cells)


def _range_text(values: list[float], fmt: Any) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def cross_thread_text(cells: list[dict[str, Any]]) -> str:
    """`50.0k of 410k (12.2%)`: blocks freed on another thread, median per
    allocator, as a range over the allocators when they differ."""
    pairs = [(_figure_median(c, "cross_thread_frees"), _figure_median(c, "frees")) for c in cells]
    pairs = [(x, n) for x, n in pairs if x is not None and n is not None]
    if not pairs:
        return "–"
    shares = [100.0 * x / n if n else 0.0 for x, n in pairs]
    return (f"{_range_text([x for x, _ in pairs], fmt_count)} of "
            f"{_range_text([n for _, n in pairs], fmt_count)} "
            f"({_range_text(shares, lambda v: f'{v:.1f}%')})")


def peak_rss_text(cell: dict[str, Any], base: dict[str, Any] | None) -> str:
    """Peak RSS in MB (median, min–max), with its ratio to the baseline's."""
    if cell["status"] != STATUS_OK:
        return cell_text(cell)
    spread = (cell.get("figures") or {}).get("peak_rss_bytes") or {}
    if spread.get("median") is None:
        return "–"
    text = fmt_number(spread["median"] / BYTES_PER_MB)
    if spread.get("n", 0) > 1:
        text += f" ({fmt_number(spread['min'] / BYTES_PER_MB)}–{fmt_number(spread['max'] / BYTES_PER_MB)})"
    base_median = _figure_median(base, "peak_rss_bytes") if base is not None else None
    if base is not None and base is not cell and base_median:
        text += " " + fmt_ratio(spread["median"] / base_median)
    return text


def _memory_table(summary: dict[str, Any], group: str, allocs: list[str],
                  index: dict[tuple[str, int, str], dict[str, Any]]) -> list[str]:
    """Peak RSS and cross-thread frees of the rows of `group` that count frees."""
    out = ["Peak RSS of the process (MB, median (min–max), ×ratio to "
           f"{summary['baseline']}'s), and blocks freed on a thread other than the one that "
           "allocated them (median per allocator; a range when allocators differ).", "",
           "| workload | threads | freed on another thread | peak RSS: " + " | ".join(allocs) + " |",
           "| --- | ---: | --- | " + " | ".join("---:" for _ in allocs) + " |"]
    for row in summary["rows"]:
        if row.get("group", "") != group:
            continue
        cells = [index[(row["workload"], int(row["threads"]), a)] for a in allocs]
        if not _counts_frees(cells):
            continue
        base = next((c for c in cells if c["allocator"] == summary["baseline"]), None)
        texts = [_md_escape(peak_rss_text(c, base)) for c in cells]
        out.append(f"| {_md_escape(workload_label(row))} | "
                   f"{threads_text(int(row['threads']), summary.get('cores'))} | "
                   f"{cross_thread_text(cells)} | " + " | ".join(texts) + " |")
    out.append("")
    return out


def _uneven(summary: dict[str, Any]) -> bool:
    """Some cell that ran has fewer repetitions than planned (Ctrl-C)."""
    reps = summary.get("reps")
    return isinstance(reps, int) and any(
        c["status"] == STATUS_OK and c["n"] < reps for c in summary["cells"])


def sizes_text(summary: dict[str, Any]) -> str:
    """`quick sizes` / `full sizes`, as the run's plan says, or ''."""
    quick = summary.get("quick")
    return "" if quick is None else ("quick sizes" if quick else "full sizes")


def _sizes_ran(summary: dict[str, Any], group: str) -> str:
    """`tmalloc-st-64 pairs=1000; ...`: the parameters each workload of the
    group ran with, as its documents say."""
    parts = [f"{row['workload']} {format_params(sorted(row['ran'].items()))}"
             for row in summary["rows"] if row.get("group", "") == group and row.get("ran")]
    return "; ".join(dict.fromkeys(parts))


def _head(summary: dict[str, Any], group: str) -> list[str]:
    reps = summary.get("reps")
    runs = "1 run" if reps == 1 else f"{reps} runs (min–max)"
    head = f"Each cell: median of {runs}, then ×ratio of that median to {summary['baseline']}'s."
    if _uneven(summary):
        head += f" A cell with fewer than {reps} runs (the run was interrupted) says its n."
    if any(c.get("per_operation") is not None for c in summary["cells"]
           if c.get("group", "") == group):
        head += (f" Instruction counts are followed by instructions per operation"
                 f" ({perop.SUFFIX}: the count over the allocator calls the workload made).")
    lines = [head]
    sizes, ran = sizes_text(summary), _sizes_ran(summary, group)
    if sizes or ran:
        lines += ["", f"Sizes: {sizes or 'as the documents say'}" + (f" ({_md_escape(ran)})" if ran else "") + "."]
    return lines


def markdown(summary: dict[str, Any]) -> str:
    allocs = [a["name"] for a in summary["allocators"]]
    index = _index(summary)
    reps = summary.get("reps")
    uneven = _uneven(summary)
    out: list[str] = []
    for group in _groups(summary):
        out.append(f"## {group or '(no group)'}")
        out.append("")
        out += _head(summary, group)
        out.append("")
        out.append("| workload | threads | metric | " + " | ".join(allocs) + " |")
        out.append("| --- | ---: | --- | " + " | ".join("---:" for _ in allocs) + " |")
        for row in summary["rows"]:
            if row.get("group", "") != group:
                continue
            cells = [index[(row["workload"], int(row["threads"]), a)] for a in allocs]
            divisor = row_scale(row, cells)[1]
            texts = [_md_escape(cell_text(c, reps=reps if uneven else None, divisor=divisor))
                     for c in cells]
            out.append(f"| {_md_escape(workload_label(row))} | "
                       f"{threads_text(int(row['threads']), summary.get('cores'))} | "
                       f"{_md_escape(_metric_label(row, cells))} | " + " | ".join(texts) + " |")
        out.append("")
        group_cells = [c for c in summary["cells"] if c.get("group", "") == group]
        out += programs.served_notes(group_cells)
        if _counts_frees(group_cells):
            out += _memory_table(summary, group, allocs, index)
    out.append(run_notes.markdown(summary))
    return "\n".join(out)


CSV_ROW_FIELDS = ("group", "workload", "threads", "metric", "unit", "better", "touch", "params")
CSV_CELL_FIELDS = ("median", "min", "max", "n", "ratio_to_system", "status",
                   "peak_rss_bytes", "frees", "cross_thread_frees", "operations",
                   "per_operation")
# CSV cell fields that are medians of a document figure, not of the metric
CSV_FIGURE_FIELDS = ("peak_rss_bytes", "frees", "cross_thread_frees", "operations")


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
    """One CSV: a row per (workload, threads) with what its runs wrote into
    each block (`touch`, empty where the workload does not say) and the
    parameters set for it (`params`, empty for the workload's own), rows of a group together, and
    per allocator the columns <alloc>_median, _min, _max, _n, _ratio_to_system,
    _status (status is "ok" or what the Markdown cell says), the medians of
    _peak_rss_bytes, _frees and _cross_thread_frees (empty where a workload
    does not count its frees) and of _operations (the allocator calls;
    empty for programs), and _per_operation: an instruction count's median
    over the operations (empty for other metrics)."""
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
                    ok["better"] if ok else row.get("better", ""), row.get(TOUCH) or "",
                    params_text(row)]
            for c in cells:
                line += [_csv_value(c["median"]), _csv_value(c["min"]), _csv_value(c["max"]),
                         str(c["n"]), _csv_value(c["ratio_to_system"]), _csv_status(c)]
                line += [_csv_value(_figure_median(c, f)) for f in CSV_FIGURE_FIELDS]
                line.append(_csv_value(c.get("per_operation") if c["status"] == STATUS_OK else None))
            writer.writerow(line)
    return buf.getvalue()
