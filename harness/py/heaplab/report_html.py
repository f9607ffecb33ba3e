"""report.html: one self-contained page for a folder (report_data.Folder).

Inline CSS, inline SVG (report_svg), no external resource of any kind; the
few lines of script only sort tables and the page reads fully without them.
In the order a reader wants: what was run; the verdicts, where there are
any; the published tables reproduced; then per workload group its table
beside its chart, and its memory-by-phase, memory-over-time and thread
scaling charts; last, as under tables.md's tables, the drift warnings and
the recommendation (run_notes, the same lines).

A table cell is the median with its min–max, the spread of its repetitions
(max ÷ min and coefficient of variation, stability; "exact" for instruction
counts) and its ratio to the baseline; hovering it shows every repetition
(a title attribute, no script). A cell without a figure says why (crashed,
timeout, not installed). A comparison's cells carry the detectable effect,
spread and verdict wording of compare's Markdown (compare_render), and the
cells' warnings, drift among them.
"""
from __future__ import annotations

import re
from html import escape
from typing import Any, Iterable, Sequence

from . import advice, compare_render, fmt, report_data, report_svg, run_notes, stability, tables
from .comparison import DETERMINISTIC_METRICS
from .compare_render import format_p
from .reproduced import with_version
from .report_data import Folder
from .summary import STATUS_NOT_INSTALLED, STATUS_NOT_RUN, STATUS_OK

CSS = """
body{font:14px/1.4 system-ui,sans-serif;color:#1d1d1d;margin:0 auto;max-width:1500px;padding:0 20px 40px}
h1{font-size:22px;margin:18px 0 6px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:18px 0 6px}
dl.what{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}
dl.what dt{font-weight:600}dl.what dd{margin:0}
nav{margin:10px 0;font-size:13px}nav a{margin-right:10px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #d4d4d4;padding:3px 7px;vertical-align:top}
th{background:#f1f1f1;text-align:left}td.num{text-align:right;white-space:nowrap}
td:first-child{white-space:nowrap}td small{color:#666}td b{font-weight:600}
th[data-sortable]{cursor:pointer}
td.failed{background:#fde8e8;color:#8a1c1c}td.missing{color:#777}
.pair{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.pair>div{flex:1 1 560px;min-width:0;overflow-x:auto}.pair>div.tbl{flex:0 1 auto;max-width:100%}
.pair>div.fig{flex:1 1 380px;max-width:560px}
figure{margin:8px 0}figcaption{font-size:12px;color:#555;max-width:760px}
svg.chart{max-width:100%;height:auto}
.v-faster{background:#e3f4e6}.v-slower,.v-new_failed{background:#fde8e8}
.v-unchanged{background:#f4f4f4}.v-not_significant{background:#fff6dc}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;border:1px solid #bbb;margin:0 4px 4px 0}
.note{color:#555;font-size:12px}blockquote{margin:6px 0;padding:4px 10px;border-left:4px solid #e0a800;background:#fff8e1}
code{font-size:12px;background:#f3f3f3;padding:0 3px}
"""

# Click a heading to sort its table by that column (again: the other way).
# Cells carry data-sort (a number) where their text is not one.
SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.dataset.sortable=1;
th.addEventListener('click',function(){var b=th.closest('table').tBodies[0],d=th.dataset.dir=th.dataset.dir=='1'?'-1':'1';
var k=function(r){var c=r.cells[i],v=c.dataset.sort;return v===undefined?c.textContent:parseFloat(v)};
Array.from(b.rows).sort(function(x,y){var p=k(x),q=k(y);return (p>q?1:p<q?-1:0)*d}).forEach(function(r){b.appendChild(r)})})});
"""

VERDICT_WORDS = {"faster": "faster", "slower": "slower", "unchanged": "unchanged",
                 "not_significant": "not significant", "new_failed": "failed (new)",
                 "base_failed": "failed (baseline)", "both_failed": "failed (both)",
                 "only_base": "only in the baseline", "only_new": "no baseline"}
VERDICT_ORDER = ("slower", "new_failed", "faster", "unchanged", "not_significant",
                 "base_failed", "both_failed", "only_base", "only_new")


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], sortable: bool = True) -> str:
    """rows hold ready <td> elements; head plain text."""
    cls = ' class="sortable"' if sortable else ""
    return (f"<table{cls}><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
            + "</tbody></table>")


def _td(text: str, cls: str = "", sort: float | None = None, title: str | None = None) -> str:
    attrs = f' class="{cls}"' if cls else ""
    if sort is not None:
        attrs += f' data-sort="{sort:.6g}"'
    if title:
        attrs += f' title="{escape(title)}"'
    return f"<td{attrs}>{escape(text)}</td>"


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


# ------------------------------------------------------------- what was run

def _allocator_line(a: dict[str, Any]) -> str:
    if not a.get("available", True):
        return f"{a.get('name')} ({a.get('reason') or 'not available'})"
    return with_version(a) if a.get("version") else str(a.get("name"))


def what_was_run(folder: Folder) -> str:
    env, m = folder.env, report_data.machine(folder)
    opts = env.get("options") or {}
    items: list[tuple[str, str]] = []
    if env.get("argv"):
        items.append(("command", " ".join(str(a) for a in env["argv"])))
    if folder.merged_from:
        items.append(("merged from", ", ".join(folder.merged_from)))
    if m.get("git_commit"):
        items.append(("commit", str(m["git_commit"])))
    cpu = " ".join(str(m.get("cpu_model") or "").split())
    parts = [p for p in (cpu, f"{m['cores']} cores" if m.get("cores") else "",
                         f"Linux {m['kernel']}" if m.get("kernel") else "",
                         f"glibc {m['glibc']}" if m.get("glibc") else "",
                         str(m.get("compiler") or ""), str(m.get("hostname") or "")) if p]
    if parts:
        items.append(("machine", ", ".join(parts)))
    allocs = folder.summary.get("allocators") or (env.get("plan") or {}).get("allocators") or []
    if allocs:
        items.append(("allocators", "; ".join(_allocator_line(a) for a in allocs)))
    reps = folder.summary.get("reps") or opts.get("reps")
    if reps:
        items.append(("repetitions", f"{reps} per cell, one process each, interleaved"))
    if "quick" in opts:
        sizes = "quick sizes (each parameter's quick value)" if opts["quick"] else "published sizes"
        if opts.get("param"):
            sizes += "; set: " + ", ".join(opts["param"])
        items.append(("sizes", sizes))
    if opts.get("metric"):
        items.append(("metric", "instruction counts (valgrind callgrind)" if opts["metric"] == "instructions"
                      else "time"))
    if env.get("started"):
        end = env.get("finished") or "not finished"
        items.append(("when", f"{env['started']} to {end}" + (" (interrupted)" if env.get("interrupted") else "")))
    rows = folder.summary.get("rows") or []
    if rows:
        cells = folder.summary.get("cells") or []
        failed = sum(1 for c in cells if c.get("failures"))
        items.append(("cells", f"{len(rows)} workload rows × {len(allocs)} allocators"
                      + (f"; {failed} cells with failed repetitions" if failed else "")))
    if folder.torn:
        items.append(("note", folder.torn))
    return '<dl class="what">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items) + "</dl>"


# ----------------------------------------------------------------- verdicts

def _side_text(side: dict[str, Any] | None) -> tuple[str, float | None]:
    if not side or side.get("median") is None:
        return ("failed" if side and side.get("failed") else "–"), None
    text = fmt.number(side["median"])
    # (compare documents written before per-operation figures have none)
    inside = tables.range_parts(side)
    if inside:
        text += f" ({', '.join(inside)})"
    return text, side["median"]


def verdicts(comparison: report_data.Comparison) -> str:
    doc = comparison.document
    cells = doc.get("cells") or []
    counts = doc.get("counts") or {}
    runs = doc.get("mode") == "runs"
    out = [f'<h3 id="{_anchor(comparison.title)}">{escape(comparison.title)}</h3>']
    out.append(f'<p>Verdict: <b>{escape(str(doc.get("verdict")))}</b> — threshold '
               f'{doc.get("threshold", 0):.0%}, alpha {doc.get("alpha")}; metric: '
               f'{escape(str(doc.get("metric") or "each workload" + chr(39) + "s primary metric"))}.</p>')
    badges = [f'<span class="badge v-{code}">{counts[code]} {escape(VERDICT_WORDS.get(code, code))}</span>'
              for code in VERDICT_ORDER if counts.get(code)]
    if badges:
        out.append("<p>" + "".join(badges) + "</p>")
    geo = doc.get("geomean") or []
    if geo:
        out.append("<p>Geometric mean of the ratios, per allocator:</p>")
        out.append(_table(("allocator", "geometric mean" + (" NEW/BASE" if runs else f" vs {doc.get('baseline_alloc')}"),
                           "cells"),
                          ([_td(str(g["allocator"])), _td(fmt.ratio(g.get("ratio")), "num", g.get("ratio")),
                            _td(str(g.get("cells")), "num", g.get("cells"))] for g in geo)))
    for w in doc.get("warnings") or []:
        out.append(f"<blockquote><b>Warning:</b> {escape(str(w))}</blockquote>")
    head = ("group", "workload", "threads", "allocator", "metric", "BASE" if runs else "baseline",
            "NEW" if runs else "allocator's", "spread (max÷min, cv)", "ratio", "p", "detectable",
            "verdict")
    order = {code: i for i, code in enumerate(VERDICT_ORDER)}
    threshold = doc.get("threshold", advice.DEFAULT_THRESHOLD)
    rows = []
    for c in sorted(cells, key=lambda c: (order.get(c.get("verdict"), 99), c.get("group") or "",
                                          c.get("workload") or "")):
        base, base_v = _side_text(c.get("base"))
        new, new_v = _side_text(c.get("new"))
        ratio = c.get("ratio")
        verdict = str(c.get("verdict"))
        test = c.get("test")
        effect = (c.get("detectable") or {}).get("effect")
        sides = [(s.get("max_over_min"), s.get("cv")) for s in (c.get("base"), c.get("new"))
                 if s and s.get("n")]
        note = compare_render.detectable_note(test, verdict, effect, _tested_n(c), threshold)
        rows.append([_td(c.get("group") or ""), _td(c.get("workload") or ""),
                     _td(str(c.get("threads")), "num", c.get("threads")),
                     _td(str(c.get("allocator"))), _td(f"{c.get('metric')} ({c.get('unit')}, {c.get('better')} is better)"),
                     _td(base, "num", base_v), _td(new, "num", new_v),
                     _td(compare_render.spread_text(test, sides), "num"),
                     _td(fmt.ratio(ratio), "num", ratio),
                     _td("exact" if test == "deterministic" else
                         "" if c.get("p_value") is None else format_p(c["p_value"]), "num", c.get("p_value")),
                     _td(compare_render.detectable_text(test, effect), "num", effect),
                     _td(VERDICT_WORDS.get(verdict, verdict) + note + (" ⚠" if c.get("warnings") else ""),
                         f"v-{verdict}", order.get(verdict))])
    out.append(_table(head, rows))
    method = doc.get("detectable_method") or {}
    if method and any(c.get("test") not in (None, "deterministic") for c in cells):
        out.append(f'<p class="note">'
                   f'{escape(compare_render.detectable_method_text(method.get("power", 0), method.get("trials", 0)))}.</p>')
    notes = compare_render.cell_notes([(compare_render.cell_name(c.get("workload"), c.get("threads"),
                                                                 c.get("allocator")),
                                        [str(w) for w in c.get("warnings") or []]) for c in cells])
    if notes:
        out.append("<p>⚠ notes:</p><ul>" + "".join(f"<li>{escape(name)}: {escape('; '.join(own))}</li>"
                                                   for name, own in notes) + "</ul>")
    recommendation = (doc.get("recommendation") or {}).get("text")
    if recommendation:
        out.append(f"<blockquote>{escape(recommendation)}</blockquote>")
    return "\n".join(out)


def _tested_n(cell: dict[str, Any]) -> int:
    """The repetitions a compare document's cell was tested with."""
    paired = cell.get("paired")
    return compare_render.tested_n(int(paired.get("n") or 0) if paired else None,
                                   *(int((cell.get(side) or {}).get("n") or 0) for side in ("base", "new")))


# ------------------------------------------------------------ group tables

def _reps_title(cell: dict[str, Any], divisor: float = 1.0) -> str:
    parts = [f"rep {r}: {fmt.number(v / divisor)}"
             for r, v in zip(cell.get("reps") or [], cell.get("values") or [])]
    parts += [f"rep {f.get('rep')}: {f.get('label')}" for f in cell.get("failures") or []]
    return "; ".join(parts)


def _cell_td(cell: dict[str, Any] | None, baseline: str, divisor: float = 1.0) -> str:
    """`divisor`: the row's figures in the unit its label names
    (tables.row_scale: a program's nanoseconds in seconds)."""
    if cell is None:
        return _td("–", "missing")
    title = _reps_title(cell, divisor)
    if cell["status"] == STATUS_OK:
        return _figure_td(cell, baseline, title, divisor)
    if cell["status"] in (STATUS_NOT_INSTALLED, STATUS_NOT_RUN):
        # the reason (the apt line) is said once, under "allocators"; here on hover
        return _td(cell["status"], "missing", None, tables.cell_text(cell, baseline))
    return _td(tables.cell_text(cell, baseline), "failed", None, title)


def _figure_td(cell: dict[str, Any], baseline: str, title: str, divisor: float = 1.0) -> str:
    """The median and its ratio on one line, the min–max (and failed
    repetitions) small below, and below that the spread (max ÷ min, cv):
    narrow columns, so a table of six allocators fits beside its chart."""
    ratio = cell.get("ratio_to_system")
    top = f"<b>{escape(fmt.number(cell['median'] / divisor))}</b>"
    if ratio is not None and cell["allocator"] != baseline:
        top += f" {escape(fmt.ratio(ratio))}"
    below = tables.range_parts(cell, divisor)
    failures = cell.get("failures") or []
    if failures:
        labels = ", ".join(sorted({f["label"] for f in failures}))
        below.append(f"{len(failures)} of {len(failures) + cell['n']} {labels}")
    cls = "num failed" if failures else "num"
    lines = ["; ".join(below)] if below else []
    if cell["n"] > 1:
        lines.append(spread_text(cell))
    small = "".join(f"<br><small>{escape(line)}</small>" for line in lines)
    return (f'<td class="{cls}" data-sort="{cell["median"]:.6g}" title="{escape(title)}">'
            f"{top}{small}</td>")


def spread_text(cell: dict[str, Any]) -> str:
    """`×1.57, cv 15.2%` (max ÷ min and coefficient of variation of the
    repetitions, as tables.md's spread table has them); `exact` for an
    instruction count, which does not vary by chance."""
    if cell.get("metric") in DETERMINISTIC_METRICS:
        return "exact"
    return stability.format_variation(stability.variation(cell.get("values") or []))


def group_rows(folder: Folder, group: str) -> list[dict[str, Any]]:
    return [r for r in folder.summary.get("rows") or [] if (r.get("group") or "") == group]


def _index(folder: Folder) -> dict[tuple[str, int, str], dict[str, Any]]:
    return tables._index(folder.summary)   # (workload, threads, allocator) -> cell


def group_table(folder: Folder, group: str) -> str:
    s = folder.summary
    allocs = report_data.allocators(folder)
    baseline = s.get("baseline") or "system"
    index = _index(folder)
    rows = []
    for row in group_rows(folder, group):
        threads = int(row["threads"])
        cells = [index.get((row["workload"], threads, a)) for a in allocs]
        # what the cells measured (instruction counts under --metric
        # instructions), not what the workload's listing names
        present = [c for c in cells if c is not None]
        metric = tables._metric_label(row, present)
        divisor = tables.row_scale(row, present)[1]
        describe = f' title="{escape(row["describe"])}"' if row.get("describe") else ""
        rows.append([f"<td{describe}>{escape(tables.workload_label(row))}<br><small>{escape(metric)}</small></td>",
                     _td(tables.threads_text(threads, s.get("cores")), "num", threads)]
                    + [_cell_td(c, baseline, divisor) for c in cells])
    return _table(("workload and metric", "threads", *allocs), rows)


def group_ratio_chart(folder: Folder, group: str) -> str | None:
    s = folder.summary
    baseline = s.get("baseline") or "system"
    index = _index(folder)
    allocs = [a for a in report_data.allocators(folder) if a != baseline]
    rows = []
    for row in group_rows(folder, group):
        threads = int(row["threads"])
        base = index.get((row["workload"], threads, baseline))
        if not base or not base.get("median"):
            continue
        points = []
        for a in allocs:
            c = index.get((row["workload"], threads, a))
            if c is None:
                continue
            ratio = c.get("ratio_to_system")
            if ratio is None:
                points.append((a, None, None, None, c.get("status")))
                continue
            points.append((a, ratio, c["min"] / base["median"], c["max"] / base["median"], None))
        label = row["workload"] + (f" {threads}t" if threads != 1 else "")
        rows.append((label, points))
    if not rows or not any(p[1] for _, pts in rows for p in pts):
        return None
    # allocators without a figure anywhere (not installed) are said under "allocators"
    drawn = {p[0] for _, pts in rows for p in pts if p[1] is not None}
    gaps = [f"{p[0]} on {label} ({p[4]})" for label, pts in rows for p in pts
            if p[1] is None and p[0] in drawn]
    better = {c.get("better") for c in folder.summary.get("cells") or []
              if (c.get("group") or "") == group and c.get("status") == STATUS_OK}
    reading = ("below ×1 is better" if better == {"lower"} else "above ×1 is better" if better == {"higher"}
               else "each row's metric says which way is better")
    caption = (f"{group}: each allocator's median as a ratio to {baseline}'s (dot), its min–max "
               f"over the repetitions (bar); log scale, {reading}."
               + (f" No figure: {'; '.join(gaps)}." if gaps else ""))
    return _figure(report_svg.ratio_chart(rows, baseline, caption), caption)


def memory_charts(folder: Folder, group: str) -> list[str]:
    out = []
    rows = group_rows(folder, group)
    for row in rows:
        threads = int(row["threads"])
        label = tables.workload_label(row) + (f" at {threads} threads" if threads != 1 else "")
        table = report_data.phase_series(folder, row["workload"], threads)
        if table is not None and table.series:
            caption = (f"Memory by phase: {label}. Working set above the process's size at the start "
                       f"(MB = 10⁶ bytes), median bar with min–max whisker; peak = highest RSS above "
                       f"start; dashed: live bytes requested.")
            out.append(_figure(report_svg.phase_chart(table, caption), caption))
        found = report_data.time_lines(folder, row["workload"], threads)
        if found is not None and found[0]:
            lines, x_label = found
            first = [ln.name for ln in lines if ln.note == report_data.FIRST_REPETITION]
            for ln in lines:
                ln.note = None if ln.note == report_data.FIRST_REPETITION else ln.note
            if len(first) == len(lines):
                how = ("each line is an allocator's first repetition (its repetitions sampled at "
                       "different points, so they have no median)")
            else:
                how = "the line is the median of the repetitions, the band their min–max" + (
                    f"; the first repetition alone for {', '.join(first)} (sampled at different "
                    f"points)" if first else "")
            caption = f"Memory over time: {label}. RSS in MB against {x_label}; {how}."
            out.append(_figure(report_svg.line_chart(lines, x_label, "RSS (MB)", caption), caption))
    for workload in dict.fromkeys(r["workload"] for r in rows):
        lines = report_data.scaling_lines(folder, workload)
        if lines:
            row = next(r for r in rows if r["workload"] == workload)
            cells = [c for c in folder.summary.get("cells") or [] if c["workload"] == workload]
            metric = tables._metric_label(row, cells)
            caption = f"Thread scaling: {workload}, {metric} against threads; median line, min–max band."
            ok = next((c for c in cells if c["status"] == STATUS_OK), row)
            y_label = f"{ok.get('metric')} ({ok.get('unit')})"
            out.append(_figure(report_svg.line_chart(lines, "threads", y_label, caption,
                                                     x_ticks_at_points=True), caption))
    return out


# -------------------------------------------------------------- reproduced

def markdown_html(text: str) -> str:
    """The Markdown reproduce writes (headings, paragraphs, lists, quotes,
    pipe tables, **bold**, `code`) as HTML."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0

    def inline(s: str) -> str:
        s = escape(s.replace("\\|", "|"))
        s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", s)

    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append([c.strip() for c in re.split(r"(?<!\\)\|", lines[i].strip())[1:-1]])
                i += 1
            head, body = block[0], [r for r in block[1:] if not all(set(c) <= set("-: ") for c in r)]
            out.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head)
                       + "</tr></thead><tbody>" + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r)
                                                          + "</tr>" for r in body) + "</tbody></table>")
            continue
        heading = re.match(r"(#{1,4}) (.*)", line)
        if heading:
            level = min(len(heading.group(1)) + 1, 4)
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif re.match(r"(- |\d+\. )", line):
            tag = "ul" if line.startswith("- ") else "ol"
            items = []
            while i < len(lines) and re.match(r"(- |\d+\. )", lines[i]):
                items.append(re.sub(r"^(- |\d+\. )", "", lines[i]))
                i += 1
            out.append(f"<{tag}>" + "".join(f"<li>{inline(t)}</li>" for t in items) + f"</{tag}>")
            continue
        elif line.startswith(">"):
            out.append(f"<blockquote>{inline(line.lstrip('> '))}</blockquote>")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
        i += 1
    return "\n".join(out)


def reproduced(item: report_data.Reproduced) -> str:
    out = [f'<section id="{_anchor("reproduced " + item.table_id)}">', markdown_html(item.markdown)]
    charts = []
    for side, table in item.charts:
        caption = (f"{'Published' if side == 'published' else 'Measured here'}: {item.title} "
                   f"({table.unit}); dashed: live bytes"
                   + ("; figures copied as printed, not measured here." if side == "published"
                      else "; median bar with min–max whisker."))
        charts.append(f"<div>{_figure(report_svg.phase_chart(table, caption), caption)}</div>")
    if charts:
        out.append('<div class="pair">' + "".join(charts) + "</div>")
    out.append("</section>")
    return "\n".join(out)


# ---------------------------------------------------------------- the page

TITLES = {"run": "run", "reproduce": "published tables reproduced", "merge": "merged run",
          "ci": "CI: instruction counts", "compare": "comparison"}


def run_notes_html(folder: Folder) -> str | None:
    """The drift warnings and the recommendation under tables.md's tables
    (run_notes.notes, the same lines), or None when there are none."""
    summary = folder.summary
    if not summary.get("cells") or not summary.get("baseline"):
        return None
    lines = run_notes.notes(summary)
    return markdown_html("\n".join(lines)) if any(line.strip() for line in lines) else None


def groups(folder: Folder) -> list[str]:
    return list(dict.fromkeys(r.get("group") or "" for r in folder.summary.get("rows") or []))


def page(folder: Folder) -> str:
    title = (f"heaplab comparison: {folder.comparisons[0].title}" if folder.kind == "compare"
             else f"heaplab {TITLES.get(folder.kind, folder.kind)}: {folder.path.resolve().name}")
    body = [f"<h1>{escape(title)}</h1>", what_was_run(folder)]
    nav = []
    if folder.verdict:
        body.append(f"<p><b>{escape(folder.verdict)}</b></p>")
    if folder.comparisons:
        nav.append('<a href="#verdicts">verdicts</a>')
        body.append('<h2 id="verdicts">Verdicts</h2>')
        body += [verdicts(c) for c in folder.comparisons]
    if folder.reproduced:
        nav.append('<a href="#reproduced">published beside measured</a>')
        body.append('<h2 id="reproduced">Published beside measured</h2>')
        body += [reproduced(r) for r in folder.reproduced]
    for group in groups(folder):
        name = group or "(no group)"
        nav.append(f'<a href="#group-{_anchor(name)}">{escape(name)}</a>')
        body.append(f'<h2 id="group-{_anchor(name)}">{escape(name)}</h2>')
        reps = folder.summary.get("reps")
        each = "one repetition" if reps == 1 else f"median of {reps or 'the'} repetitions (min–max)"
        spread = ("" if reps == 1 else "; below it the spread of the repetitions: max ÷ min and "
                  "their coefficient of variation (standard deviation ÷ mean), or exact for "
                  "instruction counts")
        body.append(f'<p class="note">Each cell: {each}, then ×ratio of that figure to '
                    f'{escape(str(folder.summary.get("baseline") or "system"))}\'s{spread}. '
                    f'Hover a cell for every repetition; click a heading to sort.</p>')
        chart = group_ratio_chart(folder, group)
        body.append('<div class="pair"><div class="tbl">' + group_table(folder, group) + "</div>"
                    + (f'<div class="fig">{chart}</div>' if chart else "") + "</div>")
        charts = memory_charts(folder, group)
        if charts:
            body.append('<div class="pair">' + "".join(f"<div>{c}</div>" for c in charts) + "</div>")
    # after the tables, as tables.md has them; the nav links to them
    steadiness = run_notes_html(folder)
    if steadiness:
        nav.append('<a href="#steadiness">drift and noise</a>')
        body.append('<h2 id="steadiness">Drift and noise</h2>')
        body.append(steadiness)
    if nav:
        body.insert(2, "<nav>" + " ".join(nav) + "</nav>")
    if folder.kind == "compare":
        body.append('<p class="note">Written by <code>./run.py compare … --html-out</code> from the '
                    'comparison alone; <code>--json-out</code> and <code>--markdown-out</code> write '
                    'the same verdicts as JSON and Markdown.</p>')
    else:
        body.append(f'<p class="note">Written by <code>./run.py report {escape(str(folder.path))}</code> from '
                    f'the folder alone; the PNG and SVG charts and the Markdown and CSV tables are beside it.</p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body)
            + f"\n<script>{SCRIPT}</script>\n</body></html>\n")
