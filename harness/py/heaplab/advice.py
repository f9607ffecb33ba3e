"""What to do about cells too noisy for their threshold: one recommendation line.

A timing cell is too noisy when its detectable effect (see `detectable`) is
above the threshold a change must pass to count: then "unchanged" and "not
significant" only mean that the test could not have told. With the same
noise, more repetitions shrink the detectable effect; this says how many
would bring every such cell under the threshold (`--reps N`), or, when more
than detectable.MAX_USEFUL_REPETITIONS would be needed, that the machine is
too noisy for timings and instruction counts should decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from . import detectable

# The thresholds a timing comparison is judged against unless told
# otherwise (compare's --threshold and --alpha; a run's own notes).
DEFAULT_THRESHOLD = 0.05
DEFAULT_ALPHA = 0.05
# Recommending more repetitions than this says the machine is noisy: the
# line then points at instruction counts too.
ADVISE_INSTRUCTIONS_ABOVE = 100


@dataclass(frozen=True)
class NoisyCell:
    """A cell whose detectable effect is above the threshold.

    effect: the detectable effect now (None: no change can be detected
    with `repetitions` at all); needed: repetitions that would bring it under
    the threshold (None: more than MAX_USEFUL_REPETITIONS)."""

    label: str
    effect: float | None
    repetitions: int
    needed: int | None

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.label, "detectable": self.effect, "repetitions": self.repetitions,
                "repetitions_needed": self.needed}


def too_noisy(effect: float | None, threshold: float) -> bool:
    return effect is None or effect > threshold


def assess(label: str, effect: float | None, repetitions: int, threshold: float, alpha: float,
           base: Sequence[float], new: Sequence[float],
           log_ratios: Sequence[float] | None = None) -> NoisyCell | None:
    """A NoisyCell for a cell whose detectable effect exceeds the threshold
    (paired when log_ratios are given), else None."""
    if not too_noisy(effect, threshold):
        return None
    needed = detectable.repetitions_needed(base, new, threshold, alpha, log_ratios)
    return NoisyCell(label, effect, repetitions, needed)


def format_effect(effect: float | None, repetitions: int) -> str:
    if effect is None:
        return f"nothing detectable with {repetitions} repetitions"
    return f"{effect:.0%} with {repetitions} repetitions"


def _cells(count: int) -> str:
    return f"{count} cell" if count == 1 else f"{count} cells"


def recommendation(cells: Sequence[NoisyCell], threshold: float) -> str | None:
    """The one line (Markdown), or None when no cell is too noisy."""
    if not cells:
        return None
    limit = f"{threshold:.0%}"
    worst = max(cells, key=lambda c: float("inf") if c.effect is None else c.effect)
    fixable = [c for c in cells if c.needed is not None]
    hopeless = [c for c in cells if c.needed is None]
    parts = [f"**Recommendation:** {_cells(len(cells))} cannot detect a {limit} change "
             f"(worst: {worst.label}, {format_effect(worst.effect, worst.repetitions)})"]
    if fixable:
        reps = max(c.needed for c in fixable if c.needed is not None)
        which = "it" if len(cells) == 1 else ("all of them" if not hopeless else
                                               f"{len(fixable)} of them")
        parts.append(f"`--reps {reps}` would bring {which} under {limit}")
        if reps > ADVISE_INSTRUCTIONS_ABOVE and not hopeless:
            parts.append(f"that many repetitions say this machine is too noisy for timings at "
                         f"{limit}: instruction counts (`--metric instructions`) can decide instead")
    if hopeless:
        parts.append(f"{'it needs' if len(cells) == 1 else f'{len(hopeless)} need'} more than "
                     f"{detectable.MAX_USEFUL_REPETITIONS} repetitions: this machine is too noisy "
                     f"for timings at {limit}; let instruction counts decide (`--metric instructions`)")
    return "; ".join(parts) + "."


def recommendation_json(cells: Sequence[NoisyCell], threshold: float) -> dict[str, Any]:
    fixable = [c.needed for c in cells if c.needed is not None]
    return {"cells_too_noisy": len(cells),
            "reps": max(fixable) if fixable and len(fixable) == len(cells) else None,
            "reps_for_fixable": max(fixable) if fixable else None,
            "use_instructions": any(c.needed is None for c in cells),
            "text": (recommendation(cells, threshold) or "").replace("**", "").replace("`", "") or None,
            "cells": [c.to_json() for c in cells]}
