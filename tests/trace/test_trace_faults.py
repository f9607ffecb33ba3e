"""Bad traces and faults: one line naming the file (and the offset), exit 2,
nothing run; a crashed program's flushed calls stay usable; frees of blocks
the recording never saw allocated are counted and skipped."""
from __future__ import annotations

import json
import pathlib
import struct
import subprocess
import sys

import pytest

from conftest import compile_c, header, record, replay

RAW_MAGIC = 0x43524C48
MALLOC, FREE = 1, 4


def refused(build_dir, trace: pathlib.Path) -> str:
    proc = replay(build_dir, trace, "system")
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == ""                       # nothing ran, no document
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(trace) in lines[0]
    return lines[0]


def test_missing_trace_is_refused(build_dir, tmp_path):
    assert "cannot open trace" in refused(build_dir, tmp_path / "nope.hltrace")


def test_truncated_trace_names_the_offset(build_dir, handoff, tmp_path):
    data = handoff[0].read_bytes()
    for cut in (len(data) - 1, len(data) // 2, 12):
        bad = tmp_path / f"cut{cut}.hltrace"
        bad.write_bytes(data[:cut])
        line = refused(build_dir, bad)
        assert "truncated trace" in line and "offset" in line, line


def test_corrupt_body_is_refused(build_dir, handoff, tmp_path):
    data = bytearray(handoff[0].read_bytes())
    data[-40] ^= 0xFF
    bad = tmp_path / "flipped.hltrace"
    bad.write_bytes(bytes(data))
    line = refused(build_dir, bad)
    assert "corrupt trace" in line and "offset" in line


def test_wrong_version_is_refused(build_dir, handoff, tmp_path):
    data = bytearray(handoff[0].read_bytes())
    struct.pack_into("<I", data, 8, 99)
    bad = tmp_path / "v99.hltrace"
    bad.write_bytes(bytes(data))
    assert "version 99" in refused(build_dir, bad)


def test_not_a_trace_is_refused(build_dir, tmp_path):
    bad = tmp_path / "text.hltrace"
    bad.write_text("hello\n" * 10)
    assert "not a heaplab trace" in refused(build_dir, bad)


def test_run_py_refuses_a_missing_trace_in_one_line(repo_root, build_dir, tmp_path):
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "run", "--runner",
                           str(build_dir / "heaplab-run"), "--workload",
                           f"trace:{tmp_path / 'gone.hltrace'}", "--alloc", "system",
                           "--out", str(tmp_path)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "gone.hltrace" in proc.stderr


def test_record_without_a_program_is_bad_input(repo_root, build_dir, tmp_path):
    proc = record(repo_root, build_dir, tmp_path / "x.hltrace", [])
    assert proc.returncode == 2 and "no program given" in proc.stderr


def raw_event(op, t, size=0, block=0, old=0):
    return struct.pack("<QQQQIBBH", t, size, block, old, 0, op, 0, 0)


def test_frees_of_blocks_never_seen_are_counted_and_skipped(build_dir, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    events = [raw_event(MALLOC, 1, 100, 1), raw_event(FREE, 2, old=77),   # 77: before the recorder
              raw_event(FREE, 3, old=1)]
    # a chunk cut short by a crash at the end is dropped
    chunk = struct.pack("<IIII", RAW_MAGIC, 0, len(events), 0) + b"".join(events)
    cut = struct.pack("<IIII", RAW_MAGIC, 0, 5, 1) + raw_event(MALLOC, 4, 8, 2)
    (raw / "100.raw").write_bytes(chunk + cut)
    out = tmp_path / "skip.hltrace"
    subprocess.run([str(build_dir / "heaplab-trace"), "pack", str(raw), str(out), "--", "x"],
                   check=True)
    h = header(out)
    assert h["truncated"] is True
    assert h["counts"]["ops"] == 3 and h["counts"]["skipped_frees"] == 1
    proc = replay(build_dir, out, "system")
    doc = json.loads(proc.stdout)
    assert doc["metrics"]["skipped_frees"]["value"] == 1
    assert doc["frees"]["total"] == 1


CRASHER = r"""
#include <stdlib.h>
#include <string.h>
int main(void)
{
    static void *keep[30000];
    for (int i = 0; i < 30000; i++) {
        keep[i] = malloc(24 + i % 100);
        memset(keep[i], 1, 8);
        if (i % 3 == 0) { free(keep[i]); keep[i] = 0; }
    }
    abort();
}
"""


def test_a_crashed_program_leaves_a_usable_trace(repo_root, build_dir, tmp_path):
    src = tmp_path / "crash.c"
    src.write_text(CRASHER)
    prog = compile_c(src, tmp_path / "crash")
    out = tmp_path / "crash.hltrace"
    proc = record(repo_root, build_dir, out, [str(prog)])
    assert proc.returncode == 1                     # the program died of SIGABRT
    assert "signal 6" in proc.stderr
    h = header(out)
    # the full buffers were written before the crash, the last one was not
    assert 0 < h["counts"]["ops"] < 40000
    doc = json.loads(replay(build_dir, out, "system").stdout)
    assert doc["status"] == "ok" and doc["metrics"]["ops"]["value"] == h["counts"]["ops"]


@pytest.mark.parametrize("alloc", ["system", "heaplab"])
def test_instruction_counts_of_a_replay_repeat(repo_root, build_dir, python_trace, tmp_path,
                                               alloc):
    import shutil
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind not installed")
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "run", "--runner",
                           str(build_dir / "heaplab-run"), "--workload", f"trace:{python_trace}",
                           "--alloc", alloc, "--reps", "2", "--metric", "instructions",
                           "--no-plots", "--out", str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    raw = next(tmp_path.glob("*/raw.jsonl"))
    counts = [json.loads(line)["metrics"]["instructions"]["value"]
              for line in raw.read_text().splitlines()]
    assert len(counts) == 2 and counts[0] > 0
    assert abs(counts[0] - counts[1]) <= 0.005 * counts[0], counts
