"""`run.py run --program -- CMD ARGS...`: a user's own command as a program
workload — measured with evidence and RSS samples on each allocator, its
arguments passed exactly, a failing command a failed cell with its stderr,
a hanging one killed at --timeout with all its children."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from heaplab import programs

REPO = pathlib.Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"


@pytest.fixture()
def runner(runner_path: pathlib.Path) -> pathlib.Path:
    folder = runner_path.resolve().parent
    if not runner_path.exists() or not (folder / programs.PROBE_NAME).exists():
        pytest.skip("the runner and the evidence probe are not built")
    return runner_path


def run_program(runner: pathlib.Path, out: pathlib.Path, command: list[str], *options: str,
                timeout: float = 300) -> tuple[subprocess.CompletedProcess, list[dict]]:
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "run", "--runner", str(runner),
                           "--out", str(out), *options, "--program", "--", *command],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, check=False)
    raw = out / "latest" / "raw.jsonl"
    docs = [json.loads(line) for line in raw.read_text().splitlines()] if raw.exists() else []
    return proc, docs


def test_a_command_is_measured_on_each_allocator_with_evidence(runner, tmp_path):
    # long enough (some tenths of a second) for RSS samples every 10 ms
    proc, docs = run_program(runner, tmp_path, [PYTHON, "-c",
                             "x = [str(i) * 3 for i in range(1000000)]"],
                             "--alloc", "system,heaplab", "--reps", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {d["cell"] for d in docs} == {"cmd-python3/system/1t", "cmd-python3/heaplab/1t"}
    for d in docs:
        assert d["status"] == "ok", d.get("error")
        assert d["workload"]["kind"] == "program"
        assert d["evidence"]["in_use"] is True
        assert d["samples"] and all(s["rss_bytes"] > 0 for s in d["samples"])
        assert d["metrics"]["max_rss_bytes"]["value"] > 0
    heaplab = next(d for d in docs if d["allocator"]["name"] == "heaplab")
    assert heaplab["evidence"]["served_by_name"] == ["heaplab"]
    assert "cmd-python3" in proc.stdout                     # the table
    assert (tmp_path / "latest" / "memory-time-cmd-python3.png").exists()


def test_the_arguments_reach_the_program_exactly(runner, tmp_path):
    out = tmp_path / "argv.json"
    words = ["a b", "$HOME", "$$", 'q"uote', "back\\slash", "#hash", "(paren", "{x}", ""]
    proc, docs = run_program(runner, tmp_path / "runs", [
        PYTHON, "-c", "import json, sys; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))",
        str(out), *words], "--alloc", "system", "--reps", "1", "--no-plots")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(out.read_text()) == words


def test_words_without_program_are_refused(runner, tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "run.py"), "run", "--runner", str(runner),
                           "--out", str(tmp_path), "sort", "x"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "unexpected arguments: sort x" in proc.stderr


def test_a_missing_command_is_refused(runner, tmp_path):
    proc, _ = run_program(runner, tmp_path, ["heaplab-no-such-command"])
    assert proc.returncode == 2
    assert "'heaplab-no-such-command' not found" in proc.stderr


def test_a_command_that_exits_non_zero_is_a_failed_cell_with_its_stderr(runner, tmp_path):
    proc, docs = run_program(runner, tmp_path,
                             ["/bin/sh", "-c", "echo the-reason-it-failed >&2; exit 3"],
                             "--alloc", "system", "--reps", "2", "--no-plots")
    assert proc.returncode == 1
    assert len(docs) == 2
    for d in docs:
        assert d["status"] == "error"
        assert "exited with status 3" in d["error"]
        assert "the-reason-it-failed" in d["error"]
    assert "cmd-sh/system/1t" in proc.stderr               # named among the failed cells


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_hanging_command_is_killed_at_the_timeout_with_its_children(runner, tmp_path):
    # a child in the background and one in the foreground, both far longer
    # than the timeout; the unusual duration marks them in /proc
    marker = "3001.25"
    proc, docs = run_program(runner, tmp_path, ["/bin/sh", "-c",
                             f"sleep {marker} & sleep {marker}; wait"],
                             "--alloc", "system", "--reps", "3", "--timeout", "3", "--no-plots",
                             timeout=120)
    assert proc.returncode == 1
    # a cell that timed out is not run again: one document, "timeout"
    assert [d["status"] for d in docs] == ["timeout"]
    assert "timeout" in proc.stderr
    assert _processes_with(marker) == [], "a child of the hung command survived"
