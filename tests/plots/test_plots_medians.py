"""Medians charts: one per group (per metric when a group mixes them),
ratios to system, and failed cells as labelled gaps, never zeros."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.patches import Rectangle

from plots import medians, style
from plots.rundata import load_run


def chart_named(run, stem: str) -> medians.MedianChart:
    return next(c for c in medians.collect(run) if c.stem == stem)


def bar_centres(fig) -> list[float]:
    ax = fig.axes[0]
    return [p.get_x() + p.get_width() / 2 for p in ax.patches
            if isinstance(p, Rectangle)]


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_a_group_with_two_metrics_gets_one_chart_per_metric(run) -> None:
    stems = [c.stem for c in medians.collect(run)]
    assert stems == ["medians-tmalloc-ns_per_pair", "medians-tmalloc-peak_ws_mb",
                     "medians-tmalloc-mt", "medians-script"]


def test_the_threaded_workload_has_one_category_per_thread_count(run) -> None:
    chart = chart_named(run, "medians-tmalloc-mt")
    assert [(c.workload, c.threads) for c in chart.categories] == [
        ("tmalloc-mt-small", 1), ("tmalloc-mt-small", 2)]


def test_a_crashed_cell_is_a_labelled_gap_not_a_zero_bar(run) -> None:
    chart = chart_named(run, "medians-tmalloc-ns_per_pair")
    slot = [c.workload for c in chart.categories].index("tmalloc-st-random-100k")
    category = chart.categories[slot]
    assert chart.stats(category, "jemalloc") is None
    assert chart.gap_label(category, "jemalloc") == "crashed (SIGSEGV)"

    with style.chart_style():
        fig = medians.draw(chart, run.machine())
    names = chart.allocators
    width = medians.GROUP_WIDTH / len(names)
    crash_x = slot + (names.index("jemalloc") - (len(names) - 1) / 2) * width
    centres = bar_centres(fig)
    assert all(abs(x - crash_x) > width / 4 for x in centres)
    assert "crashed (SIGSEGV)" in texts(fig)
    # a bar for every cell with a figure and for no other
    with_figures = sum(chart.stats(c, n) is not None
                       for c in chart.categories for n in names)
    assert with_figures == 3 * len(names) - 1 - 3  # jemalloc crash, tcmalloc
    assert len(centres) == with_figures


def test_bars_are_ratios_of_medians_to_system(run) -> None:
    chart = chart_named(run, "medians-tmalloc-ns_per_pair")
    category = chart.categories[0]
    heaplab = chart.stats(category, "heaplab")
    system = chart.stats(category, "system")
    with style.chart_style():
        fig = medians.draw(chart, run.machine())
    expected = f"{heaplab.median / system.median:.2f}\u00d7"
    assert expected in texts(fig)


def test_the_axis_label_says_which_direction_is_better(run) -> None:
    with style.chart_style():
        lower = medians.draw(chart_named(run, "medians-tmalloc-ns_per_pair"), "")
        higher = medians.draw(chart_named(run, "medians-tmalloc-mt"), "")
    assert "lower is better" in lower.axes[0].get_ylabel()
    assert "higher is better" in higher.axes[0].get_ylabel()


def test_a_planned_allocator_that_is_not_installed_is_a_labelled_gap(run) -> None:
    for chart in medians.collect(run):
        assert "tcmalloc" in chart.allocators
        for category in chart.categories:
            assert chart.stats(category, "tcmalloc") is None
            assert chart.gap_label(category, "tcmalloc") == "not installed"
    chart = chart_named(run, "medians-tmalloc-mt")
    with style.chart_style():
        fig = medians.draw(chart, "")
    assert texts(fig).count("not installed") == len(chart.categories)


def test_without_system_the_baseline_is_another_allocator_and_says_so(run_dir: Path) -> None:
    raw = run_dir / "raw.jsonl"
    lines = [line for line in raw.read_text().splitlines()
             if json.loads(line)["allocator"]["name"] != "system"]
    raw.write_text("\n".join(lines) + "\n")
    chart = chart_named(load_run(run_dir), "medians-script")
    assert chart.baseline == "heaplab"
    with style.chart_style():
        fig = medians.draw(chart, "")
    assert "relative to heaplab" in fig.axes[0].get_ylabel()


@pytest.mark.parametrize("status, label", [("timeout", "timeout"),
                                           ("not-installed", "not installed")])
def test_other_failures_are_labelled_by_their_status(run_dir: Path, status: str,
                                                     label: str) -> None:
    doc = {"status": status, "workload": {"name": "steady-churn"},
           "allocator": {"name": "tcmalloc-next"}, "rep": 0}
    with open(run_dir / "raw.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(doc) + "\n")
    chart = chart_named(load_run(run_dir), "medians-script")
    assert chart.stats(chart.categories[0], "tcmalloc-next") is None
    assert chart.gap_label(chart.categories[0], "tcmalloc-next") == label
