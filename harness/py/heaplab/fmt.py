"""How the driver writes numbers, ratios and Markdown: every table, verdict
and progress line formats through here.

- number(): three significant figures, a suffix from a million on (309M);
- count(): a count for reading (950, 12.3k, 4.10M);
- grouped(): thousands separators from 1,000 on (published-table figures);
- precise(): four significant figures, large values in full (compare);
- ratio(): one form everywhere, `×1.23` (a ratio of medians);
- tick(), ratio_tick(): axis labels (25, 2.5, 1,400; ×4, ×1.5, ×1/8);
- value(): a figure with its unit, times of 10 ms and more in seconds;
- md(): text made safe for a Markdown table cell; one_line(): a message
  squeezed onto one line and cut to a length.
"""
from __future__ import annotations

import math
from typing import Any

# Above a million, figures read better with a suffix (309M ns, not 309038895).
LARGE_SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"))
COUNT_SCALES = ((1e9, "G"), (1e6, "M"), (1e3, "k"))
# compare prints values from here on as whole numbers with separators
PRECISE_LARGE = 1e5
# Longest runner error message quoted inside a Markdown cell.
MESSAGE_MAX_CHARS = 80
NS_PER_S = 1e9
# From here on a time in nanoseconds reads in seconds (a program cell's
# 177,000,000 ns is 0.177 s, not "177M ns").
SECONDS_FROM_NS = 1e7


def _three(value: float) -> str:
    """Three significant figures, no exponent (whole numbers from 100 on)."""
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def number(value: float | None) -> str:
    """Three significant figures without exponents, for reading."""
    if value is None or not math.isfinite(value):
        return "–" if value is None else str(value)
    for scale, suffix in LARGE_SCALES:
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return _three(value)


def count(value: float) -> str:
    """A count for reading: 950, 12.3k, 4.10M."""
    for scale, suffix in COUNT_SCALES:
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.0f}"


def grouped(value: float) -> str:
    """Three significant figures or so, thousands separated, never
    scientific notation."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return "0.00" if value == 0 else _three(value)


def precise(value: float | None) -> str:
    """A measured value in four significant figures (large counts in full)."""
    if value is None:
        return "–"
    if abs(value) >= PRECISE_LARGE:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def ratio(value: float | None, missing: str = "") -> str:
    """`×1.23`: two decimals, three significant figures below 0.1 (a ratio
    of 0.008 stays readable)."""
    if value is None:
        return missing
    if value == 0 or abs(value) >= 0.1:
        return f"×{value:,.2f}"
    return f"×{value:.3g}"


def tick(value: float, _position: int = 0) -> str:
    """An axis tick: 25, 2.5, 1,400 (no trailing zeros, never an exponent);
    `_position` lets matplotlib's FuncFormatter call it."""
    return f"{value:,g}" if abs(value) < 1e6 else f"{value:,.0f}"


def ratio_tick(value: float) -> str:
    """A ratio axis's tick: ×4, ×1.5, and ×1/8 for a power of two below 1
    (shorter than ×0.125)."""
    if 0 < value < 1 and math.log2(value) == int(math.log2(value)):
        return f"×1/{int(round(1 / value))}"
    return f"×{value:g}"


def seconds_scale(unit: str, values: list[float]) -> tuple[str, float]:
    """(unit, divisor) to show nanosecond figures of SECONDS_FROM_NS and
    more in seconds; (unit, 1) otherwise."""
    if unit == "ns" and values and min(abs(v) for v in values) >= SECONDS_FROM_NS:
        return "s", NS_PER_S
    return unit, 1.0


def value(figure: float, unit: str) -> str:
    """`48.6 ns`, `0.177 s`: a figure with its unit."""
    shown, divisor = seconds_scale(unit, [figure])
    return f"{number(figure / divisor)} {shown}".strip()


def md(text: Any) -> str:
    """Text made safe for a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def one_line(text: str | None, limit: int = MESSAGE_MAX_CHARS) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cells(count: int) -> str:
    """`1 cell`, `3 cells`."""
    return f"{count} cell" if count == 1 else f"{count} cells"
