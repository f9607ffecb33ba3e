"""draw_run: one PNG and one SVG per chart the fixture run allows, valid
files, written atomically and redrawn over old ones."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from plot_helpers import FIXTURES

import plots
from plot_helpers import png_size

# The fixture run has: a phased workload (tmalloc-memory), a sampled one
# (steady-churn), a threaded one at 1 and 2 threads (tmalloc-mt-small), and
# the tmalloc group, whose workloads report two metrics (ns per pair, MB).
EXPECTED_STEMS = {
    "memory-phases-tmalloc-memory",
    "memory-time-steady-churn",
    "scaling-tmalloc-mt-small",
    "medians-tmalloc-ns_per_pair",
    "medians-tmalloc-peak_ws_mb",
    "medians-tmalloc-mt",
    "medians-script",
}
MIN_SIDE_PX, MAX_SIDE_PX = 500, 2500


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[Path, list[Path]]:
    """The fixture run drawn once for this module: (folder, files written)."""
    run_dir = tmp_path_factory.mktemp("drawn") / "run-basic"
    shutil.copytree(FIXTURES / "run-basic", run_dir)
    return run_dir, plots.draw_run(run_dir)


def test_draw_run_writes_one_png_and_one_svg_per_expected_chart(drawn) -> None:
    run_dir, written = drawn
    expected = {run_dir / f"{stem}.{fmt}" for stem in EXPECTED_STEMS
                for fmt in ("png", "svg")}
    assert set(written) == expected
    assert len(written) == len(expected)  # nothing listed twice
    assert all(p.is_file() for p in written)


def test_pngs_are_valid_and_of_a_readable_size(drawn) -> None:
    for path in drawn[1]:
        if path.suffix == ".png":
            width, height = png_size(path)
            assert MIN_SIDE_PX <= width <= MAX_SIDE_PX, (path.name, width)
            assert MIN_SIDE_PX <= height <= MAX_SIDE_PX, (path.name, height)


def test_svgs_are_well_formed_svg_documents(drawn) -> None:
    for path in drawn[1]:
        if path.suffix == ".svg":
            root = ET.parse(path).getroot()
            assert root.tag == "{http://www.w3.org/2000/svg}svg", path.name


def test_redrawing_replaces_old_charts_with_identical_ones_atomically(drawn) -> None:
    run_dir, written = drawn
    before = {p: p.read_bytes() for p in written if p.suffix == ".svg"}
    stale = run_dir / "medians-script.png"
    stale.write_bytes(b"not a picture")
    assert plots.draw_run(run_dir) == written
    png_size(stale)  # raises unless it is a PNG again
    changed = [p.name for p, data in before.items() if p.read_bytes() != data]
    assert changed == []
    leftovers = [p.name for p in run_dir.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_draw_run_on_a_folder_without_raw_jsonl_raises_a_run_error(tmp_path: Path) -> None:
    with pytest.raises(plots.RunError, match="no raw.jsonl"):
        plots.draw_run(tmp_path)


def test_draw_run_on_an_empty_raw_jsonl_draws_nothing(tmp_path: Path) -> None:
    (tmp_path / "raw.jsonl").write_text("", encoding="utf-8")
    assert plots.draw_run(tmp_path) == []
