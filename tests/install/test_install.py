"""`cmake --install` of the core into a temporary prefix, and programs built
against what it installed: through pkg-config and through find_package,
with the static library and with the preload library."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
INSTALLED = ("libheaplab.a", "libheaplab-preload.so", "heaplab.h", "heaplab.pc", "heaplabConfig.cmake")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False, **kw)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}"
    return proc


@pytest.fixture(scope="module")
def prefix(runner_path: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    build = runner_path.parent
    if not (build / "CMakeCache.txt").exists():
        pytest.skip(f"no CMake build folder at {build} (build with ./run.py first)")
    _run(["cmake", "--build", str(build), "--target", "heaplab", "heaplab-preload"])
    out = tmp_path_factory.mktemp("prefix")
    _run(["cmake", "--install", str(build), "--prefix", str(out)])
    return out


def test_install_puts_libraries_header_and_package_files_under_the_prefix(prefix: pathlib.Path) -> None:
    names = {p.name for p in prefix.rglob("*")}
    assert set(INSTALLED) <= names, sorted(names)


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config is not installed (apt install pkgconf)")
def test_pkg_config_flags_build_a_program_on_the_installed_static_library(
        prefix: pathlib.Path, tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, PKG_CONFIG_PATH=str(next(prefix.rglob("pkgconfig"))))
    flags = _run(["pkg-config", "--cflags", "--libs", "heaplab"], env=env).stdout.split()
    assert any(f.startswith("-I") for f in flags) and "-lheaplab" in flags
    exe = tmp_path / "use_heaplab"
    _run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(HERE / "use_heaplab.c"), "-o", str(exe), *flags])
    assert "served hl_malloc" in _run([str(exe)]).stdout


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config is not installed (apt install pkgconf)")
def test_installed_preload_library_serves_a_program_that_knows_nothing_of_heaplab(
        prefix: pathlib.Path, tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, PKG_CONFIG_PATH=str(next(prefix.rglob("pkgconfig"))))
    cflags = _run(["pkg-config", "--cflags", "heaplab"], env=env).stdout.split()
    libdir = pathlib.Path(_run(["pkg-config", "--variable=libdir", "heaplab"], env=env).stdout.strip())
    exe = tmp_path / "use_preload"
    _run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", *cflags, str(HERE / "use_preload.c"),
          "-o", str(exe), "-ldl"])
    # without heaplab preloaded the program says malloc is not heaplab's
    plain = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    assert plain.returncode == 1 and "not heaplab's" in plain.stderr
    preloaded = _run([str(exe)], env=dict(os.environ, LD_PRELOAD=str(libdir / "libheaplab-preload.so")))
    assert "malloc served by heaplab" in preloaded.stdout


def test_find_package_builds_programs_on_both_installed_libraries(
        prefix: pathlib.Path, tmp_path: pathlib.Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    template = (HERE / "CMakeLists.txt.in").read_text()
    (source / "CMakeLists.txt").write_text(template.replace("@SOURCE_DIR@", HERE.as_posix()))
    build = tmp_path / "build"
    _run(["cmake", "-S", str(source), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", str(build)])
    assert "served hl_malloc" in _run([str(build / "use_heaplab")]).stdout
    # linked to heaplab::preload: its malloc is heaplab's without LD_PRELOAD
    assert "malloc served by heaplab" in _run([str(build / "use_preload")]).stdout
