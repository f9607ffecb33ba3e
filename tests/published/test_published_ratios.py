"""Ratio-claims tables: a relative figure ("A's time / B's time >= 2.5") beside
this machine's quotient of the same two medians, whether the ordering it
implies holds here, and the one-line refusals of a bad claim."""
from __future__ import annotations

import copy
import json

import pytest

from heaplab import published, suites
from heaplab.published import Need, PublishedError
from heaplab.reproduce_table import (DIFFERS, HOLDS, NOT_APPLICABLE, render_markdown, reproduce,
                                     summary_line)

import published_helpers as h
from published_helpers import spread

RATIOS = h.FIXTURES / "902-ratios.json"


def ratios_doc():
    return json.loads(RATIOS.read_text(encoding="utf-8"))


def ratios():
    return published.load_table(RATIOS)


def refused(doc) -> str:
    with pytest.raises(PublishedError) as info:
        published.parse_table(copy.deepcopy(doc), RATIOS)
    message = str(info.value)
    assert "\n" not in message and message.startswith("902-ratios.json: ")
    return message


def measured(fast=10.0, slow=30.0, libc=40.0, fast16=10.0):
    return {Need("w", 2, "mimalloc", "primary"): spread(fast),
            Need("w", 2, "tcmalloc", "primary"): spread(slow),
            Need("w", 16, "mimalloc", "primary"): spread(fast16),
            Need("w", 16, "system", "primary"): spread(libc)}


# ----------------------------------------------------------------- the format

def test_ratio_fixture_validates_with_its_claims_and_source():
    t = ratios()
    assert t.layout == published.LAYOUT_RATIO_CLAIMS and t.seed is None
    assert t.url == "https://example.org/readme.md" and t.version == "v0 (made up)"
    claims = [(r.ratio.of, r.ratio.to, r.ratio.bound, r.ratio.value) for r in t.rows]
    assert claims == [("slow", "fast", "at_least", 2.5), ("absent", "fast", "about", 1.48),
                      ("fast", "libc", "at_most", 0.5)]
    assert all(r.figures == {} for r in t.rows)


def test_a_ratio_row_runs_only_its_two_columns():
    needs = published.needed_cells(ratios())
    assert needs == {Need("w", 2, "mimalloc", "primary"), Need("w", 2, "tcmalloc", "primary"),
                     Need("w", 16, "mimalloc", "primary"), Need("w", 16, "system", "primary")}


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["ratio"].update(of="jemalloc"), "rows[0].ratio.of: 'jemalloc' is not an allocator column"),
    (lambda r: r["ratio"].update(of="fast"), "rows[0].ratio: of and to name the same column"),
    (lambda r: r["ratio"].pop("at_least"), "rows[0].ratio: must give exactly one of at_least, at_most, about"),
    (lambda r: r["ratio"].update(about=2.0), "rows[0].ratio: must give exactly one of at_least, at_most, about"),
    (lambda r: r["ratio"].update(at_least=-2.5), "rows[0].ratio.at_least: must be a positive number"),
    (lambda r: r["ratio"].update(at_least="2.5"), "rows[0].ratio.at_least: must be a positive number"),
    (lambda r: r["ratio"].update(above=2.5), "rows[0].ratio.above: unknown field"),
    (lambda r: r.pop("ratio"), "rows[0].ratio: missing"),
    (lambda r: r.update(figures={"fast": 1}), "rows[0].figures: a ratio-claims row gives its figure in ratio"),
])
def test_a_bad_ratio_row_is_refused_in_one_line(edit, message):
    doc = ratios_doc()
    edit(doc["rows"][0])
    assert message in refused(doc)


def test_a_ratio_in_a_table_of_figures_is_refused():
    doc = h.mini_doc()
    doc["rows"][0]["ratio"] = {"of": "toy", "to": "system", "at_least": 2}
    with pytest.raises(PublishedError, match=r"^900-mini.json: rows\[0\].ratio: only a ratio-claims table"):
        h.parse(doc)


def test_a_source_address_must_be_https():
    doc = ratios_doc()
    doc["source"]["url"] = "http://example.org/readme.md"
    assert refused(doc) == "902-ratios.json: source.url: must be an https:// address"
    del doc["source"]["version"]
    doc["source"]["url"] = "https://example.org/readme.md"
    assert refused(doc) == "902-ratios.json: source.version: missing"


# ------------------------------------------------------- verdicts and markdown

def test_claim_that_holds_here_shows_both_ratios_and_holds():
    result = reproduce(ratios(), measured(fast=10.0, slow=30.0))
    row = result.rows[0]
    assert row.ratio.measured == pytest.approx(3.0) and row.ratio.bound_met is True
    (v,) = row.verdicts
    assert (v.a, v.b, v.published, v.here, v.verdict) == ("slow", "fast", "slower", "slower", HOLDS)
    text = render_markdown(result, cores=2)
    line = next(ln for ln in text.splitlines() if ln.startswith("| w, 2 threads: slow against fast"))
    assert "slow ÷ fast ≥ 2.5" in line                    # published
    assert "×3.00 (published ≥ 2.5: met)" in line         # measured here
    assert "slow slower than fast: published yes, here yes — holds" in line


def test_claim_that_does_not_hold_here_differs():
    result = reproduce(ratios(), measured(fast=10.0, slow=5.0))
    row = result.rows[0]
    assert row.ratio.measured == pytest.approx(0.5) and row.ratio.bound_met is False
    assert row.verdicts[0].verdict == DIFFERS and row.verdicts[0].here == "faster"
    line = next(ln for ln in render_markdown(result).splitlines()
                if ln.startswith("| w, 2 threads: slow against fast"))
    assert "×0.50 (published ≥ 2.5: not met)" in line
    assert "published yes, here no — differs" in line


def test_ordering_can_hold_while_the_published_bound_is_not_met():
    row = reproduce(ratios(), measured(fast=10.0, slow=15.0)).rows[0]
    assert row.verdicts[0].verdict == HOLDS and row.ratio.bound_met is False


def test_at_most_below_one_is_a_faster_claim():
    row = reproduce(ratios(), measured(fast16=10.0, libc=40.0)).rows[2]
    assert row.verdicts[0].published == "faster" and row.verdicts[0].verdict == HOLDS
    assert row.ratio.measured == pytest.approx(0.25) and row.ratio.bound_met is True


def test_overlapping_ranges_are_marked_on_the_verdict():
    m = measured()
    m[Need("w", 2, "tcmalloc", "primary")] = spread(11.0)   # 9.9-12.1 against 9-11
    v = reproduce(ratios(), m).rows[0].verdicts[0]
    assert v.verdict == HOLDS and v.within_noise


def test_a_column_that_cannot_run_leaves_the_claim_published_only():
    result = reproduce(ratios(), measured())
    row = result.rows[1]
    assert row.ratio.measured is None and row.verdicts[0].verdict == NOT_APPLICABLE
    assert "absent" not in {n.allocator for n in published.needed_cells(ratios())}
    line = next(ln for ln in render_markdown(result).splitlines()
                if ln.startswith("| w, 2 threads: absent against fast"))
    assert "absent ÷ fast ≈ 1.48" in line
    assert "not run" in line
    assert summary_line(result) == "2 of 2 orderings hold (1 not comparable)"


def test_header_names_the_source_and_the_oversubscribed_rows():
    text = render_markdown(reproduce(ratios(), measured()), here="a 2-core VM", cores=2)
    assert "(https://example.org/readme.md, v0 (made up), section \"Performance\"" in text
    assert "This machine has 2 cores: rows at 16 threads oversubscribe it" in text
    assert "(16 cores)" in text
    assert "oversubscribe" not in render_markdown(reproduce(ratios(), measured()), cores=16)


# ------------------------------------------------------- the real table

def test_mimalloc_table_runs_larson_and_cache_scratch_on_installed_allocators():
    t = published.find_table(published.load_all(), "mimalloc-2019")
    runs = {(s.workload, s.threads, s.allocator) for s in published.run_specs(t)}
    assert runs == {(w, n, a) for n in (2, 16)
                    for w, allocs in (("larson", ("mimalloc", "tcmalloc", "jemalloc", "system")),
                                      ("cache-scratch", ("mimalloc", "tcmalloc", "jemalloc")))
                    for a in allocs}
    text = render_markdown(reproduce(t, {}), cores=2)
    assert "16 cores" in text and "This machine has 2 cores" in text


def test_seed_suite_keeps_to_the_seed_tables():
    names = suites._seed_names()
    assert "tmalloc-st-64" in names
    assert "larson" not in names and "cache-scratch" not in names
