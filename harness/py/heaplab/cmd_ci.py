"""CI preset: count instructions of the single-threaded workloads, compare with a baseline

`run.py ci` is `run.py run --quick --metric instructions --reps 1` on a fixed,
small selection, followed by `run.py compare BASELINE NEW` and, within the
new run, `compare --baseline-alloc system`:

- workloads: by default a fixed list of single-threaded built-in and script
  workloads whose quick sizes are the shortest (program workloads are never
  counted; multi-threaded counts are not deterministic);
- allocators: every one the runner runs by default (`heaplab-run
  --list-json`; those not installed are reported and left out);
- one repetition: valgrind's instruction counts of the same binary repeat
  to a few parts per million, so more repetitions would only cost time.
  Under valgrind each cell runs about 50 times slower than natively: 14
  workloads on system, heaplab, mimalloc, jemalloc and tcmalloc (70 cells)
  took 2 min 55 s on the 2-core development VM; the runner's default list
  also holds heaplab-nocache (14 cells more).

Output, under --out (default results/ci/): the new run folder in runs/,
summary.md and summary.json (compare's Markdown and "heaplab.compare/1"
documents, wrapped as "heaplab.ci/1"), written atomically. With no baseline
folder (default results/ci/baseline/ when it exists) nothing is compared:
the run is only recorded. --update-baseline copies the new run folder to the
baseline path afterwards (not after an interrupted run or failed cells).

Exit status: 1 when a cell is slower than the baseline by more than the
threshold (instruction counts: no significance test is needed) or failed,
0 otherwise; 2 for bad input; 130 after Ctrl-C.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
from typing import Any

from . import (atomicio, catalog as catalog_mod, compare_render, comparison, execution, paths, report,
               runfolder, runopts, tables)
from .prepare import obtain_runner

CI_SCHEMA = "heaplab.ci/1"
METRIC = "instructions"
BASELINE_ALLOC = "system"
REPS = "1"
# Single-threaded built-in and script workloads whose quick sizes run
# fastest under callgrind (measured on the 2-core development VM: 0.6 to 9
# seconds a cell; tmalloc-st-64 and kevy-pair-400/4096 take twice that and
# add no allocation pattern the list lacks). Fixed by name, so that a new
# workload in the catalog does not silently change what CI compares.
DEFAULT_WORKLOADS = (
    "tmalloc-st-reverse", "tmalloc-st-random", "tmalloc-st-mixed", "tmalloc-st-medium",
    "tmalloc-st-huge", "memalloc-mixed", "memalloc-latency", "memallocpp-st",
    "memallocpp-locality", "kevy-pair-64", "kevy-churn", "kevy-churn-trim",
    "tmalloc-memory", "memory-over-time",
)
SUMMARY_MD = "summary.md"
SUMMARY_JSON = "summary.json"
RUNS = "runs"
BASELINE = "baseline"
NO_BASELINE = "no baseline: nothing compared"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_FAILED_CELLS = execution.EXIT_FAILED_CELLS


def ci_root() -> pathlib.Path:
    return paths.REPO_ROOT / "results" / "ci"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = (f"The default workloads ({len(DEFAULT_WORKLOADS)}): "
                + ", ".join(DEFAULT_WORKLOADS) + ".")
    p.add_argument("--baseline", metavar="DIR",
                   help="baseline run folder (default OUT/baseline when it exists; "
                        "with none, the run is only recorded)")
    p.add_argument("--out", metavar="DIR",
                   help="where summary.md, summary.json and runs/ go (default results/ci)")
    p.add_argument("--workload", metavar="GLOB,...",
                   help="workloads (default: a fixed list of fast single-threaded ones, "
                        "about 3 minutes under valgrind with the default allocators)")
    p.add_argument("--alloc", metavar="NAME,...",
                   help=f"allocators (default: every one the runner runs by default; "
                        f"{BASELINE_ALLOC} is the in-run baseline)")
    p.add_argument("--threshold", type=float, default=comparison.DEFAULT_THRESHOLD, metavar="FRACTION",
                   help=f"smallest relative change that counts (default {comparison.DEFAULT_THRESHOLD:g})")
    p.add_argument("--update-baseline", action="store_true",
                   help="copy the new run folder to the baseline path afterwards")
    p.add_argument("--no-install", action="store_true", help="never install Debian packages")
    p.add_argument("--runner", help="use this heaplab-run (default: $HEAPLAB_RUN or build it)")


def default_workloads(cat: catalog_mod.Catalog) -> list[str]:
    """DEFAULT_WORKLOADS that this runner has; when it has none of them, every
    single-threaded built-in and script workload."""
    offered = {w.name: w for w in cat.workloads}
    chosen = [n for n in DEFAULT_WORKLOADS if n in offered]
    if chosen:
        return chosen
    return [w.name for w in cat.workloads
            if w.kind in ("builtin", "script") and single_threaded(w)]


def single_threaded(w: catalog_mod.Workload) -> bool:
    """Runs on one thread without --threads: a built-in that is not threaded,
    or a script without a `threads` line above 1 (--threads applies to every
    heap script, but the preset never passes it)."""
    return w.default_threads == 1 and (not w.threaded or w.kind == "script")


def multi_threaded(cat: catalog_mod.Catalog, spec: str) -> list[str]:
    """The threaded workloads a --workload selection includes (their counts vary)."""
    return [w.name for w in catalog_mod.select_workloads(cat, spec) if not single_threaded(w)]


def run_choices(workloads: str, allocs: str | None) -> runopts.Choices:
    """The matrix this preset stands for: `run --quick --metric instructions
    --reps 1` on its selection (no charts are drawn)."""
    return runopts.Choices(quick=True, workload=workloads, alloc=allocs, reps=REPS, metric=METRIC)


def copy_baseline(folder: pathlib.Path, baseline: pathlib.Path) -> None:
    """Replaces `baseline` with a copy of `folder`; a reader sees the old or
    the new baseline, never a half-copied one."""
    baseline.parent.mkdir(parents=True, exist_ok=True)
    staging = baseline.with_name(f".{baseline.name}.new")
    retired = baseline.with_name(f".{baseline.name}.old")
    for leftover in (staging, retired):
        if leftover.exists():
            shutil.rmtree(leftover)
    shutil.copytree(folder, staging)
    if baseline.exists():
        os.replace(baseline, retired)
    os.replace(staging, baseline)
    if retired.exists():
        shutil.rmtree(retired)


def allocators_markdown(allocators: comparison.Comparison) -> str:
    """compare's Markdown of the allocators against system, its closing
    verdict replaced: an allocator needing more instructions than system is
    information about allocators, not a regression of this change."""
    text = compare_render.to_markdown(allocators).rstrip("\n")
    verdict = compare_render.verdict_line(allocators)
    if text.endswith(verdict):
        text = text[: -len(verdict)].rstrip("\n")
    counts = allocators.counts()
    told = ", ".join(f"{counts[code]} {word}" for code, word in (
        (comparison.SLOWER, f"need more instructions than {BASELINE_ALLOC}"),
        (comparison.FASTER, "need fewer"), (comparison.UNCHANGED, f"within {allocators.threshold:.0%}"),
        (comparison.NEW_FAILED, "failed")) if counts[code])
    return (f"{text}\n\nAllocators against {BASELINE_ALLOC} (information, not part of the CI "
            f"verdict): {told or 'no cells'}.\n")


def ci_verdict(against_base: comparison.Comparison | None, run_status: int) -> str:
    if run_status == EXIT_FAILED_CELLS:
        return "**CI verdict: failed** — some cells failed in this run."
    if against_base is None:
        return f"**CI verdict: recorded** — {NO_BASELINE}."
    if against_base.regression():
        return "**CI verdict: regression** — " + compare_render.verdict_line(against_base).split(" — ", 1)[-1]
    return (f"**CI verdict: ok** — no cell needs more than {against_base.threshold:.0%} more "
            f"instructions than the baseline.")


def summary_markdown(folder: pathlib.Path, baseline: pathlib.Path | None,
                     against_base: comparison.Comparison | None,
                     allocators: comparison.Comparison | None, alloc_note: str | None,
                     run_status: int) -> str:
    verdict = ci_verdict(against_base, run_status)
    lines = ["# heaplab CI: instruction counts", "", verdict, "",
             f"- run: `{folder}` (quick sizes, one repetition, valgrind callgrind)",
             f"- baseline: `{baseline}`" if baseline else f"- baseline: none ({NO_BASELINE})", ""]
    if against_base is not None:
        lines.append(compare_render.to_markdown(against_base))
    else:
        lines += [f"**{NO_BASELINE[0].upper()}{NO_BASELINE[1:]}.** This run is recorded; "
                  f"give --baseline DIR, or run with --update-baseline to make it the baseline.", ""]
    if allocators is not None:
        lines.append(allocators_markdown(allocators))
    elif alloc_note:
        lines += [f"Allocators against {BASELINE_ALLOC}: {alloc_note}.", ""]
    lines.append(verdict)
    return "\n".join(lines).rstrip("\n") + "\n"


def summary_json(folder: pathlib.Path, baseline: pathlib.Path | None,
                 against_base: comparison.Comparison | None,
                 allocators: comparison.Comparison | None, alloc_note: str | None,
                 run_status: int, exit_code: int) -> dict[str, Any]:
    return {
        "schema": CI_SCHEMA,
        "run": str(folder),
        "baseline": str(baseline) if baseline else None,
        "metric": METRIC,
        "cells_failed": run_status == EXIT_FAILED_CELLS,
        "against_baseline": compare_render.to_json(against_base) if against_base else None,
        "no_baseline": None if against_base else NO_BASELINE,
        "allocators": compare_render.to_json(allocators) if allocators else None,
        "allocators_note": alloc_note,
        "verdict": ("failed" if run_status == EXIT_FAILED_CELLS
                    else "regression" if exit_code == EXIT_FAILED
                    else "recorded" if against_base is None else "ok"),
        "exit_code": exit_code,
    }


def _baseline_path(args: argparse.Namespace, out: pathlib.Path) -> tuple[pathlib.Path, bool]:
    """(the baseline path, whether the user named it)."""
    if args.baseline:
        return pathlib.Path(args.baseline), True
    return out / BASELINE, False


def main(args: argparse.Namespace) -> int:
    if not (args.threshold >= 0 and args.threshold < float("inf")):
        print(f"ci: --threshold {args.threshold}: must be a fraction >= 0, e.g. 0.05", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not shutil.which("valgrind"):
        print("ci: counting instructions needs valgrind (apt install valgrind)", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = pathlib.Path(args.out) if args.out else ci_root()
    baseline, named = _baseline_path(args, out)
    if named and not args.update_baseline and not baseline.is_dir():
        print(f"ci: --baseline {baseline}: no such run folder", file=sys.stderr)
        return EXIT_BAD_INPUT
    compare_to = baseline if baseline.is_dir() else None

    runner = obtain_runner(args.runner, not args.no_install)
    if isinstance(runner, int):
        return runner
    try:
        cat = catalog_mod.load(runner)
        workloads = args.workload or ",".join(default_workloads(cat))
        threaded = multi_threaded(cat, workloads)
    except RuntimeError as e:
        print(f"ci: {e}", file=sys.stderr)
        return EXIT_FAILED
    except catalog_mod.SelectionError as e:
        print(f"ci: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if threaded:
        print(f"ci: warning: multi-threaded workloads do not count instructions "
              f"deterministically: {', '.join(threaded)}", file=sys.stderr)
    choices = run_choices(workloads, args.alloc)
    try:
        plan = runopts.matrix_plan(choices, runopts.check(choices), cat, runner,
                                   not args.no_install, who="ci")
    except catalog_mod.SelectionError as e:
        print(f"ci: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    result = execution.run_plan(plan, runner, cat, out / RUNS, sys.argv, who="ci")
    if isinstance(result, int):
        print(f"ci: the run wrote no new run folder under {out / RUNS}", file=sys.stderr)
        return EXIT_FAILED
    folder = result.folder
    if result.interrupted:
        print(f"ci: interrupted; nothing compared (run folder {folder})", file=sys.stderr)
        report.finish(folder)  # the run folder's report.html, its path the last line
        return EXIT_INTERRUPTED
    if result.summary is not None:
        print(tables.markdown(result.summary))
    execution.report_failed(result, "ci")
    report.finish(folder)  # the run folder's own report.html (OUT's comes last)
    status = result.exit_status()

    try:
        new_run = runfolder.load(folder)
        against_base = None
        if compare_to is not None:
            against_base = comparison.compare_runs(runfolder.load(compare_to), new_run,
                                                METRIC, args.threshold)
        allocators, alloc_note = None, None
        try:
            allocators = comparison.compare_allocators(new_run, BASELINE_ALLOC, METRIC, args.threshold)
        except comparison.CompareInputError as e:
            alloc_note = f"not compared ({e})"
    except runfolder.RunFolderError as e:
        print(f"ci: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    exit_code = EXIT_OK
    if status == EXIT_FAILED_CELLS or (against_base and against_base.exit_code() != 0):
        exit_code = EXIT_FAILED
    markdown = summary_markdown(folder, compare_to, against_base, allocators, alloc_note, status)
    document = summary_json(folder, compare_to, against_base, allocators, alloc_note, status, exit_code)
    atomicio.write_text(out / SUMMARY_MD, markdown)
    atomicio.write_json(out / SUMMARY_JSON, document)
    print(markdown)
    if against_base is None:
        print(f"ci: {NO_BASELINE}", file=sys.stderr)
    else:
        print(f"ci: {compare_render.verdict_line(against_base).replace('**', '')}", file=sys.stderr)

    if args.update_baseline:
        if status == EXIT_FAILED_CELLS:
            print(f"ci: not updating the baseline: some cells failed in {folder}", file=sys.stderr)
        else:
            copy_baseline(folder, baseline)
            print(f"ci: baseline {baseline} is now a copy of {folder}", file=sys.stderr)
    print(f"ci: summary: {out / SUMMARY_MD}, {out / SUMMARY_JSON}", file=sys.stderr)
    report.finish(out)  # OUT/report.html: the verdicts and the run, its path the last line
    return exit_code

