"""Deterministic mode: count the instructions a cell executes, under valgrind.

CI runners are shared VMs without hardware counters, and their timings
wander by more than the differences we look for. The number of instructions
executed ("Ir" in valgrind's terms) barely moves from run to run and does not
depend on the machine's speed, so `--metric instructions` compares that.

Only the workload is counted, not the runner's start-up. Two ways, `mode`:

- "window" (default): `--zero-before=F --dump-after=F`. Counters are zeroed
  when F is entered and written out when F returns, and they cover every
  thread, so threads that the workload starts are counted.
- "toggle": `--collect-atstart=no --toggle-collect=F`. Collection is switched
  on entering F and off leaving it, but per thread: a thread created inside F
  starts with collection off, so its work is NOT counted unless its start
  routine is also given (extra_toggle). Toggling flips: a toggle function
  called inside another one on the same thread switches collection off again.
  Measured on a 100,000-iteration loop run in a worker thread: window 605,694
  Ir, toggle on F alone 5,322 Ir.

F defaults to "run_workload": the runner's function that calls the
workload's run(); it must not be inlined (mark it `__attribute__((noinline))`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

DEFAULT_FUNCTION = "run_workload"
# The harness's own work inside the workload (sampling RSS): callgrind stops
# counting on entry and starts again on return, as timings leave it out.
UNTIMED_FUNCTIONS = ("wl_sample",)
VALGRIND = "valgrind"
INSTRUCTIONS_METRIC = "instructions"
INSTRUCTIONS_UNIT = "instructions"
IR_EVENT = "Ir"

Mode = Literal["window", "toggle"]

# Output file names: %p is replaced by valgrind with the process id; window
# dumps get ".<part>" appended by callgrind.
OUT_PATTERN = "callgrind.%p.out"
LOG_PATTERN = "valgrind.%p.log"
WINDOW_TRIGGER = "--dump-after="


class InstructionCountError(RuntimeError):
    """Counting failed; str(error) is one line naming the problem."""


@dataclass
class CallgrindRun:
    """A program run under callgrind: the instructions counted in the
    workload, the program's exit status and its own stdout/stderr (valgrind's
    messages go to a log file, read back as valgrind_log)."""

    instructions: int
    returncode: int
    stdout: str
    stderr: str
    valgrind_log: str


def callgrind_command(argv: Sequence[str], out_dir: str | os.PathLike[str],
                      function: str = DEFAULT_FUNCTION, mode: Mode = "window",
                      extra_toggle: Sequence[str] = (), valgrind: str = VALGRIND) -> list[str]:
    """The command line that runs `argv` under callgrind, counting only inside
    `function`, with profiles and valgrind's log written into out_dir.

    Children are traced so that a runner which re-executes itself (for
    jemalloc's static TLS) is still counted.
    """
    if not argv:
        raise ValueError("callgrind_command: empty command")
    if not function or any(c.isspace() for c in function):
        raise ValueError(f"callgrind_command: bad function name {function!r}")
    out = Path(out_dir)
    # --fair-sched: valgrind runs one thread at a time; handing the CPU over
    # in FIFO order (not whichever thread the host wakes first) keeps the
    # interleaving, and so a threaded workload's count, steadier
    command = [valgrind, "--tool=callgrind", "--trace-children=yes", "--fair-sched=yes",
               f"--callgrind-out-file={out / OUT_PATTERN}",
               f"--log-file={out / LOG_PATTERN}"]
    if mode == "window":
        if extra_toggle:
            raise ValueError("callgrind_command: extra_toggle only applies to mode 'toggle'")
        command += [f"--zero-before={function}", f"--dump-after={function}"]
    elif mode == "toggle":
        command += ["--collect-atstart=no", f"--toggle-collect={function}"]
        command += [f"--toggle-collect={name}" for name in extra_toggle]
    else:
        raise ValueError(f"callgrind_command: unknown mode {mode!r} (window, toggle)")
    command += [f"--toggle-collect={name}" for name in UNTIMED_FUNCTIONS]
    if mode == "window":
        # a --toggle-collect turns collection off at the start; the window
        # counts every thread from the start, so it goes back on (after it)
        command.append("--collect-atstart=yes")
    return command + list(argv)


def parse_callgrind_events(text: str) -> dict[str, int]:
    """The totals of a callgrind output file, by event name ({"Ir": 12345}).

    Reads the `events:` header and the `totals:` line (or, failing that, the
    `summary:` header line). Raises ValueError when either is missing or the
    counts do not match the events.
    """
    events: list[str] | None = None
    totals: list[str] | None = None
    summary: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line[len("events:"):].split()
        elif line.startswith("totals:"):
            totals = line[len("totals:"):].split()
        elif line.startswith("summary:"):
            summary = line[len("summary:"):].split()
    if events is None:
        raise ValueError("callgrind output has no 'events:' line")
    counts = totals if totals is not None else summary
    if counts is None:
        raise ValueError("callgrind output has no 'totals:' or 'summary:' line")
    if len(counts) > len(events) or not all(re.fullmatch(r"\d+", c) for c in counts):
        raise ValueError(f"callgrind totals {' '.join(counts)!r} do not match events {' '.join(events)!r}")
    # Trailing zero counts may be left out of the line.
    values = [int(c) for c in counts] + [0] * (len(events) - len(counts))
    return dict(zip(events, values))


def parse_callgrind_ir(text: str) -> int:
    """The total instructions executed ("Ir") in a callgrind output file."""
    events = parse_callgrind_events(text)
    if IR_EVENT not in events:
        raise ValueError(f"callgrind output does not count {IR_EVENT} (events: {', '.join(events)})")
    return events[IR_EVENT]


def callgrind_trigger(text: str) -> str | None:
    """What made callgrind write this file ("--dump-after=run_workload",
    "Program termination"), from its `desc: Trigger:` line."""
    match = re.search(r"^desc:\s*Trigger:\s*(.*)$", text, re.MULTILINE)
    return match.group(1).strip() if match else None


def instructions_in(out_dir: str | os.PathLike[str], function: str, mode: Mode) -> int:
    """Adds up the instructions counted in the workload from the profiles in
    out_dir: in window mode the dumps written when `function` returned, in
    toggle mode the final profiles. Raises InstructionCountError when there
    is nothing to add (function never called, or never returned)."""
    files = sorted(Path(out_dir).glob("callgrind.*.out*"))
    total = 0
    seen = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        trigger = callgrind_trigger(text) or ""
        if mode == "window" and not trigger.startswith(WINDOW_TRIGGER):
            continue
        try:
            total += parse_callgrind_ir(text)
        except ValueError as exc:
            raise InstructionCountError(f"{path.name}: {exc}") from None
        seen += 1
    if mode == "window" and seen == 0:
        raise InstructionCountError(
            f"callgrind never saw {function}() return: is the name right, and is it not inlined?")
    if mode == "toggle" and total == 0:
        raise InstructionCountError(
            f"no instructions counted inside {function}(): is the name right, and is it not inlined?")
    return total


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def run_under_callgrind(argv: Sequence[str], function: str = DEFAULT_FUNCTION,
                        mode: Mode = "window", extra_toggle: Sequence[str] = (),
                        valgrind: str = VALGRIND, env: Mapping[str, str] | None = None,
                        cwd: str | os.PathLike[str] | None = None,
                        timeout: float | None = None) -> CallgrindRun:
    """Runs `argv` under callgrind and returns the instructions counted in
    `function` together with the program's output and exit status.

    Raises InstructionCountError when valgrind is missing, the program is
    killed or times out, or nothing was counted. A non-zero exit of the
    program itself is not an error here: the caller reads the status (the
    runner still prints its document when a workload fails).
    """
    if shutil.which(valgrind) is None:
        raise InstructionCountError(f"{valgrind}: not installed (apt install valgrind)")
    with tempfile.TemporaryDirectory(prefix="heaplab-callgrind-") as out_dir:
        command = callgrind_command(argv, out_dir, function, mode, extra_toggle, valgrind)
        try:
            proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise InstructionCountError(
                f"{argv[0]} under valgrind did not finish within {timeout} s") from None
        logs = "".join(p.read_text(encoding="utf-8", errors="replace")
                       for p in sorted(Path(out_dir).glob("valgrind.*.log")))
        if proc.returncode < 0:
            raise InstructionCountError(
                f"{argv[0]} under valgrind was killed by signal {-proc.returncode}: "
                f"{_last_line(proc.stderr or logs)}")
        instructions = instructions_in(out_dir, function, mode)
    return CallgrindRun(instructions=instructions, returncode=proc.returncode,
                        stdout=proc.stdout, stderr=proc.stderr, valgrind_log=logs)


def count_instructions(argv: Sequence[str], function: str = DEFAULT_FUNCTION,
                       mode: Mode = "window", **kwargs: Any) -> int:
    """Instructions executed inside `function` when running `argv`; raises
    InstructionCountError if the program exits non-zero or nothing is counted.
    Other keyword arguments as run_under_callgrind."""
    run = run_under_callgrind(argv, function, mode, **kwargs)
    if run.returncode != 0:
        raise InstructionCountError(
            f"{argv[0]} exited with status {run.returncode} under valgrind: {_last_line(run.stderr)}")
    return run.instructions


def instruction_metric(count: int) -> dict[str, Any]:
    """The metrics entry for an instruction count, as in "heaplab.run/1"."""
    return {"value": count, "unit": INSTRUCTIONS_UNIT, "better": "lower"}


def add_instruction_count(document: dict[str, Any], count: int,
                          make_primary: bool = True) -> dict[str, Any]:
    """A copy of a runner document with metrics["instructions"] set and, by
    default, "primary" pointing at it. The document's timings were taken under
    valgrind and mean nothing; the caller should keep such documents in a run
    folder of their own."""
    updated = dict(document)
    metrics = dict(updated.get("metrics") or {})
    metrics[INSTRUCTIONS_METRIC] = instruction_metric(count)
    updated["metrics"] = metrics
    if make_primary:
        updated["primary"] = INSTRUCTIONS_METRIC
    return updated
