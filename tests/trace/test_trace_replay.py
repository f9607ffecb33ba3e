"""Recording and replaying: what the recorder saw equals what the program
did, and a replay on every installed allocator performs exactly the
recorded calls, with the recorded peak of live bytes."""
from __future__ import annotations

import json

import pytest

from conftest import header, replay

OPS = ("malloc", "calloc", "realloc", "free", "free_sized", "aligned", "usable_size")


def test_recorder_sees_every_kind_of_call_of_the_threaded_program(handoff):
    trace, said = handoff
    h = header(trace)
    counts = h["counts"]
    assert h["format"] == "heaplab.trace" and h["version"] == 1
    assert len(h["streams"]) == 3                      # main thread, producer, consumer
    assert counts["cross_thread_frees"] == said["cross_thread_frees"]
    assert counts["realloc"] == said["realloc"]
    assert counts["aligned"] == said["aligned"]
    assert counts["usable_size"] == said["usable_size"]
    assert counts["calloc"] >= said["calloc"]          # glibc's pthread_create callocs too
    assert counts["skipped_frees"] == 0
    assert counts["ops"] == sum(counts[k] for k in OPS)
    assert h["command"][0].endswith("handoff_prog")


def test_forked_child_gets_a_file_of_its_own_and_is_left_out(handoff):
    h = header(handoff[0])
    # the child made 10 mallocs and 10 frees; the trace is the parent's
    assert [d["ops"] for d in h["dropped_processes"]] == [20]


def replayed(build_dir, trace, alloc, *extra):
    proc = replay(build_dir, trace, alloc, *extra)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return doc, {k: v["value"] for k, v in doc["metrics"].items()}


@pytest.mark.parametrize("which", ["handoff", "python", "sort"])
def test_replay_performs_the_recorded_calls_on_every_allocator(which, request, build_dir,
                                                               allocators):
    trace = {"handoff": lambda: request.getfixturevalue("handoff")[0],
             "python": lambda: request.getfixturevalue("python_trace"),
             "sort": lambda: request.getfixturevalue("sort_trace")}[which]()
    h = header(trace)
    for alloc in allocators:
        doc, m = replayed(build_dir, trace, alloc, "--param", "samples=4")
        assert doc["status"] == "ok", (alloc, doc.get("error"))
        assert m["ops"] == h["counts"]["ops"], alloc
        for op in OPS:
            assert m[f"{op}_count"] == h["counts"][op], (alloc, op)
        assert m["peak_live_bytes"] == h["peak_live_bytes"], alloc
        assert m["threads"] == len(h["streams"])
        assert doc["frees"]["cross_thread"] == h["counts"]["cross_thread_frees"]
        assert [p["name"] for p in doc["phases"]] == ["part1", "part2", "part3", "part4"]
        assert sum(p["ops"] for p in doc["phases"]) == h["counts"]["ops"]
        assert doc["phases"][-1]["live_bytes"] <= h["peak_live_bytes"]
        assert m["fragmentation"] > 0


def test_single_threaded_replay_tracks_the_recorded_peak_itself(build_dir, python_trace):
    # one stream: the replay's own running count of live bytes, not the header's
    h = header(python_trace)
    assert len(h["streams"]) == 1
    _, m = replayed(build_dir, python_trace, "system", "--param", "touch=0")
    assert m["peak_live_bytes"] == h["peak_live_bytes"] > 1_000_000


def test_trace_check_agrees_with_the_header(build_dir, handoff):
    import subprocess
    out = subprocess.run([str(build_dir / "heaplab-trace"), "check", str(handoff[0])],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    checked = json.loads(out)
    h = header(handoff[0])
    assert checked["ops"] == h["counts"]["ops"]
    assert checked["counts"] == {k: h["counts"][k] for k in OPS}
    assert checked["peak_live_bytes"] == h["peak_live_bytes"]


def test_python_trace_is_small_on_disk(python_trace):
    h = header(python_trace)
    assert python_trace.stat().st_size / h["counts"]["ops"] <= 6


def test_record_then_run_on_every_allocator_draws_the_charts(repo_root, build_dir, handoff,
                                                             churn_trace, sort_trace,
                                                             allocators, tmp_path):
    """The user's path end to end: three recorded programs (threaded C,
    python3 running a shipped script, sort) replayed by `run.py run` on
    every installed allocator, with the recorded calls and peak, and the
    memory charts of each."""
    import subprocess
    import sys
    traces = {"handoff": handoff[0], "churn": churn_trace, "sort": sort_trace}
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "run", "--runner",
                           str(build_dir / "heaplab-run"), "--workload",
                           ",".join(f"trace:{t}" for t in traces.values()),
                           "--alloc", ",".join(allocators), "--reps", "1", "--param", "samples=8",
                           "--out", str(tmp_path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = tmp_path / "latest"
    docs = [json.loads(line) for line in (run / "raw.jsonl").read_text().splitlines()]
    assert len(docs) == len(traces) * len(allocators)
    for stem, trace in traces.items():
        h = header(trace)
        mine = [d for d in docs if d["workload"]["name"] == f"trace-{stem}"]
        assert {d["allocator"]["name"] for d in mine} == set(allocators)
        for d in mine:
            assert d["status"] == "ok", (d["cell"], d.get("error"))
            assert d["metrics"]["ops"]["value"] == h["counts"]["ops"], d["cell"]
            assert d["metrics"]["peak_live_bytes"]["value"] == h["peak_live_bytes"], d["cell"]
            assert len(d["samples"]) >= 4
        for chart in ("memory-phases", "memory-time"):
            assert (run / f"{chart}-trace-{stem}.png").stat().st_size > 0
    assert "trace-churn" in (run / "tables.md").read_text()


def test_a_shell_that_forks_and_execs_is_recorded_as_the_busiest_process(repo_root, build_dir,
                                                                        tmp_path):
    """The preload follows fork and exec: the shell's forked child (a
    python3 of its own) gets a file of its own and is left out; the python3
    the shell execs into writes the kept trace (the shell alone makes a few
    dozen calls, python3's start-up thousands)."""
    from conftest import record
    out = tmp_path / "sh.hltrace"
    proc = record(repo_root, build_dir, out, [
        "/bin/sh", "-c", 'x=$(/usr/bin/python3 -c "print(1)"); '
        'exec /usr/bin/python3 -c "d = [str(i) * 40 for i in range(20000)]"'])
    assert proc.returncode == 0, proc.stderr
    h = header(out)
    assert h["counts"]["ops"] > 1000
    assert len(h["dropped_processes"]) == 1 and h["dropped_processes"][0]["ops"] > 1000
    _, m = replayed(build_dir, out, "system")
    assert m["ops"] == h["counts"]["ops"]
    assert m["peak_live_bytes"] == h["peak_live_bytes"]
