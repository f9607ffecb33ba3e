"""A `.wl` that names a trace (`trace FILE`): its options become the
replay's parameters, its phases end at the marks it gives, and every
mistake stops the runner with one `file:line:` line."""
from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import pytest

from conftest import header


def write_script(folder: pathlib.Path, trace: pathlib.Path, body: str) -> pathlib.Path:
    """A script beside a copy of the trace, naming it by a relative path."""
    shutil.copy(trace, folder / "t.hltrace")
    script = folder / "replay.wl"
    script.write_text("workload  my-replay\n" + body.replace("TRACE", "t.hltrace"))
    return script


def run_script(build_dir, script: pathlib.Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(build_dir / "heaplab-run"), "--alloc", "system", "--workload",
                           str(script), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120, check=False)


def test_named_phases_end_at_the_marks_the_script_gives(build_dir, python_trace, tmp_path):
    ops = header(python_trace)["counts"]["ops"]
    script = write_script(tmp_path, python_trace,
                          "trace  TRACE  touch=all  samples=0\n"
                          "phase  start  until=10%\n"
                          "phase  middle until=" + str(ops * 3 // 4) + "\n"
                          "phase  rest\n")
    proc = run_script(build_dir, script)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [p["name"] for p in doc["phases"]] == ["start", "middle", "rest"]
    assert [p["ops"] for p in doc["phases"]] == [ops // 10, ops * 3 // 4 - ops // 10,
                                                 ops - ops * 3 // 4]
    assert doc["metrics"]["ops"]["value"] == ops
    assert doc["samples"] == []
    assert doc["workload"]["param_names"]["touch"] == "all"


def test_trace_line_options_are_defaults_that_param_overrides(build_dir, python_trace, tmp_path):
    script = write_script(tmp_path, python_trace, "trace  TRACE  phases=3  touch=none\n")
    proc = run_script(build_dir, script, "--param", "phases=5", "--param", "touch=pages")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [p["name"] for p in doc["phases"]] == [f"part{k}" for k in range(1, 6)]
    assert doc["workload"]["param_names"]["touch"] == "pages"
    proc = run_script(build_dir, script)
    assert len(json.loads(proc.stdout)["phases"]) == 3


BAD = [
    # (script body after the workload line, line of the error, what it says)
    ("trace  missing.hltrace\n", 2, "cannot open trace"),
    ("trace  TRACE  touhc=all\n", 2, "unknown trace option 'touhc' (did you mean 'touch'?)"),
    ("trace  TRACE  touch=most\n", 2, "unknown touch mode 'most'"),
    ("trace  TRACE  phases=0\n", 2, "phases=0 is out of range"),
    ("trace\n", 2, "'trace' needs a file"),
    ("trace  TRACE\ntrace  TRACE\n", 3, "second 'trace' line (first at line 2)"),
    ("trace  TRACE\nphase a until=50%\nphase b until=40%\n", 4, "it would be empty"),
    ("trace  TRACE\nphase a until=50%\n", 3, "the last phase, a, ends at call"),
    ("trace  TRACE\nphase a until=999999999\nphase b\n", 3, "is beyond the trace's"),
    ("trace  TRACE\nphase a until=150%\nphase b\n", 3, "is not in [1%, 100%]"),
    ("trace  TRACE\nphase a\nphase b\n", 4, "has no until=, so it ended the trace"),
    ("trace  TRACE  phases=3\nphase a\n", 2, "use one or the other"),
    ("trace  TRACE\nphase a\n  alloc 10 size=fixed(8)\n", 4, "it has no operations"),
    ("trace  TRACE\nthreads 2\n", 3, "'threads' does not apply to a trace script"),
    ("trace  TRACE\nparam N=1\n", 3, "parameters on the 'trace' line"),
    ("program /bin/true\ntrace  TRACE\n", 3, "a 'trace' or a 'program' line, not both"),
    ("trace  TRACE\nprogram /bin/true\n", 3, "a 'trace' or a 'program' line, not both"),
]


@pytest.mark.parametrize("body,line,message", BAD, ids=[m for _, _, m in BAD])
def test_a_bad_trace_script_stops_with_its_file_and_line(build_dir, python_trace, tmp_path,
                                                         body, line, message):
    script = write_script(tmp_path, python_trace, body)
    proc = run_script(build_dir, script)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{script}:{line}: " in lines[0] and message in lines[0], lines[0]


def test_a_corrupt_trace_named_by_a_script_is_its_line_error(build_dir, python_trace, tmp_path):
    script = write_script(tmp_path, python_trace, "trace  TRACE\n")
    data = bytearray((tmp_path / "t.hltrace").read_bytes())
    data[-20] ^= 0xFF
    (tmp_path / "t.hltrace").write_bytes(bytes(data))
    line = run_script(build_dir, script).stderr.strip()
    assert f"{script}:2: " in line and "corrupt trace" in line and "offset" in line
