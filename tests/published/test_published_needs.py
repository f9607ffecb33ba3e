"""What a table needs measured, and how one figure is read from a run document."""
from __future__ import annotations

import pytest

from heaplab import published
from heaplab.published import Need

import published_helpers as h


def test_needed_cells_map_columns_to_the_allocators_run_here():
    mini = h.mini()
    assert published.needed_cells(mini) == {
        Need(w, t, a, "primary")
        for w, t in (("w-small", 1), ("w-big", 4))
        for a in ("heaplab", "heaplab-nocache", "system", "mimalloc")}


def test_column_that_cannot_run_needs_nothing():
    mini = h.mini()
    assert all(n.allocator for n in published.needed_cells(mini))
    assert {n.allocator for n in published.needed_cells(mini)} == {
        "heaplab", "heaplab-nocache", "system", "mimalloc"}


def test_reference_column_needs_the_live_bytes_of_the_same_phase():
    memory_table = h.memory_table()
    runs = published.needed_runs(memory_table)
    assert runs == {("w-mem", 1, "phase:built:ws_above_start_bytes"),
                    ("w-mem", 1, "phase:built:live_bytes"),
                    ("w-mem", 1, "phase:*:ws_above_start_bytes"),
                    ("w-mem", 1, "phase:*:live_bytes")}


def test_run_specs_are_one_per_row_and_runnable_allocator():
    mini = h.mini()
    specs = published.run_specs(mini)
    assert len(specs) == 8
    assert published.RunSpec("w-big", 4, "mimalloc", ()) in specs


DOC = {
    "schema": "heaplab.run/1", "status": "ok", "primary": "ns_per_pair",
    "metrics": {"ns_per_pair": {"value": 3.5, "unit": "ns", "better": "lower"},
                "p99_ns": {"value": 42, "unit": "ns", "better": "lower"}},
    "phases": [
        {"name": "built", "rss_bytes": 4_000_000, "ws_above_start_bytes": 3_000_000, "live_bytes": 500_000},
        {"name": "end", "rss_bytes": 8_000_000, "ws_above_start_bytes": 6_000_000, "live_bytes": 2_000_000},
    ],
    "process": {"peak_rss_bytes": 9_000_000},
}


@pytest.mark.parametrize("spec, expected", [
    ("primary", 3.5),
    ("p99_ns", 42.0),
    ("process:peak_rss_bytes", 9_000_000.0),
    ("phase:built:ws_above_start_bytes", 3_000_000.0),
    ("phase:*:ws_above_start_bytes", 6_000_000.0),
    ("phase:*:live_bytes", 2_000_000.0),
    ("phase:built:unused_fraction_of_rss", 0.875),
    ("phase:end:ws_over_live", 3.0),
])
def test_metric_value_reads_each_kind_of_spec(spec, expected):
    assert published.metric_value(DOC, spec) == pytest.approx(expected)


@pytest.mark.parametrize("spec", ["p50_ns", "phase:refilled:live_bytes", "process:wall_ns"])
def test_metric_value_is_none_when_the_document_lacks_it(spec):
    assert published.metric_value(DOC, spec) is None


def test_failed_run_has_no_figures():
    crashed = {**DOC, "status": "crashed", "signal": "SIGSEGV"}
    assert published.metric_value(crashed, "primary") is None


def test_bad_spec_is_refused():
    with pytest.raises(ValueError, match="process fields are"):
        published.metric_value(DOC, "process:rss")
