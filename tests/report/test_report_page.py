"""report.html from a folder alone: self-contained, in the reader's order,
every group's table and chart, failed cells as failed, every repetition on
hover; `run.py report` and the hooks that write it."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

from heaplab import report, report_data, report_html, report_svg

REPO = pathlib.Path(__file__).resolve().parents[2]


def _page(folder: pathlib.Path) -> str:
    return report.write(folder).read_text(encoding="utf-8")


def test_page_loads_nothing_from_outside(run_dir: pathlib.Path) -> None:
    page = _page(run_dir)
    # the only URL is SVG's namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    assert not re.search(r"<(link|img|iframe|object|embed)\b", page)
    assert not re.search(r"\b(src|href)=\"(?!#)", page)


def test_page_says_what_was_run_before_any_table(run_dir: pathlib.Path) -> None:
    page = _page(run_dir)
    what = page.index('<dl class="what">')
    assert what < page.index("<table")
    head = page[what:page.index("</dl>")]
    for expected in ("command", "commit", "a77c376", "machine", "Xeon", "allocators",
                     "mimalloc 2.0.9", "tcmalloc (tcmalloc: not installed", "repetitions", "sizes"):
        assert expected in head


def test_every_group_has_its_table_and_ratio_chart(run_dir: pathlib.Path) -> None:
    folder = report_data.load(run_dir)
    page = report_html.page(folder)
    groups = report_html.groups(folder)
    assert len(groups) >= 2
    for group in groups:
        section = page[page.index(f'id="group-{report_html._anchor(group)}"'):]
        section = section[:section.find('<h2 id="group-', 10) if '<h2 id="group-' in section[10:] else None]
        assert section.count("<table") >= 1, group
        assert section.count('<svg class="chart"') >= 1, group


def test_failed_cells_say_why_and_are_marked_failed(run_dir: pathlib.Path) -> None:
    page = _page(run_dir)
    failed = re.findall(r'<td class="(?:num )?failed"[^>]*>(.*?)</td>', page)
    assert any("crashed" in text for text in failed)          # jemalloc on tmalloc-st-random-100k
    assert any("timeout" in text for text in failed)          # one repetition of heaplab-nocache
    assert re.search(r'<td class="missing"[^>]*>not installed', page)   # tcmalloc
    # a crashed cell has no dot in the chart: its caption says why
    assert "No figure: jemalloc on tmalloc-st-random-100k (crashed (SIGSEGV))" in page


def test_hovering_a_cell_shows_every_repetition(run_dir: pathlib.Path) -> None:
    folder = report_data.load(run_dir)
    page = report_html.page(folder)
    cell = next(c for c in folder.summary["cells"] if c["status"] == "ok" and c["n"] == 3)
    from heaplab.fmt import number as fmt_number
    title = "; ".join(f"rep {r}: {fmt_number(v)}" for r, v in zip(cell["reps"], cell["values"]))
    assert f'title="{title}"' in page


def test_memory_time_and_scaling_charts_are_drawn_where_the_data_has_them(run_dir: pathlib.Path) -> None:
    page = _page(run_dir)
    assert "Memory by phase: tmalloc-memory" in page
    assert "Memory over time: steady-churn" in page
    assert "Thread scaling: tmalloc-mt-small" in page


def test_every_chart_has_marks_with_a_title(run_dir: pathlib.Path) -> None:
    page = _page(run_dir)
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert charts
    for chart in charts:
        assert re.search(r'<g class="mark"><title>[^<]+</title>', chart), chart[:200]


def test_report_command_rebuilds_from_raw_and_env_alone_and_prints_the_path_last(run_dir: pathlib.Path) -> None:
    (run_dir / "summary.json").unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "report", str(run_dir)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == f"report: {run_dir / 'report.html'}"
    assert "<table" in (run_dir / "report.html").read_text(encoding="utf-8")


def test_report_of_a_folder_that_is_not_a_run_is_one_line(tmp_path: pathlib.Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "report", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "not a run folder" in proc.stderr


def test_ci_report_puts_verdicts_and_geometric_means_before_the_tables(ci_dir: pathlib.Path) -> None:
    page = _page(ci_dir)
    verdicts = page.index('id="verdicts"')
    assert verdicts < page.index('id="group-')
    assert "Geometric mean" in page
    assert re.search(r'class="v-(faster|slower|unchanged|not_significant)"', page)
    assert (ci_dir / "report.html").exists()


def test_compare_html_out_writes_the_verdicts_page(run_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "compare.html"
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "compare", str(run_dir),
                           "--baseline-alloc", "system", "--html-out", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.splitlines()[-1] == f"report: {out}"
    page = out.read_text(encoding="utf-8")
    assert 'id="verdicts"' in page and "<table" in page
    # 3 repetitions cannot detect a 5% change: the page says what would
    assert "<blockquote>Recommendation: " in page


def test_merge_writes_the_report_and_prints_its_path_last(run_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "merged"
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "merge", str(run_dir), "--out", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    folder = (out / "latest").resolve()     # --out is the parent of the merged run folder
    assert proc.stdout.splitlines()[-1] == f"report: {folder / 'report.html'}"
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "heaplab merged run" in page and "merged from" in page


def test_ticks_cover_every_value_drawn() -> None:
    for lo, hi in ((0.0, 62.0), (0.0, 1e-9), (3.2, 3.3), (0.0, 129.7), (0.0, 1.0)):
        ticks = report_svg.nice_ticks(lo, hi)
        assert ticks[0] <= lo and ticks[-1] >= hi, (lo, hi, ticks)


def test_allocator_colours_match_the_png_charts() -> None:
    pytest.importorskip("matplotlib")
    from plots import style
    for name in ("system", "heaplab", "mimalloc", "so:/opt/hoard/lib/libhoard.so"):
        assert report_svg.colour(name) == style.colour_for(name), name


def test_chromium_is_installed_for_the_pytest_suite_only() -> None:
    from heaplab import cmd_test
    assert "chromium" in cmd_test.packages_for(["ctest", "pytest"])
    assert "chromium" not in cmd_test.packages_for(["ctest", "asan", "tsan"])
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^\s+chromium\)?$", ci, re.M)


def test_ci_report_finds_its_run_after_the_ci_folder_moved(ci_dir: pathlib.Path, run_dir: pathlib.Path,
                                                           tmp_path: pathlib.Path) -> None:
    moved = tmp_path / "moved"
    (moved / "runs").mkdir(parents=True)
    run_dir.rename(moved / "runs" / run_dir.name)
    (ci_dir / "summary.json").rename(moved / "summary.json")
    page = _page(moved)
    assert 'id="verdicts"' in page and 'id="group-' in page


def test_log_axis_labels_never_touch_and_keep_one() -> None:
    def x_of(v: float) -> float:      # a 300-pixel axis from ×1/64 to ×64
        import math
        return 150 + math.log2(v) / 6 * 150
    ticks = report_svg.spaced(report_svg.log_ticks(1 / 64, 64), x_of)
    assert 1.0 in ticks and len(ticks) >= 3
    for a, b in zip(ticks, ticks[1:]):
        half_widths = report_svg.CHAR_WIDTH * (len(report_svg.ratio_text(a)) + len(report_svg.ratio_text(b))) / 2
        assert x_of(b) - x_of(a) >= half_widths
    assert report_svg.ratio_text(0.125) == "×1/8" and report_svg.ratio_text(1.5) == "×1.5"


def test_tables_name_the_metric_the_cells_measured(run_dir: pathlib.Path) -> None:
    # a --metric instructions run: the plan's rows still name the workload's own metric
    raw = run_dir / "raw.jsonl"
    docs = [json.loads(line) for line in raw.read_text().splitlines() if line.strip()]
    for doc in docs:
        if doc.get("status") == "ok":
            doc["metrics"]["instructions"] = {"value": 1e6, "unit": "instructions", "better": "lower"}
            doc["primary"] = "instructions"
    raw.write_text("".join(json.dumps(d) + "\n" for d in docs))
    (run_dir / "summary.json").unlink(missing_ok=True)
    page = _page(run_dir)
    assert "instructions (instructions, lower is better)</small>" in page
    assert "ns_per_pair (ns, lower is better)</small>" not in page


def test_a_row_of_long_times_shows_its_figures_in_the_unit_its_label_names(run_dir: pathlib.Path) -> None:
    # a program's whole run in nanoseconds: tables.md shows it in seconds, so must the page
    raw = run_dir / "raw.jsonl"
    docs = [json.loads(line) for line in raw.read_text().splitlines() if line.strip()]
    for doc in docs:
        if doc.get("status") == "ok" and doc["workload"]["name"] == "tmalloc-st-64":
            doc["metrics"]["ns_per_pair"]["value"] *= 1e7      # 19.045 ns -> 0.190 s
    raw.write_text("".join(json.dumps(d) + "\n" for d in docs))
    (run_dir / "summary.json").unlink(missing_ok=True)
    page = _page(run_dir)
    row = page[page.index("<td title=\"64-byte block"):]
    row = row[:row.index("</tr>")]
    assert "ns_per_pair (s, lower is better)</small>" in row
    assert re.search(r"<b>0\.1\d\d</b>", row), row[:600]
    assert not re.search(r"<b>1\d\dM</b>", row)
