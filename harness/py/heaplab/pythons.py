"""Finding a Python interpreter that has a given module.

The driver runs on whatever python3 started it (here often a pyenv build
without Debian's packages). matplotlib and pytest come from Debian, so when
the current interpreter lacks them we use /usr/bin/python3 instead.
"""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

SYSTEM_PYTHON = pathlib.Path("/usr/bin/python3")


def has_module_here(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def has_module(python: pathlib.Path, module: str) -> bool:
    if not python.exists():
        return False
    proc = subprocess.run([str(python), "-c", f"import {module}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return proc.returncode == 0


def python_with(module: str, fallback: pathlib.Path = SYSTEM_PYTHON) -> pathlib.Path | None:
    """The current interpreter if it can import `module`, else `fallback` if
    that one can, else None."""
    if has_module_here(module):
        return pathlib.Path(sys.executable)
    if has_module(fallback, module):
        return fallback
    return None
