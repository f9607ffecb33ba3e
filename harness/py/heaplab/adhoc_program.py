"""`run.py run --program -- CMD ARGS...`: a user's own command measured as a
program workload, without writing a script.

The command becomes a program script (docs/workloads.md, "Program
scripts") in a temporary folder that lives as long as the driver: its
`program` line runs CMD through workloads/programs/serve.py, as the
shipped program workloads do, so each cell gets the same evidence that the
allocator served it, the same RSS samples every 10 ms and the same figures
(wall, user and system time, peak RSS, page faults) on every selected
allocator. The run then names that script with --workload, next to any
--workload the user gave.
"""
from __future__ import annotations

import argparse
import atexit
import pathlib
import re
import shutil
import sys
import tempfile

from . import paths
from .catalog import SelectionError

NAME_PREFIX = "cmd-"
SERVE = paths.REPO_ROOT / "workloads" / "programs" / "serve.py"
# the script parser's limit of words on one line (script_internal.h,
# SC_MAX_TOKENS), less the words of the serve.py part
MAX_WORDS = 128 - 8
NOT_A_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--program", action="store_true",
                   help="measure the command after `--` as a program workload: "
                        "run.py run --program -- CMD ARGS...")
    p.add_argument("command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def workload_name(command: list[str]) -> str:
    """`cmd-sort` for `sort -o out in`: what tables and charts call it."""
    stem = NOT_A_NAME.sub("-", pathlib.Path(command[0]).name).strip("-.") or "program"
    return NAME_PREFIX + stem


def quote(word: str) -> str:
    """One script word that stands for `word` exactly: double-quoted, with
    `\\` and `"` escaped and `$` doubled (no parameter expansion)."""
    if "\n" in word or "\r" in word:
        raise SelectionError(f"--program: an argument holds a line break: {word!r}")
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$") + '"'


DESCRIBE_MAX = 160


def describe(command: list[str]) -> str:
    """The command as the tables and charts show it: the words as typed,
    cut to DESCRIBE_MAX characters; only the program's name when a word
    holds a dollar sign, a double quote or a backslash (chart titles read
    dollar signs as mathematics; `served.argv` in each raw document keeps
    the full command)."""
    shown = " ".join(command)
    if any(c in shown for c in '$"\\'):
        shown = f"{pathlib.Path(command[0]).name} ({len(command) - 1} arguments)"
    return shown if len(shown) <= DESCRIBE_MAX else shown[:DESCRIBE_MAX - 1] + "…"


def script_text(command: list[str]) -> str:
    """The program script that runs `command` as a served process."""
    if len(command) > MAX_WORDS:
        raise SelectionError(f"--program: {len(command)} words is more than the {MAX_WORDS} "
                             "a program line holds; wrap the command in a shell script")
    found = shutil.which(command[0])
    if found is None:
        raise SelectionError(f"--program: '{command[0]}' not found")
    # the absolute path: serve.py runs in the cell's own temporary folder
    words = [str(pathlib.Path(found).resolve()) if "/" in command[0] else command[0],
             *command[1:]]
    shown = describe(command)
    return "\n".join([
        "# written by run.py run --program: the command given on its command line",
        f"workload  {workload_name(command)}",
        f'describe  "{shown}"',

        f"program   {quote(sys.executable)} {quote(str(SERVE))} -- "
        + " ".join(quote(w) for w in words),
        "",
    ])


def apply(args: argparse.Namespace) -> None:
    """With --program: writes the script and adds it to args.workload.
    Without it, refuses words left over on the command line."""
    command = list(getattr(args, "command", None) or [])
    if command and command[0] == "--":
        command = command[1:]
    if not getattr(args, "program", False):
        if command:
            raise SelectionError(f"unexpected arguments: {' '.join(command)} (a command to "
                                 "measure goes after --program --)")
        return
    if not command:
        raise SelectionError("--program needs a command: run.py run --program -- CMD ARGS...")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="heaplab-program-"))
    atexit.register(shutil.rmtree, folder, True)
    script = folder / (workload_name(command) + ".wl")
    script.write_text(script_text(command))
    args.workload = ",".join(w for w in (args.workload, str(script)) if w)
