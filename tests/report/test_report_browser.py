"""report.html in a real browser: headless Chromium opens the page of the
fixture run folder, of a ci folder and of a real tiny run, and must show no
console error, fetch nothing but the page, and lay out every table and
every chart with a size. Skipped, saying why, when chromium is missing
outside CI; in CI (`CI` set) a missing chromium fails."""
from __future__ import annotations

import os
import pathlib
import struct
import subprocess
import sys

import pytest

from heaplab import report

import browser

REPO = pathlib.Path(__file__).resolve().parents[2]
# The page's own view of itself: tables with rows, and every chart's size
# and number of drawn marks, as laid out.
CHECK = """(() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; };
  return {
    tables: Array.from(document.querySelectorAll('table')).map(t => [t.tBodies[0].rows.length, ...box(t)]),
    charts: Array.from(document.querySelectorAll('svg.chart')).map(s => [s.querySelectorAll('.mark').length, ...box(s)]),
    title: document.title,
    h2: Array.from(document.querySelectorAll('h2')).map(h => h.textContent),
  };
})()"""
SORT_CHECK = """(() => {
  const table = document.querySelector('table.sortable');
  const firsts = () => Array.from(table.tBodies[0].rows).map(r => r.cells[0].textContent);
  const before = firsts();
  table.tHead.rows[0].cells[0].click();
  const up = firsts();
  table.tHead.rows[0].cells[0].click();
  return {before, up, down: firsts()};
})()"""


def _chromium_or_skip() -> None:
    if browser.find() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed in CI (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt install chromium): the page is not rendered")


def _shown(page: pathlib.Path, shot: pathlib.Path) -> dict:
    """Renders the page, screenshots it to `shot`, checks it showed
    everything without an error; returns what CHECK found."""
    with browser.Browser() as b:
        result = b.open(page, CHECK)
        b.screenshot(shot)
    assert result.errors == [], result.errors
    assert result.requests == [page.resolve().as_uri()], result.requests
    shown = result.result
    assert shown["tables"], "no table"
    for rows, width, height in shown["tables"]:
        assert rows > 0 and width > 0 and height > 0, shown["tables"]
    assert shown["charts"], "no chart"
    for marks, width, height in shown["charts"]:
        assert marks > 0 and width > 100 and height > 50, shown["charts"]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 1000 and height > 1000
    return shown


def _report_of(proc: subprocess.CompletedProcess[str]) -> pathlib.Path:
    """The page a command wrote: the path on its last line."""
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("report: ") and last.endswith("report.html"), last
    return pathlib.Path(last[len("report: "):])


def test_fixture_run_renders_every_table_and_chart_without_errors(run_dir: pathlib.Path,
                                                                 tmp_path: pathlib.Path) -> None:
    _chromium_or_skip()
    page = report.write(run_dir)
    shown = _shown(page, tmp_path / "fixture.png")
    assert shown["h2"][:1] == ["tmalloc"]


def test_ci_folder_renders_its_verdicts_first(ci_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    _chromium_or_skip()
    page = report.write(ci_dir)
    shown = _shown(page, tmp_path / "ci.png")
    assert shown["h2"][0] == "Verdicts"


def test_clicking_a_heading_sorts_its_table(run_dir: pathlib.Path) -> None:
    _chromium_or_skip()
    page = report.write(run_dir)
    with browser.Browser() as b:
        result = b.open(page, SORT_CHECK)
    assert result.errors == []
    order = result.result
    assert len(order["before"]) > 1
    assert order["up"] == sorted(order["before"])
    assert order["down"] == sorted(order["before"], reverse=True)


def test_a_real_tiny_run_ends_with_its_report_and_renders(runner_path: pathlib.Path,
                                                        tmp_path: pathlib.Path) -> None:
    _chromium_or_skip()
    if not runner_path.exists():
        pytest.skip(f"no runner at {runner_path} (build with ./run.py first)")
    proc = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "run", "--quick", "--no-install", "--no-plots",
         "--runner", str(runner_path), "--workload", "tmalloc-st-64,memory-over-time",
         "--alloc", "system,heaplab", "--threads", "1,2", "--reps", "2", "--out", str(tmp_path)],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = _report_of(proc)
    titles = " ".join(_shown(page, tmp_path / "run.png")["h2"])
    assert "tmalloc" in titles and "script" in titles


def test_a_real_reproduce_shows_published_beside_measured_with_its_orderings(
        runner_path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    _chromium_or_skip()
    if not runner_path.exists():
        pytest.skip(f"no runner at {runner_path} (build with ./run.py first)")
    proc = subprocess.run(
        [sys.executable, str(REPO / "run.py"), "reproduce", "000-tmalloc-memory", "--quick", "--reps", "1",
         "--no-install", "--no-plots", "--runner", str(runner_path), "--out", str(tmp_path)],
        capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    page = _report_of(proc)
    text = page.read_text(encoding="utf-8")
    published = text.index('id="reproduced"')
    assert published < text.index('id="group-')
    assert "orderings hold" in text and "Published: " in text and "Measured here: " in text
    shown = _shown(page, tmp_path / "reproduce.png")
    assert shown["h2"][0] == "Published beside measured"


def test_the_page_reads_the_same_without_script(run_dir: pathlib.Path) -> None:
    _chromium_or_skip()
    page = report.write(run_dir)
    selectors = ("table", "tbody tr", "svg.chart", "svg.chart .mark", "td.failed", "figcaption")
    with browser.Browser() as b:
        b.open(page, "1")
        with_script = [b.count(s) for s in selectors]
    with browser.Browser() as b:
        b.without_script()
        b.open(page, "1")
        without = [b.count(s) for s in selectors]
    assert without == with_script and all(without), dict(zip(selectors, without))
