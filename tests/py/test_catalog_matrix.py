"""Choosing allocators and workloads, and the order cells run in."""
import json

import pytest

from heaplab import catalog, matrix
from heaplab.runfolder import CellKey


@pytest.fixture
def cat(driver_fixtures):
    return catalog.Catalog.from_json(json.loads((driver_fixtures / "list.json").read_text()))


def test_default_allocators_are_every_listed_one_including_unavailable(cat):
    assert catalog.select_allocators(cat, None) == ["system", "heaplab", "mimalloc", "jemalloc"]


def test_a_baseline_runs_only_when_named(cat):
    assert "floor" not in catalog.select_allocators(cat, None)
    assert catalog.select_allocators(cat, "floor,system") == ["floor", "system"]


def test_an_older_listing_without_default_flags_runs_everything():
    doc = {"schema": catalog.LIST_SCHEMA, "allocators": [{"name": "system", "available": True}], "workloads": []}
    assert catalog.select_allocators(catalog.Catalog.from_json(doc), None) == ["system"]


def test_allocators_keep_the_order_asked_and_accept_globs(cat):
    assert catalog.select_allocators(cat, "mimalloc,system") == ["mimalloc", "system"]
    assert catalog.select_allocators(cat, "*malloc,system") == ["mimalloc", "jemalloc", "system"]


def test_so_allocators_pass_through(cat, tmp_path):
    lib = tmp_path / "x.so"
    lib.write_bytes(b"")
    assert catalog.select_allocators(cat, f"so:{lib}") == [f"so:{lib}"]


def test_unknown_allocator_is_one_line_listing_what_exists(cat):
    with pytest.raises(catalog.SelectionError) as e:
        catalog.select_allocators(cat, "system,hoard")
    text = str(e.value)
    assert "hoard" in text and "system, heaplab, mimalloc, jemalloc" in text and "\n" not in text


def test_workload_globs_select_in_catalog_order(cat):
    names = [w.name for w in catalog.select_workloads(cat, "phases-*,tmalloc-st-*")]
    assert names == ["tmalloc-st-64", "phases-demo"]


def test_a_group_name_selects_the_group(cat):
    assert [w.name for w in catalog.select_workloads(cat, "tmalloc")] == ["tmalloc-st-64", "tmalloc-mt-64"]


def test_unknown_workload_is_one_line_listing_what_exists(cat):
    with pytest.raises(catalog.SelectionError) as e:
        catalog.select_workloads(cat, "nosuch*")
    assert "nosuch*" in str(e.value) and "tmalloc-st-64, tmalloc-mt-64, phases-demo" in str(e.value)


def test_thread_list_parsing():
    assert catalog.parse_threads("1, 2,4,2") == [1, 2, 4]
    assert catalog.parse_threads(None) == []
    for bad in ("0", "two", "-1"):
        with pytest.raises(catalog.SelectionError):
            catalog.parse_threads(bad)


def test_listing_with_a_wrong_schema_is_refused():
    with pytest.raises(ValueError):
        catalog.Catalog.from_json({"schema": "something/9"})


def test_threads_expand_only_threaded_workloads(cat):
    cells = matrix.plan_cells(cat.workloads, ["system"], [1, 4])
    rows = [(c.workload.name, c.threads, c.pass_threads) for c in cells]
    assert rows == [("tmalloc-st-64", 1, False), ("tmalloc-mt-64", 1, True),
                    ("tmalloc-mt-64", 4, True), ("phases-demo", 1, False)]


def test_default_threads_are_the_workloads_own(cat):
    cells = matrix.plan_cells(cat.workloads, ["system"], [])
    assert [(c.workload.name, c.threads, c.pass_threads) for c in cells][1] == ("tmalloc-mt-64", 2, False)


def test_repetitions_are_interleaved_across_cells(cat):
    cells = matrix.plan_cells(cat.workloads[:1], ["system", "heaplab"], [])
    order = [(s.rep, s.cell.allocator) for s in matrix.interleave(cells, 3)]
    assert order == [(1, "system"), (1, "heaplab"), (2, "system"), (2, "heaplab"),
                     (3, "system"), (3, "heaplab")]


def test_cell_key_names_workload_allocator_and_threads(cat):
    cell = matrix.plan_cells(cat.workloads[1:2], ["mimalloc"], [])[0]
    assert cell.label == "tmalloc-mt-64/mimalloc/2t"
    assert cell.key == CellKey("tmalloc-mt-64", 2, "mimalloc")


@pytest.mark.parametrize("spec,says", [("1,,2", "empty entry"), ("100000", "[1, 1024]"),
                                       ("0", "[1, 1024]")])
def test_bad_thread_lists_are_refused_before_anything_runs(spec, says):
    with pytest.raises(catalog.SelectionError) as e:
        catalog.parse_threads(spec)
    assert says in str(e.value)
