"""Fixtures for `run.py ci` tests: the runner and valgrind (tests that count
instructions skip without them), and a way to call the subcommand the way
run.py does.

Run with: HEAPLAB_RUN=build/heaplab-run PYTHONPATH=harness/py /usr/bin/python3 -m pytest tests/ci
"""
from __future__ import annotations

import pathlib
import shutil
from typing import Callable

import pytest

from heaplab import cli, cmd_ci


@pytest.fixture
def runner(runner_path: pathlib.Path) -> pathlib.Path:
    if not runner_path.exists():
        pytest.skip(f"no runner at {runner_path} (build it: cmake --build build --target heaplab-run)")
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed (apt install valgrind): no instruction counts")
    return runner_path


@pytest.fixture
def ci(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
       ) -> Callable[..., tuple[int, str, str]]:
    """Runs `run.py ci ARGS...` through heaplab.cli; returns (exit status,
    stdout, stderr)."""
    if not any(name == "ci" for name, _ in cli.SUBCOMMANDS):
        monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + (("ci", cmd_ci),))

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        status = cli.main(["ci", *argv])
        out, err = capsys.readouterr()
        return status, out, err
    return run
