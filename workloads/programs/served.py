"""Running the process an allocator serves, for the program workloads.

A program workload's `program` line runs one of the scripts in this folder
(python3, standard library only). heaplab-run starts it with the allocator's
library in LD_PRELOAD; the script first re-executes itself without it (so
the helper is not measured and does not run on the allocator under test),
then starts the *served* process with that library back in LD_PRELOAD, plus
the evidence probe (libheaplab-evidence.so) when the driver named one in
HEAPLAB_EVIDENCE_PROBE. While the served process runs its RSS is sampled
every SAMPLE_INTERVAL_S from /proc/PID/statm; when it ends, its own rusage
(wait4) gives user and system time, peak RSS and page faults.

Everything goes into one JSON report at $HEAPLAB_PROGRAM_REPORT, which the
driver (harness/py/heaplab/programs.py) folds into the runner's document.
Without that variable the script still runs and just reports nothing.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Sequence

PRELOAD = "LD_PRELOAD"
# The allocator's library, kept while this helper runs without it.
SERVED_PRELOAD = "HEAPLAB_SERVED_PRELOAD"
PROBE = "HEAPLAB_EVIDENCE_PROBE"
EVIDENCE_DIR = "HEAPLAB_EVIDENCE_DIR"
REPORT = "HEAPLAB_PROGRAM_REPORT"
REPORT_SCHEMA = "heaplab.program-report/1"
SAMPLE_INTERVAL_S = 0.01
# A program that is not installed: the helper exits with this status.
EXIT_NOT_INSTALLED = 3
STOP_GRACE_S = 5.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
NS_PER_S = 1_000_000_000


def drop_preload() -> None:
    """Re-executes this script without LD_PRELOAD (once), keeping its value."""
    if SERVED_PRELOAD in os.environ:
        return
    env = dict(os.environ)
    env[SERVED_PRELOAD] = env.pop(PRELOAD, "")
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def served_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a served process: the allocator's library and the
    probe in LD_PRELOAD, the probe's folder in HEAPLAB_EVIDENCE_DIR."""
    env = {k: v for k, v in os.environ.items() if k not in (PRELOAD, SERVED_PRELOAD)}
    libs = [lib for lib in (os.environ.get(SERVED_PRELOAD, ""), os.environ.get(PROBE, "")) if lib]
    if libs:
        env[PRELOAD] = " ".join(libs)
    env[EVIDENCE_DIR] = str(evidence_dir())
    env.update(extra or {})
    return env


def plain_env() -> dict[str, str]:
    """The environment of a helper process the allocator does not serve."""
    return {k: v for k, v in os.environ.items() if k not in (PRELOAD, SERVED_PRELOAD, PROBE)}


def evidence_dir() -> pathlib.Path:
    path = pathlib.Path.cwd() / "heaplab-evidence"
    path.mkdir(exist_ok=True)
    return path


def need(program: str, package: str) -> str:
    """The path of `program`, or a report saying it is not installed and
    exit EXIT_NOT_INSTALLED."""
    found = shutil.which(program)
    if found:
        return found
    write_report({"not_installed": {"program": program, "package": package}})
    print(f"not installed (apt install {package})", file=sys.stderr)
    sys.exit(EXIT_NOT_INSTALLED)


class Served:
    """One served process: started, sampled, waited for."""

    def __init__(self, argv: Sequence[str], stdout: Any = subprocess.DEVNULL,
                 env_extra: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.start_ns = time.monotonic_ns()
        self.proc = subprocess.Popen(self.argv, stdout=stdout, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=served_env(env_extra))
        self.samples: list[dict[str, int]] = []
        self.rusage: Any = None
        self.status: int | None = None
        self.wall_ns = 0
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        statm = f"/proc/{self.proc.pid}/statm"
        while not self._done.is_set():
            try:
                with open(statm) as f:
                    resident = int(f.read().split()[1]) * PAGE_SIZE
            except (OSError, ValueError, IndexError):
                return
            # a zombie's statm reads 0: the process has ended
            if resident:
                self.samples.append({"t_ns": time.monotonic_ns() - self.start_ns,
                                     "rss_bytes": resident})
            self._done.wait(SAMPLE_INTERVAL_S)

    def wait(self) -> str:
        """Waits for the process (reaping it with its rusage); returns its stderr."""
        err = self.proc.stderr.read() if self.proc.stderr else b""
        _, status, rusage = os.wait4(self.proc.pid, 0)
        self._reaped(status, rusage)
        return err.decode("utf-8", errors="replace")

    def stop(self) -> str:
        """SIGTERM, then SIGKILL after STOP_GRACE_S; reaps it. Returns stderr."""
        if self.status is not None:
            return ""
        os.kill(self.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline:
            pid, status, rusage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self._reaped(status, rusage)
                return self.proc.stderr.read().decode("utf-8", errors="replace")
            time.sleep(SAMPLE_INTERVAL_S)
        os.kill(self.proc.pid, signal.SIGKILL)
        return self.wait()

    def _reaped(self, status: int, rusage: Any) -> None:
        self.wall_ns = time.monotonic_ns() - self.start_ns
        self.rusage = rusage
        self.status = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.status
        self._done.set()
        self._sampler.join()

    def metrics(self) -> dict[str, dict[str, Any]]:
        ru = self.rusage
        out: dict[str, dict[str, Any]] = {"wall_ns": _metric(self.wall_ns, "ns", "lower")}
        if ru is not None:
            out["user_ns"] = _metric(int(ru.ru_utime * NS_PER_S), "ns", "lower")
            out["sys_ns"] = _metric(int(ru.ru_stime * NS_PER_S), "ns", "lower")
            # ru_maxrss is in KiB on Linux
            out["max_rss_bytes"] = _metric(ru.ru_maxrss * 1024, "bytes", "lower")
            out["minor_faults"] = _metric(ru.ru_minflt, "count", "lower")
            out["major_faults"] = _metric(ru.ru_majflt, "count", "lower")
        return out


def _metric(value: float, unit: str, better: str) -> dict[str, Any]:
    return {"value": value, "unit": unit, "better": better}


def evidence_records() -> list[dict[str, str]]:
    """The probe's lines, one dict per line, from every process that loaded it."""
    records = []
    for path in sorted(evidence_dir().glob("*.txt")):
        for line in path.read_text(errors="replace").splitlines():
            records.append(dict(part.split("=", 1) for part in line.split() if "=" in part))
    return records


def write_report(body: dict[str, Any]) -> None:
    target = os.environ.get(REPORT)
    if not target:
        return
    doc = {"schema": REPORT_SCHEMA, "preload": os.environ.get(SERVED_PRELOAD, ""),
           "probe": os.environ.get(PROBE, ""), **body}
    tmp = target + ".part"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, target)


def finish(served: Served, what: str, figures: dict[str, dict[str, Any]] | None = None,
           failure: str | None = None) -> int:
    """Writes the report for `served` and returns this helper's exit status:
    0 when the served process and the workload succeeded."""
    body: dict[str, Any] = {
        "served": {"argv": served.argv, "pid": served.proc.pid, "what": what,
                   "status": served.status},
        "metrics": {**served.metrics(), **(figures or {})},
        "samples": served.samples,
        "evidence": evidence_records(),
    }
    if failure:
        body["failure"] = failure
    write_report(body)
    if failure:
        print(failure, file=sys.stderr)
        return 1
    return 0


def figure(value: float, unit: str, better: str) -> dict[str, Any]:
    """A program's own figure (requests per second, ...) for the report."""
    return _metric(value, unit, better)


def run_once(argv: Sequence[str], what: str, stdout: Any = subprocess.DEVNULL) -> tuple[Served, str]:
    """Runs a served process to its end; returns it and its stderr."""
    served = Served(argv, stdout=stdout)
    err = served.wait()
    return served, err


def failed_exit(served: Served, err: str) -> str | None:
    """The failure text for a served process that did not exit 0."""
    if served.status == 0:
        return None
    tail = " | ".join(err.strip().splitlines()[-3:])
    how = (f"was killed by signal {-served.status}" if served.status and served.status < 0
           else f"exited with status {served.status}")
    return f"{served.argv[0]} {how}" + (f"; stderr: {tail}" if tail else "")
