"""Every built-in workload writes into its blocks as `touch` says (none, first,
pages, all), the tables and charts say which, and the published tables that
need the seed's own choice (blocks never written) ask for it."""
from __future__ import annotations

import json
import pathlib
import subprocess

import pytest

from heaplab import catalog, cmd_reproduce, published, summary, tables

TOUCH_VALUES = ["none", "first", "pages", "all"]
# the seed's rows say "touched" for these: a byte per page, as before
PAGES_BY_DEFAULT = {"tmalloc-st-medium", "tmalloc-st-huge"}
MB = 1_000_000


@pytest.fixture(scope="module")
def listing(runner_path):
    if not runner_path.exists():
        pytest.skip("needs build/heaplab-run")
    out = subprocess.run([str(runner_path), "--list-json"], capture_output=True, text=True,
                         check=True).stdout
    return catalog.Catalog.from_json(json.loads(out))


def _run(runner: pathlib.Path, *args: str) -> dict:
    proc = subprocess.run([str(runner), "--alloc", "system", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_builtin_workload_has_a_touch_parameter_written_first_by_default(listing):
    builtins = [w for w in listing.workloads if w.kind == "builtin"]
    assert len(builtins) >= 25
    for w in builtins:
        p = next((p for p in w.params if p["name"] == "touch"), None)
        assert p is not None, f"{w.name} has no touch parameter"
        assert p["values"] == TOUCH_VALUES
        expected = "pages" if w.name in PAGES_BY_DEFAULT else "first"
        assert catalog.value_name(p, p["default"]) == expected, w.name
        assert catalog.value_name(p, p["quick"]) == expected, w.name


def test_touch_is_set_by_name_and_a_wrong_name_is_one_line(listing):
    chosen = catalog.select_workloads(listing, "tmalloc-st-64,kevy-churn")
    params = catalog.parse_params(["touch=none"], chosen)
    assert params == {"tmalloc-st-64": (("touch", 0),), "kevy-churn": (("touch", 0),)}
    with pytest.raises(catalog.SelectionError) as e:
        catalog.parse_params(["touch=every"], chosen)
    assert "one of none, first, pages, all" in str(e.value)


def test_the_runner_takes_the_name_and_reports_it(runner_path, listing):
    doc = _run(runner_path, "--workload", "tmalloc-st-64", "--param", "pairs=1000",
               "--param", "touch=all")
    assert doc["workload"]["params"]["touch"] == 3
    assert doc["workload"]["param_names"] == {"touch": "all"}


@pytest.mark.parametrize("workload,shape", [
    ("tmalloc-st-random", ["count=40", "rounds=1", "min_size=1048576", "max_size=1048576"]),
    ("tmalloc-st-reverse", ["count=40", "rounds=1", "min_size=1048576", "max_size=1048576"]),
    # every block from the top tier: 256 KiB .. 1 MiB, 25 MB live on average
    ("tmalloc-st-mixed", ["live=40", "pairs=1", "large_permille=1000", "medium_permille=0",
                          "max_size=1048576"]),
])
def test_written_pages_are_resident_and_unwritten_ones_are_not(runner_path, listing, workload,
                                                               shape):
    # blocks of 256 KiB and more: glibc maps each one, so only what the
    # workload writes into them becomes resident
    base = ["--workload", workload]
    for s in shape:
        base += ["--param", s]
    peaks = {}
    for mode in ("none", "pages"):
        doc = _run(runner_path, *base, "--param", f"touch={mode}")
        peaks[mode] = doc["process"]["peak_rss_bytes"]
    assert peaks["pages"] - peaks["none"] > 15 * MB, peaks


def _doc(workload: str, touch: str | None) -> dict:
    w = {"name": workload, "group": "tmalloc", "threads": 1}
    if touch:
        w["param_names"] = {"touch": touch}
    return {"schema": "heaplab.run/1", "status": "ok", "workload": w,
            "allocator": {"name": "system"}, "primary": "ns_per_pair",
            "metrics": {"ns_per_pair": {"value": 5.0, "unit": "ns", "better": "lower"}},
            "rep": 1, "cell": f"{workload}/system/1t"}


def test_tables_label_each_row_with_what_its_blocks_had_written():
    plan = {"reps": 1, "allocators": [{"name": "system", "available": True}],
            "rows": [{"workload": "tmalloc-st-64", "group": "tmalloc", "threads": 1,
                      "metric": "ns_per_pair", "unit": "ns", "better": "lower"},
                     {"workload": "my-script", "group": "tmalloc", "threads": 1,
                      "metric": "ns_per_pair", "unit": "ns", "better": "lower"}]}
    result = summary.summarize([_doc("tmalloc-st-64", "first"), _doc("my-script", None)], plan)
    md = tables.markdown(result)
    assert "| tmalloc-st-64 (touch=first) |" in md
    assert "| my-script |" in md
    header, first = tables.csv_text(result).splitlines()[:2]
    assert header.split(",")[6] == "touch" and first.split(",")[6] == "first"


def test_the_seed_tables_that_never_wrote_run_with_touch_none(repo_root, listing):
    tables_ = [published.load_table(p) for p in
               sorted((repo_root / "results" / "published").glob("000-tmalloc-*.json"))]
    cells, _, _ = cmd_reproduce.plan(tables_, listing)
    by_workload = {c.workload.name: dict(c.params) for c in cells}
    for name in ("tmalloc-st-64", "tmalloc-st-reverse", "tmalloc-st-random", "tmalloc-st-mixed",
                 "tmalloc-mt", "tmalloc-xthread"):
        assert by_workload[name] == {"touch": 0}, name
    # the rows the seed says were touched keep the workloads' own default
    assert by_workload["tmalloc-st-medium"] == {} and by_workload["tmalloc-st-huge"] == {}
