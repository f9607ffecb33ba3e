"""Building with CMake, incrementally.

A build folder is configured only when it has no CMakeCache.txt or its cache
disagrees with the build type / sanitizer asked for; after that
`cmake --build` is incremental (and re-runs configure by itself when a
CMakeLists.txt changes). Output is captured and shown only on failure, so a
successful build costs one line of the user's screen.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Sequence

from . import paths

# Lines of compiler output shown when a build fails.
FAILURE_TAIL_LINES = 60


@dataclass(frozen=True)
class BuildConfig:
    folder: pathlib.Path
    build_type: str = "Release"
    sanitize: str = ""          # "", "address" or "thread"

    def cache_values(self) -> dict[str, str]:
        return {"CMAKE_BUILD_TYPE": self.build_type, "HEAPLAB_SANITIZE": self.sanitize}


def jobs() -> int:
    return os.cpu_count() or 1


def read_cache(folder: pathlib.Path) -> dict[str, str] | None:
    """KEY -> value from CMakeCache.txt, or None when the folder is not configured."""
    cache = folder / "CMakeCache.txt"
    if not cache.exists():
        return None
    values: dict[str, str] = {}
    pattern = re.compile(r"^([A-Za-z0-9_.-]+):[A-Z_]+=(.*)$")
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        m = pattern.match(line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


def needs_configure(config: BuildConfig) -> bool:
    cache = read_cache(config.folder)
    if cache is None:
        return True
    # a library looked for and not found may have been installed since
    # (set-up installs libzstd-dev for the trace work): look again
    if any(k.startswith("HEAPLAB_ZSTD") and v.endswith("NOTFOUND") for k, v in cache.items()):
        return True
    return any(cache.get(k, "") != v for k, v in config.cache_values().items())


def _run_quiet(cmd: Sequence[str], label: str) -> bool:
    proc = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", check=False)
    if proc.returncode == 0:
        return True
    tail = proc.stdout.splitlines()[-FAILURE_TAIL_LINES:]
    print("\n".join(tail), file=sys.stderr)
    print(f"build: {label} failed (exit {proc.returncode}): {' '.join(cmd)}", file=sys.stderr)
    return False


def configure(config: BuildConfig, root: pathlib.Path = paths.REPO_ROOT) -> bool:
    cmd = ["cmake", "-S", str(root), "-B", str(config.folder),
           f"-DCMAKE_BUILD_TYPE={config.build_type}",
           f"-DHEAPLAB_SANITIZE={config.sanitize}"]
    return _run_quiet(cmd, "configure")


def build(config: BuildConfig, targets: Sequence[str] = (),
          root: pathlib.Path = paths.REPO_ROOT) -> bool:
    """Configures if needed, then builds `targets` (all when empty)."""
    what = ", ".join(targets) if targets else "all targets"
    try:
        shown = config.folder.relative_to(root)
    except ValueError:
        shown = config.folder
    print(f"build: {shown}/ ({config.build_type}"
          f"{', ' + config.sanitize if config.sanitize else ''}): {what}", file=sys.stderr, flush=True)
    if needs_configure(config) and not configure(config, root):
        return False
    cmd = ["cmake", "--build", str(config.folder), "-j", str(jobs())]
    for t in targets:
        cmd += ["--target", t]
    return _run_quiet(cmd, "build")


def ensure_runner(root: pathlib.Path = paths.REPO_ROOT) -> pathlib.Path | None:
    """Builds build/heaplab-run (Release) and returns its path, or None."""
    config = BuildConfig(paths.build_dir(root))
    if not build(config, [paths.RUNNER_TARGET], root):
        return None
    runner = paths.default_runner(root)
    if not runner.exists():
        print(f"build: {runner} was not produced by the build", file=sys.stderr)
        return None
    return runner
