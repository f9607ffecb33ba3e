"""Fixtures for `run.py reproduce` tests: the runner (tests skip without
one) and a way to call the subcommand the way run.py does.

Run with: HEAPLAB_RUN=build/heaplab-run PYTHONPATH=harness/py /usr/bin/python3 -m pytest tests/reproduce
"""
from __future__ import annotations

import pathlib
from typing import Callable

import pytest

from heaplab import cli, cmd_reproduce


@pytest.fixture
def runner(runner_path: pathlib.Path) -> pathlib.Path:
    if not runner_path.exists():
        pytest.skip(f"no runner at {runner_path} (build it: cmake --build build --target heaplab-run)")
    return runner_path


@pytest.fixture
def reproduce(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
              ) -> Callable[..., tuple[int, str, str]]:
    """Runs `run.py reproduce ARGS...` through heaplab.cli; returns (exit
    status, stdout, stderr)."""
    if not any(name == "reproduce" for name, _ in cli.SUBCOMMANDS):
        monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + (("reproduce", cmd_reproduce),))

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        status = cli.main(["reproduce", *argv])
        out, err = capsys.readouterr()
        return status, out, err
    return run


@pytest.fixture
def only_folder() -> Callable[[pathlib.Path], pathlib.Path]:
    """The one run folder a command made under a parent folder."""
    def find(parent: pathlib.Path) -> pathlib.Path:
        folders = [p for p in parent.iterdir() if p.is_dir() and not p.is_symlink()]
        assert len(folders) == 1, folders
        return folders[0]
    return find
