"""Fixtures for the trace tests: the recorder, the trace tool, recorded
traces of a threaded C program, of python3 and of sort (recorded once per
session, at tiny sizes), and the allocators this machine has."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PYTHON_DICT = ("import sys; n = int(sys.argv[1]); d = {'key%d' % i: 'value-' * (1 + i % 7) + str(i) "
               "for i in range(n)}; assert len(d) == n; del d")


@pytest.fixture(scope="session")
def build_dir(runner_path: pathlib.Path) -> pathlib.Path:
    folder = runner_path.parent
    for part in ("libheaplab-record.so", "heaplab-trace", "heaplab-run"):
        if not (folder / part).exists():
            pytest.skip(f"{folder / part} not built (libzstd-dev missing?)")
    return folder


def record(repo_root: pathlib.Path, build_dir: pathlib.Path, out: pathlib.Path,
           command: list[str]) -> subprocess.CompletedProcess:
    """`run.py record --out OUT -- COMMAND`, as a user types it."""
    env = dict(os.environ, HEAPLAB_RUN=str(build_dir / "heaplab-run"))
    return subprocess.run([sys.executable, str(repo_root / "run.py"), "record", "--out", str(out),
                           "--", *command], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120, check=False)


def header(path: pathlib.Path) -> dict:
    from heaplab import traces
    return traces.read_header(path)


def replay(build_dir: pathlib.Path, trace: pathlib.Path, alloc: str, *extra: str
           ) -> subprocess.CompletedProcess:
    return subprocess.run([str(build_dir / "heaplab-run"), "--alloc", alloc, "--workload",
                           f"trace:{trace}", *extra], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120, check=False)


def compile_c(source: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    # -O0 -fno-builtin: the compiler may drop a malloc/free pair it can see through
    subprocess.run([cc, "-O0", "-fno-builtin", "-pthread", str(source), "-o", str(out)],
                   check=True)
    return out


@pytest.fixture(scope="session")
def traces_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("traces")


@pytest.fixture(scope="session")
def handoff(repo_root, build_dir, traces_dir) -> tuple[pathlib.Path, dict]:
    """The threaded C program's trace, and what the program says it did."""
    prog = compile_c(HERE / "handoff_prog.c", traces_dir / "handoff_prog")
    out = traces_dir / "handoff.hltrace"
    proc = record(repo_root, build_dir, out, [str(prog)])
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout.splitlines()[0])
    return out, said


@pytest.fixture(scope="session")
def python_trace(repo_root, build_dir, traces_dir) -> pathlib.Path:
    out = traces_dir / "python.hltrace"
    proc = record(repo_root, build_dir, out, ["/usr/bin/python3", "-c", PYTHON_DICT, "20000"])
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def churn_trace(repo_root, build_dir, traces_dir) -> pathlib.Path:
    """python3 running a script the project ships (workloads/programs/churn.py)."""
    out = traces_dir / "churn.hltrace"
    proc = record(repo_root, build_dir, out, ["/usr/bin/python3", str(repo_root / "workloads" /
                                              "programs" / "churn.py"), "20000"])
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def sort_trace(repo_root, build_dir, traces_dir) -> pathlib.Path:
    lines = traces_dir / "lines.txt"
    lines.write_text("".join(f"{(i * 7919) % 10007:08x} {i}\n" for i in range(5000)))
    out = traces_dir / "sort.hltrace"
    proc = record(repo_root, build_dir, out,
                  ["env", "LC_ALL=C", "sort", "--parallel=1", "-o", str(traces_dir / "sorted.txt"),
                   str(lines)])
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def allocators(build_dir) -> list[str]:
    """Every allocator installed here that the matrix runs by default."""
    doc = json.loads(subprocess.run([str(build_dir / "heaplab-run"), "--list-json"],
                                    stdout=subprocess.PIPE, check=True, text=True).stdout)
    return [a["name"] for a in doc["allocators"] if a.get("available") and a.get("default", True)]
