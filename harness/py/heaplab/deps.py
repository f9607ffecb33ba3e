"""Debian packages heaplab needs, and installing the missing ones.

Detection uses `dpkg-query -W -f='${Status}' PKG`; a package counts as
present only when its status ends in "installed". As root the missing
packages are installed with apt-get (after `apt-get update`); otherwise the
exact command to run is printed and the caller exits 2.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

# What `./run.py` needs: a compiler tool chain, the allocators it compares,
# Google Benchmark (the gbench shim is part of the build) and matplotlib for
# the charts.
RUN_PACKAGES: tuple[str, ...] = (
    "cmake", "gcc", "g++", "make",
    "libmimalloc-dev", "libjemalloc-dev", "libtcmalloc-minimal4",
    "libbenchmark-dev", "python3-matplotlib",
)
# Recording and replaying traces (`run.py record`, `--workload trace:FILE`)
# need zstd's headers; only that work installs them.
TRACE_PACKAGES: tuple[str, ...] = ("libzstd-dev",)
# `./run.py test` also needs pytest and valgrind, the trace tests zstd, the
# install tests pkg-config.
TEST_PACKAGES: tuple[str, ...] = RUN_PACKAGES + ("python3-pytest", "valgrind", "pkgconf") + TRACE_PACKAGES
# The report tests (tests/report) open report.html in headless Chromium;
# installed only when the pytest suite runs.
REPORT_TEST_PACKAGES: tuple[str, ...] = ("chromium",)

EXIT_SETUP = 2

# Answers "is this package installed?"; faked in tests.
PackageQuery = Callable[[str], bool]
CommandRunner = Callable[[Sequence[str]], int]


def dpkg_installed(package: str) -> bool:
    proc = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False,
    )
    return proc.returncode == 0 and proc.stdout.strip().endswith(" installed")


def have_dpkg() -> bool:
    return shutil.which("dpkg-query") is not None


def missing_packages(packages: Sequence[str], query: PackageQuery = dpkg_installed) -> list[str]:
    return [p for p in packages if not query(p)]


def sudo_command(missing: Sequence[str]) -> str:
    return "sudo apt-get install " + " ".join(missing)


def _run_loud(cmd: Sequence[str]) -> int:
    print("+ " + " ".join(cmd), flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(list(cmd), env=env, stdin=subprocess.DEVNULL, check=False).returncode


@dataclass
class Setup:
    """How to check and install; every part can be replaced in tests."""
    query: PackageQuery = dpkg_installed
    is_root: Callable[[], bool] = lambda: os.geteuid() == 0
    run: CommandRunner = _run_loud
    dpkg_available: Callable[[], bool] = have_dpkg


def ensure(packages: Sequence[str], allow_install: bool, setup: Setup | None = None,
           out=None) -> int:
    """Makes sure `packages` are installed. Returns 0 when they are (or were
    installed now), EXIT_SETUP when the user must act, 1 when apt-get failed."""
    setup = setup or Setup()
    out = out or sys.stderr
    if not setup.dpkg_available():
        print("set-up: dpkg-query not found (not Debian?); not checking packages", file=out)
        return 0
    missing = missing_packages(packages, setup.query)
    if not missing:
        return 0
    names = " ".join(missing)
    if not allow_install:
        print(f"set-up: missing Debian packages: {names} (--no-install given); "
              f"install them with: {sudo_command(missing)}", file=out)
        return EXIT_SETUP
    if not setup.is_root():
        print(f"set-up: missing Debian packages: {names}; install them with:", file=out)
        print(sudo_command(missing), file=out)
        return EXIT_SETUP
    print(f"set-up: installing missing Debian packages: {names}", file=out, flush=True)
    if setup.run(["apt-get", "update"]) != 0:
        print("set-up: apt-get update failed", file=out)
        return 1
    if setup.run(["apt-get", "install", "-y", "--no-install-recommends", *missing]) != 0:
        print(f"set-up: apt-get install failed for: {names}", file=out)
        return 1
    still = missing_packages(missing, setup.query)
    if still:
        print(f"set-up: still missing after apt-get: {' '.join(still)}", file=out)
        return 1
    return 0
