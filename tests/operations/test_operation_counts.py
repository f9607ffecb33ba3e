"""The run document's "operations": how many allocator calls (malloc,
calloc, realloc, aligned_alloc, free, free_sized) the workload's run()
made. Every built-in workload, heap script and trace replay reports it; it
equals the count a workload's design implies, and the count a counting
allocator (countalloc.c, a so: library) actually received; a program
workload reports null."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
RUN_TIMEOUT_S = 120
COUNTED_LINE = re.compile(r"^countalloc: (\d+) calls$", re.MULTILINE)

# Sizes at which every workload the runner lists runs in milliseconds. A
# workload added without an entry here fails
# test_every_listed_workload_has_a_tiny_size.
TINY = {
    "tmalloc-st-64": {"pairs": 1000},
    "tmalloc-st-reverse": {"count": 100, "rounds": 3},
    "tmalloc-st-random": {"count": 1000, "rounds": 2},
    "tmalloc-st-mixed": {"live": 500, "pairs": 2000},
    "tmalloc-st-medium": {"live": 50, "pairs": 200},
    "tmalloc-st-huge": {"pairs": 10},
    "tmalloc-mt": {"count": 500, "rounds": 2},
    "tmalloc-xthread": {"pairs": 1000},
    "memalloc-fixed": {"ops": 2000, "rounds": 2},
    "memalloc-mixed": {"ops": 5000},
    "memalloc-latency": {"samples": 3000, "clock_samples": 1000},
    "memallocpp-st": {"pairs": 2000, "rounds": 1},
    "memallocpp-mt": {"pairs": 2000, "rounds": 1},
    "memallocpp-locality": {"count": 1000, "passes": 1},
    "kevy-pair-64": {"pairs": 1000},
    "kevy-pair-400": {"pairs": 1000},
    "kevy-pair-4096": {"pairs": 1000},
    "kevy-churn": {"count": 256, "rounds": 5},
    "larson": {"blocks": 500, "pairs": 5000, "rounds": 2},
    "xmalloc": {"blocks": 20000},
    "threadtest": {"objects": 5000, "iterations": 4},
    "cache-scratch": {"iterations": 8, "repetitions": 20},
    "cache-thrash": {"iterations": 8, "repetitions": 20},
    "mstress": {"generations": 2, "allocs": 3000, "transfer_slots": 100},
    "rptest": {"loops": 10, "ops": 500, "live": 200},
    "handoff-ring": {"N": 2000},
    "kevy-churn-trim": {"ROUNDS": 3},
    "kevy-churn-script": {"ROUNDS": 3},
    "memory-over-time": {"N": 2000, "EVERY": 500},
    "tmalloc-memory": {"N": 3000},
}

# A heap script with every kind of operation: per thread 100 allocations,
# 10 reallocs, 50 pairs (100 calls), 20 churn steps (40 calls), 50 frees,
# and the 50 blocks still live freed after the last phase: 350 calls.
DEMO_SCRIPT = """\
workload  demo-ops
describe  "every kind of heap operation, a known number of allocator calls"
phase built
  alloc   100  size=fixed(64)
  realloc 10   size=fixed(128)
  pairs   50   size=fixed(32)
  churn   20   size=fixed(16)  order=fifo
phase halved
  free    50
"""
DEMO_CALLS_PER_THREAD = 350

PROGRAM_SCRIPT = """\
workload  prog-true-demo
describe  "runs /bin/true with the allocator preloaded"
program   /bin/true
"""


def run(runner, workload: str, alloc: str = "system", threads: int | None = None,
        params: dict | None = None) -> tuple[dict, str]:
    cmd = [str(runner), "--alloc", alloc, "--workload", workload]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    for key, value in (params or {}).items():
        cmd += ["--param", f"{key}={value}"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=RUN_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "ok", doc["error"]
    return doc, proc.stderr


def counted(stderr: str) -> int:
    found = COUNTED_LINE.findall(stderr)
    assert len(found) == 1, stderr
    return int(found[0])


def script_named(listing, name: str) -> str:
    """The path of a shipped script, as the listing gives it."""
    return next(w["source"] for w in listing["workloads"] if w["name"] == name)


def measured(listing) -> list[dict]:
    return [w for w in listing["workloads"] if w["kind"] != "program"]


def test_every_listed_workload_has_a_tiny_size(listing):
    missing = [w["name"] for w in measured(listing) if w["name"] not in TINY]
    assert not missing, f"add tiny sizes for {missing} to TINY"


@pytest.mark.parametrize(("workload", "params", "threads", "expected"), [
    # a malloc and a free per pair
    ("tmalloc-st-64", {"pairs": 1000}, None, 2000),
    ("kevy-pair-400", {"pairs": 777, "sized": 1}, None, 1554),
    # the 5,000 operations, then a free per slot (1,600 slots, empty ones too)
    ("memalloc-mixed", {"ops": 5000}, None, 5000 + 1600),
    # the fill, 5 rounds of 128 frees and 128 allocations, a free per block
    ("kevy-churn", {"count": 256, "rounds": 5}, None, 256 + 5 * 256 + 256),
    # 4 threads of 1,250 objects, 4 iterations, a malloc and a free each
    ("threadtest", {"objects": 5000, "iterations": 4}, 4, 2 * 5000 * 4),
    # 2 threads' fill of 500, 5,000 steps each per round, 2 rounds, all freed
    ("larson", {"blocks": 500, "pairs": 5000, "rounds": 2}, 2, 2 * (2 * 500 + 2 * 2 * 5000)),
    # the caller's object for each of 2 threads, then each thread's 4
    ("cache-scratch", {"iterations": 8, "repetitions": 20}, 2, 2 * (2 + 8)),
])
def test_operations_are_the_count_the_design_implies(runner, workload, params, threads,
                                                     expected):
    doc, _ = run(runner, workload, threads=threads, params=params)
    assert doc["operations"] == expected


@pytest.mark.parametrize("workload", sorted(TINY))
def test_operations_equal_the_calls_the_allocator_received(runner, listing, counting_alloc,
                                                           workload):
    listed = {w["name"]: w for w in listing["workloads"]}
    if workload not in listed:
        pytest.skip(f"{workload} is not listed by this runner")
    spec = listed[workload]["source"] or workload
    doc, stderr = run(runner, spec, alloc=counting_alloc, params=TINY[workload])
    assert isinstance(doc["operations"], int) and doc["operations"] > 0
    assert doc["operations"] == counted(stderr)


def test_free_sized_calls_are_operations(runner, counting_alloc):
    doc, stderr = run(runner, "kevy-churn", alloc=counting_alloc,
                      params={"count": 64, "rounds": 3, "sized": 1})
    assert doc["allocator"]["hooks"]["free_sized"] is True
    assert doc["operations"] == counted(stderr) == 64 + 3 * 64 + 64


@pytest.mark.parametrize("threads", [1, 3])
def test_script_operations_count_every_call_per_thread(runner, counting_alloc, tmp_path,
                                                       threads):
    script = tmp_path / "demo-ops.wl"
    script.write_text(DEMO_SCRIPT)
    doc, stderr = run(runner, str(script), alloc=counting_alloc, threads=threads)
    assert doc["operations"] == DEMO_CALLS_PER_THREAD * threads == counted(stderr)
    # the script's own "ops" count a pair or a churn step once
    assert sum(p["ops"] for p in doc["phases"]) == (100 + 10 + 50 + 20 + 50) * threads


def test_program_workload_reports_no_operation_count(runner, tmp_path):
    script = tmp_path / "prog-true-demo.wl"
    script.write_text(PROGRAM_SCRIPT)
    doc, _ = run(runner, str(script))
    assert doc["workload"]["kind"] == "program"
    assert doc["operations"] is None
