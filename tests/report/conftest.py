"""Fixtures for the report tests: a copy of the plots' fixture run folder
(crashed, timed-out and not-installed cells, phases, samples, two thread
counts), and the same as a `run.py ci` output folder with comparisons."""
from __future__ import annotations

import json
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURE_RUN = REPO / "tests" / "fixtures" / "plots" / "run-basic"


@pytest.fixture
def run_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    target = tmp_path / "20260101-120000"
    shutil.copytree(FIXTURE_RUN, target)
    return target


@pytest.fixture
def ci_dir(run_dir: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    """A ci output folder: summary.json ("heaplab.ci/1") naming run_dir, with
    the run compared against itself and its allocators against system."""
    from heaplab import compare, merge
    run = merge.load_run_folder(run_dir)
    out = tmp_path / "ci"
    out.mkdir()
    document = {"schema": "heaplab.ci/1", "run": str(run_dir), "baseline": str(run_dir),
                "metric": None, "cells_failed": False,
                "against_baseline": compare.to_json(compare.compare_runs(run, run, None, 0.05)),
                "allocators": compare.to_json(compare.compare_allocators(run, "system", None, 0.05)),
                "verdict": "ok", "exit_code": 0}
    (out / "summary.json").write_text(json.dumps(document))
    return out
