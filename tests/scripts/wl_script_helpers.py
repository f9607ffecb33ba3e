"""Helpers for the workload-script tests (tests/scripts/): find the runner,
list a folder of scripts, run one cell and parse its JSON document. A module
of its own, not conftest.py, so its name cannot clash with tests/conftest.py."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
from typing import Any

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BAD_DIR = pathlib.Path(__file__).resolve().parent / "bad"
# Seconds one quick cell may take before the test calls it hung; generous
# because these VMs are slow and shared. Not a performance threshold.
CELL_TIMEOUT_S = 300


def runner_binary() -> pathlib.Path:
    value = os.environ.get("HEAPLAB_RUN")
    path = pathlib.Path(value) if value else REPO / "build" / "heaplab-run"
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"heaplab-run not found at {path}: build it (cmake --build build "
                    f"--target heaplab-run) or set HEAPLAB_RUN", pytrace=False)
    return path


def list_json(runner: pathlib.Path, workloads_dir: pathlib.Path) -> dict[str, Any]:
    out = subprocess.run([str(runner), "--list-json", "--workloads-dir", str(workloads_dir)],
                         capture_output=True, text=True, timeout=CELL_TIMEOUT_S, check=True)
    return json.loads(out.stdout)


def script_entries(listing: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The listed workloads that come from scripts, by name."""
    return {w["name"]: w for w in listing["workloads"] if w["kind"] in ("script", "program")}


class Cell:
    """One runner invocation: exit status, stderr and the parsed document."""

    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.returncode = proc.returncode
        self.stderr = proc.stderr
        self.doc: dict[str, Any] | None = json.loads(proc.stdout) if proc.stdout.strip() else None

    def phases(self) -> dict[str, dict[str, Any]]:
        assert self.doc is not None
        return {p["name"]: p for p in self.doc["phases"]}

    def metric(self, name: str) -> float:
        assert self.doc is not None
        return self.doc["metrics"][name]["value"]


def run_cell(runner: pathlib.Path, workload: str | pathlib.Path, alloc: str = "system",
             *extra: str, env: dict[str, str] | None = None) -> Cell:
    cmd = [str(runner), "--alloc", alloc, "--workload", str(workload), *extra]
    full_env = {**os.environ, **env} if env else None
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=CELL_TIMEOUT_S,
                          env=full_env)
    return Cell(proc)


def available_allocators(runner: pathlib.Path, workloads_dir: pathlib.Path) -> list[str]:
    """Installed allocators a run includes by default (not the one-block
    "floor" baseline, which these multi-block scripts would overflow)."""
    listing = list_json(runner, workloads_dir)
    return [a["name"] for a in listing["allocators"] if a["available"] and a.get("default", True)]
