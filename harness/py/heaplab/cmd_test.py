"""`run.py test`: every test suite, in order, with one line of totals.

1. build/ (Release): `ctest --output-on-failure`
2. build-asan/ (ASan+UBSan, RelWithDebInfo): `ctest -LE 'preload|nosan'`
3. build-tsan/ (TSan): `ctest -L threaded -LE 'preload|nosan'`
4. pytest over tests/ with an interpreter that has pytest, HEAPLAB_RUN set

The last line is exactly `tests: N passed, M failed, K skipped`, after a
list of what was skipped and why. A build that fails, a ctest run that
finds no tests, or a pytest run that collects nothing (exit 5), counts as
one failure. With CI=true in the environment, a test skipped for want of a
tool the CI installs (.ci/run: valgrind, redis-server, ...) counts as a
failure too: there, its absence is a broken set-up, not a choice.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Sequence

from . import build, deps, paths, programs, pythons

SUITES = ("ctest", "asan", "tsan", "pytest")
SANITIZER_EXCLUDE = "preload|nosan"
PYTEST_NO_TESTS = 5


@dataclass
class Count:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    # why each skipped test was skipped, as the suite said it ("suite: reason")
    skips: list[str] = field(default_factory=list)

    def __iadd__(self, other: "Count") -> "Count":
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.skips += other.skips
        return self


CTEST_TOTALS = re.compile(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
# ctest's list after the totals: "\t  7 - name (Skipped)"
CTEST_SKIPPED = re.compile(r"^\s*\d+ - (\S+) \((Skipped|Not Run|Disabled)\)", re.M)
PYTEST_WORD = re.compile(r"(\d+) (passed|failed|errors?|skipped)\b")
# pytest -rs: "SKIPPED [2] tests/x.py:12: valgrind is not installed"
PYTEST_SKIP_LINE = re.compile(r"^SKIPPED \[(\d+)\] ([^:]+:\d+): (.*)$", re.M)
# What a skip reason names when a tool .ci/run installs is missing: in CI
# (CI=true) such a skip is a failure. Kept beside .ci/run's package list.
CI_TOOLS = ("valgrind", "redis-server", "matplotlib", "zstd", "heaplab-gbench", "C compiler",
            "mimalloc", "jemalloc", "tcmalloc", "pytest", "chromium", "pkg-config")


def parse_ctest(output: str, returncode: int) -> Count:
    """ctest's totals; skipped tests counted apart (they are among the
    "passed" of its percentage). A run that finds no tests is a failure: a
    suite that lost its tests must not read as green."""
    m = None
    for m in CTEST_TOTALS.finditer(output):
        pass
    if m is None:
        return Count(0, 1)      # ctest itself failed, or found no tests
    failed, total = int(m.group(2)), int(m.group(3))
    if total == 0:
        return Count(0, 1)
    skipped = [f"{name} ({why})" for name, why in CTEST_SKIPPED.findall(output[m.end():])]
    return Count(total - failed - len(skipped), failed, len(skipped), skipped)


def parse_pytest(output: str, returncode: int) -> Count:
    if returncode == PYTEST_NO_TESTS:
        return Count(0, 1)
    lines = [ln for ln in output.splitlines() if PYTEST_WORD.search(ln)]
    if not lines:
        return Count(0, 1 if returncode != 0 else 0)
    count = Count()
    for number, word in PYTEST_WORD.findall(lines[-1]):
        if word == "passed":
            count.passed += int(number)
        elif word == "skipped":
            count.skipped += int(number)
        else:
            count.failed += int(number)
    for times, where, reason in PYTEST_SKIP_LINE.findall(output):
        count.skips += [f"{where}: {reason}"] * int(times)
    if returncode != 0 and count.failed == 0:
        count.failed = 1    # pytest failed for a reason its summary does not count
    return count


def ci_failures(count: Count, in_ci: bool) -> list[str]:
    """The skips that, in CI, are failures: they name a tool CI installs."""
    if not in_ci:
        return []
    return [s for s in count.skips if any(tool in s for tool in CI_TOOLS)]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def tee(cmd: Sequence[str], cwd: pathlib.Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Runs cmd, showing its output as it comes, and returns (status, output)."""
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    assert proc.stdout is not None
    captured: list[str] = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        captured.append(line)
    return proc.wait(), "".join(captured)


def _no_aslr_prefix() -> list[str]:
    # TSan's shadow-memory layout breaks with the high mmap randomisation of
    # recent kernels ("unexpected memory mapping"); running without ASLR
    # avoids it, and the children inherit the personality.
    setarch = shutil.which("setarch")
    if not setarch:
        return []
    prefix = [setarch, os.uname().machine, "-R"]
    # containers may forbid personality(2); then run as is
    probe = subprocess.run(prefix + ["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
    return prefix if probe.returncode == 0 else []


def ctest_suite(name: str, config: build.BuildConfig, ctest_args: Sequence[str],
                root: pathlib.Path) -> Count:
    if not build.build(config, (), root):
        print(f"test: {name}: build failed", file=sys.stderr)
        return Count(0, 1)
    prefix = _no_aslr_prefix() if config.sanitize == "thread" else []
    cmd = prefix + ["ctest", "--output-on-failure", "-j", str(build.jobs()), *ctest_args]
    rc, out = tee(cmd, config.folder)
    count = parse_ctest(out, rc)
    count.skips = [f"{name}: {s}" for s in count.skips]
    if count.failed and "No tests were found" in out:
        print(f"test: {name}: ctest found no tests: counted as a failure", file=sys.stderr)
    print(f"test: {name}: {count.passed} passed, {count.failed} failed, {count.skipped} skipped",
          file=sys.stderr)
    return count


def pytest_suite(root: pathlib.Path, runner: pathlib.Path) -> Count:
    python = pythons.python_with("pytest")
    if python is None:
        print("test: pytest: no interpreter with pytest (apt install python3-pytest)", file=sys.stderr)
        return Count(0, 1)
    env = dict(os.environ, **{paths.RUNNER_ENV: str(runner)})
    rc, out = tee([str(python), "-m", "pytest", "-q", "-rs", "tests"], root, env)
    count = parse_pytest(out, rc)
    note = " (no tests collected)" if rc == PYTEST_NO_TESTS else ""
    print(f"test: pytest: {count.passed} passed, {count.failed} failed, {count.skipped} skipped{note}",
          file=sys.stderr)
    return count


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("test", help="build and run every test suite (ctest, sanitizers, pytest)")
    p.add_argument("--no-sanitizers", action="store_true", help="skip the ASan and TSan builds")
    p.add_argument("--only", choices=SUITES, help="run one suite only")
    p.add_argument("--no-install", action="store_true", help="never install Debian packages")
    p.set_defaults(func=main)


def chosen_suites(only: str | None, no_sanitizers: bool) -> list[str]:
    if only:
        return [only]
    return [s for s in SUITES if not (no_sanitizers and s in ("asan", "tsan"))]


def packages_for(suites: Sequence[str]) -> tuple[str, ...]:
    """The Debian packages the chosen suites need: Chromium (tests/report
    renders the report in it) and the programs suite's programs (its tests
    run each one) only for pytest."""
    if "pytest" not in suites:
        return deps.TEST_PACKAGES
    return deps.TEST_PACKAGES + deps.REPORT_TEST_PACKAGES + programs.PACKAGES


def main(args: argparse.Namespace) -> int:
    root = paths.REPO_ROOT
    suites = chosen_suites(args.only, args.no_sanitizers)
    status = deps.ensure(packages_for(suites), not args.no_install)
    if status != 0:
        return status
    total = Count()
    release = build.BuildConfig(paths.build_dir(root))
    for suite in suites:
        if suite == "ctest":
            total += ctest_suite("ctest", release, (), root)
        elif suite == "asan":
            total += ctest_suite("asan", build.BuildConfig(root / "build-asan", "RelWithDebInfo", "address"),
                                 ("-LE", SANITIZER_EXCLUDE), root)
        elif suite == "tsan":
            total += ctest_suite("tsan", build.BuildConfig(root / "build-tsan", "RelWithDebInfo", "thread"),
                                 ("-L", "threaded", "-LE", SANITIZER_EXCLUDE), root)
        elif suite == "pytest":
            # the end-to-end tests drive the Release runner; build it first
            # (incremental, so free when the ctest suite just built it)
            runner = build.ensure_runner(root)
            if runner is None:
                total += Count(0, 1)
            total += pytest_suite(root, runner or paths.default_runner(root))
    report(total, in_ci())
    return 1 if total.failed else 0


def report(total: Count, ci: bool) -> None:
    """What was skipped and why, then the totals line (last)."""
    broken = ci_failures(total, ci)
    for skip in dict.fromkeys(total.skips):
        times = total.skips.count(skip)
        mark = " — CI installs this: counted as a failure" if skip in broken else ""
        print(f"skipped{f' ×{times}' if times > 1 else ''}: {skip}{mark}")
    if total.skipped > len(total.skips):
        print(f"skipped: {total.skipped - len(total.skips)} more without a reason given")
    total.failed += len(broken)
    total.skipped -= len(broken)
    print(f"tests: {total.passed} passed, {total.failed} failed, {total.skipped} skipped")
