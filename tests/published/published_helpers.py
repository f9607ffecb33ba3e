"""Helpers for the published-table tests: the fixture tables and measured
entries. Plain functions, not a conftest.py: other test folders import their
own `conftest` by name, and a second module called conftest would shadow it."""
from __future__ import annotations

import copy
import json
import pathlib
from typing import Any

from heaplab import published

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
MINI = FIXTURES / "900-mini.json"
MEMORY = FIXTURES / "901-memory.json"


def mini_doc() -> dict[str, Any]:
    """The decoded 900-mini.json, a fresh copy the caller may edit."""
    return json.loads(MINI.read_text(encoding="utf-8"))


def mini() -> published.PublishedTable:
    """The fixture table with workloads as rows, five columns, a suspect row."""
    return published.load_table(MINI)


def memory_table() -> published.PublishedTable:
    """The fixture table with allocators as rows and a reference column."""
    return published.load_table(MEMORY)


def parse(doc: dict[str, Any]) -> published.PublishedTable:
    """Validates an edited copy of a fixture document as if it were 900-mini.json."""
    return published.parse_table(copy.deepcopy(doc), MINI)


def spread(median: float, lo: float | None = None, hi: float | None = None, n: int = 5) -> dict[str, Any]:
    """A measured entry; the range defaults to +-10% of the median."""
    return {"median": median, "min": median * 0.9 if lo is None else lo,
            "max": median * 1.1 if hi is None else hi, "n": n}
