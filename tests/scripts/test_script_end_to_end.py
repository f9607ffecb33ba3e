"""A script dropped into a workloads folder is listed, runs on every
installed allocator, and its per-phase figures are what the script asked
for."""
from __future__ import annotations

import pathlib

import pytest

from wl_script_helpers import REPO, available_allocators, list_json, run_cell, script_entries

BLOCK = 1000
BLOCKS = 100
BIG_BLOCK = 256 * 1024
BIG_BLOCKS = 64
SAMPLE_EVERY = 10

PHASES_SCRIPT = f"""\
# dropped in by tests/scripts/test_script_end_to_end.py
workload  e2e-phases
describe  "fixed blocks built, halved, a touched big set, all freed"
seed      5
param     N={BLOCKS} quick={BLOCKS} min=2 max=1000000 help="small blocks"
phase built
  sample  every={SAMPLE_EVERY}
  alloc   $N    size=fixed({BLOCK})  touch=all
phase halved
  free    50%   order=fifo
phase big
  alloc   {BIG_BLOCKS}  size=fixed(256K)  touch=all
phase emptied
  free    100%  order=random
  trim
"""

HANDOFF_SCRIPT = f"""\
workload  e2e-handoff
threads   2
phase built
  alloc   {BLOCKS}  size=fixed({BLOCK})
phase handed
  handoff
phase rebuilt
  churn   {BLOCKS}  size=uniform(16,64)  live={BLOCKS}
phase freed
  free    100%
"""


@pytest.fixture()
def scripts_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "e2e-phases.wl").write_text(PHASES_SCRIPT)
    (tmp_path / "e2e-handoff.wl").write_text(HANDOFF_SCRIPT)
    return tmp_path


def allocators() -> list[str]:
    from wl_script_helpers import runner_binary
    return available_allocators(runner_binary(), REPO / "workloads")


def test_dropped_script_is_listed_with_its_parameters(heaplab_run: pathlib.Path,
                                                      scripts_dir: pathlib.Path) -> None:
    entries = script_entries(list_json(heaplab_run, scripts_dir))
    entry = entries["e2e-phases"]
    assert entry["kind"] == "script" and entry["group"] == "script"
    assert entry["source"].endswith("e2e-phases.wl")
    assert entry["describe"] == "fixed blocks built, halved, a touched big set, all freed"
    assert (entry["metric"], entry["unit"], entry["better"]) == ("ns_per_op", "ns", "lower")
    assert entry["params"] == [{"name": "N", "default": BLOCKS, "quick": BLOCKS, "min": 2,
                                "max": 1000000, "help": "small blocks"}]
    assert entries["e2e-handoff"]["default_threads"] == 2
    assert entries["e2e-handoff"]["threaded"] is True


@pytest.mark.parametrize("alloc", allocators())
def test_phases_report_what_the_script_asked_for(heaplab_run: pathlib.Path,
                                                 scripts_dir: pathlib.Path, alloc: str) -> None:
    cell = run_cell(heaplab_run, "e2e-phases", alloc, "--workloads-dir", str(scripts_dir))
    assert cell.returncode == 0, cell.stderr
    phases = cell.phases()
    assert list(phases) == ["built", "halved", "big", "emptied"]
    assert phases["built"]["live_bytes"] == BLOCKS * BLOCK
    assert phases["built"]["ops"] == BLOCKS
    assert phases["halved"]["live_bytes"] == BLOCKS // 2 * BLOCK
    assert phases["halved"]["ops"] == BLOCKS // 2
    big_live = BLOCKS // 2 * BLOCK + BIG_BLOCKS * BIG_BLOCK
    assert phases["big"]["live_bytes"] == big_live
    assert phases["emptied"]["live_bytes"] == 0
    assert phases["emptied"]["ops"] == BLOCKS // 2 + BIG_BLOCKS
    # every byte of the big blocks was written, so it is resident
    assert phases["big"]["ws_above_start_bytes"] >= BIG_BLOCKS * BIG_BLOCK
    assert phases["big"]["rss_bytes"] > phases["big"]["ws_above_start_bytes"]
    for p in phases.values():
        assert p["elapsed_ns"] > 0
    total_ops = sum(p["ops"] for p in phases.values())
    assert cell.metric("ns_per_op") > 0
    assert cell.metric("mops_per_s") > 0
    samples = cell.doc["samples"] if cell.doc else []
    assert len(samples) == total_ops // SAMPLE_EVERY
    assert [s["ops"] for s in samples] == sorted(s["ops"] for s in samples)
    assert samples[0]["live_bytes"] == SAMPLE_EVERY * BLOCK
    hooks = cell.doc["allocator"]["hooks"] if cell.doc else {}
    if hooks["trim"]:
        assert cell.metric("trim_ns") > 0
    else:
        assert "trim_ns" not in cell.doc["metrics"] and "trim is n/a" in cell.stderr


@pytest.mark.parametrize("alloc", allocators())
def test_handoff_frees_every_block_on_the_next_thread(heaplab_run: pathlib.Path,
                                                      scripts_dir: pathlib.Path,
                                                      alloc: str) -> None:
    cell = run_cell(heaplab_run, "e2e-handoff", alloc, "--workloads-dir", str(scripts_dir))
    assert cell.returncode == 0, cell.stderr
    phases = cell.phases()
    threads = 2
    assert phases["built"]["live_bytes"] == threads * BLOCKS * BLOCK
    assert phases["handed"]["live_bytes"] == 0
    assert phases["handed"]["ops"] == threads * BLOCKS
    # churn live=L tops up L blocks (counted) then runs its steps
    assert phases["rebuilt"]["ops"] == threads * 2 * BLOCKS
    assert 0 < phases["rebuilt"]["live_bytes"] <= threads * BLOCKS * 64
    assert phases["freed"]["live_bytes"] == 0


def test_threads_option_multiplies_live_bytes(heaplab_run: pathlib.Path,
                                              scripts_dir: pathlib.Path) -> None:
    cell = run_cell(heaplab_run, "e2e-phases", "system", "--threads", "3",
                    "--workloads-dir", str(scripts_dir))
    assert cell.returncode == 0, cell.stderr
    assert cell.phases()["built"]["live_bytes"] == 3 * BLOCKS * BLOCK
    assert cell.doc is not None and cell.doc["workload"]["threads"] == 3


def test_param_changes_the_counts(heaplab_run: pathlib.Path, scripts_dir: pathlib.Path) -> None:
    cell = run_cell(heaplab_run, "e2e-phases", "system", "--param", "N=40",
                    "--workloads-dir", str(scripts_dir))
    assert cell.returncode == 0, cell.stderr
    assert cell.phases()["built"]["live_bytes"] == 40 * BLOCK
    assert cell.doc is not None and cell.doc["workload"]["params"] == {"N": 40}


def test_param_that_breaks_the_live_count_fails_before_running(heaplab_run: pathlib.Path,
                                                               tmp_path: pathlib.Path) -> None:
    path = tmp_path / "dry.wl"
    path.write_text("workload dry\nparam K=5\nphase p\n  alloc 10 size=fixed(8)\n  free $K\n")
    cell = run_cell(heaplab_run, path, "system", "--param", "K=11")
    assert cell.returncode == 1
    assert cell.doc is not None and cell.doc["status"] == "error"
    assert f"{path}:5: free: asks for 11 blocks but only 10 are live" in cell.doc["error"]
    assert cell.doc["phases"] == []


def test_null_from_the_allocator_names_the_operation_and_size(heaplab_run: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    # 1 TiB is more than this machine can commit: glibc's malloc returns NULL
    # (and so does ASan's, in a sanitizer build, when told to)
    path = tmp_path / "huge.wl"
    path.write_text("workload huge\nphase p\n  alloc 1 size=fixed(1024G) touch=none\n")
    cell = run_cell(heaplab_run, path, "system",
                    env={"ASAN_OPTIONS": "allocator_may_return_null=1"})
    assert cell.returncode == 1
    assert cell.doc is not None
    assert cell.doc["error"] == f"{path}:3: malloc of 1099511627776 bytes returned NULL"


def test_same_seed_gives_the_same_live_bytes(heaplab_run: pathlib.Path,
                                             tmp_path: pathlib.Path) -> None:
    path = tmp_path / "seeded.wl"
    path.write_text("workload seeded\nphase p\n  alloc 500 size=loguniform(16,64K) touch=none\n")
    first = run_cell(heaplab_run, path, "system", "--seed", "9").phases()["p"]["live_bytes"]
    again = run_cell(heaplab_run, path, "system", "--seed", "9").phases()["p"]["live_bytes"]
    other = run_cell(heaplab_run, path, "system", "--seed", "10").phases()["p"]["live_bytes"]
    assert first == again
    assert first != other


ORDER_SCRIPT = """\
workload  orders
phase built
  alloc   4  size=fixed(1)
  alloc   4  size=fixed(100)
phase freed
  free    4  order={order}
"""


@pytest.mark.parametrize("order, live", [("fifo", 400), ("lifo", 4), ("alternate", 202)])
def test_free_order_decides_which_blocks_go(heaplab_run: pathlib.Path, tmp_path: pathlib.Path,
                                            order: str, live: int) -> None:
    # four 1-byte blocks (oldest) then four 100-byte ones: fifo frees the small
    # ones, lifo the big ones, alternate one of each size in turn
    path = tmp_path / "orders.wl"
    path.write_text(ORDER_SCRIPT.format(order=order))
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 0, cell.stderr
    assert cell.phases()["freed"]["live_bytes"] == live


def test_percentages_round_down_and_realloc_updates_live_bytes(heaplab_run: pathlib.Path,
                                                               tmp_path: pathlib.Path) -> None:
    path = tmp_path / "percent.wl"
    path.write_text("workload percent\nphase built\n  alloc 7 size=fixed(1000)\n"
                    "phase halved\n  free 50%\nphase shrunk\n  realloc 100% size=fixed(10)\n"
                    "phase grown\n  realloc 2 size=fixed(10)\n")
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 0, cell.stderr
    phases = cell.phases()
    assert phases["halved"]["ops"] == 3
    assert phases["halved"]["live_bytes"] == 4 * 1000
    assert phases["shrunk"]["ops"] == 4
    # realloc picks blocks at random (repeats allowed), so some may stay big;
    # but every byte counted is either 10 or 1000 per block
    shrunk = phases["shrunk"]["live_bytes"]
    assert shrunk < 4 * 1000 and (shrunk - 4 * 10) % (1000 - 10) == 0
    assert phases["grown"]["ops"] == 2


def test_repeat_runs_its_body_n_times(heaplab_run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "repeat.wl"
    path.write_text("workload rep\nparam R=25\nphase p\n  alloc 10 size=fixed(8)\n"
                    "  repeat $R\n    free 5 order=alternate\n    alloc 5 size=fixed(8)\n"
                    "    repeat 2\n      pairs 3 size=fixed(16)\n    end\n  end\n")
    cell = run_cell(heaplab_run, path, "system", "--param", "R=7")
    assert cell.returncode == 0, cell.stderr
    assert cell.phases()["p"]["ops"] == 10 + 7 * (5 + 5 + 2 * 3)
    assert cell.phases()["p"]["live_bytes"] == 10 * 8
