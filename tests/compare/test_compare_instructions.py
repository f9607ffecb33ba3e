"""Instruction counting under callgrind: the command, parsing callgrind's
output (committed fixtures), and real valgrind runs of a tiny C program."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from heaplab.instructions import (
    InstructionCountError,
    add_instruction_count,
    callgrind_command,
    callgrind_trigger,
    count_instructions,
    instructions_in,
    parse_callgrind_events,
    parse_callgrind_ir,
    run_under_callgrind,
)

CALLGRIND = Path(__file__).resolve().parent / "fixtures" / "callgrind"

# --- the command ----------------------------------------------------------------------------

def test_window_command_zeroes_before_and_dumps_after_the_function(tmp_path):
    command = callgrind_command(["build/heaplab-run", "--alloc", "system"], tmp_path)
    assert command[:2] == ["valgrind", "--tool=callgrind"]
    assert "--zero-before=run_workload" in command and "--dump-after=run_workload" in command
    assert "--trace-children=yes" in command
    assert f"--callgrind-out-file={tmp_path}/callgrind.%p.out" in command
    assert command[-3:] == ["build/heaplab-run", "--alloc", "system"]
    # counting stops only inside the harness's sampling, and starts at once
    toggles = [arg for arg in command if arg.startswith("--toggle-collect")]
    assert toggles == ["--toggle-collect=wl_sample"]
    assert command.index("--collect-atstart=yes") > command.index(toggles[0])


def test_toggle_command_collects_only_inside_the_functions(tmp_path):
    command = callgrind_command(["prog"], tmp_path, function="wl_main", mode="toggle",
                                extra_toggle=["thread_start"])
    assert "--collect-atstart=no" in command
    assert "--toggle-collect=wl_main" in command and "--toggle-collect=thread_start" in command
    assert command[-1] == "prog"


def test_bad_command_requests_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown mode"):
        callgrind_command(["prog"], tmp_path, mode="lackey")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only applies to mode 'toggle'"):
        callgrind_command(["prog"], tmp_path, extra_toggle=["x"])
    with pytest.raises(ValueError, match="empty command"):
        callgrind_command([], tmp_path)
    with pytest.raises(ValueError, match="bad function name"):
        callgrind_command(["prog"], tmp_path, function="two words")


# --- parsing ---------------------------------------------------------------------------------

def test_totals_of_a_window_dump_are_read():
    text = (CALLGRIND / "window" / "callgrind.4242.out.1").read_text()
    assert parse_callgrind_ir(text) == 600012
    assert callgrind_trigger(text) == "--dump-after=run_workload"


def test_totals_line_wins_over_summary_and_events_are_matched_by_name():
    # with --cache-sim the summary header and the totals line differ slightly
    events = parse_callgrind_events((CALLGRIND / "cache-sim.out").read_text())
    assert events["Ir"] == 6124203
    assert events["Dw"] == 1011548 and events["DLmw"] == 536


def test_summary_is_used_when_totals_are_missing():
    assert parse_callgrind_ir((CALLGRIND / "summary-only.out").read_text()) == 31337


def test_output_without_ir_or_totals_is_refused():
    with pytest.raises(ValueError, match="does not count Ir"):
        parse_callgrind_ir((CALLGRIND / "no-ir.out").read_text())
    with pytest.raises(ValueError, match="no 'totals:' or 'summary:'"):
        parse_callgrind_ir((CALLGRIND / "no-totals.out").read_text())
    with pytest.raises(ValueError, match="no 'events:'"):
        parse_callgrind_ir("totals: 5\n")


def test_window_mode_adds_the_dumps_and_skips_the_final_profile():
    assert instructions_in(CALLGRIND / "window", "run_workload", "window") == 600012 + 599990


def test_toggle_mode_reads_every_profile():
    assert instructions_in(CALLGRIND / "window", "run_workload", "toggle") == 600012 + 599990 + 1247


def test_window_mode_without_a_dump_says_the_function_was_never_seen(tmp_path):
    shutil.copy(CALLGRIND / "window" / "callgrind.4242.out", tmp_path)
    with pytest.raises(InstructionCountError, match="never saw run_workload"):
        instructions_in(tmp_path, "run_workload", "window")


def test_instruction_count_becomes_the_primary_metric():
    document = {"primary": "ns_per_pair", "metrics": {"ns_per_pair": {"value": 3.0}}}
    updated = add_instruction_count(document, 1234)
    assert updated["primary"] == "instructions"
    assert updated["metrics"]["instructions"] == {"value": 1234, "unit": "instructions",
                                                  "better": "lower"}
    assert "instructions" not in document["metrics"]  # the input is left alone


# --- real valgrind ---------------------------------------------------------------------------

TINY_PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

static void spin(long n)
{
    for (long i = 0; i < n; i++)
        sink += (unsigned long)i;
}

/* a thread's start routine: toggle mode must name it to count its work */
__attribute__((noinline)) static void *thread_entry(void *arg)
{
    spin((long)arg);
    return NULL;
}

/* what the harness runner calls the workload through */
__attribute__((noinline)) void run_workload(long n, int threaded)
{
    if (threaded) {
        pthread_t t;
        pthread_create(&t, NULL, thread_entry, (void *)n);
        pthread_join(t, NULL);
    } else {
        spin(n);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    int threaded = argc > 2 && strcmp(argv[2], "thread") == 0;
    spin(3 * n);                       /* start-up work that must not count */
    run_workload(n, threaded);
    printf("{\"schema\": \"tiny\", \"n\": %ld}\n", n);
    return argc > 3 ? atoi(argv[3]) : 0;
}
"""

needs_tools = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("gcc") is None,
                                 reason="needs valgrind and gcc")

LOOP = 100_000


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("tiny")
    source, binary = folder / "tiny.c", folder / "tiny"
    source.write_text(TINY_PROGRAM)
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(binary), str(source)], check=True)
    return str(binary)


@needs_tools
def test_two_runs_agree_within_a_tenth_of_a_percent(tiny):
    first = count_instructions([tiny, str(LOOP)])
    second = count_instructions([tiny, str(LOOP)])
    assert abs(first - second) <= 0.001 * first


@needs_tools
def test_only_the_workload_is_counted(tiny):
    # the loop body is a handful of instructions; start-up spins 3x as long
    count = count_instructions([tiny, str(LOOP)])
    assert 2 * LOOP < count < 3 * 3 * LOOP
    doubled = count_instructions([tiny, str(2 * LOOP)])
    assert doubled == pytest.approx(2 * count, rel=0.01)


@needs_tools
def test_window_mode_counts_threads_the_workload_starts(tiny):
    inline = count_instructions([tiny, str(LOOP)])
    threaded = count_instructions([tiny, str(LOOP), "thread"])
    assert threaded == pytest.approx(inline, rel=0.05)


@needs_tools
def test_toggle_mode_misses_threads_unless_their_start_routine_is_named(tiny):
    window = count_instructions([tiny, str(LOOP), "thread"])
    bare = count_instructions([tiny, str(LOOP), "thread"], mode="toggle")
    named = count_instructions([tiny, str(LOOP), "thread"], mode="toggle",
                               extra_toggle=["thread_entry"])
    assert bare < 0.1 * window
    assert named == pytest.approx(window, rel=0.05)


@needs_tools
def test_program_output_and_status_come_back(tiny):
    run = run_under_callgrind([tiny, "10", "inline", "3"])
    assert run.returncode == 3
    assert run.stdout.strip() == '{"schema": "tiny", "n": 10}'
    assert "Callgrind" in run.valgrind_log  # valgrind's chatter stays out of stderr
    assert "Callgrind" not in run.stderr
    with pytest.raises(InstructionCountError, match="exited with status 3"):
        count_instructions([tiny, "10", "inline", "3"])


@needs_tools
def test_a_function_that_never_runs_is_reported(tiny):
    with pytest.raises(InstructionCountError, match="never saw no_such_function"):
        count_instructions([tiny, "10"], function="no_such_function")


def test_missing_valgrind_is_one_line():
    with pytest.raises(InstructionCountError, match=r"not installed \(apt install valgrind\)"):
        run_under_callgrind(["true"], valgrind="valgrind-that-is-not-here")
