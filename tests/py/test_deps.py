"""The Debian set-up logic, with dpkg-query, root and apt-get faked."""
import io
import os
import subprocess
import sys

from heaplab import deps


class Fake:
    def __init__(self, installed, root, apt_ok=True, installs=True):
        self.installed = set(installed)
        self.root = root
        self.apt_ok = apt_ok
        self.installs = installs
        self.commands = []

    def setup(self):
        return deps.Setup(query=lambda p: p in self.installed, is_root=lambda: self.root,
                          run=self.run, dpkg_available=lambda: True)

    def run(self, cmd):
        self.commands.append(list(cmd))
        if cmd[:2] == ["apt-get", "install"] and self.installs:
            self.installed |= {p for p in cmd if not p.startswith("-")} - {"apt-get", "install"}
        return 0 if self.apt_ok else 100


ALL_BUT = lambda *missing: [p for p in deps.TEST_PACKAGES if p not in missing]  # noqa: E731


def test_missing_packages_keep_the_listed_order():
    fake = Fake(ALL_BUT("valgrind", "cmake"), root=False)
    assert deps.missing_packages(deps.TEST_PACKAGES, fake.setup().query) == ["cmake", "valgrind"]


def test_nothing_missing_runs_nothing():
    fake = Fake(deps.TEST_PACKAGES, root=True)
    assert deps.ensure(deps.TEST_PACKAGES, True, fake.setup(), io.StringIO()) == 0
    assert fake.commands == []


def test_not_root_prints_the_exact_sudo_command_and_exits_2():
    fake = Fake(ALL_BUT("libmimalloc-dev", "python3-pytest"), root=False)
    out = io.StringIO()
    assert deps.ensure(deps.TEST_PACKAGES, True, fake.setup(), out) == 2
    assert "sudo apt-get install libmimalloc-dev python3-pytest\n" in out.getvalue()
    assert fake.commands == []


def test_root_runs_update_then_installs_only_the_missing():
    fake = Fake(ALL_BUT("valgrind"), root=True)
    out = io.StringIO()
    assert deps.ensure(deps.TEST_PACKAGES, True, fake.setup(), out) == 0
    assert fake.commands[0] == ["apt-get", "update"]
    assert fake.commands[1][:2] == ["apt-get", "install"] and fake.commands[1][-1] == "valgrind"
    assert "-y" in fake.commands[1]
    assert "installing missing Debian packages: valgrind" in out.getvalue()


def test_no_install_refuses_even_as_root():
    fake = Fake(ALL_BUT("cmake"), root=True)
    out = io.StringIO()
    assert deps.ensure(deps.TEST_PACKAGES, False, fake.setup(), out) == 2
    assert fake.commands == []
    assert "--no-install" in out.getvalue() and "sudo apt-get install cmake" in out.getvalue()


def test_apt_failure_is_reported_as_failure():
    fake = Fake(ALL_BUT("cmake"), root=True, apt_ok=False)
    assert deps.ensure(deps.TEST_PACKAGES, True, fake.setup(), io.StringIO()) == 1


def test_a_package_apt_did_not_install_is_still_a_failure():
    fake = Fake(ALL_BUT("cmake"), root=True, installs=False)
    out = io.StringIO()
    assert deps.ensure(deps.TEST_PACKAGES, True, fake.setup(), out) == 1
    assert "still missing" in out.getvalue()


def test_run_needs_fewer_packages_than_test():
    assert set(deps.RUN_PACKAGES) < set(deps.TEST_PACKAGES)
    assert {"python3-pytest", "valgrind"} <= set(deps.TEST_PACKAGES) - set(deps.RUN_PACKAGES)


def test_dpkg_status_must_say_installed(monkeypatch):
    class Proc:
        def __init__(self, rc, out):
            self.returncode, self.stdout = rc, out
    answers = {"a": Proc(0, "install ok installed"), "b": Proc(0, "deinstall ok config-files"),
               "c": Proc(1, "")}
    monkeypatch.setattr(deps.subprocess, "run", lambda cmd, **kw: answers[cmd[-1]])
    assert [deps.dpkg_installed(p) for p in "abc"] == [True, False, False]


def test_run_py_stops_with_exit_2_when_a_package_is_missing(tmp_path, repo_root):
    """Wiring through run.py: a fake dpkg-query that says cmake is missing,
    and --no-install; nothing is built or installed."""
    fake = tmp_path / "dpkg-query"
    fake.write_text("#!/bin/sh\n"
                    "for last; do :; done\n"
                    "[ \"$last\" = cmake ] && exit 1\n"
                    "printf 'install ok installed'\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    env.pop("HEAPLAB_RUN", None)
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "list", "--no-install"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2
    assert "sudo apt-get install cmake" in proc.stderr
    assert "build:" not in proc.stderr
