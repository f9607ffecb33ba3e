"""Where things live in the source tree and its build folders."""
from __future__ import annotations

import os
import pathlib

# harness/py/heaplab/paths.py -> the repository root is three folders up.
REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]

RUNNER_NAME = "heaplab-run"
RUNNER_TARGET = "heaplab-run"
RUNNER_ENV = "HEAPLAB_RUN"


def build_dir(root: pathlib.Path = REPO_ROOT) -> pathlib.Path:
    return root / "build"


def default_runner(root: pathlib.Path = REPO_ROOT) -> pathlib.Path:
    return build_dir(root) / RUNNER_NAME


def runner_from_env() -> pathlib.Path | None:
    """The runner named by $HEAPLAB_RUN, if set (then nothing is built)."""
    value = os.environ.get(RUNNER_ENV)
    return pathlib.Path(value) if value else None


def results_runs(root: pathlib.Path = REPO_ROOT) -> pathlib.Path:
    return root / "results" / "runs"
