"""Fixtures for the workload-script tests."""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from wl_script_helpers import runner_binary  # noqa: E402  (needs the path above)


@pytest.fixture(scope="session")
def heaplab_run() -> pathlib.Path:
    """The runner under test; fails (not skips) when it is missing."""
    return runner_binary()
