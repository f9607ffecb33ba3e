"""A script named on the driver's command line: by name when it is broken
(its own error, not "no workload matches"), by path (as the runner takes
it), and with --threads honoured whether or not it has a `threads` line."""
from __future__ import annotations

import json
import pathlib
import subprocess

import pytest

from heaplab import catalog, matrix

BROKEN = "workload mybroken\nphase a\n  aloc 10 size=fixed(8)\n"
PLAIN = "workload myplain\nphase a\n  alloc 100 size=fixed(8)\n  free 100%\n"


def _listing(runner: pathlib.Path, folder: pathlib.Path) -> catalog.Catalog:
    out = subprocess.run([str(runner), "--list-json", "--workloads-dir", str(folder)],
                         capture_output=True, text=True, check=True).stdout
    return catalog.Catalog.from_json(json.loads(out))


@pytest.fixture
def scripts(tmp_path):
    (tmp_path / "mybroken.wl").write_text(BROKEN)
    (tmp_path / "myplain.wl").write_text(PLAIN)
    return tmp_path


def test_a_broken_script_named_by_name_shows_its_own_error(heaplab_run, scripts):
    cat = _listing(heaplab_run, scripts)
    with pytest.raises(catalog.SelectionError) as e:
        catalog.select_workloads(cat, "mybroken")
    assert "mybroken.wl:3: unknown operation 'aloc' (did you mean 'alloc'?)" in str(e.value)
    assert "no workload matches" not in str(e.value)


def test_a_broken_script_named_by_path_shows_its_own_error(heaplab_run, scripts):
    cat = _listing(heaplab_run, scripts.parent)  # a folder without it
    with pytest.raises(catalog.SelectionError) as e:
        catalog.select_workloads(cat, str(scripts / "mybroken.wl"), heaplab_run)
    assert str(e.value).endswith("mybroken.wl:3: unknown operation 'aloc' (did you mean 'alloc'?)")


def test_a_script_named_by_path_runs_by_that_path(heaplab_run, scripts, repo_root):
    cat = catalog.load(heaplab_run)
    [w] = catalog.select_workloads(cat, str(scripts / "myplain.wl"), heaplab_run)
    assert w.name == "myplain" and w.argument == str(scripts / "myplain.wl")
    with pytest.raises(catalog.SelectionError) as e:
        catalog.select_workloads(cat, str(scripts / "nothere.wl"), heaplab_run)
    assert "no such script file" in str(e.value)


def test_threads_apply_to_a_script_without_a_threads_line(heaplab_run, scripts):
    cat = _listing(heaplab_run, scripts)
    [w] = catalog.select_workloads(cat, "myplain")
    assert w.threaded
    cells = matrix.plan_cells([w], ["system"], [1, 2])
    assert [c.threads for c in cells] == [1, 2] and all(c.pass_threads for c in cells)


def test_run_py_runs_a_script_by_path_at_each_thread_count(heaplab_run, scripts, repo_root):
    proc = subprocess.run(["/usr/bin/python3", str(repo_root / "run.py"), "run", "--workload",
                           str(scripts / "myplain.wl"), "--alloc", "system", "--reps", "1",
                           "--threads", "1,2", "--no-plots", "--runner", str(heaplab_run),
                           "--out", str(scripts / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "| myplain | 1 |" in proc.stdout and "| myplain | 2 |" in proc.stdout
