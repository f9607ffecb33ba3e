"""Shared pytest fixtures: the repository root, the runner under test, and
the driver's fixture files. Also puts the driver package (harness/py) and the
repository root (for `plots`) on sys.path."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
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


@pytest.fixture(scope="session")
def runner(runner_path) -> pathlib.Path:
    """The real runner; tests that need it skip when it is not built."""
    if not runner_path.exists():
        pytest.skip(f"{runner_path} is not built")
    return runner_path


@pytest.fixture(scope="session")
def listing(runner) -> dict:
    """The real runner's --list-json: its allocators and workloads."""
    proc = subprocess.run([str(runner), "--list-json"], stdout=subprocess.PIPE, text=True,
                          check=True, timeout=120)
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def counting_alloc(tmp_path_factory) -> str:
    """`counting=so:PATH:cnt_`: tests/operations/countalloc.c compiled for
    this session, an allocator that counts the calls it receives."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("countalloc") / "libcountalloc.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out),
                    str(REPO_ROOT / "tests" / "operations" / "countalloc.c")], check=True, timeout=120)
    return f"counting=so:{out}:cnt_"
