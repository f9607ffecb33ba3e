"""Cells, ratios, ordering verdicts and the Markdown of a reproduced table."""
from __future__ import annotations

import pytest

from heaplab.published import Need, needed_cells
from heaplab.reproduce_table import (DIFFERS, HOLDS, NOT_APPLICABLE, NOT_MEASURED,
                                     measured_from_documents, render_markdown, reproduce,
                                     summary_line, verdict_text)

import published_helpers as h
from published_helpers import spread


def measured_small(toy=6.0, nocache=12.0, system=30.0, mimalloc=5.0):
    return {Need("w-small", 1, "heaplab", "primary"): spread(toy),
            Need("w-small", 1, "heaplab-nocache", "primary"): spread(nocache),
            Need("w-small", 1, "system", "primary"): spread(system),
            Need("w-small", 1, "mimalloc", "primary"): spread(mimalloc)}


def verdicts(result, row=0):
    return {(v.a, v.b): v for v in result.rows[row].verdicts}


def test_ratios_are_to_the_baseline_published_and_measured_separately():
    mini = h.mini()
    cells = reproduce(mini, measured_small()).rows[0].cells
    assert cells["toy"].published_ratio == pytest.approx(5 / 20)
    assert cells["toy"].measured_ratio == pytest.approx(6 / 30)
    assert cells["system"].published_ratio == 1.0 and cells["system"].measured_ratio == 1.0
    assert cells["other"].published_ratio == pytest.approx(30 / 20)


def test_orderings_cover_each_column_against_baseline_and_heaplab_against_mimalloc():
    mini = h.mini()
    pairs = list(verdicts(reproduce(mini, measured_small())))
    assert pairs == [("toy", "system"), ("toy without caches", "system"), ("mimalloc", "system"),
                     ("other", "system"), ("toy", "mimalloc")]


def test_lower_is_better_verdicts_hold_and_differ():
    mini = h.mini()
    # here the toy is slower than mimalloc (as published) and the nocache
    # variant slower than system (published: faster)
    v = verdicts(reproduce(mini, measured_small(toy=6.0, nocache=40.0, mimalloc=2.0)))
    assert (v[("toy", "system")].published, v[("toy", "system")].here) == ("faster", "faster")
    assert v[("toy", "system")].verdict == HOLDS
    assert v[("toy without caches", "system")].verdict == DIFFERS
    assert v[("toy", "mimalloc")].published == "slower" and v[("toy", "mimalloc")].verdict == HOLDS


def test_higher_is_better_reverses_the_direction():
    mini_doc = h.mini_doc()
    mini_doc["better"] = "higher"
    table = h.parse(mini_doc)
    v = verdicts(reproduce(table, measured_small(toy=6.0, system=30.0)))
    # published 5 vs 20 and measured 6 vs 30: smaller is slower when higher is better
    assert v[("toy", "system")].published == "slower"
    assert v[("toy", "system")].here == "slower"
    assert v[("toy", "mimalloc")].published == "faster"   # 5 > 4
    assert v[("toy", "mimalloc")].here == "faster"        # 6 > 5


def test_row_level_better_overrides_the_table():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["better"] = "higher"
    v = verdicts(reproduce(h.parse(mini_doc), measured_small()))
    assert v[("toy", "system")].published == "slower"


def test_missing_cells_are_not_measured_and_not_comparable():
    mini = h.mini()
    result = reproduce(mini, {})
    cell = result.rows[0].cells["toy"]
    assert cell.measured is None and cell.failure == NOT_MEASURED and cell.measured_ratio is None
    assert all(v.verdict == NOT_APPLICABLE for r in result.rows for v in r.verdicts)


def test_failure_string_is_carried_to_the_cell_the_verdict_and_the_markdown():
    mini = h.mini()
    measured = measured_small()
    measured[Need("w-small", 1, "mimalloc", "primary")] = "not installed (apt install libmimalloc2.0)"
    result = reproduce(mini, measured)
    assert result.rows[0].cells["mimalloc"].failure == "not installed (apt install libmimalloc2.0)"
    v = verdicts(result)[("mimalloc", "system")]
    assert v.verdict == NOT_APPLICABLE and v.why_na == "not installed (apt install libmimalloc2.0)"
    assert "here not installed (apt install libmimalloc2.0)" in render_markdown(result)


def test_failed_baseline_leaves_no_measured_ratios():
    mini = h.mini()
    measured = measured_small()
    measured[Need("w-small", 1, "system", "primary")] = "crashed (SIGSEGV)"
    cells = reproduce(mini, measured).rows[0].cells
    assert cells["toy"].measured == pytest.approx(6.0) and cells["toy"].measured_ratio is None


def test_column_that_cannot_run_is_never_filled():
    mini = h.mini()
    result = reproduce(mini, measured_small())
    cell = result.rows[0].cells["other"]
    assert cell.measured is None and cell.failure.startswith("not run")
    assert verdicts(result)[("other", "system")].verdict == NOT_APPLICABLE


def test_published_dash_gives_no_published_ratio_and_no_ordering():
    mini = h.mini()
    result = reproduce(mini, {Need("w-big", 4, a, "primary"): spread(10.0)
                              for a in ("heaplab", "heaplab-nocache", "system", "mimalloc")})
    row = result.rows[1]
    assert row.cells["toy"].published_ratio is None
    assert row.cells["toy"].measured_ratio == pytest.approx(1.0)
    v = verdicts(result, row=1)
    assert v[("toy", "system")].verdict == NOT_APPLICABLE
    assert v[("toy", "system")].why_na == "no published figure"
    # heaplab against mimalloc does not need the baseline: 7 vs 9 published, tie here
    assert v[("toy", "mimalloc")].published == "faster"


def test_counts_and_summary_line():
    mini = h.mini()
    result = reproduce(mini, measured_small(toy=6.0, nocache=40.0, mimalloc=2.0))
    # toy/system holds, nocache/system differs, mimalloc/system holds, toy/mimalloc holds;
    # other/system and all of row 2 are not comparable
    assert (result.holds, result.differs, result.compared) == (3, 1, 4)
    assert result.not_applicable == 1 + 5
    assert summary_line(result).startswith("3 of 4 orderings hold")


def test_published_tie_holds_when_the_ranges_overlap_and_differs_when_they_do_not():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["figures"].update({"toy": 20, "mimalloc": 20})
    table = h.parse(mini_doc)
    overlapping = reproduce(table, measured_small(toy=30.5, system=30.0))
    v = verdicts(overlapping)[("toy", "system")]
    assert v.published == "same" and v.within_noise and v.verdict == HOLDS
    apart = {**measured_small(system=30.0),
             Need("w-small", 1, "heaplab", "primary"): spread(10.0, 9.0, 11.0)}
    assert verdicts(reproduce(table, apart))[("toy", "system")].verdict == DIFFERS


def test_overlapping_ranges_are_noted_on_a_holding_verdict():
    mini = h.mini()
    measured = {**measured_small(system=30.0),
                Need("w-small", 1, "heaplab", "primary"): spread(29.0, 20.0, 35.0)}
    v = verdicts(reproduce(mini, measured))[("toy", "system")]
    assert v.verdict == HOLDS and v.within_noise
    assert "holds (ranges overlap)" in render_markdown(reproduce(mini, measured))


def test_zero_baseline_gives_no_ratio():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["figures"]["system"] = 0
    cells = reproduce(h.parse(mini_doc), measured_small(system=0.0)).rows[0].cells
    assert cells["toy"].published_ratio is None and cells["toy"].measured_ratio is None


def test_min_statistic_compares_the_measured_minimum():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["statistic"] = "min"
    cells = reproduce(h.parse(mini_doc), {Need("w-small", 1, "heaplab", "primary"): spread(6.0, 4.0, 9.0)}
                      ).rows[0].cells
    assert cells["toy"].measured == pytest.approx(4.0)


def test_reference_column_and_scale_come_from_the_baseline_run():
    memory_table = h.memory_table()
    mb = 1_000_000
    measured = {
        Need("w-mem", 1, "system", "phase:built:ws_above_start_bytes"): spread(150 * mb),
        Need("w-mem", 1, "heaplab", "phase:built:ws_above_start_bytes"): spread(120 * mb),
        Need("w-mem", 1, "system", "phase:built:live_bytes"): spread(100 * mb),
        Need("w-mem", 1, "heaplab", "phase:built:live_bytes"): spread(999 * mb),
    }
    result = reproduce(memory_table, measured)
    cells = result.rows[0].cells
    assert cells["live"].measured == pytest.approx(100.0)     # the baseline's, in MB
    assert cells["toy"].measured_ratio == pytest.approx(120 / 150)
    v = verdicts(result)
    assert list(v) == [("toy", "system")]                     # no ordering for the reference column
    assert v[("toy", "system")].published == "smaller" and v[("toy", "system")].verdict == HOLDS


def test_header_names_every_mapping():
    mini = h.mini()
    text = render_markdown(reproduce(mini, {}), here="Debian 12, 2 cores")
    assert "- toy → heaplab (measured here); heaplab stands in for toy" in text
    assert "- toy without caches → heaplab-nocache (measured here)" in text
    assert "- system → system (measured here); this machine's glibc; the baseline column" in text
    assert "- other → not run (no such library here)" in text
    assert "Measured here on: Debian 12, 2 cores." in text
    assert "Source: made up for the tests (900_fixture.txt" in text


def test_markdown_keeps_the_published_layout_and_marks_suspect_rows():
    mini = h.mini()
    text = render_markdown(reproduce(mini, measured_small()))
    table_lines = [line for line in text.splitlines()
                   if line.startswith("| ") and not line.startswith("| ---")]
    assert table_lines[0].startswith("| row | toy → heaplab | toy without caches → heaplab-nocache | system |")
    assert table_lines[1].startswith("| small | published 5 (×0.25) · here 6.00 [5.40–6.60] (×0.20)")
    assert "no system figure (suspect, see notes)" in table_lines[2]
    assert "1. SUSPECT FIGURE — the second row's toy figure was taken wrongly" in text
    assert "toy faster than system: published yes, here yes — holds" in table_lines[1]


def test_allocator_rows_layout_puts_one_allocator_per_line():
    memory_table = h.memory_table()
    text = render_markdown(reproduce(memory_table, {}))
    table_lines = [line for line in text.splitlines()
                   if line.startswith("| ") and not line.startswith("| ---")]
    assert table_lines[0].startswith("| allocator | built | peak | ordering vs system")
    assert [line.split(" | ")[0] for line in table_lines[1:]] == ["| live", "| toy → heaplab", "| system"]
    assert table_lines[-1].endswith("| baseline |")


def test_measured_entry_of_the_wrong_type_is_refused():
    mini = h.mini()
    with pytest.raises(TypeError, match="must be a mapping or a failure string"):
        reproduce(mini, {Need("w-small", 1, "heaplab", "primary"): 6.0})


def run_doc(allocator, value, status="ok", **extra):
    return {"schema": "heaplab.run/1", "status": status, "primary": "ns_per_pair",
            "workload": {"name": "w-small", "threads": 1}, "allocator": {"name": allocator},
            "metrics": {"ns_per_pair": {"value": value}} if status == "ok" else {}, **extra}


def test_measured_from_documents_takes_medians_and_keeps_failures():
    mini = h.mini()
    docs = [run_doc("heaplab", v) for v in (7.0, 5.0, 6.0)]
    docs += [run_doc("system", 30.0), run_doc("system", None, status="crashed", signal="SIGSEGV")]
    docs += [run_doc("heaplab-nocache", None, status="crashed", signal="SIGABRT")]
    measured = measured_from_documents(docs, {n for n in needed_cells(mini) if n.workload == "w-small"},
                                       unavailable={"mimalloc": "not installed (apt install libmimalloc2.0)"})
    assert measured[Need("w-small", 1, "heaplab", "primary")] == {"median": 6.0, "min": 5.0, "max": 7.0, "n": 3}
    assert measured[Need("w-small", 1, "system", "primary")]["n"] == 1   # the crash is not a figure
    assert measured[Need("w-small", 1, "heaplab-nocache", "primary")] == "crashed (SIGABRT)"
    assert measured[Need("w-small", 1, "mimalloc", "primary")] == "not installed (apt install libmimalloc2.0)"


def test_row_verdict_words_override_the_tables():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["verdict_words"] = ["smaller", "larger"]
    v = verdicts(reproduce(h.parse(mini_doc), measured_small()))
    assert v[("toy", "system")].published == "smaller"
    assert v[("toy", "mimalloc")].published == "larger"


def test_overlapping_published_ranges_are_read_as_a_published_tie():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["published_range"] = {"toy": [4, 25], "system": [15, 30]}
    table = h.parse(mini_doc)
    tie_here = {**measured_small(system=30.0), Need("w-small", 1, "heaplab", "primary"): spread(29.0, 20.0, 35.0)}
    v = verdicts(reproduce(table, tie_here))[("toy", "system")]
    assert v.published == "same" and v.published_within_noise and v.verdict == HOLDS
    assert "toy same as system (published ranges overlap): published yes, here yes" in verdict_text(v)
    apart = {**measured_small(system=30.0), Need("w-small", 1, "heaplab", "primary"): spread(6.0, 5.0, 7.0)}
    assert verdicts(reproduce(table, apart))[("toy", "system")].verdict == DIFFERS


def test_disjoint_published_ranges_keep_the_published_ordering():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["published_range"] = {"toy": [4, 6], "system": [15, 30]}
    v = verdicts(reproduce(h.parse(mini_doc), measured_small()))[("toy", "system")]
    assert v.published == "faster" and not v.published_within_noise


def test_reference_column_shows_why_the_baseline_run_has_no_figure():
    memory_table = h.memory_table()
    measured = {Need("w-mem", 1, a, "phase:built:live_bytes"): "crashed (SIGABRT)"
                for a in ("system", "heaplab")}
    assert reproduce(memory_table, measured).rows[0].cells["live"].failure == "crashed (SIGABRT)"
