"""Shared pytest fixtures: the repository root, the runner under test, and
the driver's fixture files. Also puts the driver package (harness/py) and the
repository root (for `plots`) on sys.path."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
for entry in (REPO_ROOT / "harness" / "py", REPO_ROOT):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def runner_path() -> pathlib.Path:
    """$HEAPLAB_RUN when set (run.py test sets it), else build/heaplab-run.
    The path may not exist; tests that need a real runner skip then."""
    value = os.environ.get("HEAPLAB_RUN")
    return pathlib.Path(value) if value else REPO_ROOT / "build" / "heaplab-run"


@pytest.fixture(scope="session")
def driver_fixtures() -> pathlib.Path:
    return REPO_ROOT / "tests" / "fixtures" / "driver"
