"""The command line: `run.py [SUBCOMMAND] [OPTIONS]`.

Each subcommand lives in its own module, listed in SUBCOMMANDS with its
name. A module either exposes register(subparsers) (which adds its own
parser and sets `func`), or add_arguments(parser) and main(args) -> exit
status, with the first line of its docstring as the help text. Adding a
subcommand (reproduce, compare, merge, gbench) is one line below.
"""
from __future__ import annotations

import argparse
from types import ModuleType
from typing import Sequence

from . import cmd_ci, cmd_export, cmd_list, cmd_plot, cmd_record, cmd_report, cmd_reproduce, cmd_run, cmd_test, compare, gbench, merge

SUBCOMMANDS: tuple[tuple[str, ModuleType], ...] = (
    ("run", cmd_run),
    ("list", cmd_list),
    ("plot", cmd_plot),
    ("test", cmd_test),
    ("reproduce", cmd_reproduce),
    ("compare", compare),
    ("merge", merge),
    ("ci", cmd_ci),
    ("gbench", gbench),
    ("record", cmd_record),
    ("report", cmd_report),
    ("export", cmd_export),
)
# `./run.py` with no arguments is `./run.py run --quick`.
DEFAULT_ARGV = ("run", "--quick")


def _add(sub: argparse._SubParsersAction, name: str, module: ModuleType) -> None:
    if hasattr(module, "register"):
        module.register(sub)
        return
    doc = (module.__doc__ or "").strip().splitlines()
    p = sub.add_parser(name, help=doc[0] if doc else None,
                       description=(module.__doc__ or "").strip() or None,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(p)
    p.set_defaults(func=module.main)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run.py",
        description="heaplab: build the runner, benchmark allocators, tabulate and chart the results.",
        epilog="With no arguments: run --quick.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS:
        _add(sub, name, module)
    return p


def main(argv: Sequence[str]) -> int:
    argv = list(argv) or list(DEFAULT_ARGV)
    args = parser().parse_args(argv)
    if not getattr(args, "func", None):
        parser().print_help()
        return 2
    return int(args.func(args))
