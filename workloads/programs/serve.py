"""Any command as a served process.

    serve.py [--package PKG] [--figure NAME:UNIT:BETTER:PREFIX] -- CMD ARGS...

Runs CMD with the allocator under test (see served.py) and reports its
figures. --package names the Debian package that provides CMD, for the
"not installed" hint. --figure reads the program's own figure from the
first stdout line that starts with PREFIX (the first number after it).
"""
from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import served  # noqa: E402


def parse(argv: list[str]) -> tuple[str | None, list[str] | None, list[str]]:
    split = argv.index("--")
    opts, cmd = argv[1:split], argv[split + 1:]
    package = opts[opts.index("--package") + 1] if "--package" in opts else None
    fig = opts[opts.index("--figure") + 1].split(":", 3) if "--figure" in opts else None
    return package, fig, cmd


def read_figure(text: str, fig: list[str]) -> dict:
    name, unit, better, prefix = fig
    for line in text.splitlines():
        if line.startswith(prefix):
            for word in line[len(prefix):].split():
                try:
                    return {name: served.figure(float(word), unit, better)}
                except ValueError:
                    continue
    return {}


def main(argv: list[str]) -> int:
    served.drop_preload()
    package, fig, cmd = parse(argv)
    cmd[0] = served.need(cmd[0], package or cmd[0])
    stdout = subprocess.PIPE if fig else subprocess.DEVNULL
    proc = served.Served(cmd, stdout=stdout)
    out = proc.proc.stdout.read().decode("utf-8", errors="replace") if fig else ""
    err = proc.wait()
    figures = read_figure(out, fig) if fig else {}
    return served.finish(proc, os.path.basename(cmd[0]), figures, served.failed_exit(proc, err))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
