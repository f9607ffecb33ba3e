"""compare two runs, or allocators within one run, with a verdict and exit code

`./run.py compare`: is NEW faster or slower than BASE, and can we tell?

Two modes:
- `compare BASE NEW`: two run folders; each (workload, threads, allocator)
  cell of NEW against the same cell of BASE;
- `compare RUN --baseline-alloc system`: one run folder; every allocator's
  cells against the baseline allocator's cells of the same (workload, threads).

Per cell: the ratio of medians NEW/BASE, a two-sided Mann-Whitney U test on
the repetitions, and a verdict. A difference only counts when it is both
larger than the threshold (default 5%) and significant (p < alpha, default
0.05): medians within the threshold are "unchanged"; a larger difference the
test cannot confirm is "not significant". "faster"/"slower" follow each
metric's `better` ("faster" = better for a higher-is-better throughput too).

Output: Markdown (tables per workload group, geometric means per allocator,
a one-line verdict) and JSON ("heaplab.compare/1"); --html-out writes the
verdicts as a self-contained page (heaplab.report). Exit status: 1 when some
cell is significantly slower beyond the threshold, or ran in BASE and failed
in every repetition of NEW; 2 on bad input; else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import atomicio, report
# the statistics and the rendering, by the names the command's users know
from .comparison import (  # noqa: F401
    DEFAULT_ALPHA, DEFAULT_THRESHOLD, FASTER, NOT_SIGNIFICANT, SLOWER, UNCHANGED,
    CompareInputError, Comparison, Samples, compare_allocators, compare_cell, compare_runs, decide)
from .compare_render import to_json, to_markdown, verdict_line  # noqa: F401
from .runfolder import RunFolderError, load as load_run_folder

EXIT_BAD_INPUT = 2

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers `compare BASE NEW | RUN --baseline-alloc NAME` and its options."""
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="BASE NEW run folders, or one run folder with --baseline-alloc")
    parser.add_argument("--baseline-alloc", metavar="NAME",
                        help="compare the allocators of one run against this one")
    parser.add_argument("--metric", metavar="NAME",
                        help="metric to compare (default: each workload's primary metric); "
                             "'instructions' compares across machines")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                        help="smallest relative change of the median that counts (default 0.05)")
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA,
                        help="significance level of the U test (default 0.05)")
    parser.add_argument("--unpaired", action="store_true",
                        help="with --baseline-alloc: test the repetitions as independent samples "
                             "(Mann-Whitney) instead of pairing repetition k with repetition k")
    parser.add_argument("--force", action="store_true",
                        help="compare even when the runs come from different machines (timings) "
                             "or ran a cell with different workload parameters")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown",
                        help="what to print on stdout (default markdown)")
    parser.add_argument("--json-out", metavar="FILE", help="also write the JSON to FILE")
    parser.add_argument("--markdown-out", metavar="FILE", help="also write the Markdown to FILE")
    parser.add_argument("--html-out", metavar="FILE",
                        help="also write the verdicts as a self-contained HTML page to FILE")


def run_compare(args: argparse.Namespace) -> Comparison:
    """Builds the comparison the command line asks for (CompareInputError on bad input)."""
    if args.baseline_alloc:
        if len(args.runs) != 1:
            raise CompareInputError("--baseline-alloc compares within one run: give one run folder")
        run = load_run_folder(args.runs[0])
        return compare_allocators(run, args.baseline_alloc, args.metric, args.threshold,
                                  args.alpha, args.force, pair=not args.unpaired)
    if args.unpaired:
        raise CompareInputError("--unpaired goes with --baseline-alloc: two runs are never paired")
    if len(args.runs) != 2:
        raise CompareInputError("give two run folders (BASE NEW), or one with --baseline-alloc NAME")
    base, new = (load_run_folder(p) for p in args.runs)
    return compare_runs(base, new, args.metric, args.threshold, args.alpha, args.force)


def main(args: argparse.Namespace) -> int:
    """`./run.py compare`: prints Markdown (or JSON), writes the requested
    files, and returns 0, 1 (significant regression) or 2 (bad input)."""
    try:
        comparison = run_compare(args)
        markdown = to_markdown(comparison)
        as_json = to_json(comparison)
        document = json.dumps(as_json, indent=2) + "\n"
        if args.json_out:
            atomicio.write_text(Path(args.json_out), document)
        if args.markdown_out:
            atomicio.write_text(Path(args.markdown_out), markdown)
        if args.html_out:
            report.write_comparison(as_json, Path(args.html_out))
    except RunFolderError as exc:
        print(f"compare: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"compare: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in comparison.warnings:
        print(f"compare: warning: {warning}", file=sys.stderr)
    sys.stdout.write(document if args.format == "json" else markdown)
    if args.html_out:
        # after the JSON, not inside it
        print(f"report: {args.html_out}", file=sys.stderr if args.format == "json" else sys.stdout)
    return comparison.exit_code()
