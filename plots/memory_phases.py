"""Memory by phase: the working set above the process's starting size at the
end of each phase of a workload, one bar per allocator, with the live bytes
the workload had requested as a dashed reference.

`draw()` takes plain series so that the published tables (the tmalloc README's
"Memory, one process per allocator") can be drawn the same way as a run.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from . import rundata, style
from .rundata import Doc, Run, cells

# Name of the extra category after the phases: the highest RSS (VmHWM) above
# the starting size, as the seed's table has it.
PEAK = "peak"
BYTES_PER_MB = style.BYTES_PER_MB
DEFAULT_YLABEL = "working set above start (MB)"

GROUP_WIDTH = 0.8          # share of one phase's slot taken by its bars
LIVE_LINE_WIDTH = 1.8
PHASE_LABEL_WRAP = 16      # characters per line of a phase name on the x axis
MIN_WIDTH_IN, MAX_WIDTH_IN = 8.0, 16.0
INCHES_PER_BAR, INCHES_PER_GROUP_GAP, INCHES_FOR_LEGEND = 0.32, 0.5, 2.6


@dataclass
class PhaseSeries:
    """A memory-by-phase table: MB per phase for each allocator."""
    phases: list[str]
    series: dict[str, list[float | None]]
    live: list[float | None]
    spread: dict[str, list[tuple[float, float] | None]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    runs: list[int] = field(default_factory=list)


def draw(phases: Sequence[str],
         series: Mapping[str, Sequence[float | None]],
         live: Sequence[float | None],
         title: str,
         *,
         subtitle: str = "",
         spread: Mapping[str, Sequence[tuple[float, float] | None]] | None = None,
         notes: Mapping[str, str] | None = None,
         ylabel: str = DEFAULT_YLABEL) -> Figure:
    """Draws one memory-by-phase chart and returns the figure.

    phases: the x categories in order. series: allocator -> one figure (MB)
    per phase, None where there is none (drawn as a labelled gap, never a
    zero). live: the live MB per phase (None to leave a phase without the
    reference). spread: allocator -> (min, max) per phase for whiskers.
    notes: allocator -> a short note for its legend entry and its gaps
    ("crashed", "1 of 3 timeout").

    Save the figure with plots.style.save_figure(fig, folder, stem).
    """
    with style.chart_style():
        return _draw(phases, series, live, title, subtitle, spread or {},
                     notes or {}, ylabel)


def _draw(phases: Sequence[str],
          series: Mapping[str, Sequence[float | None]],
          live: Sequence[float | None], title: str, subtitle: str,
          spread: Mapping[str, Sequence[tuple[float, float] | None]],
          notes: Mapping[str, str], ylabel: str) -> Figure:
    for name, values in series.items():
        if len(values) != len(phases):
            raise ValueError(f"series {name!r} has {len(values)} values "
                             f"for {len(phases)} phases")
    if len(live) != len(phases):
        raise ValueError(f"live has {len(live)} values for {len(phases)} phases")
    names = list(series)
    count = max(len(names), 1)
    bar_width = GROUP_WIDTH / count

    width = INCHES_FOR_LEGEND + len(phases) * (count * INCHES_PER_BAR
                                               + INCHES_PER_GROUP_GAP)
    fig, ax = style.new_figure(min(max(width, MIN_WIDTH_IN), MAX_WIDTH_IN))

    handles = []
    for index, name in enumerate(names):
        offset = (index - (count - 1) / 2) * bar_width
        colour = style.colour_for(name)
        xs, heights, lows, highs = [], [], [], []
        for phase_index, value in enumerate(series[name]):
            x = phase_index + offset
            if value is None:
                style.label_gap(ax, x, notes.get(name) or "no data")
                continue
            xs.append(x)
            heights.append(value)
            bounds = _bounds(spread.get(name), phase_index)
            lows.append(value - bounds[0] if bounds else 0.0)
            highs.append(bounds[1] - value if bounds else 0.0)
        ax.bar(xs, heights, width=bar_width * 0.92, color=colour)
        # a handle of its own: an allocator with no bars still gets its colour
        handles.append(Patch(facecolor=colour,
                             label=style.legend_label(name, notes.get(name))))
        if any(lows) or any(highs):
            ax.errorbar(xs, heights, yerr=[lows, highs], fmt="none",
                        ecolor="#222222", elinewidth=1.0)

    half = GROUP_WIDTH / 2
    for phase_index, value in enumerate(live):
        if value is not None:
            # a white line under the dashes keeps them visible on dark bars
            ax.hlines(value, phase_index - half, phase_index + half,
                      colors="white", linewidth=LIVE_LINE_WIDTH * 2, zorder=3)
            ax.hlines(value, phase_index - half, phase_index + half,
                      colors=style.REFERENCE_COLOUR, linestyles="dashed",
                      linewidth=LIVE_LINE_WIDTH, zorder=3)
    if any(v is not None for v in live):
        handles.append(Line2D([], [], color=style.REFERENCE_COLOUR,
                              linestyle="dashed", linewidth=LIVE_LINE_WIDTH,
                              label="live bytes requested"))

    if phases and phases[-1].lower().startswith(PEAK) and len(phases) > 1:
        # the peak is not a phase in time; keep it visibly apart
        ax.axvline(len(phases) - 1.5, color="#999999", linestyle=":",
                   linewidth=1.0)

    ax.set_xticks(range(len(phases)),
                  [textwrap.fill(p, PHASE_LABEL_WRAP) for p in phases])
    ax.set_xlim(-0.6, len(phases) - 0.4)
    ax.set_xlabel("phase (in the order the workload runs them)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(style.tick_label))
    ax.grid(axis="x", visible=False)
    style.set_titles(fig, ax, title, subtitle)
    style.legend_outside(ax, handles=handles)
    return fig


def _bounds(spread_of: Sequence[tuple[float, float] | None] | None,
            index: int) -> tuple[float, float] | None:
    if spread_of is None or index >= len(spread_of):
        return None
    return spread_of[index]


def _phase_names(docs: list[Doc]) -> list[str]:
    """Phase names in the order the documents report them."""
    names: dict[str, None] = {}
    for doc in docs:
        if doc.ok:
            for phase in doc.phases:
                if isinstance(phase.get("name"), str):
                    names.setdefault(phase["name"], None)
    return list(names)


def _phase_value(doc: Doc, phase: str, key: str) -> float | None:
    for entry in doc.phases:
        if entry.get("name") == phase:
            value = entry.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value / BYTES_PER_MB
    return None


def _peak_value(doc: Doc) -> float | None:
    peak = doc.process.get("peak_rss_bytes")
    start = doc.process.get("rss_start_bytes")
    if isinstance(peak, (int, float)) and isinstance(start, (int, float)):
        return (peak - start) / BYTES_PER_MB
    return None


def collect(run: Run, workload: str, threads: int | None) -> PhaseSeries | None:
    """The memory-by-phase table of one workload at one thread count from a
    run, or None when its documents have no phases."""
    docs = run.docs_at(workload, threads)
    phases = _phase_names(docs)
    if not phases:
        return None
    getters = [lambda d, p=p: _phase_value(d, p, "ws_above_start_bytes")
               for p in phases]
    live_getters = [lambda d, p=p: _phase_value(d, p, "live_bytes")
                    for p in phases]
    if any(_peak_value(d) is not None for d in docs if d.ok):
        phases = phases + [PEAK]
        getters.append(_peak_value)

    table = PhaseSeries(phases=phases, series={}, live=[])
    for getter in live_getters:
        stats = rundata.spread(v for d in docs if d.ok
                       for v in [getter(d)] if v is not None)
        table.live.append(stats.median if stats else None)
    if len(table.live) < len(phases):
        known = [v for v in table.live if v is not None]
        table.live.append(max(known) if known else None)

    names = style.allocator_order(d.allocator for d in docs)
    per_phase = [cells(docs, getter) for getter in getters]
    for name in names:
        stats = [phase_cells[name].stats() for phase_cells in per_phase]
        table.series[name] = [s.median if s else None for s in stats]
        table.spread[name] = [(s.min, s.max) if s else None for s in stats]
        first = per_phase[0][name]
        note = first.failure_note() if first.values else first.gap_label()
        if note:
            table.notes[name] = note
        table.runs.extend(s.n for s in stats if s)
    return table


def figures(run: Run) -> Iterator[tuple[str, Figure]]:
    """(file stem, figure) for every phased workload in the run."""
    for workload in run.workloads():
        counts = run.thread_counts(workload)
        for threads in counts:
            table = collect(run, workload, threads)
            if table is None:
                continue
            suffix = [f"{threads}threads"] if len(counts) > 1 and threads else []
            at = f" at {threads} threads" if suffix else ""
            describe = run.describe(workload)
            title = f"Memory by phase: {run.label(workload)}{at}" + (
                f" \u2014 {describe}" if describe else "")
            peak_note = ("; peak = highest RSS above start"
                         if table.phases[-1] == PEAK else "")
            unwritten = (" Its blocks are never written (touch=none): RSS holds only the pages "
                         "the allocator itself touched, so the live bytes may lie far above the "
                         "bars." if run.touch_of(workload) == "none" else "")
            subtitle = (f"Working set above the process's size at the start "
                        f"(MB = 10\u2076 bytes), one process per allocator; "
                        f"{style.spread_phrase(table.runs, 'bars', 'whiskers')}"
                        f"; dashed: live bytes requested"
                        f"{peak_note}.{unwritten} {run.sizes_note(workload)}"
                        f"{run.absent_note()}{run.machine()}")
            yield (style.file_stem("memory-phases", workload, *suffix),
                   draw(table.phases, table.series, table.live, title,
                        subtitle=subtitle, spread=table.spread,
                        notes=table.notes))
