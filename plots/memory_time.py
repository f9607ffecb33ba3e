"""Memory over time: the RSS samples a workload took while it ran, one line
per allocator, with the live bytes requested dashed.

The x axis is the operation count when every sample has one (then the
repetitions line up point by point, and the line is their median with a
min-max band); otherwise it is the time since the workload started, and each
repetition is drawn as it was sampled.
"""

from __future__ import annotations

from typing import Iterator

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from heaplab import runfolder, stats

from . import style
from .rundata import Doc, Run

BYTES_PER_MB = style.BYTES_PER_MB
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
SECONDS_THRESHOLD_NS = 10 * NS_PER_S   # above this, the time axis is in s
LINE_WIDTH = 1.8
LIVE_WIDTH = 1.4
BAND_ALPHA = 0.18
REP_ALPHA = 0.55


_number = runfolder.number


# a phase's length under each x axis, to place its end
PHASE_LENGTH = {"ops": "ops", "t_ns": "elapsed_ns"}


def _phase_ends(doc: Doc, x_key: str, y_key: str) -> list[tuple[float, float]]:
    """(x, y) at the end of each phase: the workload measures each phase's
    end itself, and the last one (after a trim, say) may come after the
    last sample."""
    length = PHASE_LENGTH.get(x_key)
    result, at = [], 0.0
    for phase in doc.phases:
        step = _number(phase.get(length)) if length else None
        if step is None:
            return []   # a phase without its length: its end cannot be placed
        at += step
        y = _number(phase.get(y_key))
        if y is not None:
            result.append((at, y))
    return result


def _points(doc: Doc, x_key: str, y_key: str) -> list[tuple[float, float]]:
    """(x, y) of a document's samples that have both figures, and of its
    phases' ends, in x order (a sample before a phase end at the same x)."""
    result = []
    for sample in doc.samples:
        x, y = _number(sample.get(x_key)), _number(sample.get(y_key))
        if x is not None and y is not None:
            result.append((x, y))
    return sorted(result + _phase_ends(doc, x_key, y_key), key=lambda point: point[0])


def _uses_ops(docs: list[Doc]) -> bool:
    return all(_number(s.get("ops")) is not None
               for d in docs for s in d.samples)


def _median_line(series: list[list[tuple[float, float]]]
                 ) -> tuple[list[float], list[float], list[float], list[float]] | None:
    """Median, min and max per x when every repetition sampled the same xs."""
    xs = [x for x, _ in series[0]]
    if any([x for x, _ in s] != xs for s in series[1:]):
        return None
    columns = [stats.spread(s[i][1] for s in series) for i in range(len(xs))]
    return (xs, [c.median for c in columns if c], [c.min for c in columns if c],
            [c.max for c in columns if c])


def _draw_allocator(ax: Axes, name: str, docs: list[Doc], x_key: str,
                    x_scale: float, label: str) -> None:
    colour = style.colour_for(name)
    series = [[(x / x_scale, y / BYTES_PER_MB) for x, y in
               _points(d, x_key, "rss_bytes")] for d in docs]
    series = [s for s in series if s]
    if not series:
        ax.plot([], [], color=colour, linewidth=LINE_WIDTH, label=label)
        return
    line = _median_line(series)
    if line is not None:
        xs, mid, lo, hi = line
        ax.plot(xs, mid, color=colour, linewidth=LINE_WIDTH, label=label)
        if len(series) > 1:
            ax.fill_between(xs, lo, hi, color=colour, alpha=BAND_ALPHA,
                            linewidth=0)
        return
    for index, points in enumerate(series):
        ax.plot([x for x, _ in points], [y for _, y in points], color=colour,
                linewidth=LINE_WIDTH * 0.7, alpha=REP_ALPHA,
                label=label if index == 0 else None)


def _draw_live(ax: Axes, docs: list[Doc], x_key: str, x_scale: float,
               per_allocator: bool) -> None:
    """Live bytes: one black dashed line when the x axis is ops (every
    allocator was asked for the same bytes at the same op), else a dashed
    line per allocator in its colour, from its first repetition."""
    if not per_allocator:
        by_x: dict[float, list[float]] = {}
        for doc in docs:
            for x, y in _points(doc, x_key, "live_bytes"):
                by_x.setdefault(x, []).append(y)
        xs = sorted(by_x)
        medians = [stats.spread(by_x[x]) for x in xs]
        ax.plot([x / x_scale for x in xs],
                [m.median / BYTES_PER_MB for m in medians if m],
                color=style.REFERENCE_COLOUR, linestyle="dashed",
                linewidth=LIVE_WIDTH, label="live bytes requested")
        return
    first: dict[str, Doc] = {}
    for doc in docs:
        first.setdefault(doc.allocator, doc)
    for name, doc in first.items():
        points = _points(doc, x_key, "live_bytes")
        ax.plot([x / x_scale for x, _ in points],
                [y / BYTES_PER_MB for _, y in points],
                color=style.colour_for(name), linestyle="dashed",
                linewidth=LIVE_WIDTH * 0.8)
    ax.add_line(Line2D([], [], color="#777777", linestyle="dashed",
                       linewidth=LIVE_WIDTH, label="live bytes requested "
                       "(dashed, allocator's colour)"))


def draw_workload(run: Run, workload: str, threads: int | None,
                  title_suffix: str) -> Figure | None:
    docs = run.docs_at(workload, threads)
    sampled = [d for d in docs if d.ok and d.samples]
    if not sampled:
        return None
    by_ops = _uses_ops(sampled)
    if by_ops:
        x_key, x_scale, x_label = "ops", 1.0, "operations done"
    else:
        longest = max(_number(s.get("t_ns")) or 0.0
                      for d in sampled for s in d.samples)
        x_key = "t_ns"
        if longest > SECONDS_THRESHOLD_NS:
            x_scale, x_label = float(NS_PER_S), "time since the workload started (s)"
        else:
            x_scale, x_label = float(NS_PER_MS), "time since the workload started (ms)"

    fig, ax = style.new_figure()
    reps: list[int] = []
    for name in style.allocator_order(d.allocator for d in docs):
        mine = [d for d in docs if d.allocator == name]
        ok = [d for d in mine if d.ok and d.samples]
        failed = [d.status for d in mine if not d.ok]
        note = None
        if not ok:
            note = failed[0] if failed else "no samples"
        elif failed:
            note = f"{len(failed)} of {len(mine)} {failed[0]}"
        label = style.legend_label(name, note)
        _draw_allocator(ax, name, ok, x_key, x_scale, label)
        if ok:
            reps.append(len(ok))
    _draw_live(ax, sampled, x_key, x_scale, per_allocator=not by_ops)

    ax.set_xlabel(x_label)
    ax.set_ylabel("resident set size (MB)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_formatter(FuncFormatter(style.tick_label))
    ax.yaxis.set_major_formatter(FuncFormatter(style.tick_label))
    describe = run.describe(workload)
    title = f"Memory over time: {run.label(workload)}{title_suffix}" + (
        f" \u2014 {describe}" if describe else "")
    how = (style.spread_phrase(reps, "line", "band") if by_ops else f"{style.count_phrase(reps)} per allocator, each "
           f"drawn as sampled")
    ends = ", and at each phase's end" if any(_phase_ends(d, x_key, "rss_bytes") for d in sampled) else ""
    subtitle = (f"RSS sampled while the workload ran{ends} (MB = 10\u2076 "
                f"bytes), one process per run; {how}. {run.sizes_note(workload)}"
                f"{run.absent_note()}{run.machine()}")
    style.set_titles(fig, ax, title, subtitle)
    style.legend_outside(ax)
    return fig


def figures(run: Run) -> Iterator[tuple[str, Figure]]:
    """(file stem, figure) for every workload whose documents have samples."""
    for workload in run.workloads():
        counts = run.thread_counts(workload)
        for threads in counts:
            several = len(counts) > 1 and threads is not None
            fig = draw_workload(run, workload, threads,
                                f" at {threads} threads" if several else "")
            if fig is not None:
                suffix = [f"{threads}threads"] if several else []
                yield style.file_stem("memory-time", workload, *suffix), fig
