"""Getting a runner to talk to: the one named by --runner / $HEAPLAB_RUN, or
build/heaplab-run after checking the Debian packages and building."""
from __future__ import annotations

import pathlib
import sys
from typing import Sequence

from . import build, deps, paths


def obtain_runner(runner_option: str | None, allow_install: bool,
                  packages: Sequence[str] = deps.RUN_PACKAGES,
                  root: pathlib.Path = paths.REPO_ROOT) -> pathlib.Path | int:
    """The runner's path, or an exit status when there is none."""
    given = pathlib.Path(runner_option) if runner_option else paths.runner_from_env()
    if given is not None:
        # a runner given explicitly is used as is: no package check, no build
        if not given.exists():
            print(f"run.py: runner {given} does not exist", file=sys.stderr)
            return 2
        return given
    status = deps.ensure(packages, allow_install)
    if status != 0:
        return status
    runner = build.ensure_runner(root)
    return runner if runner is not None else 1
