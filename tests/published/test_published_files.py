"""The real published tables in results/published/: they parse, they name
workloads that exist, and every figure is one the seed text really prints
(or, for a public source outside the seeds, the figures agreed from it)."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess

import pytest

from heaplab import published
from heaplab.reproduce_table import fmt_published, reproduce, render_markdown

REPO = pathlib.Path(__file__).resolve().parents[2]
# the seed documents sit beside the checkout, in shared/seeds/
SEEDS = REPO.parent / "shared" / "seeds"

# The built-in workloads (workloads/*.c), as agreed between the parts.
BUILTIN_WORKLOADS = {
    "tmalloc-st-64", "tmalloc-st-reverse", "tmalloc-st-random", "tmalloc-st-mixed",
    "tmalloc-st-medium", "tmalloc-st-huge", "tmalloc-mt", "tmalloc-xthread",
    "memalloc-fixed", "memalloc-mixed", "memalloc-latency",
    "memallocpp-st", "memallocpp-mt", "memallocpp-locality",
    "kevy-pair-64", "kevy-pair-400", "kevy-pair-4096", "kevy-churn",
    "larson", "xmalloc", "threadtest", "cache-scratch", "cache-thrash", "mstress", "rptest",
}

EXPECTED_ROWS = {
    "000-tmalloc-st": 6, "000-tmalloc-mt": 5, "000-tmalloc-memory": 5,
    "001-memalloc-fixed": 2, "001-memalloc-mixed": 2, "001-memalloc-latency": 3,
    "003-memallocpp-st": 3, "003-memallocpp-mt": 4, "003-memallocpp-locality": 3,
    "004-kevy-alloc": 5, "010-mimalloc-2019": 11,
}

# The figures 010-mimalloc-2019 records from mimalloc's 2019 README (the prose
# of its "Benchmark Results"), as (workload, threads, of, to, bound, value):
# more than 2.5x tcmalloc and jemalloc on larson, 48% ahead of snmalloc (the
# next fastest, so glibc too is at least that far behind), more than 18x
# jemalloc and tcmalloc on cache-scratch; each at 2 and 16 threads here.
MIMALLOC_2019_CLAIMS = sorted(
    [(w, n, of, "mimalloc", "at_least", v) for n in (2, 16)
     for w, of, v in (("larson", "tcmalloc", 2.5), ("larson", "jemalloc", 2.5),
                      ("larson", "glibc", 1.48), ("cache-scratch", "jemalloc", 18.0),
                      ("cache-scratch", "tcmalloc", 18.0))]
    + [("larson", 2, "snmalloc", "mimalloc", "about", 1.48)])

_SCRIPT_NAME = re.compile(r"^\s*workload\s+([A-Za-z0-9_.-]+)", re.MULTILINE)


def script_workloads() -> set[str]:
    """Names of the workload scripts: each file's `workload NAME` line, and its stem."""
    names: set[str] = set()
    for path in (REPO / "workloads").glob("*.wl"):
        names.add(path.stem)
        names.update(_SCRIPT_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


@pytest.fixture(scope="module")
def tables() -> list[published.PublishedTable]:
    return published.load_all()


def test_every_published_table_parses_with_its_row_count(tables):
    assert {t.id: len(t.rows) for t in tables} == EXPECTED_ROWS


def test_every_row_names_a_builtin_workload_or_a_script(tables):
    known = BUILTIN_WORKLOADS | script_workloads()
    unknown = sorted({(t.id, r.workload) for t in tables for r in t.rows
                      if r.workload is not None and r.workload not in known})
    assert unknown == []


def test_every_row_names_a_workload_the_built_runner_lists(tables, runner_path):
    """Stronger than the list above when a runner is built: its own --list-json."""
    if not runner_path.exists():
        pytest.skip(f"no runner at {runner_path}")
    listing = json.loads(subprocess.run([str(runner_path), "--list-json"], capture_output=True,
                                        text=True, check=True, timeout=60).stdout)
    known = {w["name"] for w in listing["workloads"]}
    unknown = sorted({(t.id, r.workload) for t in tables for r in t.rows
                      if r.workload is not None and r.workload not in known})
    assert unknown == []


def test_every_table_credits_an_existing_seed_file_or_a_public_address(tables):
    for t in tables:
        assert t.credit.startswith("published by ")
        if t.seed is None:
            assert t.url and t.url.startswith("https://") and t.version, t.id
        elif SEEDS.is_dir():
            assert (SEEDS / t.seed).is_file(), t.id


def test_mimalloc_2019_records_exactly_the_figures_its_readme_states(tables):
    t = published.find_table(tables, "010-mimalloc-2019")
    got = sorted((r.workload, r.threads, r.ratio.of, r.ratio.to, r.ratio.bound, r.ratio.value)
                 for r in t.rows)
    assert got == MIMALLOC_2019_CLAIMS
    assert t.machine["cores"] == "16 cores" and "r5a.4xlarge" in t.machine["instance"]
    # the header must say the published machine is not this one
    assert any("16-core machine" in n.text and "2-core VM" in n.text for n in t.notes)


@pytest.mark.skipif(not SEEDS.is_dir(), reason="seed documents not available")
def test_every_published_figure_appears_in_its_seed_text(tables):
    missing = []
    for t in (t for t in tables if t.seed is not None):
        text = (SEEDS / t.seed).read_text(encoding="utf-8")
        for r in t.rows:
            figures = [v for v in r.figures.values() if v is not None]
            figures += [v for rng in r.published_range.values() for v in rng]
            figures += [v for v in r.published_extra.values() if v is not None]
            for v in figures:
                shown = fmt_published(v, r.decimals)
                if not re.search(rf"(?<![\d.,]){re.escape(shown)}(?![\d]|,\d)", text):
                    missing.append((t.id, r.label, shown))
    assert missing == []


def test_mapped_columns_follow_the_agreed_stand_ins(tables):
    stand_in = {"tmalloc": "heaplab", "tmalloc without thread caches": "heaplab-nocache",
                "memalloc": "heaplab", "ThreadPoolAlloc": "heaplab",
                "ThreadPoolAlloc (slabs)": "heaplab", "kevy-alloc": "heaplab",
                "system": "system", "std::malloc/free": "system",
                "std::malloc (scattered)": "system", "mimalloc": "mimalloc",
                "::operator new/delete": None, "live": None,
                "tcmalloc": "tcmalloc", "jemalloc": "jemalloc", "glibc": "system", "snmalloc": None}
    for t in tables:
        for c in t.columns:
            assert c.name in stand_in, (t.id, c.name)
            assert c.runs_as == stand_in[c.name], (t.id, c.name)


def test_system_columns_say_they_are_this_machines_glibc(tables):
    for t in tables:
        for c in t.columns:
            if c.runs_as == "system":
                assert c.note and "glibc" in c.note, (t.id, c.name)


def test_kevy_trim_row_is_flagged_suspect_and_no_other_row_is(tables):
    suspect = [(t.id, r.label) for t in tables for r in t.rows if r.suspect]
    assert len(suspect) == 1
    table_id, label = suspect[0]
    assert table_id == "004-kevy-alloc"
    kevy = published.find_table(tables, "kevy-alloc")
    assert kevy.rows[-1].label == label and kevy.rows[-1].figures["system"] is None


def test_every_table_renders_without_measurements(tables):
    for t in tables:
        text = render_markdown(reproduce(t, {}))
        assert t.id in text and "0 of 0 orderings hold" in text
