"""The one way a plan becomes a run folder.

A Plan is the cells (workload x threads x allocator, with their
parameters), the allocators as the catalog describes them, the repetitions
and the options of every runner process. run_plan() runs it into a new run
folder: creates the folder, writes env.json and points `latest` at it,
interleaves the repetitions, appends each document to raw.jsonl as it
finishes, keeps what finished on Ctrl-C (or SIGTERM, or a full disk),
derives summary.json and the tables, and reports the failed cells.
`run`, `reproduce`, `ci` and `gbench`'s callers only build plans.
"""
from __future__ import annotations

import pathlib
import signal
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import atomicio, matrix, paths, programs as programs_mod, rundir, runfolder, tables
from .catalog import Catalog
from .progress import Progress
from .summary import plan_json

# Per-process limits: quick sizes take well under a second per cell.
DEFAULT_TIMEOUT_QUICK_S = 60.0
DEFAULT_TIMEOUT_FULL_S = 600.0
# valgrind's callgrind runs a program ~50x slower; its timeouts grow alike.
VALGRIND_SLOWDOWN = 50

EXIT_OK = 0
EXIT_FAILED_CELLS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def default_timeout(quick: bool, count_instructions: bool = False) -> float:
    timeout = DEFAULT_TIMEOUT_QUICK_S if quick else DEFAULT_TIMEOUT_FULL_S
    return timeout * VALGRIND_SLOWDOWN if count_instructions else timeout


class OutputError(Exception):
    """The run folder cannot be written (a full disk): one line, no traceback."""


def allocator_info(cat: Catalog, names: Sequence[str],
                   unavailable: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The plan's allocators as env.json stores them: name, whether it can
    run here (with why not) and its version. `unavailable` overrides the
    catalog's verdict (reproduce knows more: a name the runner lacks)."""
    info = []
    for name in names:
        a = cat.allocator(name)
        if unavailable is not None:
            available, reason = name not in unavailable, unavailable.get(name)
        else:
            available, reason = (a.available, a.reason) if a else (True, None)
        info.append({"name": name, "available": available, "reason": reason,
                     "version": a.version if a else None})
    return info


@dataclass
class Plan:
    """What to run and how; see the module's docstring."""
    cells: list[matrix.Cell]
    allocators: list[dict[str, Any]]      # allocator_info()
    reps: int
    quick: bool
    timeout_s: float
    count_instructions: bool = False
    # stored in env.json as "options" (what the command line asked for)
    options: dict[str, Any] = field(default_factory=dict)
    # the run folder's name after its timestamp ("reproduce"), or none
    folder_suffix: str = ""

    @property
    def unavailable(self) -> set[str]:
        return {a["name"] for a in self.allocators if not a["available"]}

    def steps(self) -> list[matrix.Step]:
        """Repetition-major order, leaving out allocators that cannot run."""
        skip = self.unavailable
        return [s for s in matrix.interleave(self.cells, self.reps) if s.cell.allocator not in skip]


@dataclass
class RunResult:
    folder: pathlib.Path
    summary: dict[str, Any] | None        # None when the disk refused it
    interrupted: bool
    output_error: str | None = None

    def failed_cells(self) -> list[dict[str, Any]]:
        """Cells with a crashed, timed-out or error repetition (a program
        that is not installed is not a failure of the run)."""
        if self.summary is None:
            return []
        return [c for c in self.summary["cells"]
                if c["failures"] and not programs_mod.not_installed_only(c)]

    def exit_status(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        if self.summary is None or self.output_error or self.failed_cells():
            return EXIT_FAILED_CELLS
        return EXIT_OK


class _Reporter:
    """Says each distinct runner error once, however many cells hit it."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.said: set[str] = set()

    def failure(self, doc: dict[str, Any], label: str, rep: int) -> None:
        failure = runfolder.failure_label(doc)
        message = doc.get("error") or failure
        if doc.get("status") == "error":
            if message in self.said:
                return
            self.said.add(message)
            self.progress.note(f"runner error ({label}): {message}")
        elif self.progress.tty:
            # the bar overwrites its line; keep a line for every crash
            self.progress.note(f"{failure}: {label} rep {rep}")


def result_text(doc: dict[str, Any]) -> str:
    """A document's figure for the progress line."""
    if doc.get("status") != "ok":
        return runfolder.failure_label(doc)
    metric = (doc.get("metrics") or {}).get(doc.get("primary") or "") or {}
    value = metric.get("value")
    if not isinstance(value, (int, float)):
        return "ok"
    return tables.value_text(float(value), str(metric.get("unit", "")))


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def execute(runner: pathlib.Path, steps: list[matrix.Step], folder: pathlib.Path,
            quick: bool, timeout_s: float, count_instructions: bool = False) -> bool:
    """Runs `steps` in order, appending each document to raw.jsonl as it
    finishes. Returns True when Ctrl-C (or SIGTERM) stopped it; OutputError
    when raw.jsonl cannot be written."""
    progress = Progress(len(steps), [s.cell.label for s in steps])
    reporter = _Reporter(progress)
    # Cells not run again: the runner refused their command line (it would
    # again), or they timed out (each retry would cost the whole timeout).
    abandoned: set[runfolder.CellKey] = set()
    interrupted = False
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        for step in steps:
            if step.cell.key in abandoned:
                continue
            outcome = programs_mod.run_cell(runner, step.cell, quick=quick, timeout_s=timeout_s,
                                            count_instructions=count_instructions)
            doc = runfolder.stamp(outcome.document, step.cell.key, step.rep)
            try:
                atomicio.append_jsonl(folder / runfolder.RAW, doc)
            except OSError as e:
                progress.finish()
                raise OutputError(f"cannot write {folder / runfolder.RAW} ({e.strerror or e}): "
                                  f"stopped; every cell finished before it is kept") from None
            if outcome.status != "ok":
                reporter.failure(doc, step.cell.label, step.rep)
            progress.step(step.cell.label, outcome.seconds, step.rep, result_text(doc))
            if outcome.usage_error or outcome.status in ("timeout", programs_mod.STATUS_NOT_INSTALLED):
                abandoned.add(step.cell.key)
                progress.drop(step.cell.label)
    except KeyboardInterrupt:
        interrupted = True
        progress.note("interrupted: keeping the finished cells")
    finally:
        signal.signal(signal.SIGTERM, previous)
    progress.finish()
    return interrupted


def _finish_folder(folder: pathlib.Path, env: dict[str, Any], interrupted: bool,
                   who: str) -> dict[str, Any] | None:
    """Writes env.json's end and the derived files; None (after one line on
    stderr) when the disk refuses them: raw.jsonl, already written, is what
    `plot`, `compare` and `merge` read."""
    env["finished"] = rundir.now_iso()
    env["interrupted"] = interrupted
    try:
        atomicio.write_json(folder / runfolder.ENV, env)
        return rundir.derive(folder)
    except OSError as e:
        print(f"{who}: cannot write the summary into {folder} ({e.strerror or e}); "
              f"raw.jsonl keeps every finished cell", file=sys.stderr)
        return None


def start_folder(parent: pathlib.Path, env: dict[str, Any], suffix: str = "") -> pathlib.Path:
    """A new run folder with its env.json, `latest` pointing at it; OSError
    when the disk refuses."""
    folder = runfolder.create(parent, suffix)
    atomicio.write_json(folder / runfolder.ENV, env)
    runfolder.point_latest(folder)
    return folder


def run_plan(plan: Plan, runner: pathlib.Path, cat: Catalog, parent: pathlib.Path,
             argv: Sequence[str], who: str = "run") -> RunResult | int:
    """Runs `plan` into a new run folder under `parent`; the RunResult, or
    an exit status (after one line on stderr) when no folder could be made."""
    steps = plan.steps()
    env = rundir.env_document(paths.REPO_ROOT, list(argv), plan.options, runner, cat.raw,
                              plan_json(plan.cells, plan.allocators, plan.reps, plan.quick))
    try:
        folder = start_folder(parent, env, plan.folder_suffix)
    except OSError as e:
        print(f"{who}: cannot start a run folder under {parent} ({e.strerror or e})",
              file=sys.stderr)
        return EXIT_FAILED_CELLS
    print(f"{who}: {len(steps)} runs ({len(plan.cells)} cells × {plan.reps} reps) at "
          f"{sizes_text(plan.quick)} into {folder}", file=sys.stderr)
    try:
        interrupted = execute(runner, steps, folder, plan.quick, plan.timeout_s,
                              plan.count_instructions)
    except OutputError as e:
        print(f"{who}: {e}", file=sys.stderr)
        summary = _finish_folder(folder, env, True, who)
        return RunResult(folder, summary, interrupted=False, output_error=str(e))
    summary = _finish_folder(folder, env, interrupted, who)
    return RunResult(folder, summary, interrupted)


def sizes_text(quick: bool) -> str:
    return "quick sizes" if quick else "full sizes"


def report_failed(result: RunResult, who: str) -> None:
    failed = result.failed_cells()
    if failed:
        print(f"{who}: {len(failed)} cell(s) had failed runs: "
              + ", ".join(f"{c['cell']} {c['failures'][0]['label']}" for c in failed), file=sys.stderr)
