"""Program scripts: the command runs with the allocator preloaded, setup
lines prepare its inputs in {tmp}, and the child's rusage is recorded."""
from __future__ import annotations

import pathlib

import pytest

from wl_script_helpers import REPO, available_allocators, run_cell

RUSAGE_METRICS = ("wall_ns", "user_ns", "sys_ns", "max_rss_bytes", "minor_faults", "major_faults")


def allocators() -> list[str]:
    from wl_script_helpers import runner_binary
    return available_allocators(runner_binary(), REPO / "workloads")


def test_program_records_rusage_figures(heaplab_run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "listy.wl"
    path.write_text('workload listy\nparam N=300000\n'
                    'program /usr/bin/python3 -c "x = [str(i) * 3 for i in range($N)]"\n')
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 0, cell.stderr
    assert cell.doc is not None
    assert cell.doc["primary"] == "wall_ns"
    assert cell.doc["workload"]["kind"] == "program"
    for name in RUSAGE_METRICS:
        assert name in cell.doc["metrics"], name
    assert cell.metric("wall_ns") > 0
    assert cell.metric("user_ns") + cell.metric("sys_ns") > 0
    # 300,000 strings of 15-18 characters in a list: well above 10 MB
    assert cell.metric("max_rss_bytes") > 10 * 1024 * 1024
    assert cell.metric("minor_faults") > 0
    assert cell.doc["phases"] == []


@pytest.mark.parametrize("alloc", allocators())
def test_program_sees_the_allocators_preload_library(heaplab_run: pathlib.Path,
                                                     tmp_path: pathlib.Path, alloc: str) -> None:
    path = tmp_path / "preload.wl"
    # fails on purpose, so the child's LD_PRELOAD comes back in the error
    path.write_text('workload preload\n'
                    'program /bin/sh -c "echo \\"preload=[$${LD_PRELOAD-}]\\" >&2; exit 3"\n')
    cell = run_cell(heaplab_run, path, alloc)
    assert cell.returncode == 1
    assert cell.doc is not None
    error = cell.doc["error"]
    assert f"{path}:2: program '/bin/sh' exited with status 3" in error
    if alloc == "system":
        assert "preload=[]" in error
    else:
        assert "preload=[/" in error and "preload=[]" not in error


def test_setup_prepares_input_in_tmp_and_params_expand(heaplab_run: pathlib.Path,
                                                       tmp_path: pathlib.Path) -> None:
    path = tmp_path / "setup.wl"
    path.write_text("workload setup-demo\nparam LINES=1234\n"
                    "setup /usr/bin/python3 -c \"import sys; open(sys.argv[1], 'w').write('x\\n' * int(sys.argv[2]))\" {tmp}/in.txt $LINES\n"
                    "program /bin/sh -c \"test $$(wc -l < {tmp}/in.txt) -eq $LINES\"\n")
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 0, cell.stderr
    changed = run_cell(heaplab_run, path, "system", "--param", "LINES=5")
    assert changed.returncode == 0, "the setup and the program both see the new value"


def test_failing_program_reports_status_and_stderr_tail(heaplab_run: pathlib.Path,
                                                        tmp_path: pathlib.Path) -> None:
    path = tmp_path / "fails.wl"
    path.write_text('workload fails\n'
                    'program /bin/sh -c "echo one >&2; echo two >&2; echo three >&2; echo four >&2; exit 7"\n')
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 1
    assert cell.doc is not None
    assert cell.doc["error"] == (f"{path}:2: program '/bin/sh' exited with status 7; "
                                 "stderr: two | three | four")


def test_program_killed_by_a_signal_is_a_failure(heaplab_run: pathlib.Path,
                                                 tmp_path: pathlib.Path) -> None:
    path = tmp_path / "killed.wl"
    path.write_text('workload killed\nprogram /bin/sh -c "kill -SEGV $$$$"\n')
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 1
    assert cell.doc is not None
    assert "was killed by signal 11" in cell.doc["error"]


def test_missing_program_is_a_clear_failure(heaplab_run: pathlib.Path,
                                            tmp_path: pathlib.Path) -> None:
    path = tmp_path / "missing.wl"
    path.write_text("workload missing\nprogram /no/such/program --flag\n")
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 1
    assert cell.doc is not None
    assert "cannot run '/no/such/program': No such file or directory" in cell.doc["error"]


def test_failing_setup_stops_before_the_program(heaplab_run: pathlib.Path,
                                                tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "program-ran"
    path = tmp_path / "badsetup.wl"
    path.write_text(f"workload badsetup\nsetup /bin/false\nprogram /usr/bin/touch {marker}\n")
    cell = run_cell(heaplab_run, path, "system")
    assert cell.returncode == 1
    assert cell.doc is not None
    assert cell.doc["error"].startswith(f"{path}:2: setup '/bin/false' exited with status 1")
    assert not marker.exists()
