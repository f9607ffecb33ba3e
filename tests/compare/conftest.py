"""Shared helpers for the compare/merge/instructions tests.

Run with: PYTHONPATH=harness/py /usr/bin/python3 -m pytest tests/compare
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fixtures() -> Path:
    """The committed fixture run folders (written by make_fixtures.py)."""
    return FIXTURES


@pytest.fixture
def copy_run(tmp_path: Path) -> Callable[[str], Path]:
    """Copies a fixture run folder into tmp_path, to edit it safely."""
    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target)
        return target
    return copy


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Runs a subcommand module's add_arguments/main pair the way run.py
    will, returning (exit status, stdout, stderr)."""
    def run(module: ModuleType, *argv: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog=f"run.py {module.__name__.rsplit('.', 1)[-1]}")
        module.add_arguments(parser)
        try:
            code = module.main(parser.parse_args([str(a) for a in argv]))
        except SystemExit as exc:  # argparse refusing the command line
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run
