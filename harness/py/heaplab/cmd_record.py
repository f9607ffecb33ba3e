"""`run.py record [--out FILE] -- CMD ARGS...`: run a program with the
recording library preloaded and pack its allocation calls into a trace.

The program runs once, unchanged, with build/libheaplab-record.so in
LD_PRELOAD; its raw output goes to a temporary folder, and
build/heaplab-trace packs it into FILE (docs/trace-format.md). Replay it
with `run.py run --workload trace:FILE`.

Exit status: 0 when the program exited 0 and the trace was written; 1 when
the program failed (the trace of what it flushed is still written) or
nothing could be packed; 2 for bad input or set-up.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from . import build, deps, paths, traces

RECORD_LIBRARY = "libheaplab-record.so"
TRACE_TOOL = "heaplab-trace"
TARGETS = ("heaplab-record", TRACE_TOOL, paths.RUNNER_TARGET)
RAW_DIR_ENV = "HEAPLAB_TRACE_DIR"
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="record a program's allocation calls into a trace",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", metavar="FILE",
                   help="the trace to write (default results/traces/PROGRAM.hltrace)")
    p.add_argument("--level", type=int, default=9, metavar="N", help="zstd level (default 9)")
    p.add_argument("--no-install", action="store_true", help="never install Debian packages")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    p.set_defaults(func=main)


def default_out(command: list[str], root: pathlib.Path) -> pathlib.Path:
    return root / "results" / "traces" / (pathlib.Path(command[0]).name + ".hltrace")


def with_preload(env: dict[str, str], library: pathlib.Path) -> str:
    """The recorder first, then whatever the user preloads already."""
    current = env.get("LD_PRELOAD", "")
    return f"{library}:{current}" if current else str(library)


def run_recorded(command: list[str], library: pathlib.Path, raw_dir: pathlib.Path) -> tuple[int, float]:
    """Runs the program; returns its exit status (negative: killed by that
    signal) and its wall time in seconds."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = with_preload(env, library)
    env[RAW_DIR_ENV] = str(raw_dir)
    start = time.monotonic()
    proc = subprocess.run(command, env=env, check=False)
    return proc.returncode, time.monotonic() - start


def main(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("run.py record: no program given (usage: run.py record [--out FILE] -- CMD ARGS...)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if shutil.which(command[0]) is None:
        print(f"run.py record: program '{command[0]}' not found", file=sys.stderr)
        return EXIT_BAD_INPUT
    root = paths.REPO_ROOT
    given = paths.runner_from_env()
    if given is not None:
        # $HEAPLAB_RUN names a build: its recorder and tool are used as they are
        folder = given.parent
    else:
        status = deps.ensure(deps.RUN_PACKAGES + deps.TRACE_PACKAGES, not args.no_install)
        if status != 0:
            return status
        folder = paths.build_dir(root)
        if not build.build(build.BuildConfig(folder), TARGETS, root):
            return EXIT_FAILED
    for part in (RECORD_LIBRARY, TRACE_TOOL):
        if not (folder / part).exists():
            print(f"run.py record: {folder / part} does not exist (is libzstd-dev installed?)",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    out = pathlib.Path(args.out) if args.out else default_out(command, root)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="heaplab-record-") as raw:
        rc, seconds = run_recorded(command, folder / RECORD_LIBRARY, pathlib.Path(raw))
        how = f"exit {rc}" if rc >= 0 else f"signal {-rc}"
        print(f"record: {' '.join(command)}: {how} after {seconds:.2f} s", file=sys.stderr)
        pack = subprocess.run([str(folder / TRACE_TOOL), "pack", raw, str(out), "--level",
                               str(args.level), "--", *command], check=False)
    if pack.returncode != 0:
        return EXIT_FAILED
    header = traces.read_header(out)
    print(f"record: {out}: {traces.summary_line(header, out.stat().st_size)}")
    if header.get("truncated"):
        print("record: the program stopped before flushing everything; the trace holds what "
              "was written", file=sys.stderr)
    dropped = header.get("dropped_processes") or []
    if dropped:
        print(f"record: {len(dropped)} other process(es) (forked or exec'd) not kept in the trace",
              file=sys.stderr)
    print(f"record: replay it with: ./run.py run --workload trace:{out}")
    return 0 if rc == 0 else EXIT_FAILED
