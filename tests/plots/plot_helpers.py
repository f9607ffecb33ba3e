"""What the plots tests share: paths, PNG header reading, legend colours."""

from __future__ import annotations

import struct
from pathlib import Path

from matplotlib.colors import to_hex

from plots import style

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "plots"

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# width and height follow the signature, the IHDR chunk's length and its type
IHDR_SIZE_OFFSET = len(PNG_SIGNATURE) + 8


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) in pixels of a PNG; AssertionError if it is not one."""
    data = path.read_bytes()
    assert data[:len(PNG_SIGNATURE)] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[IHDR_SIZE_OFFSET - 4:IHDR_SIZE_OFFSET] == b"IHDR"
    return struct.unpack(">II", data[IHDR_SIZE_OFFSET:IHDR_SIZE_OFFSET + 8])


def handle_colour(handle) -> str:
    """The colour a legend handle shows, as #rrggbb."""
    if hasattr(handle, "get_facecolor") and not hasattr(handle, "get_segments"):
        return to_hex(handle.get_facecolor(), keep_alpha=False)
    colour = handle.get_color()
    if hasattr(colour, "ndim") and colour.ndim == 2:  # a LineCollection
        colour = colour[0]
    return to_hex(colour, keep_alpha=False)


def legend_colours(fig) -> dict[str, str]:
    """Legend label (without any note in parentheses) -> colour shown."""
    legend = fig.axes[0].get_legend()
    handles = getattr(legend, "legend_handles", None) or legend.legendHandles
    result = {}
    for text, handle in zip(legend.get_texts(), handles):
        label = text.get_text().split(style.LEGEND_NOTE_SEPARATOR)[0]
        result[label] = handle_colour(handle)
    return result
