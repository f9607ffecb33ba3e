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
