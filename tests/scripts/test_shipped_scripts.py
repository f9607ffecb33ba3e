"""Every script shipped in workloads/ loads, is listed under its own name,
and runs at its quick size on the system allocator."""
from __future__ import annotations

import pathlib

import pytest

from wl_script_helpers import REPO, list_json, run_cell, script_entries

WORKLOADS = REPO / "workloads"
SHIPPED = sorted(WORKLOADS.glob("*.wl"))


def test_the_required_scripts_are_shipped() -> None:
    names = {p.name for p in SHIPPED}
    assert {"tmalloc-memory.wl", "kevy-churn.wl", "kevy-churn-trim.wl",
            "prog-python-dict.wl", "prog-sort.wl"} <= names


def test_no_shipped_script_is_broken(heaplab_run: pathlib.Path) -> None:
    listing = list_json(heaplab_run, WORKLOADS)
    assert listing["broken_scripts"] == []
    sources = {pathlib.Path(w["source"]).name for w in script_entries(listing).values()}
    assert sources == {p.name for p in SHIPPED}


def test_tmalloc_memory_has_the_published_phases(heaplab_run: pathlib.Path) -> None:
    entry = script_entries(list_json(heaplab_run, WORKLOADS))["tmalloc-memory"]
    assert entry["kind"] == "script"
    assert [p["name"] for p in entry["params"]] == ["N"]
    assert entry["params"][0]["default"] == 300000
    cell = run_cell(heaplab_run, "tmalloc-memory", "system", "--quick",
                    "--workloads-dir", str(WORKLOADS))
    assert cell.returncode == 0, cell.stderr
    phases = cell.phases()
    assert list(phases) == ["built", "freed80", "refilled", "freed90"]
    quick = entry["params"][0]["quick"]
    # ops: N allocs, 80% of N freed, N allocs, 90% of what is left freed
    after80 = quick - quick * 80 // 100
    assert phases["built"]["ops"] == quick
    assert phases["freed80"]["ops"] == quick * 80 // 100
    assert phases["refilled"]["ops"] == quick
    assert phases["freed90"]["ops"] == (after80 + quick) * 90 // 100
    # loguniform(16,32K) averages ~4.3 KB; uniform(16,2K) ~1 KB
    built = phases["built"]["live_bytes"]
    assert 16 * quick <= built <= 32 * 1024 * quick
    assert phases["freed80"]["live_bytes"] < built
    assert phases["refilled"]["live_bytes"] > phases["freed80"]["live_bytes"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_script_runs_quick_on_system(heaplab_run: pathlib.Path, path: pathlib.Path) -> None:
    cell = run_cell(heaplab_run, path, "system", "--quick")
    assert cell.returncode == 0, cell.stderr
    assert cell.doc is not None and cell.doc["status"] == "ok"
    primary = cell.doc["primary"]
    assert cell.metric(primary) > 0
