"""Thread scaling: a threaded workload's primary metric against the number of
threads it ran with, one line per allocator, min-max whiskers; and, for a
group with several such workloads (the classic multi-threaded benchmarks),
one chart with a panel per workload."""

from __future__ import annotations

import math
from typing import Iterator

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from . import style
from .rundata import Metric, Run, cells

LINE_WIDTH = 1.8
MARKER_SIZE = 6
# Each allocator's points are nudged sideways by this share of the thread
# range so that whiskers at the same thread count do not hide each other.
DODGE_SHARE = 0.012


def _metric_of(run: Run, workload: str) -> Metric | None:
    return next((d.metric for d in run.docs_of(workload) if d.metric), None)


def draw_workload(run: Run, workload: str) -> Figure | None:
    """The scaling chart of one workload, or None when it ran at fewer than
    two thread counts."""
    counts = [t for t in run.thread_counts(workload) if t is not None]
    if len(counts) < 2:
        return None
    docs = run.docs_of(workload)
    metric = _metric_of(run, workload)
    per_count = {t: cells(run.docs_at(workload, t), lambda d: d.value)
                 for t in counts}
    names = style.allocator_order(d.allocator for d in docs)

    fig, ax = style.new_figure()
    dodge = DODGE_SHARE * (counts[-1] - counts[0])
    reps: list[int] = []
    for index, name in enumerate(names):
        offset = (index - (len(names) - 1) / 2) * dodge
        xs, mids, lows, highs, problems = [], [], [], [], []
        for t in counts:
            cell = per_count[t].get(name)
            stats = cell.stats() if cell else None
            xs.append(t + offset)
            if stats is None:
                mids.append(math.nan)
                lows.append(0.0)
                highs.append(0.0)
                problems.append(f"{cell.gap_label() if cell else 'not run'} "
                                f"at {t} threads")
                continue
            mids.append(stats.median)
            lows.append(stats.median - stats.min)
            highs.append(stats.max - stats.median)
            reps.append(stats.n)
            note = cell.failure_note()
            if note:
                problems.append(f"{note} at {t} threads")
        label = style.legend_label(name, "; ".join(problems) or None)
        ax.errorbar(xs, mids, yerr=[lows, highs], color=style.colour_for(name),
                    linewidth=LINE_WIDTH, marker="o", markersize=MARKER_SIZE,
                    elinewidth=1.0, label=label)

    cores = run.env.get("cores")
    if isinstance(cores, int) and counts[0] <= cores <= counts[-1]:
        ax.axvline(cores, color="#999999", linestyle=":", linewidth=1.2)
        ax.annotate(f"{cores} cores", xy=(cores, 1.0),
                    xycoords=("data", "axes fraction"), xytext=(-4, -4),
                    textcoords="offset points", ha="right", va="top",
                    fontsize=9, color="#555555")

    ax.set_xticks(counts, [str(t) for t in counts])
    pad = max(0.3, 0.06 * (counts[-1] - counts[0]))
    ax.set_xlim(counts[0] - pad, counts[-1] + pad)
    ax.set_xlabel("threads")
    if metric:
        unit = f" ({metric.unit})" if metric.unit else ""
        ax.set_ylabel(f"{metric.name}{unit}, {metric.better} is better")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(style.tick_label))
    ax.grid(axis="x", visible=False)

    describe = run.describe(workload)
    title = f"Thread scaling: {run.label(workload)}" + (f" \u2014 {describe}" if describe else "")
    subtitle = (f"{metric.name if metric else 'primary metric'} at each thread "
                f"count; {style.spread_phrase(reps, 'points', 'whiskers')}; "
                f"one process per run. {run.sizes_note(workload)}{run.absent_note()}"
                f"{run.machine()}")
    style.set_titles(fig, ax, title, subtitle)
    style.legend_outside(ax)
    return fig


# Panels per row of a group's chart, and the size of one panel (inches).
GROUP_COLUMNS = 4
PANEL_SIZE = (3.6, 2.9)


def _scaled_workloads(run: Run, group: str) -> list[str]:
    """The group's workloads that ran at two or more thread counts."""
    return [w for w in run.workloads()
            if any(d.group == group for d in run.docs_of(w))
            and len([t for t in run.thread_counts(w) if t is not None]) >= 2]


def _draw_panel(ax, run: Run, workload: str, names: list[str]) -> None:
    counts = [t for t in run.thread_counts(workload) if t is not None]
    for name in names:
        xs, ys = [], []
        for t in counts:
            cell = cells(run.docs_at(workload, t), lambda d: d.value).get(name)
            stats = cell.stats() if cell else None
            xs.append(t)
            ys.append(stats.median if stats else math.nan)
        ax.plot(xs, ys, color=style.colour_for(name), linewidth=LINE_WIDTH, marker="o",
                markersize=MARKER_SIZE - 2, label=name)
    cores = run.env.get("cores")
    if isinstance(cores, int) and counts[0] <= cores < counts[-1]:
        ax.axvspan(cores, counts[-1], color="#eeeeee", zorder=0)
    metric = _metric_of(run, workload)
    ax.set_title(run.label(workload), loc="left", fontsize=10)
    if metric:
        ax.set_ylabel(f"{metric.unit or metric.name}, {metric.better} is better", fontsize=8.5)
    ax.set_xticks(counts, [str(t) for t in counts])
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(style.tick_label))
    ax.grid(axis="x", visible=False)


def draw_group(run: Run, group: str) -> Figure | None:
    """One chart for a group: a panel per workload run at several thread
    counts, a line per allocator (medians), the oversubscribed range
    (more threads than cores) shaded. None below two such workloads."""
    workloads = _scaled_workloads(run, group)
    if len(workloads) < 2:
        return None
    names = style.allocator_order(d.allocator for w in workloads for d in run.docs_of(w))
    columns = min(GROUP_COLUMNS, len(workloads))
    rows = math.ceil(len(workloads) / columns)
    fig, first = style.new_figure(PANEL_SIZE[0] * columns + 1.8, PANEL_SIZE[1] * rows + 1.2)
    fig.delaxes(first)
    axes = fig.subplots(rows, columns, squeeze=False)
    for k, workload in enumerate(workloads):
        _draw_panel(axes[k // columns][k % columns], run, workload, names)
    for k in range(len(workloads), rows * columns):
        axes[k // columns][k % columns].set_visible(False)
    style.legend_outside(axes[0][columns - 1])
    cores = run.env.get("cores")
    shaded = (f"shaded: more threads than this machine's {cores} cores (oversubscribed). "
              if isinstance(cores, int) else "")
    fig.suptitle(f"Thread scaling: the {group} workloads", x=0.01, ha="left",
                 fontsize=13, fontweight="bold")
    fig.supxlabel(f"Median of each cell's runs, one process per run; x: threads; "
                  f"{shaded}{run.absent_note()}{run.machine()}", x=0.01, ha="left",
                  fontsize=8.5, color="#333333")
    return fig


def figures(run: Run) -> Iterator[tuple[str, Figure]]:
    """(file stem, figure) for every workload run at several thread counts,
    then one per group with several of them."""
    for workload in run.workloads():
        fig = draw_workload(run, workload)
        if fig is not None:
            yield style.file_stem("scaling", workload), fig
    for group in dict.fromkeys(d.group for d in run.docs if d.group):
        fig = draw_group(run, group)
        if fig is not None:
            yield style.file_stem("scaling", "group", group), fig
