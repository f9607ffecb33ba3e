"""The subcommand table."""
import argparse
import types

from heaplab import cli


def test_no_arguments_means_a_quick_run(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli.cmd_run, "main", lambda args: seen.setdefault("full", args.full) or 0)
    assert cli.main([]) == 0
    assert seen == {"full": False}


def test_modules_with_add_arguments_and_main_are_registered(monkeypatch):
    module = types.ModuleType("cmd_echo", "Echo a word.\n\nLonger text.")
    module.add_arguments = lambda p: p.add_argument("word")
    module.main = lambda args: len(args.word)
    monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + (("echo", module),))
    assert cli.main(["echo", "four"]) == 4
    assert "Echo a word." in cli.parser().format_help()


def test_every_listed_subcommand_parses_its_help():
    p = cli.parser()
    names = [name for name, _ in cli.SUBCOMMANDS]
    assert names[:4] == ["run", "list", "plot", "test"]
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    assert set(names) == set(sub.choices)


def _heaplab_imports(path):
    """The heaplab modules a source file imports (`from . import x`,
    `from .x import y`, lazily inside a function too)."""
    import ast
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(a.name for a in node.names)
    return names


def test_only_the_cli_imports_a_command_module():
    # a command used as a library (cmd_ci calling cmd_run, the report's hook
    # living in cmd_report) hides a cycle; shared code lives in a library module
    import pathlib
    commands = {module.__name__.rsplit(".", 1)[-1] for _, module in cli.SUBCOMMANDS}
    assert {"cmd_run", "cmd_report", "compare", "merge"} <= commands
    package = pathlib.Path(cli.__file__).parent
    found = {path.stem: sorted(_heaplab_imports(path) & (commands - {path.stem}))
             for path in package.glob("*.py") if path.stem != "cli"}
    assert {name: used for name, used in found.items() if used} == {}
