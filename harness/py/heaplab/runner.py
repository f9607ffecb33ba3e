"""Running one cell repetition: one `heaplab-run` process, one document.

The runner prints one "heaplab.run/1" document. When it cannot (it crashed,
hung, or refused its command line) this module writes the document in its
place, as docs/schema.md says: status "crashed" (with the signal), "timeout",
or "error", always with the workload and allocator names and the runner's
stderr.
"""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from . import instructions as instructions_mod
from .matrix import Cell
from .runfolder import failure_label  # noqa: F401  (how a failed document reads)

RUN_SCHEMA = "heaplab.run/1"
# The runner's exit status for bad command-line input (no document printed).
EXIT_USAGE = 2
# stderr kept in a failure document; the end is where the reason usually is.
STDERR_KEEP_BYTES = 64 * 1024


@dataclass
class Outcome:
    document: dict[str, Any]
    seconds: float

    @property
    def status(self) -> str:
        return str(self.document.get("status"))

    @property
    def usage_error(self) -> bool:
        """The runner refused its command line: every repetition would too."""
        return bool(self.document.get("usage_error"))


def command(runner: pathlib.Path, cell: Cell, quick: bool) -> list[str]:
    w = cell.workload
    # a trace is named by its file (its workload name has no folder in it)
    target = f"trace:{w.source}" if w.kind == "trace" else w.argument
    cmd = [str(runner), "--alloc", cell.alloc_arg or cell.allocator, "--workload", target]
    if cell.pass_threads:
        cmd += ["--threads", str(cell.threads)]
    if quick:
        cmd.append("--quick")
    for name, value in cell.params:
        cmd += ["--param", f"{name}={value}"]
    if cell.seed is not None:
        cmd += ["--seed", str(cell.seed)]
    return cmd


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(text: str) -> str:
    data = text.encode("utf-8", errors="replace")
    if len(data) <= STDERR_KEEP_BYTES:
        return text
    return "…" + data[-STDERR_KEEP_BYTES:].decode("utf-8", errors="replace")


def _parse_document(stdout: str) -> dict[str, Any] | None:
    candidates = [stdout] + [line for line in reversed(stdout.splitlines()) if line.strip()]
    for text in candidates:
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict) and value.get("schema") == RUN_SCHEMA:
            return value
    return None


def _stand_in(cell: Cell, status: str, stderr: str, **extra: Any) -> dict[str, Any]:
    w = cell.workload
    doc: dict[str, Any] = {
        "schema": RUN_SCHEMA,
        "status": status,
        "error": None,
        "workload": {"name": w.name, "group": w.group, "kind": w.kind, "source": w.source,
                     "threads": cell.threads},
        "allocator": {"name": cell.allocator},
        "primary": w.metric,
        "metrics": {},
        "phases": [],
        "samples": [],
    }
    doc.update(extra)
    doc["stderr"] = _tail(stderr)
    return doc


def _kill_group(proc: subprocess.Popen[str]) -> None:
    # the runner may have re-executed itself (jemalloc's static TLS); the
    # whole process group goes
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_cell(runner: pathlib.Path, cell: Cell, quick: bool, timeout_s: float,
             count_instructions: bool = False, env: dict[str, str] | None = None) -> Outcome:
    """Runs one repetition of `cell`. KeyboardInterrupt kills the runner and
    propagates (the caller keeps what finished). With count_instructions the
    runner runs under valgrind's callgrind and the document gains the
    "instructions" metric (counted inside the workload only) as its primary.
    `env` replaces the runner's environment (program cells add to it)."""
    if not count_instructions:
        return _run(command(runner, cell, quick), cell, timeout_s, env)
    with tempfile.TemporaryDirectory(prefix="heaplab-callgrind-") as out_dir:
        argv = instructions_mod.callgrind_command(command(runner, cell, quick), out_dir)
        outcome = _run(argv, cell, timeout_s)
        if outcome.status != "ok":
            return outcome
        try:
            count = instructions_mod.instructions_in(out_dir, instructions_mod.DEFAULT_FUNCTION,
                                                     "window")
        except instructions_mod.InstructionCountError as e:
            doc = _stand_in(cell, "error", "", error=f"instruction count: {e}")
            return Outcome(doc, outcome.seconds)
        return Outcome(instructions_mod.add_instruction_count(outcome.document, count),
                       outcome.seconds)


# Each runner process gets a TMPDIR of its own, removed when the process
# ends however it ends: a program cell's scratch folder
# ($TMPDIR/heaplab-<workload>-XXXXXX) is removed by the runner only when it
# exits by itself, not when a timeout kills its process group.
CELL_TMP_PREFIX = "heaplab-cell-"


def _run(argv: list[str], cell: Cell, timeout_s: float,
         env: dict[str, str] | None = None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix=CELL_TMP_PREFIX) as scratch:
        return _run_in(argv, cell, timeout_s, dict(env or os.environ, TMPDIR=scratch))


def _run_in(argv: list[str], cell: Cell, timeout_s: float, env: dict[str, str]) -> Outcome:
    start = time.monotonic()
    # A session of its own: Ctrl-C on the terminal reaches only the driver,
    # which then stops the runner itself; timeouts kill the whole group.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            errors="replace", start_new_session=True, env=env)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        doc = _stand_in(cell, "timeout", stderr, timeout_s=timeout_s,
                        error=f"timeout after {timeout_s:g} s")
        return Outcome(doc, time.monotonic() - start)
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    seconds = time.monotonic() - start
    rc = proc.returncode
    if rc < 0:
        name = signal_name(-rc)
        doc = _stand_in(cell, "crashed", stderr, signal=name, exit_code=rc,
                        error=f"crashed ({name})")
        return Outcome(doc, seconds)
    parsed = _parse_document(stdout)
    if parsed is not None:
        if parsed.get("status") != "ok" and stderr.strip() and "stderr" not in parsed:
            parsed["stderr"] = _tail(stderr)
        return Outcome(parsed, seconds)
    first_line = next((ln for ln in stderr.splitlines() if ln.strip()), "")
    if rc == EXIT_USAGE:
        doc = _stand_in(cell, "error", stderr, exit_code=rc, usage_error=True,
                        error=first_line or "runner refused its command line (exit 2)")
    elif rc != 0:
        doc = _stand_in(cell, "crashed", stderr, signal=None, exit_code=rc,
                        error=f"crashed (exit {rc})" + (f": {first_line}" if first_line else ""))
    else:
        doc = _stand_in(cell, "error", stderr, exit_code=rc,
                        error="runner exited 0 without a heaplab.run/1 document")
    return Outcome(doc, seconds)
