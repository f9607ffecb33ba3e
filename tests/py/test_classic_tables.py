"""The table section of a group whose workloads count cross-thread frees
(the classic workloads): peak RSS per allocator, blocks freed on another
thread, and rows with more threads than cores marked as oversubscribed.
Also `--param` refusing min_X above max_X before anything runs."""
import pytest

from heaplab import catalog, summary, tables

MB = 1_000_000


def doc(workload, alloc, threads, value, cross, total, peak_mb, rep=1):
    return {"schema": "heaplab.run/1", "status": "ok", "rep": rep,
            "cell": f"{workload}/{alloc}/{threads}t",
            "workload": {"name": workload, "group": "classic", "threads": threads},
            "allocator": {"name": alloc}, "primary": "ns_per_op",
            "metrics": {"ns_per_op": {"value": value, "unit": "ns", "better": "lower"}},
            "frees": {"total": total, "cross_thread": cross},
            "process": {"peak_rss_bytes": peak_mb * MB, "rss_start_bytes": 3 * MB},
            "env": {"cores": 2}}


@pytest.fixture
def result():
    docs = [doc("larson", "system", 2, 30.0, 50_000, 410_000, 16),
            doc("larson", "heaplab", 2, 10.0, 50_000, 410_000, 8),
            doc("mstress", "system", 4, 80.0, 8_000, 180_000, 13),
            doc("mstress", "heaplab", 4, 60.0, 3_500, 180_000, 39)]
    plan = {"reps": 1, "allocators": [{"name": "system", "available": True},
                                      {"name": "heaplab", "available": True}],
            "rows": [{"workload": "larson", "group": "classic", "threads": 2, "metric": "ns_per_op",
                      "unit": "ns", "better": "lower"},
                     {"workload": "mstress", "group": "classic", "threads": 4, "metric": "ns_per_op",
                      "unit": "ns", "better": "lower"}]}
    return summary.summarize(docs, plan)


def test_the_summary_keeps_the_machine_cores_and_each_cells_frees_and_peak(result):
    assert result["cores"] == 2
    c = next(c for c in result["cells"] if c["workload"] == "larson" and c["allocator"] == "heaplab")
    assert c["figures"]["cross_thread_frees"]["median"] == 50_000
    assert c["figures"]["peak_rss_bytes"]["median"] == 8 * MB


def test_rows_beyond_the_cores_say_they_oversubscribe(result):
    md = tables.markdown(result)
    assert "| mstress | 4 (oversubscribed: 2 cores) |" in md
    assert "| larson | 2 | ns_per_op" in md


def test_a_group_that_counts_frees_gets_a_peak_rss_and_cross_thread_table(result):
    md = tables.markdown(result)
    assert "| workload | threads | freed on another thread | peak RSS: system | heaplab |" in md
    assert "| larson | 2 | 50k of 410k (12.2%) | 16.0 | 8.00 ×0.50 |" in md
    # allocators that freed a different number remotely: the range
    assert "3.5k–8k of 180k (1.9%–4.4%)" in md


def test_a_group_that_does_not_count_frees_has_no_such_table():
    plain = {"schema": "heaplab.run/1", "status": "ok", "cell": "w/system/1t",
             "workload": {"name": "w", "group": "g", "threads": 1}, "allocator": {"name": "system"},
             "primary": "ns", "metrics": {"ns": {"value": 1.0, "unit": "ns", "better": "lower"}},
             "frees": None, "process": {"peak_rss_bytes": MB}}
    md = tables.markdown(summary.summarize([plain], {"reps": 1, "allocators": [], "rows": []}))
    assert "freed on another thread" not in md


def test_csv_has_peak_rss_and_frees_per_allocator(result):
    text = tables.csv_text(result)
    header = text.splitlines()[0].split(",")
    assert {"heaplab_peak_rss_bytes", "heaplab_frees", "heaplab_cross_thread_frees"} <= set(header)


def test_param_min_above_max_is_refused_before_anything_runs():
    w = catalog.Workload(name="larson", group="classic", params=(
        {"name": "min_size", "default": 8, "quick": 8, "min": 1, "max": 1 << 30},
        {"name": "max_size", "default": 1000, "quick": 1000, "min": 1, "max": 1 << 30}))
    with pytest.raises(catalog.SelectionError, match="min_size=5000 above max_size=1000"):
        catalog.parse_params(["min_size=5000"], [w])
    assert catalog.parse_params(["min_size=500"], [w]) == {"larson": (("min_size", 500),)}
