"""python -m plots RUN_DIR: draws a run folder's charts and prints their paths."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from . import CHART_MODULES, draw_run
from .rundata import RunError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m plots",
        description="Draw every chart a heaplab run folder's data allows "
                    "(PNG and SVG, written into the folder).")
    parser.add_argument("run_dir", type=Path,
                        help="a run folder holding raw.jsonl (results/runs/<id>)")
    parser.add_argument("--only", metavar="NAME,...",
                        help="these chart families only (" + ", ".join(CHART_MODULES) + ")")
    args = parser.parse_args(argv)
    only = tuple(n.strip() for n in args.only.split(",")) if args.only else None
    unknown = [n for n in only or () if n not in CHART_MODULES]
    if unknown:
        print(f"plots: error: unknown chart family {', '.join(unknown)}; families: "
              f"{', '.join(CHART_MODULES)}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("matplotlib") is None:
        print(f"plots: error: matplotlib is not installed for {sys.executable};"
              f" run /usr/bin/python3 -m plots (Debian's python3-matplotlib)",
              file=sys.stderr)
        return 1
    try:
        paths = draw_run(args.run_dir, only)
    except RunError as exc:
        print(f"plots: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"plots: error: cannot write charts: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    if not paths:
        print(f"plots: {args.run_dir}: no charts (raw.jsonl holds no "
              f"documents with figures)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
