"""A run folder: results/runs/<timestamp>/ and what is in it.

raw.jsonl   every document, one per line, appended as each cell finishes
env.json    the machine, the command line, the options and the plan
summary.json, tables.md, tables.csv   derived from the two above only
`latest` next to the run folders points at the newest one.
"""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
from typing import Any

from . import atomicio, rawlog, summary, tables

RAW = "raw.jsonl"
ENV = "env.json"
SUMMARY = "summary.json"
TABLES_MD = "tables.md"
TABLES_CSV = "tables.csv"
LATEST = "latest"
ENV_SCHEMA = "heaplab.env/1"


def utc_stamp(now: datetime.datetime | None = None) -> str:
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y%m%d-%H%M%S")


def create(parent: pathlib.Path, stamp: str | None = None) -> pathlib.Path:
    """Makes a new, empty run folder under `parent` (never reuses one)."""
    parent.mkdir(parents=True, exist_ok=True)
    base = stamp or utc_stamp()
    for attempt in range(1, 1000):
        name = base if attempt == 1 else f"{base}-{attempt}"
        folder = parent / name
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        (folder / RAW).touch()
        return folder
    raise RuntimeError(f"cannot create a run folder under {parent}")


def point_latest(folder: pathlib.Path) -> None:
    atomicio.replace_symlink(folder.parent / LATEST, folder.name)


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
    with open(folder / ENV, encoding="utf-8") as f:
        return json.load(f)


def derive(folder: pathlib.Path) -> dict[str, Any]:
    """Rewrites summary.json, tables.md and tables.csv from raw.jsonl and
    env.json; returns the summary."""
    env = load_env(folder)
    log = rawlog.read(folder / RAW) if (folder / RAW).exists() else rawlog.RawLog()
    if log.torn:
        print(f"run.py: {log.torn}", file=sys.stderr)
    result = summary.summarize(log.documents, env.get("plan") or {})
    atomicio.write_json(folder / SUMMARY, result)
    atomicio.write_text(folder / TABLES_MD, tables.markdown(result))
    atomicio.write_text(folder / TABLES_CSV, tables.csv_text(result))
    return result
