"""Shared fixtures for the plots tests: a copy of the fixture run folder, so
the tests can draw into it and change it freely."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

# the repository root, for `import plots` (plot_helpers knows the paths)
_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """tests/fixtures/plots/run-basic copied to a fresh folder."""
    target = tmp_path / "run-basic"
    shutil.copytree(_REPO / "tests" / "fixtures" / "plots" / "run-basic", target)
    return target


@pytest.fixture
def run(run_dir: Path):
    from plots.rundata import load_run
    return load_run(run_dir)
