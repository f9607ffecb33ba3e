"""The report's charts as inline SVG, drawn from plain series (no matplotlib).

Three shapes, each returning one `<svg class="chart">` string:
- ratio_chart: a dot per allocator and workload at its ratio to the
  baseline, a min–max bar through it, on a log axis with the line ×1;
- phase_chart: memory by phase, a bar per allocator with min–max whiskers
  and the live bytes requested as a dashed line;
- line_chart: a line per allocator (memory over time, thread scaling),
  with a min–max band.

Every drawn figure is an element of class "mark" with a <title>, which a
browser shows on hover: the page needs no script for it. A figure that is
missing is written out as text ("crashed"), never drawn as a zero.
"""
from __future__ import annotations

import math
from html import escape
from typing import Sequence

from . import colours, fmt
from .report_data import Line, PhaseSeries

REFERENCE = "#000000"
GRID = "#DDDDDD"
MUTED = "#555555"

WIDTH = 760
RATIO_WIDTH = 500                  # the ratio chart sits beside its table
FONT = 12
LEGEND_ROW = 18
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 16, 12, 44
ROW_HEIGHT = 22                    # ratio chart: one workload
PLOT_HEIGHT = 260                  # bar and line charts
TICKS = 5
CHAR_WIDTH = 6.5                   # pixels of one character of an 11px label
LABEL_GAP = 8                      # pixels between two axis labels


colour = colours.colour_for


def _text(x: float, y: float, text: str, anchor: str = "start", size: int = FONT,
          fill: str = "#222222", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}"{extra}>{escape(text)}</text>')


def _svg(height: float, body: list[str], label: str, width: float = WIDTH) -> str:
    return (f'<svg class="chart" role="img" aria-label="{escape(label)}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
            f'xmlns="http://www.w3.org/2000/svg" font-family="sans-serif">'
            + "".join(body) + "</svg>")


def _legend(names: Sequence[str], notes: dict[str, str], y: float,
            extra: Sequence[tuple[str, str]] = (), width: float = WIDTH) -> tuple[list[str], float]:
    """Legend entries in rows from the left; returns (elements, height)."""
    out, x, row = [], float(MARGIN_LEFT), 0
    entries = [(n, f"{n} ({notes[n]})" if n in notes else n, "box") for n in names]
    entries += [(style, label, "dash") for style, label in extra]
    for key, label, shape in entries:
        entry_width = 22 + 7 * len(label)
        if x + entry_width > width - MARGIN_RIGHT and x > MARGIN_LEFT:
            x, row = float(MARGIN_LEFT), row + 1
        top = y + row * LEGEND_ROW
        if shape == "box":
            out.append(f'<rect x="{x:.1f}" y="{top + 2:.1f}" width="12" height="12" fill="{colour(key)}"/>')
        else:
            out.append(f'<line x1="{x:.1f}" y1="{top + 8:.1f}" x2="{x + 14:.1f}" y2="{top + 8:.1f}" '
                       f'stroke="{REFERENCE}" stroke-width="2" stroke-dasharray="{key}"/>')
        out.append(_text(x + 17, top + 12, label))
        x += entry_width
    return out, (row + 1) * LEGEND_ROW + 4


def nice_ticks(lo: float, hi: float, count: int = TICKS) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart)."""
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(lo / step) * step
    ticks = [round(first, 12)]
    while ticks[-1] < hi:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


tick_text = fmt.tick


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ratios for a log axis: powers of two around 1, with 1.5, 0.75 and the
    like when the range is narrow."""
    candidates = sorted({2.0 ** k for k in range(-12, 13)}
                        | {1.25, 1.5, 0.8, 0.67, 0.9, 1.1, 3.0, 0.33})
    inside = [t for t in candidates if lo <= t <= hi]
    if len(inside) > 9:
        inside = [t for t in inside if math.log2(t) == int(math.log2(t))]
    return inside or [1.0]


def _mark(shape: str, title: str) -> str:
    return f'<g class="mark"><title>{escape(title)}</title>{shape}</g>'


# --------------------------------------------------------------- ratio chart

RatioPoint = tuple[str, float | None, float | None, float | None, str | None]


def ratio_chart(rows: Sequence[tuple[str, Sequence[RatioPoint]]], baseline: str,
                caption: str) -> str:
    """rows: (workload label, [(allocator, ratio, low, high, why missing)]).
    A point with ratio None is not drawn (the caption says why)."""
    values = [v for _, pts in rows for p in pts for v in p[1:4] if v is not None and v > 0]
    lo = min(values + [1.0]) / 1.15
    hi = max(values + [1.0]) * 1.15
    names = list(dict.fromkeys(p[0] for _, pts in rows for p in pts if p[1] is not None))
    label_width = min(230, 12 + 6.6 * max((len(r[0]) for r in rows), default=8))
    left, right = MARGIN_LEFT + label_width - 50, RATIO_WIDTH - MARGIN_RIGHT
    top = MARGIN_TOP
    height_plot = ROW_HEIGHT * max(len(rows), 1)

    def x_of(v: float) -> float:
        return left + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (right - left)

    body = [f'<rect x="{left}" y="{top}" width="{right - left}" height="{height_plot}" fill="#FAFAFA"/>']
    for index in range(1, len(rows), 2):
        body.append(f'<rect x="{left}" y="{top + index * ROW_HEIGHT}" width="{right - left}" '
                    f'height="{ROW_HEIGHT}" fill="#EEEEEE"/>')
    for t in spaced(log_ticks(lo, hi), x_of):
        x = x_of(t)
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + height_plot}" stroke="{GRID}"/>')
        body.append(_text(x, top + height_plot + 14, ratio_text(t), "middle", 11, MUTED))
    one = x_of(1.0)
    body.append(f'<line x1="{one:.1f}" y1="{top}" x2="{one:.1f}" y2="{top + height_plot}" '
                f'stroke="{REFERENCE}" stroke-width="1.2"/>')
    dodge = (ROW_HEIGHT - 8) / max(len(names), 1)
    for index, (label, points) in enumerate(rows):
        y0 = top + index * ROW_HEIGHT
        body.append(_text(left - 6, y0 + ROW_HEIGHT / 2 + 4, label, "end", 11))
        for name, ratio, low, high, _ in points:
            if ratio is None or ratio <= 0:
                continue
            y = y0 + 4 + dodge * (names.index(name) + 0.5)
            c = colour(name)
            bar = ""
            if low is not None and high is not None and low > 0:
                bar = (f'<line x1="{x_of(low):.1f}" y1="{y:.1f}" x2="{x_of(high):.1f}" y2="{y:.1f}" '
                       f'stroke="{c}" stroke-width="2"/>')
            shape = bar + f'<circle cx="{x_of(ratio):.1f}" cy="{y:.1f}" r="4" fill="{c}"/>'
            spread = (f" ({fmt.ratio(low)}–{fmt.ratio(high)})"
                      if low is not None and high is not None else "")
            body.append(_mark(shape, f"{label}, {name}: {fmt.ratio(ratio)}{spread} of {baseline}"))
    legend_top = top + height_plot + 24
    legend, legend_height = _legend(names, {}, legend_top, width=RATIO_WIDTH)
    body += legend
    return _svg(legend_top + legend_height, body, caption, RATIO_WIDTH)


ratio_text = fmt.ratio_tick


def spaced(ticks: Sequence[float], x_of) -> list[float]:
    """The ticks whose labels do not touch (1 always among them), nearest
    to 1 first."""
    kept: list[float] = []
    for t in sorted(ticks, key=lambda t: abs(math.log(t))):
        if all(abs(x_of(t) - x_of(k)) >= LABEL_GAP + CHAR_WIDTH * (len(ratio_text(t)) + len(ratio_text(k))) / 2
               for k in kept):
            kept.append(t)
    return sorted(kept)


# ---------------------------------------------------------------- phase chart

def phase_chart(table: PhaseSeries, caption: str) -> str:
    names = list(table.series)
    phases = table.phases
    values = [v for n in names for v in table.series[n] if v is not None]
    values += [hi for n in names for s in table.spread.get(n, []) if s for hi in [s[1]]]
    values += [v for v in table.live if v is not None]
    ticks = nice_ticks(min(values + [0.0]), max(values + [1e-9]))
    lo, hi = ticks[0], ticks[-1]
    left, right, top = MARGIN_LEFT, WIDTH - MARGIN_RIGHT, MARGIN_TOP
    bottom = top + PLOT_HEIGHT

    def y_of(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * PLOT_HEIGHT

    body = _y_axis(ticks, y_of, left, right, table.unit)
    slot = (right - left) / max(len(phases), 1)
    bar = slot * 0.8 / max(len(names), 1)
    for pi, phase in enumerate(phases):
        x0 = left + pi * slot
        body.append(_text(x0 + slot / 2, bottom + 16, phase, "middle", 11))
        for ni, name in enumerate(names):
            value = table.series[name][pi]
            x = x0 + slot * 0.1 + ni * bar
            if value is None:
                body.append(f'<text x="{x + bar / 2:.1f}" y="{bottom - 4}" font-size="9" fill="{MUTED}" '
                            f'transform="rotate(-90 {x + bar / 2:.1f} {bottom - 4})">'
                            f'{escape(table.notes.get(name) or "no figure")}</text>')
                continue
            spread = (table.spread.get(name) or [None] * len(phases))[pi]
            top_y = y_of(max(value, lo))
            shape = (f'<rect x="{x:.1f}" y="{top_y:.1f}" width="{bar * 0.92:.1f}" '
                     f'height="{max(y_of(lo) - top_y, 0.5):.1f}" fill="{colour(name)}"/>')
            text = f"{phase}, {name}: {fmt.number(value)} {table.unit}"
            if spread:
                cx = x + bar * 0.46
                shape += (f'<line x1="{cx:.1f}" y1="{y_of(spread[0]):.1f}" x2="{cx:.1f}" '
                          f'y2="{y_of(spread[1]):.1f}" stroke="#222222" stroke-width="1"/>')
                text += f" ({fmt.number(spread[0])}–{fmt.number(spread[1])})"
            body.append(_mark(shape, text))
        live = table.live[pi] if pi < len(table.live) else None
        if live is not None:
            y = y_of(live)
            body.append(f'<line x1="{x0 + slot * 0.08:.1f}" y1="{y:.1f}" x2="{x0 + slot * 0.92:.1f}" '
                        f'y2="{y:.1f}" stroke="{REFERENCE}" stroke-width="1.6" stroke-dasharray="5 3">'
                        f'<title>{escape(f"{phase}: {fmt.number(live)} {table.unit} live")}</title></line>')
    extra = [("5 3", "live bytes requested")] if any(v is not None for v in table.live) else []
    legend, legend_height = _legend(names, table.notes, bottom + 28, extra)
    body += legend
    return _svg(bottom + 28 + legend_height, body, caption)


def _y_axis(ticks: Sequence[float], y_of, left: float, right: float, label: str) -> list[str]:
    out = []
    for t in ticks:
        y = y_of(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID}"/>')
        out.append(_text(left - 6, y + 4, tick_text(t), "end", 11, MUTED))
    out.append(f'<text x="14" y="{MARGIN_TOP + PLOT_HEIGHT / 2:.0f}" font-size="11" fill="{MUTED}" '
               f'text-anchor="middle" transform="rotate(-90 14 {MARGIN_TOP + PLOT_HEIGHT / 2:.0f})">'
               f'{escape(label)}</text>')
    return out


# ----------------------------------------------------------------- line chart

def line_chart(lines: Sequence[Line], x_label: str, y_label: str, caption: str,
               x_ticks_at_points: bool = False) -> str:
    """x_ticks_at_points: ticks at the xs the lines have (thread counts)."""
    xs = [p[0] for ln in lines for p in ln.points]
    ys = [v for ln in lines for p in ln.points for v in p[1:]]
    x_ticks = sorted(set(xs)) if x_ticks_at_points else nice_ticks(min(xs + [0.0]), max(xs + [1e-9]))
    y_ticks = nice_ticks(min(ys + [0.0]) if ys and min(ys) < 0 else 0.0, max(ys + [1e-9]))
    x_lo, x_hi = (x_ticks[0], x_ticks[-1]) if len(x_ticks) > 1 else (x_ticks[0] - 1, x_ticks[0] + 1)
    y_lo, y_hi = y_ticks[0], y_ticks[-1]
    left, right, top = MARGIN_LEFT, WIDTH - MARGIN_RIGHT - 10, MARGIN_TOP
    bottom = top + PLOT_HEIGHT

    def x_of(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * (right - left)

    def y_of(v: float) -> float:
        return bottom - (v - y_lo) / (y_hi - y_lo) * PLOT_HEIGHT

    body = _y_axis(y_ticks, y_of, left, right, y_label)
    for t in x_ticks:
        body.append(_text(x_of(t), bottom + 16, tick_text(t), "middle", 11, MUTED))
    body.append(_text((left + right) / 2, bottom + 32, x_label, "middle", 11, MUTED))
    notes = {}
    for ln in lines:
        c = colour(ln.name)
        if ln.note:
            notes[ln.name] = ln.note
        if not ln.points:
            continue
        if any(p[2] != p[3] for p in ln.points):
            band = [f"{x_of(p[0]):.1f},{y_of(p[3]):.1f}" for p in ln.points]
            band += [f"{x_of(p[0]):.1f},{y_of(p[2]):.1f}" for p in reversed(ln.points)]
            body.append(f'<polygon points="{" ".join(band)}" fill="{c}" opacity="0.18"/>')
        path = " ".join(f"{x_of(p[0]):.1f},{y_of(p[1]):.1f}" for p in ln.points)
        dots = "".join(f'<circle cx="{x_of(p[0]):.1f}" cy="{y_of(p[1]):.1f}" r="2.5" fill="{c}"/>'
                       for p in ln.points) if len(ln.points) <= 40 else ""
        last = ln.points[-1]
        body.append(_mark(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>{dots}',
                          f"{ln.name}: {len(ln.points)} points, last {fmt.number(last[1])} "
                          f"at {fmt.number(last[0])} {x_label}"))
    legend, legend_height = _legend([ln.name for ln in lines], notes, bottom + 44)
    body += legend
    return _svg(bottom + 44 + legend_height, body, caption)
