"""The programs suite: evidence that the allocator served the program, the
install hint for a missing program, the redis workload's server always
stopped, and the whole suite end to end at tiny sizes."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from heaplab import programs

REPO = pathlib.Path(__file__).resolve().parents[2]
HELPERS = REPO / "workloads" / "programs"
PYTHON = "/usr/bin/python3"


def build_dir(runner: pathlib.Path) -> pathlib.Path:
    return runner.resolve().parent


@pytest.fixture()
def built(runner_path: pathlib.Path) -> pathlib.Path:
    folder = build_dir(runner_path)
    if not (folder / programs.PROBE_NAME).exists() or not (folder / "libheaplab-preload.so").exists():
        pytest.skip("the probe and heaplab's preload library are not built")
    return folder


def run_helper(build: pathlib.Path, tmp: pathlib.Path, script: str, *args: str,
               preload: str = "heaplab") -> tuple[int, dict | None]:
    """Runs a helper as heaplab-run would for `preload` ("" for system);
    returns its exit status and the driver's document for it."""
    report = tmp / "report.json"
    work = tmp / "work"
    work.mkdir()
    env = dict(os.environ, HEAPLAB_PROGRAM_REPORT=str(report),
               HEAPLAB_EVIDENCE_PROBE=str(build / programs.PROBE_NAME))
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = str(build / "libheaplab-preload.so")
    proc = subprocess.run([PYTHON, str(HELPERS / script), *args], cwd=work, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=60, check=False)
    doc = programs.merge({"status": "ok" if proc.returncode == 0 else "error", "metrics": {}},
                         programs.read_report(report))
    return proc.returncode, doc


def test_a_served_program_shows_the_preloaded_allocator(built: pathlib.Path,
                                                        tmp_path: pathlib.Path) -> None:
    rc, doc = run_helper(built, tmp_path, "serve.py", "--", PYTHON, "-c", "x = [str(i) for i in range(10**5)]")
    assert rc == 0
    assert doc["status"] == "ok"
    assert doc["evidence"]["in_use"] is True
    assert doc["evidence"]["served_by_name"] == ["heaplab"]
    # heaplab's own count of allocations, taken at the program's exit
    assert int(doc["evidence"]["stats"][0]["allocated"]) > 1000
    assert doc["metrics"]["max_rss_bytes"]["value"] > 0


def test_a_program_that_drops_ld_preload_is_not_counted(built: pathlib.Path,
                                                        tmp_path: pathlib.Path) -> None:
    rc, doc = run_helper(built, tmp_path, "serve.py", "--", "/usr/bin/env", "-u", "LD_PRELOAD",
                         PYTHON, "-c", "pass")
    assert rc == 0
    assert doc["status"] == programs.STATUS_NOT_IN_USE
    assert doc["cell_label"] == "allocator not in use"
    assert "LD_PRELOAD dropped" in doc["error"]


def test_a_static_binary_is_not_counted(built: pathlib.Path, tmp_path: pathlib.Path) -> None:
    static = "/sbin/ldconfig"   # static-pie on Debian: no dynamic loader, no preload
    if not os.path.exists(static):
        pytest.skip("no static binary here")
    rc, doc = run_helper(built, tmp_path, "serve.py", "--", static, "-p")
    assert rc == 0
    assert doc["status"] == programs.STATUS_NOT_IN_USE


def test_the_system_column_names_the_library_that_served(built: pathlib.Path,
                                                         tmp_path: pathlib.Path) -> None:
    rc, doc = run_helper(built, tmp_path, "serve.py", "--", PYTHON, "-c", "pass", preload="")
    assert rc == 0 and doc["status"] == "ok"
    assert doc["evidence"]["served_by_name"] == ["glibc"]


def test_a_missing_program_gives_the_install_hint(built: pathlib.Path, tmp_path: pathlib.Path) -> None:
    rc, doc = run_helper(built, tmp_path, "serve.py", "--package", "heaplab-no-such-package", "--",
                         "heaplab-no-such-program")
    assert rc != 0
    assert doc["status"] == programs.STATUS_NOT_INSTALLED
    assert programs.runner_mod.failure_label(doc) == "not installed (apt install heaplab-no-such-package)"


def _processes_in(folder: pathlib.Path) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if pathlib.Path(os.readlink(entry / "cwd")).resolve() == folder.resolve():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server not installed")
def test_redis_stops_its_server_when_the_client_fails(built: pathlib.Path,
                                                      tmp_path: pathlib.Path) -> None:
    rc, doc = run_helper(built, tmp_path, "redis.py", "100", "--client", "false")
    assert rc != 0
    assert doc["status"] == "error" and "false exited with status 1" in doc["error"]
    work = tmp_path / "work"
    assert _processes_in(work) == []
    # redis removes its socket when it shuts down; nothing listens on it
    assert not (work / "redis.sock").exists()


@pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server not installed")
def test_redis_reports_the_servers_figures_and_rss_samples(built: pathlib.Path,
                                                           tmp_path: pathlib.Path) -> None:
    rc, doc = run_helper(built, tmp_path, "redis.py", "2000")
    assert rc == 0, doc
    assert doc["evidence"]["in_use"] is True
    assert doc["served"]["argv"][0].endswith("redis-server")
    assert doc["metrics"]["requests_per_s"]["better"] == "higher"
    assert doc["metrics"]["requests_per_s"]["value"] > 0
    rss = [s["rss_bytes"] for s in doc["samples"]]
    # the server runs for tenths of a second: several samples; the first may
    # be taken while the dynamic loader still runs (a few hundred KB), the
    # server itself holds a few MB once it listens
    assert len(rss) >= 3
    assert all(0 < r < 1 << 30 for r in rss)
    assert max(rss) > 1 << 20
    assert [s["t_ns"] for s in doc["samples"]] == sorted(s["t_ns"] for s in doc["samples"])


def test_the_suite_runs_end_to_end_at_tiny_sizes(runner_path: pathlib.Path, built: pathlib.Path,
                                                 tmp_path: pathlib.Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "run", "--suite", "programs",
                           "--reps", "1", "--param", "N=20", "--no-plots", "--no-install",
                           "--runner", str(runner_path), "--out", str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    docs = [json.loads(line) for line in (tmp_path / "latest" / "raw.jsonl").read_text().splitlines()]
    names = {d["workload"]["name"] for d in docs}
    assert {"prog-redis", "prog-sqlite", "prog-z3", "prog-ruby", "prog-python-churn"} <= names
    allocators = {d["allocator"]["name"] for d in docs}
    assert {"system", "heaplab"} <= allocators
    for d in docs:
        if d["status"] == programs.STATUS_NOT_INSTALLED:
            assert d["error"].startswith("not installed (apt install ")
            continue
        assert d["status"] == "ok", (d["cell"], d.get("error"))
        assert d["evidence"]["in_use"] is True, (d["cell"], d["evidence"])
        if d["allocator"]["name"] != "system":
            assert d["evidence"]["served_by_name"] == [d["allocator"]["name"].split("-")[0]], d["cell"]
    redis_system = [d for d in docs if d["cell"] == "prog-redis/system/1t" and d["status"] == "ok"]
    for d in redis_system:
        # Debian's redis-server links jemalloc: the system column is jemalloc
        assert d["evidence"]["served_by_name"] == ["jemalloc"]
    tables = (tmp_path / "latest" / "tables.md").read_text()
    if redis_system:
        # and the table says so, from the evidence
        assert "prog-redis: the system column is jemalloc, not glibc" in tables
    assert "prog-sqlite: the system column" not in tables


def test_run_py_test_installs_the_programs_its_suite_runs() -> None:
    # a fresh machine's `./run.py test` runs the programs suite's tests, so
    # its set-up must install every program they start; the sanitizer-only
    # suites need none of them
    from heaplab import cmd_test, programs
    for package in programs.PACKAGES:
        assert package in cmd_test.packages_for(["ctest", "pytest"]), package
        assert package not in cmd_test.packages_for(["ctest", "asan", "tsan"]), package
