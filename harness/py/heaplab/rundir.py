"""What run.py writes into a run folder besides raw.jsonl: env.json (the
machine, the command line, the options and the plan) and the files derived
from the two (summary.json, tables.md, tables.csv). The folder itself, its
names and its reading are heaplab.runfolder's.
"""
from __future__ import annotations

import datetime
import os
import pathlib
import platform
import subprocess
import sys
from typing import Any

from . import atomicio, runfolder, summary, tables
from .runfolder import RAW, SUMMARY, TABLES_CSV, TABLES_MD

ENV_SCHEMA = "heaplab.env/1"


def _cpu_model() -> str | None:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _git_commit(root: pathlib.Path) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None


def machine(root: pathlib.Path) -> dict[str, Any]:
    uname = platform.uname()
    return {"hostname": uname.node, "cpu_model": _cpu_model(), "cores": os.cpu_count(),
            "kernel": uname.release, "machine": uname.machine,
            "python": sys.version.split()[0], "git_commit": _git_commit(root)}


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def env_document(root: pathlib.Path, argv: list[str], options: dict[str, Any],
                 runner: pathlib.Path, catalog_json: dict[str, Any],
                 plan: dict[str, Any]) -> dict[str, Any]:
    return {"schema": ENV_SCHEMA,
            "started": now_iso(),
            "finished": None, "interrupted": False,
            "argv": argv, "options": options, "runner": str(runner),
            "machine": machine(root), "catalog": catalog_json, "plan": plan}


def load_env(folder: pathlib.Path) -> dict[str, Any]:
    return runfolder.read_env(folder)


def derive(folder: pathlib.Path) -> dict[str, Any]:
    """Rewrites summary.json, tables.md and tables.csv from raw.jsonl and
    env.json; returns the summary."""
    env = load_env(folder)
    documents = runfolder.read_raw(folder / RAW).documents if (folder / RAW).exists() else []
    result = summary.summarize(documents, env.get("plan") or {})
    atomicio.write_json(folder / SUMMARY, result)
    atomicio.write_text(folder / TABLES_MD, tables.markdown(result))
    atomicio.write_text(folder / TABLES_CSV, tables.csv_text(result))
    return result
