"""run.py run/list/plot against a fake runner (tests/fixtures/driver/fake_runner.py)
that records its calls and can crash, hang, fail, or press Ctrl-C."""
import json
import os
import subprocess
import sys

import pytest


@pytest.fixture
def fake(tmp_path, driver_fixtures, repo_root):
    """Returns run(args, behaviour=..., values=...) -> (CompletedProcess, run folder, calls)."""
    runner = driver_fixtures / "fake_runner.py"
    listing = json.loads((driver_fixtures / "list.json").read_text())

    def run(args, behaviour=None, values=None, timeout=60):
        log = tmp_path / "calls.jsonl"
        if log.exists():
            log.unlink()
        config = tmp_path / "fake.json"
        config.write_text(json.dumps({"list": listing, "log": str(log),
                                      "behaviour": behaviour or {}, "values": values or {}}))
        out = tmp_path / "runs"
        env = dict(os.environ, FAKE_RUNNER_CONFIG=str(config))
        env.pop("HEAPLAB_RUN", None)
        cmd = [sys.executable, str(repo_root / "run.py"), *args, "--runner", str(runner)]
        if args[0] == "run":
            cmd += ["--out", str(out)]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
        folder = out / "latest"
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        runs = [c for c in calls if c != ["--list-json"]]
        return proc, folder, runs
    return run


def raw(folder):
    return [json.loads(line) for line in (folder / "raw.jsonl").read_text().splitlines()]


def cells(folder):
    return {c["cell"]: c for c in json.loads((folder / "summary.json").read_text())["cells"]}


def test_a_clean_run_writes_every_file_and_exits_0(fake):
    proc, folder, calls = fake(["run", "--reps", "2", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    assert folder.is_symlink() and (folder / "env.json").exists()
    docs = raw(folder)
    # 4 rows x 3 installed allocators x 2 reps; jemalloc is not installed
    assert len(docs) == len(calls) == 3 * 3 * 2
    assert {d["rep"] for d in docs} == {1, 2}
    assert all(d["cell"] == f"{d['workload']['name']}/{d['allocator']['name']}/{d['workload']['threads']}t"
               for d in docs)
    for name in ("summary.json", "tables.md", "tables.csv"):
        assert (folder / name).exists()
    assert "| tmalloc-st-64 | 1 |" in proc.stdout      # the Markdown table is printed


def test_repetitions_are_interleaved_across_allocators(fake):
    proc, folder, calls = fake(["run", "--reps", "3", "--workload", "tmalloc-st-64", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    allocs = [c[c.index("--alloc") + 1] for c in calls]
    assert allocs == ["system", "heaplab", "mimalloc"] * 3
    assert [d["rep"] for d in raw(folder)] == [1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_not_installed_allocator_is_never_run_and_says_so(fake):
    proc, folder, calls = fake(["run", "--reps", "1", "--workload", "tmalloc-st-64", "--no-plots"])
    assert not any("jemalloc" in c for c in calls)
    cell = cells(folder)["tmalloc-st-64/jemalloc/1t"]
    assert cell["status"] == "not installed"
    assert "not installed (apt install libjemalloc2)" in (folder / "tables.md").read_text()
    assert proc.returncode == 0


def test_quick_is_passed_and_full_is_not(fake):
    _, _, calls = fake(["run", "--reps", "1", "--workload", "tmalloc-st-64", "--alloc", "system", "--no-plots"])
    assert calls == [["--alloc", "system", "--workload", "tmalloc-st-64", "--quick"]]
    _, _, calls = fake(["run", "--full", "--reps", "1", "--workload", "tmalloc-st-64", "--alloc", "system",
                        "--no-plots"])
    assert calls == [["--alloc", "system", "--workload", "tmalloc-st-64"]]


def test_a_param_goes_to_every_selected_workload_that_has_it_and_is_recorded(fake):
    proc, folder, calls = fake(["run", "--reps", "1", "--alloc", "system", "--workload", "tmalloc-*",
                                "--param", "pairs=1_000", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    assert calls == [["--alloc", "system", "--workload", "tmalloc-st-64", "--quick", "--param", "pairs=1000"],
                     ["--alloc", "system", "--workload", "tmalloc-mt-64", "--quick"]]
    assert json.loads((folder / "env.json").read_text())["options"]["param"] == ["pairs=1_000"]
    assert "tmalloc-st-64 with pairs=1000" in proc.stderr
    assert "| tmalloc-st-64 (pairs=1000) | 1 |" in (folder / "tables.md").read_text()


def test_threads_list_applies_to_threaded_workloads_only(fake):
    proc, folder, calls = fake(["run", "--reps", "1", "--alloc", "system", "--threads", "1,4",
                                "--workload", "tmalloc-*", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    threads = [(c[c.index("--workload") + 1], c[c.index("--threads") + 1] if "--threads" in c else None)
               for c in calls]
    assert threads == [("tmalloc-st-64", None), ("tmalloc-mt-64", "1"), ("tmalloc-mt-64", "4")]
    assert "| tmalloc-mt-64 | 4 |" in (folder / "tables.md").read_text()


def test_a_crashing_cell_is_recorded_and_the_rest_continue(fake):
    proc, folder, calls = fake(["run", "--reps", "2", "--workload", "tmalloc-st-64", "--no-plots"],
                               behaviour={"tmalloc-st-64/mimalloc": "segv"})
    assert proc.returncode == 1
    assert len(calls) == 6
    crashed = [d for d in raw(folder) if d["status"] == "crashed"]
    assert len(crashed) == 2
    assert crashed[0]["signal"] == "SIGSEGV" and "about to crash" in crashed[0]["stderr"]
    assert crashed[0]["workload"]["name"] == "tmalloc-st-64" and crashed[0]["allocator"]["name"] == "mimalloc"
    assert cells(folder)["tmalloc-st-64/system/1t"]["n"] == 2
    assert "crashed (SIGSEGV)" in (folder / "tables.md").read_text()


def test_a_cell_that_crashes_only_sometimes_keeps_its_good_values(fake):
    proc, folder, _ = fake(["run", "--reps", "3", "--workload", "tmalloc-st-64", "--alloc", "heaplab",
                            "--no-plots"], behaviour={"tmalloc-st-64/heaplab": "ok-then-segv"})
    assert proc.returncode == 1
    cell = cells(folder)["tmalloc-st-64/heaplab/1t"]
    assert cell["status"] == "ok" and cell["n"] == 1 and len(cell["failures"]) == 2


def test_a_hanging_cell_times_out_once_and_is_not_retried(fake):
    proc, folder, calls = fake(["run", "--reps", "2", "--workload", "tmalloc-st-64", "--timeout", "5",
                                "--no-plots"], behaviour={"tmalloc-st-64/heaplab": "hang"})
    assert proc.returncode == 1
    assert [c[c.index("--alloc") + 1] for c in calls].count("heaplab") == 1
    assert len(calls) == 5
    docs = [d for d in raw(folder) if d["allocator"]["name"] == "heaplab"]
    assert len(docs) == 1
    doc = docs[0]
    assert doc["status"] == "timeout" and "hanging" in doc["stderr"]
    assert cells(folder)["tmalloc-st-64/heaplab/1t"]["status"] == "timeout"
    assert cells(folder)["tmalloc-st-64/system/1t"]["status"] == "ok"


def test_a_runner_error_document_is_shown_once_with_its_message(fake):
    proc, folder, _ = fake(["run", "--reps", "3", "--workload", "tmalloc-st-64", "--no-plots"],
                           behaviour={"tmalloc-st-64/system": "error"})
    assert proc.returncode == 1
    assert proc.stderr.count("out of memory at block 12") == 1
    assert "error: workload failed: out of memory at block 12" in (folder / "tables.md").read_text()
    assert [d["status"] for d in raw(folder) if d["allocator"]["name"] == "system"] == ["error"] * 3


def test_invalid_parameters_are_shown_once_and_not_retried(fake):
    proc, folder, calls = fake(["run", "--reps", "3", "--workload", "tmalloc-st-64", "--alloc", "system",
                                "--no-plots"], behaviour={"tmalloc-st-64/system": "usage"})
    assert proc.returncode == 1
    assert len(calls) == 1
    assert proc.stderr.count("out of range [1, 1000000000]") == 1


@pytest.mark.parametrize("how", ["interrupt", "terminate"])
def test_ctrl_c_or_sigterm_keeps_finished_cells_and_exits_130(fake, how):
    proc, folder, calls = fake(["run", "--reps", "2", "--workload", "tmalloc-st-64", "--no-plots"],
                               behaviour={"tmalloc-st-64/mimalloc": how})
    assert proc.returncode == 130
    assert len(calls) == 3          # system, heaplab, then mimalloc pressed Ctrl-C
    docs = raw(folder)
    assert [d["allocator"]["name"] for d in docs] == ["system", "heaplab"]
    summary = cells(folder)
    assert summary["tmalloc-st-64/system/1t"]["n"] == 1
    assert summary["tmalloc-st-64/mimalloc/1t"]["status"] == "not run"
    assert json.loads((folder / "env.json").read_text())["interrupted"] is True
    assert (folder / "tables.md").exists()


@pytest.mark.parametrize("args, named", [
    (["--alloc", "hoard"], "unknown allocator 'hoard'; allocators: system, heaplab, mimalloc, jemalloc"),
    (["--workload", "nosuch"], "no workload matches 'nosuch'; workloads: tmalloc-st-64"),
    (["--reps", "0"], "--reps: '0' is not a positive whole number"),
    (["--threads", "x"], "--threads: 'x' is not a thread count in [1, 1024]"),
    (["--param", "nosuch=1"], "--param nosuch: no selected workload has a parameter 'nosuch' (theirs: pairs)"),
    (["--param", "pairs=lots"], "--param pairs=lots: 'lots' is not a whole number"),
    (["--param", "pairs"], "--param 'pairs': expected KEY=VALUE"),
    (["--param", "pairs=0"], "--param pairs=0: tmalloc-st-64 takes pairs from 1 to"),
    (["--threads", "100000"], "--threads: '100000' is not a thread count in [1, 1024]"),
    (["--threads", "1,,2"], "--threads: '1,,2' has an empty entry"),
    (["--alloc", "so:/nonexistent.so"], "--alloc so:/nonexistent.so: /nonexistent.so: no such library file"),
    (["--alloc", "my lib=so:/nonexistent.so"], "NAME in NAME=so:PATH must be letters"),
    (["--alloc", "heaplab=so:/bin/true"], "'heaplab' is already an allocator's name"),
    (["--seed", "-1"], "--seed: '-1' is not a whole number >= 0"),
])
def test_bad_input_is_one_line_and_exit_2(fake, tmp_path, args, named):
    proc, folder, calls = fake(["run", *args, "--no-plots"])
    assert proc.returncode == 2
    assert named in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    # refused before anything runs: no runner process, no run folder
    assert calls == [] and not (tmp_path / "runs").exists()


def test_list_shows_allocators_workloads_and_broken_scripts(fake):
    proc, _, _ = fake(["list"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "jemalloc: not installed (apt install libjemalloc2)" in out
    assert "[tmalloc]" in out and "[script]" in out
    assert "ns_per_pair (ns, lower is better)" in out and "64-byte block, one at a time" in out
    assert "workloads/bad.wl:3: unknown operation 'alloca'" in out
    # each workload's parameters, with the quick size where it differs
    assert "params: pairs=10000000 (quick 1000000)" in out
    # a broken script's error already names its file: once is enough
    assert out.count("workloads/bad.wl") == 1


def test_plot_refuses_a_folder_that_is_not_a_run(tmp_path, repo_root):
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "plot", str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # bad input: the exit status compare gives it (2), in one line
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert f"{tmp_path}: not a run folder (no raw.jsonl" in proc.stderr


# --- seeds, named libraries, interrupted runs, sizes, folders by their parent (issue #17)

def test_seed_goes_to_every_runner_process(fake):
    proc, folder, calls = fake(["run", "--workload", "tmalloc-st-64", "--alloc", "system",
                                "--reps", "2", "--seed", "3", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    assert calls and all(c[c.index("--seed") + 1] == "3" for c in calls)
    assert json.loads((folder / "env.json").read_text())["options"]["seed"] == 3


def test_a_named_so_library_runs_as_given_and_is_called_by_its_name(fake, tmp_path):
    lib = tmp_path / "libmine.so"
    lib.write_bytes(b"")
    proc, folder, calls = fake(["run", "--workload", "tmalloc-st-64", "--alloc",
                                f"system,mine=so:{lib}", "--reps", "1", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    # the runner gets NAME=so:PATH; columns, cells and the plan say NAME
    assert [c[c.index("--alloc") + 1] for c in calls] == ["system", f"mine=so:{lib}"]
    assert "tmalloc-st-64/mine/1t" in cells(folder)
    assert [a["name"] for a in json.loads((folder / "env.json").read_text())["plan"]["allocators"]] \
        == ["system", "mine"]
    assert "| workload | threads | metric | system | mine |" in proc.stdout
    assert str(lib) not in (folder / "tables.md").read_text()


def test_an_interrupted_run_says_n_per_cell_and_draws_what_finished(fake):
    proc, folder, calls = fake(["run", "--reps", "2", "--workload", "tmalloc-st-64"],
                               behaviour={"tmalloc-st-64/mimalloc": "ok-then-interrupt"}, timeout=300)
    assert proc.returncode == 130
    md = (folder / "tables.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| tmalloc-st-64 |"))
    # system and heaplab ran twice; mimalloc's second repetition was Ctrl-C
    assert " n=1" in row and row.count(" n=") == 1
    assert "fewer than 2 runs" in md
    assert any(p.suffix == ".png" for p in folder.iterdir()), "no chart of what finished"


def test_tables_say_which_sizes_ran(fake):
    proc, folder, _ = fake(["run", "--reps", "1", "--workload", "tmalloc-st-64", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    assert "Sizes: quick sizes" in (folder / "tables.md").read_text()


def test_compare_and_plot_take_the_parent_of_run_folders(fake, tmp_path, repo_root):
    proc, folder, _ = fake(["run", "--reps", "1", "--workload", "tmalloc-st-64", "--no-plots"])
    assert proc.returncode == 0, proc.stderr
    parent = tmp_path / "runs"
    cmd = [sys.executable, str(repo_root / "run.py")]
    compared = subprocess.run(cmd + ["compare", str(parent), str(parent)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert compared.returncode == 0, compared.stderr
    assert str(folder.resolve()) in compared.stdout   # read through `latest`
    (parent / "latest").unlink()                      # one run folder and no latest
    plotted = subprocess.run(cmd + ["plot", str(parent)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert plotted.returncode == 0, plotted.stderr


def test_plot_of_a_missing_folder_exits_as_compare_does(tmp_path, repo_root):
    cmd = [sys.executable, str(repo_root / "run.py")]
    plotted = subprocess.run(cmd + ["plot", str(tmp_path / "nonexistent")], capture_output=True, text=True)
    compared = subprocess.run(cmd + ["compare", str(tmp_path / "nonexistent"), "--baseline-alloc",
                                     "system"], capture_output=True, text=True)
    assert plotted.returncode == compared.returncode == 2
    assert len(plotted.stderr.strip().splitlines()) == 1
