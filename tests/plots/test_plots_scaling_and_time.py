"""Thread scaling and memory over time."""

from __future__ import annotations

import statistics

from plots import memory_time, scaling, style


def test_only_workloads_run_at_several_thread_counts_get_a_scaling_chart(run) -> None:
    assert [stem for stem, _fig in scaling.figures(run)] == [
        "scaling-tmalloc-mt-small"]


def test_scaling_points_are_medians_at_each_thread_count(run) -> None:
    with style.chart_style():
        fig = scaling.draw_workload(run, "tmalloc-mt-small")
    ax = fig.axes[0]
    # the data lines (caps are lines too, with marker "_")
    lines = {line.get_color(): line for line in ax.lines
             if line.get_marker() == "o"}
    mimalloc = lines[style.colour_for("mimalloc")]
    for threads, y in zip((1, 2), mimalloc.get_ydata()):
        values = [d.value for d in run.docs_at("tmalloc-mt-small", threads)
                  if d.allocator == "mimalloc"]
        assert y == statistics.median(values)
    assert ax.get_xlabel() == "threads"
    assert "higher is better" in ax.get_ylabel()


def test_memory_over_time_has_a_line_per_allocator_and_a_live_line(run) -> None:
    with style.chart_style():
        fig = memory_time.draw_workload(run, "steady-churn", 1, "")
    ax = fig.axes[0]
    labels = {line.get_label() for line in ax.lines}
    assert {"system", "heaplab", "heaplab-nocache", "mimalloc", "jemalloc",
            "live bytes requested"} <= labels
    assert ax.get_xlabel() == "operations done"
    assert ax.get_ylabel() == "resident set size (MB)"


def test_workloads_without_samples_have_no_memory_time_chart(run) -> None:
    assert memory_time.draw_workload(run, "tmalloc-st-64", 1, "") is None


def test_memory_over_time_draws_the_last_phase_after_the_last_sample(tmp_path):
    """A trim at the end is measured at its phase's end, after the last
    sample: the line must end there, not at the sample before the trim."""
    import json
    from plots import memory_time, style
    from plots.rundata import load_run
    doc = {"schema": "heaplab.run/1", "status": "ok", "workload": {"name": "mot", "threads": 1},
           "allocator": {"name": "system"}, "primary": "ns", "rep": 1,
           "metrics": {"ns": {"value": 1.0, "unit": "ns", "better": "lower"}},
           "samples": [{"ops": 500 * i, "t_ns": 1000 * i, "rss_bytes": 50e6, "live_bytes": 9e6}
                       for i in range(1, 5)],
           "phases": [{"name": "churned", "ops": 1500, "elapsed_ns": 1500, "rss_bytes": 50e6,
                       "live_bytes": 9e6},
                      {"name": "trimmed", "ops": 500, "elapsed_ns": 500, "rss_bytes": 21e6,
                       "live_bytes": 9e6}]}
    (tmp_path / "raw.jsonl").write_text(json.dumps(doc) + "\n")
    with style.chart_style():
        fig = memory_time.draw_workload(load_run(tmp_path), "mot", 1, "")
    rss = fig.axes[0].get_lines()[0]
    assert list(rss.get_xdata())[-1] == 2000 and list(rss.get_ydata())[-1] == 21.0
