"""Progress of a run: a bar with ETA on a terminal, plain lines otherwise.

The ETA uses each cell's own duration once its first repetition has run
(cells differ by orders of magnitude), and the mean duration so far for
cells not yet seen.
"""
from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

BAR_WIDTH = 24


def fmt_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    def __init__(self, total: int, cell_keys: list[str], stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.remaining_keys = list(cell_keys)     # key of every step not yet run, in order
        self.durations: dict[str, float] = {}
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.monotonic()

    def eta(self) -> float | None:
        if not self.durations:
            return None
        mean = sum(self.durations.values()) / len(self.durations)
        return sum(self.durations.get(k, mean) for k in self.remaining_keys)

    def step(self, key: str, seconds: float, rep: int, result: str) -> None:
        self.done += 1
        self.durations[key] = seconds
        if key in self.remaining_keys:
            self.remaining_keys.remove(key)
        eta = self.eta()
        eta_text = f"ETA {fmt_duration(eta)}" if eta is not None and self.remaining_keys else "ETA –"
        if self.tty:
            width = shutil.get_terminal_size((80, 24)).columns
            filled = BAR_WIDTH * self.done // max(1, self.total)
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            line = f"[{bar}] {self.done}/{self.total} {eta_text}  rep {rep} {key}: {result}"
            self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        else:
            self.stream.write(f"[{self.done}/{self.total}] rep {rep} {key}: {result} ({eta_text})\n")
        self.stream.flush()

    def drop(self, key: str) -> None:
        """The remaining repetitions of `key` will not run."""
        left = self.remaining_keys.count(key)
        self.remaining_keys = [k for k in self.remaining_keys if k != key]
        self.total -= left

    def note(self, text: str) -> None:
        """A message that must not be overwritten by the bar."""
        if self.tty:
            width = shutil.get_terminal_size((80, 24)).columns
            self.stream.write("\r" + " " * (width - 1) + "\r")
        self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.done:
            self.stream.write("\n")
        self.stream.write(f"{self.done} of {self.total} runs in "
                          f"{fmt_duration(time.monotonic() - self.started)}\n")
        self.stream.flush()
