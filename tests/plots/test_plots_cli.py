"""python -m plots RUN_DIR: prints the charts it wrote; fails with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from plot_helpers import REPO


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "plots", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_cli_draws_the_run_and_prints_every_chart_path(run_dir: Path) -> None:
    result = run_cli(str(run_dir))
    assert result.returncode == 0, result.stderr
    printed = [Path(line) for line in result.stdout.splitlines()]
    assert printed, "no paths printed"
    assert all(p.is_file() and p.parent == run_dir for p in printed)
    assert {p.suffix for p in printed} == {".png", ".svg"}


def test_cli_fails_with_one_line_on_a_folder_without_raw_jsonl(tmp_path: Path) -> None:
    result = run_cli(str(tmp_path))
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "raw.jsonl" in lines[0] and str(tmp_path) in lines[0]


def test_cli_fails_with_one_line_naming_the_bad_line_of_raw_jsonl(tmp_path: Path) -> None:
    good = ('{"status": "ok", "workload": {"name": "w"}, '
            '"allocator": {"name": "system"}}')
    (tmp_path / "raw.jsonl").write_text(f"{good}\n{{not json\n",
                                        encoding="utf-8")
    result = run_cli(str(tmp_path))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "raw.jsonl:2: not valid JSON" in lines[0]


def test_cli_fails_with_one_line_on_a_missing_folder(tmp_path: Path) -> None:
    result = run_cli(str(tmp_path / "nowhere"))
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1
    assert "not a folder" in result.stderr


def test_cli_without_matplotlib_says_so_in_one_line(run_dir: Path) -> None:
    # None in sys.modules makes "import matplotlib" fail, as in an
    # interpreter that does not have it
    code = ("import sys, runpy; sys.modules['matplotlib'] = None; "
            f"sys.argv = ['plots', {str(run_dir)!r}]; "
            "runpy.run_module('plots', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "matplotlib is not installed" in lines[0]
