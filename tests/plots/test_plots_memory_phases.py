"""Memory by phase: from a run (medians per phase, live reference, peak) and
from plain series (for published tables)."""

from __future__ import annotations

import statistics

import pytest
from matplotlib.patches import Rectangle

from plots import memory_phases, style

MB = 1_000_000
FIXTURE_PHASES = ["built", "80 percent freed", "refilled", "90 percent freed"]
FIXTURE_LIVE_MB = [1281, 254, 564, 56]


def test_phases_come_in_order_with_the_peak_last(run) -> None:
    table = memory_phases.collect(run, "tmalloc-memory", 1)
    assert table.phases == FIXTURE_PHASES + [memory_phases.PEAK]


def test_live_reference_is_the_live_bytes_requested_and_its_peak(run) -> None:
    table = memory_phases.collect(run, "tmalloc-memory", 1)
    assert table.live == FIXTURE_LIVE_MB + [max(FIXTURE_LIVE_MB)]


def test_each_phase_is_the_median_over_repetitions(run) -> None:
    table = memory_phases.collect(run, "tmalloc-memory", 1)
    docs = [d for d in run.docs_of("tmalloc-memory") if d.allocator == "jemalloc"]
    assert len(docs) == 3
    for index, phase in enumerate(FIXTURE_PHASES):
        values = [p["ws_above_start_bytes"] / MB for d in docs
                  for p in d.phases if p["name"] == phase]
        assert table.series["jemalloc"][index] == statistics.median(values)
        assert table.spread["jemalloc"][index] == (min(values), max(values))


def test_workloads_without_phases_have_no_memory_phase_chart(run) -> None:
    assert memory_phases.collect(run, "tmalloc-st-64", 1) is None
    stems = [stem for stem, _fig in memory_phases.figures(run)]
    assert stems == ["memory-phases-tmalloc-memory"]


def test_draw_takes_plain_series_and_leaves_gaps_for_missing_figures() -> None:
    phases = ["built", "freed", "peak"]
    series = {"tmalloc": [1320.0, 1320.0, 1591.0],
              "system": [1318.0, None, 1318.0]}
    with style.chart_style():
        fig = memory_phases.draw(phases, series, [1281.0, 254.0, 1281.0],
                                 "published", notes={"system": "not measured"})
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert sorted(b.get_height() for b in bars) == sorted(
        v for values in series.values() for v in values if v is not None)
    assert "not measured" in [t.get_text() for t in ax.texts]
    assert [t.get_text() for t in ax.get_xticklabels()] == phases


def test_draw_refuses_series_of_the_wrong_length() -> None:
    with pytest.raises(ValueError, match="series 'system' has 2 values for 3 phases"):
        memory_phases.draw(["a", "b", "c"], {"system": [1.0, 2.0]},
                           [1.0, 1.0, 1.0], "t")
