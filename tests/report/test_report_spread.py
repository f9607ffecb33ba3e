"""Drift and noise made visible in report.html and the compare page: each
timing cell's spread (max ÷ min, cv) beside its median, the drift warnings
and the recommendation tables.md has, and on the compare page each cell's
detectable effect; instruction counts are exact and say so.

Fixtures: tests/compare/fixtures (make_fixtures.py) — drifting (a host that
slows by 60% during the run), noisy-base/noisy-slower (30% noise), base
(1% noise), instr-a/instr-b (instruction counts)."""
from __future__ import annotations

import pathlib
import re
import shutil
import statistics
from html import unescape

import pytest

from heaplab import compare, report, run_notes
from heaplab.merge import load_run_folder

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "compare" / "fixtures"


@pytest.fixture
def fixture_run(tmp_path: pathlib.Path):
    """A copy of a compare fixture run folder (the report is written into it)."""
    def copy(name: str) -> pathlib.Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        return target
    return copy


def _page(folder: pathlib.Path) -> str:
    return report.write(folder).read_text(encoding="utf-8")


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def _rows(page: str) -> list[list[str]]:
    """Every table body row of the page, as the text of its cells (a line
    break inside a cell as " | ")."""
    return [[_text(td.replace("<br>", " | ")) for td in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for body in re.findall(r"<tbody>(.*?)</tbody>", page, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def _verdict_table(page: str) -> tuple[list[str], list[list[str]]]:
    """The compare page's table of cells: its headings and rows."""
    table = next(t for t in re.findall(r"<table.*?</table>", page, re.S) if "<th>verdict</th>" in t)
    return re.findall(r"<th>(.*?)</th>", table), _rows(table)


def _comparison_page(tmp_path: pathlib.Path, comparison) -> tuple[str, dict]:
    document = compare.to_json(comparison)
    out = report.write_comparison(document, tmp_path / "compare.html")
    return out.read_text(encoding="utf-8"), document


# ------------------------------------------------------------ the run's report

def test_the_report_of_a_drifting_run_warns_of_the_drift(fixture_run) -> None:
    page = _page(fixture_run("drifting"))
    text = _text(page)
    assert 'id="steadiness"' in page
    # the lines tables.md has, word for word: one per baseline cell
    assert ("Drift: system's repetitions of tmalloc-st-64 (1t) rise 44.4% from the first of 9 "
            "repetitions to the last (scatter around the trend 0.4%): the machine changed during "
            "the run.") in text
    assert text.count("Drift: system's repetitions of") == 3
    assert "the machine changed" not in _text(_page(fixture_run("base")))


def test_a_noisy_cell_shows_its_max_over_min_and_cv_beside_its_median(fixture_run) -> None:
    folder = fixture_run("noisy-slower")
    page = _page(folder)
    row = next(r for r in _rows(page) if r[0].startswith("tmalloc-st-64"))
    heaplab = row[2]           # columns: workload, threads, heaplab, mimalloc, system
    # heaplab's nine repetitions: 45.8 to 71.2 ns, stdev 18.7% of their mean
    values = sorted(float(v) for v in re.findall(r"rep \d+: ([\d.]+)", re.search(
        r'<td class="num" data-sort="48.9407" title="([^"]*)"', page).group(1)))
    assert values[-1] / values[0] == pytest.approx(1.555, abs=0.005)
    assert statistics.stdev(values) / statistics.fmean(values) == pytest.approx(0.187, abs=0.001)
    assert heaplab == "48.9 ×1.02 | 45.8–71.2 | ×1.56, cv 18.7%"
    # every timing cell of the run has its spread
    cells = [c for r in _rows(page) for c in r[2:]]
    assert len(cells) == 9 and all(re.search(r"×\d\.\d\d, cv \d+\.\d%", c) for c in cells)


def test_a_noisy_run_report_ends_its_notes_with_the_recommendation(fixture_run) -> None:
    folder = fixture_run("noisy-slower")
    text = _text(_page(folder))
    assert ("Recommendation: 1 cell cannot detect against system a 5% change (worst: "
            "tmalloc-st-64/heaplab/1t, 41% with 9 repetitions); --reps 258") in text
    assert "Recommendation:" not in _text(_page(fixture_run("base")))


def test_the_report_notes_are_tables_md_notes(fixture_run) -> None:
    from heaplab import report_data
    folder = report_data.load(fixture_run("drifting"))
    lines = [line for line in run_notes.notes(folder.summary) if line]
    text = _text(_page(folder.path))
    assert lines and all(_text(line.lstrip("> ").replace("**", "")) in text for line in lines)


def test_instruction_counts_show_exact_and_no_spread(fixture_run) -> None:
    page = _page(fixture_run("instr-a"))
    cells = [c for r in _rows(page) for c in r[2:]]
    assert len(cells) == 9 and all(c.endswith(" | exact") for c in cells)
    assert "cv " not in _text(page) and 'id="steadiness"' not in page


# ------------------------------------------------------------ the compare page

def test_the_compare_page_shows_each_cells_detectable_effect_spread_and_verdict(tmp_path) -> None:
    page, document = _comparison_page(tmp_path, compare.compare_runs(
        load_run_folder(FIXTURES / "noisy-base"), load_run_folder(FIXTURES / "noisy-slower")))
    head, body = _verdict_table(page)
    assert {"spread (max÷min, cv)", "detectable", "verdict"} <= set(head)
    col = {name: head.index(name) for name in ("workload", "allocator", "spread (max÷min, cv)",
                                               "detectable", "verdict")}
    rows = {(r[col["workload"]], r[col["allocator"]]): r for r in body}
    assert len(rows) == len(document["cells"]) == 9
    for cell in document["cells"]:
        row = rows[(cell["workload"], cell["allocator"])]
        effect = cell["detectable"]["effect"]
        assert row[col["detectable"]] == f"±{effect:.0%}"
        base, new = cell["base"], cell["new"]
        assert row[col["spread (max÷min, cv)"]] == (
            f"×{base['max_over_min']:.2f}, cv {base['cv']:.1%} · ×{new['max_over_min']:.2f}, cv {new['cv']:.1%}")
        if cell["verdict"] == "not_significant":
            assert row[col["verdict"]].startswith(
                f"not significant; changes below {effect:.0%} are not detectable with 9 repetitions")
    # the Markdown's verdict of the 30% shift in 30% noise, word for word
    st = rows[("tmalloc-st-64", "heaplab")]
    assert st[col["detectable"]] == "±34%"
    assert st[col["verdict"]] == "unchanged; changes below 34% are not detectable with 9 repetitions"
    md = compare.to_markdown(compare.compare_runs(load_run_folder(FIXTURES / "noisy-base"),
                                                  load_run_folder(FIXTURES / "noisy-slower")))
    assert "| ±34% | unchanged; changes below 34% are not detectable with 9 repetitions |" in md


def test_the_compare_page_names_the_command_that_wrote_it(tmp_path) -> None:
    # it was written by compare --html-out, not by `run.py report` of its folder
    page, _ = _comparison_page(tmp_path, compare.compare_runs(
        load_run_folder(FIXTURES / "base"), load_run_folder(FIXTURES / "rerun")))
    assert "Written by <code>./run.py compare … --html-out</code>" in page
    assert "./run.py report" not in page


def test_the_compare_page_warns_of_drift(tmp_path) -> None:
    page, _ = _comparison_page(tmp_path, compare.compare_allocators(
        load_run_folder(FIXTURES / "drifting"), "system"))
    text = _text(page)
    assert text.count("Warning: system's repetitions of") == 3
    assert ("system's repetitions of tmalloc-st-64 (1 thread) rise 44.4% from the first of 9 "
            "repetitions to the last") in text
    # two runs: the cell whose side drifted has its note
    page, _ = _comparison_page(tmp_path, compare.compare_runs(
        load_run_folder(FIXTURES / "base"), load_run_folder(FIXTURES / "drifting")))
    notes = re.findall(r"<li>(.*?)</li>", page)
    assert len(notes) == 9 and all("NEW&#x27;s repetitions" in n and "drifted" in n for n in notes)


def test_exact_counts_on_the_compare_page_have_no_spread_or_detectable_effect(tmp_path) -> None:
    page, document = _comparison_page(tmp_path, compare.compare_runs(
        load_run_folder(FIXTURES / "instr-a"), load_run_folder(FIXTURES / "instr-b")))
    head, rows = _verdict_table(page)
    assert len(rows) == len(document["cells"]) == 9
    for row in rows:
        assert row[head.index("spread (max÷min, cv)")] == "exact"
        assert row[head.index("detectable")] == "exact"
        assert row[head.index("p")] == "exact"
        assert "not detectable" not in row[head.index("verdict")]
    assert "±" not in _text(page) and "cv " not in _text(page)
