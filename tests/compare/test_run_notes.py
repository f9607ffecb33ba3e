"""The notes under a run's tables: spread per cell, baseline drift, the
recommendation (summaries built from the compare fixtures' documents)."""

from __future__ import annotations

import json
from pathlib import Path

from heaplab import summary, tables


def _summary(folder: Path) -> dict:
    docs = [json.loads(line) for line in (folder / "raw.jsonl").read_text().splitlines()]
    for doc in docs:   # the driver's cell key: workload/allocator/<threads>t
        doc["cell"] = f"{doc['workload']['name']}/{doc['allocator']['name']}/{doc['workload']['threads']}t"
    return summary.summarize(docs, {"reps": 9})


def test_tables_show_each_cells_spread(fixtures):
    md = tables.markdown(_summary(fixtures / "drifting"))
    assert "## Spread of the repetitions" in md
    row = next(line for line in md.splitlines() if line.startswith("| tmalloc-st-64 | 1 | ns_per_pair | ×"))
    assert row.count("cv ") == 3


def test_a_drifting_baseline_is_warned_about(fixtures):
    md = tables.markdown(_summary(fixtures / "drifting"))
    drifts = [line for line in md.splitlines() if line.startswith("> **Drift:**")]
    assert len(drifts) == 3 and all("system's repetitions of" in line for line in drifts)
    assert "> **Drift:**" not in tables.markdown(_summary(fixtures / "base"))


def test_a_noisy_run_ends_with_a_recommendation(fixtures):
    md = tables.markdown(_summary(fixtures / "noisy-slower"))
    line = next(line for line in md.splitlines() if line.startswith("**Recommendation:**"))
    assert "cannot detect against system a 5% change" in line and "--reps" in line
    assert "**Recommendation:**" not in tables.markdown(_summary(fixtures / "base"))
