"""The look shared by every heaplab chart: allocator colours, figure set-up,
titles, legends, labelled gaps and atomic saving as PNG + SVG.

Figures are built with matplotlib's object API (``Figure`` + the Agg canvas),
never through pyplot, so drawing charts changes no global state and needs no
display.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Iterable

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

from heaplab import atomicio, colours, fmt

# The allocators' colours (heaplab.colours: the report's SVG charts use the same).
PALETTE = colours.PALETTE
EXTRA_COLOURS = colours.EXTRA_COLOURS

# Reference lines (live bytes, the ratio 1) are drawn in this colour.
REFERENCE_COLOUR = "#000000"
# Text that marks a missing figure (crashed, timeout, not installed).
GAP_TEXT_COLOUR = "#404040"

# One decimal megabyte; the seeds' memory tables are in these units.
BYTES_PER_MB = 1_000_000

# Sizes in inches at DPI dots per inch: a 10-inch chart is 1,000 pixels wide,
# which reads at 100% zoom on an ordinary screen.
DPI = 100
DEFAULT_SIZE = (10.0, 5.6)

# Settings applied while a chart is built and saved (see chart_style()).
RC: dict[str, object] = {
    "font.size": 10.5,
    "axes.titlesize": 10,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9.5,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "path",
    "svg.hashsalt": "heaplab",  # stable element ids: reruns give identical SVGs
    "errorbar.capsize": 3,
}

# Characters per line of the title and subtitle, per inch of figure width
# (at their font sizes, in DejaVu Sans, a little under the real capacity).
TITLE_CHARS_PER_INCH = 8.6
SUBTITLE_CHARS_PER_INCH = 12.5
# Space kept around everything drawn (titles, outside legends) when saving.
SAVE_PAD_IN = 0.15


def chart_style() -> "matplotlib.rc_context":
    """Context in which charts are built and saved."""
    return matplotlib.rc_context(RC)


colour_for = colours.colour_for


def allocator_order(names: Iterable[str]) -> list[str]:
    """Known allocators in palette order, then any others alphabetically,
    so series appear in the same order in every chart."""
    unique = set(names)
    known = [n for n in PALETTE if n in unique]
    return known + sorted(unique - set(PALETTE))


def new_figure(width: float = DEFAULT_SIZE[0],
               height: float = DEFAULT_SIZE[1]) -> tuple[Figure, Axes]:
    """A figure with one axes, on the Agg canvas, laid out automatically."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def set_titles(fig: Figure, ax: Axes, title: str, subtitle: str = "") -> None:
    """Title (what was measured) above, a smaller subtitle (how, and on what
    machine) just above the axes; both left-aligned and wrapped."""
    width_in = fig.get_figwidth()
    fig.suptitle(textwrap.fill(title, int(width_in * TITLE_CHARS_PER_INCH)),
                 x=0.01, ha="left", fontsize=13, fontweight="bold")
    if subtitle:
        ax.set_title(textwrap.fill(subtitle,
                                   int(width_in * SUBTITLE_CHARS_PER_INCH)),
                     loc="left", color="#333333", fontsize=9.5)


def legend_outside(ax: Axes, **kwargs: object) -> None:
    """Legend to the right of the axes, where it cannot cover data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              frameon=False, **kwargs)


LEGEND_NOTE_SEPARATOR = " \u2014 "


def legend_label(name: str, note: str | None) -> str:
    """'jemalloc — 1 of 3 timeout': an allocator's legend entry with a
    note on its missing figures, if any."""
    return f"{name}{LEGEND_NOTE_SEPARATOR}{note}" if note else name


def label_gap(ax: Axes, x: float, text: str) -> None:
    """Marks a missing figure at data x with vertical text resting on the
    bottom of the axes, so a crash never looks like a zero."""
    trans = blended_transform_factory(ax.transData, ax.transAxes)
    # a white box so reference lines drawn across the gap do not cross it
    ax.text(x, 0.02, text, transform=trans, rotation=90, ha="center",
            va="bottom", fontsize=8.5, color=GAP_TEXT_COLOUR,
            fontstyle="italic", clip_on=False, zorder=5,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})


def file_stem(*parts: str) -> str:
    """A file name stem from parts, keeping letters, digits, '.', '_' and
    '-' and replacing anything else (slashes, spaces) with '_'."""
    joined = "-".join(parts)
    return re.sub(r"[^A-Za-z0-9._-]", "_", joined)


# An axis tick: 25, 2.5, 1,400 (the driver's formatter, as the report's SVG uses it).
tick_label = fmt.tick


def count_phrase(counts: Iterable[int]) -> str:
    """'3 runs' or '2-3 runs' per allocator, for charts that draw each run."""
    values = sorted(set(counts))
    if not values:
        return "no runs"
    span = str(values[0]) if len(values) == 1 else f"{values[0]}\u2013{values[-1]}"
    return f"{span} run" + ("" if values == [1] else "s")


def single_runs(counts: Iterable[int]) -> bool:
    """True when every figure of a chart comes from one run: no spread."""
    return set(counts) <= {1}


def spread_phrase(counts: Iterable[int], what: str, mark: str) -> str:
    """'bars: median of 3 runs, whiskers: min-max', or 'bars: one run each,
    so no whiskers' when there is no spread to draw."""
    values = list(counts)
    if single_runs(values):
        return f"{what}: one run each, so no {mark}"
    return f"{what}: {runs_phrase(values)}, {mark}: min\u2013max"


def runs_phrase(counts: Iterable[int]) -> str:
    """'median of 3 runs' or 'median of 2-3 runs' for the counts of runs
    behind the medians of one chart."""
    values = sorted(set(counts))
    if not values:
        return "no runs"
    if len(values) == 1:
        n = values[0]
        return "1 run" if n == 1 else f"median of {n} runs"
    return f"median of {values[0]}\u2013{values[-1]} runs"


FORMATS = ("png", "svg")


def save_figure(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    """Writes fig as out_dir/stem.png and .svg. Each file is written to a
    temporary name and renamed, so a reader never sees half a chart."""
    written: list[Path] = []
    with chart_style():
        for fmt in FORMATS:
            written.append(_save_one(fig, out_dir, stem, fmt))
    return written


def _save_one(fig: Figure, out_dir: Path, stem: str, fmt: str) -> Path:
    """Writes one format through heaplab's atomic writer."""
    target = out_dir / f"{stem}.{fmt}"
    # no date in the metadata: redrawing a run gives the same files
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    # "tight" grows the canvas to hold the legend outside the axes
    atomicio.write_with(target, lambda handle: fig.savefig(
        handle, format=fmt, dpi=DPI, metadata=metadata, bbox_inches="tight",
        pad_inches=SAVE_PAD_IN))
    return target


def unique_stem(stem: str, used: set[str]) -> str:
    """stem, or stem-2, stem-3 ... when an earlier chart took it; records
    the result in used."""
    candidate, n = stem, 1
    while candidate in used:
        n += 1
        candidate = f"{stem}-{n}"
    used.add(candidate)
    return candidate
