"""The allocators' colours, the same in every chart: the PNG and SVG files
plots/ draws and the inline SVG of report.html.
"""
from __future__ import annotations

import zlib

# Fixed colours for the allocators heaplab knows, so that an allocator looks
# the same in every chart of every run. Okabe-Ito hues (safe for the common
# colour-vision deficiencies); heaplab and its no-cache mode share a warm hue.
PALETTE: dict[str, str] = {
    "system": "#595959",
    "heaplab": "#D55E00",
    "heaplab-nocache": "#E69F00",
    "mimalloc": "#0072B2",
    "jemalloc": "#009E73",
    "tcmalloc": "#CC79A7",
}

# Colours for any other allocator (so:PATH, a future built-in). Chosen by a
# checksum of the name, not Python's hash(), which changes per process.
EXTRA_COLOURS: tuple[str, ...] = (
    "#56B4E9",  # sky blue
    "#8C564B",  # brown
    "#7B3294",  # purple
    "#A6A600",  # olive
    "#1B9E9E",  # teal
    "#1F3A93",  # navy
    "#B8860B",  # dark gold
    "#66A61E",  # leaf green
)


def colour_for(name: str) -> str:
    """The colour of an allocator: fixed for known names, otherwise derived
    from the name, so it is the same in every chart and every process."""
    if name in PALETTE:
        return PALETTE[name]
    return EXTRA_COLOURS[zlib.crc32(name.encode("utf-8")) % len(EXTRA_COLOURS)]
