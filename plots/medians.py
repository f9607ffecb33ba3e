"""Medians per workload relative to the system allocator: for each cell the
ratio of its median to system's median, drawn as a bar from 1 on a log axis
(twice as slow and twice as fast are the same distance from 1), with min and
max of the repetitions as whiskers. Cells without a figure (crashed,
timeout, not installed, not run) are labelled gaps, never zeros.

One chart per workload group; a group whose workloads report different
metrics (ns per pair beside Mpairs/s) gets one chart per metric.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Iterator

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from heaplab import fmt

from . import style
from .rundata import Cell, Metric, Run, Spread, cells

BASELINE = "system"
GROUP_WIDTH = 0.8
MEDIAN_TICK_WIDTH = 2.5
MIN_WIDTH_IN, MAX_WIDTH_IN = 8.0, 18.0
INCHES_PER_BAR, INCHES_PER_GROUP_GAP, INCHES_FOR_LEGEND = 0.3, 0.6, 2.8
LABEL_WRAP = 24
# Ratio axis: at least this much either side of 1, and this much headroom
# beyond the whiskers (room for the ratio labels).
MIN_RATIO_SPAN = 1.25
HEADROOM = 1.5
# Tick values per decade on the ratio axis: the coarse set for wide ranges,
# the fine one when the coarse set would leave fewer than MIN_TICKS ticks.
COARSE_STEPS = (1, 2, 5)
FINE_STEPS = (1, 1.5, 2, 3, 4, 5, 7)
FINEST_STEPS = (1, 1.1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 9)
MIN_TICKS = 4
DECADES = range(-4, 5)


@dataclass
class Category:
    """One x slot: a workload at one thread count."""
    workload: str
    threads: int | None
    label: str
    cells: dict[str, Cell]


@dataclass
class MedianChart:
    """What one medians chart shows."""
    stem: str
    group: str
    metric: Metric | None
    allocators: list[str]
    baseline: str
    categories: list[Category] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)

    def stats(self, category: Category, allocator: str) -> Spread | None:
        cell = category.cells.get(allocator)
        return cell.stats() if cell else None

    def gap_label(self, category: Category, allocator: str) -> str:
        cell = category.cells.get(allocator)
        if cell is not None and cell.reps:
            return cell.gap_label()
        return self.unavailable.get(allocator, "not run")


def _metric_key(metric: Metric | None) -> tuple[str, str, str] | None:
    return (metric.name, metric.unit, metric.better) if metric else None


def _subgroups(run: Run, workloads: list[str]
               ) -> dict[tuple[str, str, str] | None, list[str]]:
    """Workloads of one group split by metric (name, unit, direction). A
    workload with no known metric (every cell crashed) joins the group's only
    metric when there is one."""
    metric_of = {w: next((d.metric for d in run.docs_of(w) if d.metric), None)
                 for w in workloads}
    known = {_metric_key(m) for m in metric_of.values() if m}
    result: dict[tuple[str, str, str] | None, list[str]] = {}
    for workload in workloads:
        key = _metric_key(metric_of[workload])
        if key is None and len(known) == 1:
            key = next(iter(known))
        result.setdefault(key, []).append(workload)
    return result


def _choose_baseline(chart: MedianChart) -> str:
    """system when it has a figure anywhere; otherwise the allocator with
    figures in the most categories (the chart then says so)."""
    def covered(name: str) -> int:
        return sum(chart.stats(c, name) is not None for c in chart.categories)
    if BASELINE in chart.allocators and covered(BASELINE):
        return BASELINE
    return max(chart.allocators, key=covered, default=BASELINE)


def collect(run: Run) -> list[MedianChart]:
    """The medians charts a run allows, in the order groups first appear."""
    groups: dict[str, list[str]] = {}
    for workload in run.workloads():
        group = run.docs_of(workload)[0].group
        groups.setdefault(group, []).append(workload)

    charts = []
    for group, workloads in groups.items():
        subgroups = _subgroups(run, workloads)
        for key, members in subgroups.items():
            metric = Metric(*key) if key else None
            parts = [group] if len(subgroups) == 1 else [
                group, key[0] if key else "unknown-metric"]
            docs = [d for w in members for d in run.docs_of(w)]
            names = style.allocator_order(
                [d.allocator for d in docs] + run.planned
                + list(run.unavailable))
            chart = MedianChart(stem=style.file_stem("medians", *parts),
                                group=group, metric=metric, allocators=names,
                                baseline=BASELINE, unavailable=run.unavailable)
            for workload in members:
                counts = run.thread_counts(workload)
                for threads in counts:
                    label = textwrap.fill(run.label(workload), LABEL_WRAP)
                    if len(counts) > 1 and threads is not None:
                        label += f"\n{threads} thread" + ("" if threads == 1
                                                           else "s")
                    chart.categories.append(Category(
                        workload, threads, label,
                        cells(run.docs_at(workload, threads),
                              lambda d: d.value)))
            if any(chart.stats(c, n) for c in chart.categories for n in names):
                chart.baseline = _choose_baseline(chart)
                charts.append(chart)
    return charts


def _ratio_formatter(value: float, _pos: int) -> str:
    return f"{value:g}\u00d7"


def _set_ratio_axis(ax: Axes, ratios: list[float]) -> None:
    low = min(ratios + [1.0 / MIN_RATIO_SPAN]) / HEADROOM
    high = max(ratios + [MIN_RATIO_SPAN]) * HEADROOM
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    ticks: list[float] = []
    for steps in (COARSE_STEPS, FINE_STEPS, FINEST_STEPS):
        ticks = [round(step * 10.0 ** decade, 6) for decade in DECADES
                 for step in steps if low <= step * 10.0 ** decade <= high]
        if len(ticks) >= MIN_TICKS:
            break
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(_ratio_formatter))
    ax.yaxis.set_minor_locator(NullLocator())


def _category_label(chart: MedianChart, category: Category) -> str:
    text = category.label
    base = chart.stats(category, chart.baseline)
    unit = f" {chart.metric.unit}" if chart.metric and chart.metric.unit else ""
    if base is None:
        return f"{text}\n({chart.baseline}: {chart.gap_label(category, chart.baseline)})"
    return f"{text}\n({chart.baseline}: {fmt.grouped(base.median)}{unit})"


def _draw_bar(ax: Axes, x: float, bar_width: float, name: str,
              stats: Spread, base: float, note: str | None,
              is_baseline: bool) -> tuple[float, float]:
    """One allocator's bar: from 1 to the ratio of medians, a tick at the
    ratio, min-max whiskers and a label with the ratio (and any failed
    repetitions). Returns the whiskers' ends."""
    ratio, lo, hi = stats.median / base, stats.min / base, stats.max / base
    colour = style.colour_for(name)
    ax.bar(x, ratio - 1.0, bottom=1.0, width=bar_width * 0.92, color=colour,
           alpha=0.85)
    ax.hlines(ratio, x - bar_width * 0.46, x + bar_width * 0.46, colors=colour,
              linewidth=MEDIAN_TICK_WIDTH, zorder=3)
    ax.errorbar([x], [ratio], yerr=[[ratio - lo], [hi - ratio]], fmt="none",
                ecolor="#222222", elinewidth=1.0, zorder=4)
    # the baseline is 1x by definition; label it only with failures
    parts = [] if is_baseline else [f"{ratio:.2f}\u00d7"]
    text = "  ".join(parts + ([note] if note else []))
    if text:
        # beyond the whisker at the bar's far end from 1, so the label never
        # crosses the 1x line or another bar
        below = ratio < 1.0
        ax.annotate(text, xy=(x, lo if below else hi),
                    xytext=(0, -3 if below else 3), textcoords="offset points",
                    rotation=90, ha="center", va="top" if below else "bottom",
                    fontsize=7.5, color=style.GAP_TEXT_COLOUR)
    return lo, hi


def draw(chart: MedianChart, machine: str) -> Figure:
    """Draws one medians chart."""
    names = chart.allocators
    count = max(len(names), 1)
    bar_width = GROUP_WIDTH / count
    width = INCHES_FOR_LEGEND + len(chart.categories) * (
        count * INCHES_PER_BAR + INCHES_PER_GROUP_GAP)
    fig, ax = style.new_figure(min(max(width, MIN_WIDTH_IN), MAX_WIDTH_IN))

    ratios: list[float] = []
    reps: list[int] = []
    for slot, category in enumerate(chart.categories):
        base = chart.stats(category, chart.baseline)
        if base is None or base.median == 0:
            reason = ("median is 0" if base is not None
                      else chart.gap_label(category, chart.baseline))
            ax.text(slot, 1.0, f"no figure for\n{chart.baseline}: {reason}",
                    ha="center", va="center", fontsize=8.5, fontstyle="italic",
                    color=style.GAP_TEXT_COLOUR, zorder=5,
                    bbox={"facecolor": "white", "edgecolor": "none"})
            continue
        for index, name in enumerate(names):
            x = slot + (index - (count - 1) / 2) * bar_width
            stats = chart.stats(category, name)
            if stats is None:
                style.label_gap(ax, x, chart.gap_label(category, name))
                continue
            lo, hi = _draw_bar(ax, x, bar_width, name, stats, base.median,
                               category.cells[name].failure_note(),
                               name == chart.baseline)
            ratios += [lo, hi]
            reps.append(stats.n)

    ax.axhline(1.0, color=style.REFERENCE_COLOUR, linewidth=1.0, zorder=2)
    _set_ratio_axis(ax, ratios)
    ax.set_xticks(range(len(chart.categories)),
                  [_category_label(chart, c) for c in chart.categories])
    ax.set_xlim(-0.6, len(chart.categories) - 0.4)
    ax.grid(axis="x", visible=False)

    metric = chart.metric
    what = metric.name if metric else "primary metric"
    better = f"; {metric.better} is better" if metric else ""
    ax.set_ylabel(f"{what} relative to {chart.baseline}\n"
                  f"(median \u00f7 {chart.baseline}'s median{better})")
    handles = [Line2D([], [], color=style.colour_for(n), linewidth=8,
                      label=n) for n in names]
    handles.append(Line2D([], [], color=style.REFERENCE_COLOUR, linewidth=1.0,
                          label=f"{chart.baseline} = 1\u00d7"))
    style.legend_outside(ax, handles=handles)

    title = (f"{chart.group} workloads: median {what} relative to "
             f"{chart.baseline}")
    whiskers = ("no whiskers with one run" if style.single_runs(reps) else
                "whiskers: min and max \u00f7 the same")
    subtitle = (f"Bars: {style.runs_phrase(reps)} per allocator \u00f7 "
                f"{chart.baseline}'s, from 1 (log scale); {whiskers}; "
                f"labelled gaps have no figure. {machine}")
    style.set_titles(fig, ax, title, subtitle)
    return fig


def figures(run: Run) -> Iterator[tuple[str, Figure]]:
    """(file stem, figure) for every medians chart the run allows."""
    for chart in collect(run):
        yield chart.stem, draw(chart, run.sizes_note() + run.machine())
