"""`run.py list`: allocators (with availability) and workloads (built-in and
scripts, with groups, metrics, descriptions and parameters), and broken
scripts."""
from __future__ import annotations

import argparse
import sys

from . import catalog as catalog_mod, suites
from .prepare import obtain_runner


def params_text(w: catalog_mod.Workload) -> str:
    """`count=50000 (quick 5000), size=64`: each parameter with its default,
    and its quick size where that differs (`--param NAME=V` sets one)."""
    parts = []
    for p in w.params:
        quick = p.get("quick")
        extra = f" (quick {quick})" if quick is not None and quick != p.get("default") else ""
        parts.append(f"{p.get('name')}={p.get('default')}{extra}")
    return ", ".join(parts)


def render(cat: catalog_mod.Catalog) -> str:
    lines = ["allocators:"]
    width = max((len(a.name) for a in cat.allocators), default=0)
    for a in cat.allocators:
        state = (a.version or "available") if a.available else (a.reason or "not available")
        if not a.default:
            state += ", run only when named"
        lines.append(f"  {a.name:<{width}}  {state}")
    lines.append("")
    lines.append("workloads:")
    groups: list[str] = []
    for w in cat.workloads:
        if w.group not in groups:
            groups.append(w.group)
    width = max((len(w.name) for w in cat.workloads), default=0)
    for g in groups:
        lines.append(f"  [{g}]")
        for w in cat.workloads:
            if w.group != g:
                continue
            threads = f", threaded, default {w.default_threads}" if w.threaded else ""
            source = f" [{w.source}]" if w.source else ""
            lines.append(f"    {w.name:<{width}}  {w.metric} ({w.unit}, {w.better} is better"
                         f"{threads}) {w.describe}{source}")
            if w.params:
                lines.append(f"    {'':<{width}}  params: {params_text(w)}")
    if cat.broken_scripts:
        lines.append("")
        lines.append("broken scripts:")
        for b in cat.broken_scripts:
            # the error names its file and line already
            error, source = str(b.get("error")), str(b.get("source"))
            lines.append(f"  {error}" if error.startswith(source) else f"  {source}: {error}")
    return "\n".join(lines)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="list allocators and workloads")
    p.add_argument("--no-install", action="store_true", help="never install Debian packages")
    p.add_argument("--runner", help="use this heaplab-run (default: $HEAPLAB_RUN or build it)")
    p.add_argument("--suite", metavar="NAME", choices=tuple(suites.SUITES),
                   help="only the workloads of a named set (" + suites.describe() + ")")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    runner = obtain_runner(args.runner, not args.no_install)
    if isinstance(runner, int):
        return runner
    try:
        cat = catalog_mod.load(runner)
    except RuntimeError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1
    if getattr(args, "suite", None):
        cat.workloads = suites.select(cat.workloads, args.suite)
    print(render(cat))
    return 0
