"""The run folder: its file names, making one, `latest`, finding one from a
path, reading it, and the key every reader groups its documents by.

    results/runs/<timestamp>[-suffix]/
        raw.jsonl   every document, one per line, appended as each cell finishes
        env.json    the machine, the command line, the options and the plan
        summary.json, tables.md, tables.csv   derived from the two above only
    results/runs/latest -> the newest run folder

Every command that reads a run (summary, compare, merge, reproduce, plots)
reads it through load(): one reader of raw.jsonl (heaplab.rawlog's policy),
one cell key (CellKey, never a string parsed back), one rule for the
machines a folder's documents may come from (same_machine).
"""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from . import atomicio, rawlog

RAW = "raw.jsonl"
ENV = "env.json"
SUMMARY = "summary.json"
TABLES_MD = "tables.md"
TABLES_CSV = "tables.csv"
MERGE = "merge.json"
LATEST = "latest"
OK = "ok"


class RunFolderError(ValueError):
    """Bad input: a run folder that is missing, unreadable or inconsistent.
    str(error) is one line naming the problem."""


# ------------------------------------------------------------------ the key

@dataclass(frozen=True, order=True)
class CellKey:
    """What a cell is: one workload (with the parameters the user set for
    it) at one thread count on one allocator. Repetitions of a cell share
    the key; every reader groups documents by it."""
    workload: str
    threads: int
    allocator: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def row(self) -> tuple[str, int]:
        """(workload, threads): a row of the tables, a column per allocator."""
        return (self.workload, self.threads)

    def label(self) -> str:
        """'workload/allocator/Nt', the "cell" text stored for people to read."""
        return f"{self.workload}/{self.allocator}/{self.threads}t"

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "threads": self.threads,
                "allocator": self.allocator, "params": dict(self.params)}

    def with_allocator(self, allocator: str) -> "CellKey":
        return CellKey(self.workload, self.threads, allocator, self.params)


# the driver stores each document's key under this name (see key_of)
KEY_FIELD = "key"


def number(value: Any) -> float | None:
    """A document's figure as a float: an int or float (never a bool), else
    None (absent, null, text). Every reader of documents asks this."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _legacy_threads(label: Any) -> int | None:
    """Folders written before documents carried their key have only the
    label 'workload/allocator/Nt': its N is the driver's thread count."""
    if not isinstance(label, str) or not label.endswith("t"):
        return None
    tail = label[:-1].rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _stored(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    stored = doc.get(KEY_FIELD)
    if isinstance(stored, Mapping) and isinstance(stored.get("workload"), str) \
            and isinstance(stored.get("allocator"), str) and _int(stored.get("threads")):
        return stored
    return None


def threads_of(doc: Mapping[str, Any]) -> int | None:
    """A document's thread count: the driver's (the plan's), which its
    stored key holds; for a document without one (the runner's own, or an
    old folder's) its workload's threads. None when nothing says."""
    stored = _stored(doc)
    if stored is not None:
        return int(stored["threads"])
    threads = _legacy_threads(doc.get("cell"))
    workload = doc.get("workload")
    if threads is None and isinstance(workload, Mapping):
        threads = _int(workload.get("threads"))
    return threads if threads is not None else _int(doc.get("threads"))


def key_of(doc: Mapping[str, Any]) -> CellKey | None:
    """The cell a document belongs to, or None when it names no workload or
    allocator (threads_of(); 1 when nothing says)."""
    stored = _stored(doc)
    if stored is not None:
        params = stored.get("params") if isinstance(stored.get("params"), Mapping) else {}
        return CellKey(stored["workload"], int(stored["threads"]), stored["allocator"],
                       tuple(sorted(params.items())))
    workload = doc.get("workload")
    allocator = doc.get("allocator")
    w = workload.get("name") if isinstance(workload, Mapping) else workload
    a = allocator.get("name") if isinstance(allocator, Mapping) else allocator
    if not isinstance(w, str) or not w or not isinstance(a, str) or not a:
        return None
    return CellKey(w, threads_of(doc) or 1, a)


def stamp(doc: dict[str, Any], key: CellKey, rep: int) -> dict[str, Any]:
    """Marks a document as repetition `rep` of cell `key` before it is stored."""
    doc["rep"] = rep
    doc["cell"] = key.label()
    doc[KEY_FIELD] = key.to_json()
    return doc


# ----------------------------------------------------------------- failures

def failure_label(doc: Mapping[str, Any]) -> str:
    """How a failed document reads in a table cell."""
    if doc.get("cell_label"):
        return str(doc["cell_label"])
    status = doc.get("status")
    if status == "crashed":
        if doc.get("signal"):
            return f"crashed ({doc['signal']})"
        return f"crashed (exit {doc.get('exit_code')})"
    if status == "timeout":
        return "timeout"
    if status == "error":
        return "error"
    return str(status)



@dataclass(frozen=True)
class Failure:
    """A repetition that gave no figures: its number, status ("crashed",
    "timeout", "error", ...), how a table cell says it, and the runner's
    error message."""
    rep: Any
    status: Any
    label: str
    error: Any

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> "Failure":
        return cls(doc.get("rep"), doc.get("status"), failure_label(doc), doc.get("error"))

    def to_json(self) -> dict[str, Any]:
        return {"rep": self.rep, "status": self.status, "label": self.label, "error": self.error}


# ----------------------------------------------------------------- machines

# The env keys that say which machine a document came from: timings taken on
# machines that differ in any of them are not comparable.
MACHINE_KEYS = ("hostname", "cpu_model", "cores")
# Metrics that do not depend on the machine's speed (counted, not timed).
MACHINE_INDEPENDENT_METRICS = frozenset({"instructions"})

MachineId = tuple[Any, ...]


def machine_id(env: Mapping[str, Any] | None) -> MachineId | None:
    """The machine a run came from, as (hostname, cpu_model, cores), or None
    when `env` says nothing about it (e.g. a crashed cell's stand-in). Reads
    a document's env, or an env.json that nests the keys under "machine"."""
    if not env:
        return None
    if isinstance(env.get("machine"), Mapping):
        env = env["machine"]
    ident = tuple(env.get(k).strip() if isinstance(env.get(k), str) else env.get(k)
                  for k in MACHINE_KEYS)
    return None if all(v is None for v in ident) else ident


def same_machine(a: MachineId, b: MachineId) -> bool:
    """True unless a key known on both sides differs (an unknown value,
    None, is not held against a run)."""
    return all(va == vb for va, vb in zip(a, b) if va is not None and vb is not None)


def describe_machine(ident: MachineId | None) -> str:
    """`host 'a', cpu 'X', 2 cores` for messages."""
    if ident is None:
        return "unknown machine"
    host, cpu, cores = ident
    return f"host {host!r}, cpu {cpu!r}, {cores} cores"


def distinct_machines(idents: Iterable[MachineId | None]) -> list[MachineId]:
    """The machines among `idents`, one per group of same_machine ones, in
    first-seen order."""
    seen: list[MachineId] = []
    for ident in idents:
        if ident is not None and not any(same_machine(ident, s) for s in seen):
            seen.append(ident)
    return seen


def machine_difference(a: MachineId, b: MachineId) -> str:
    """`hostname 'x' vs 'y'; cores 2 vs 4`: the keys on which two machines differ."""
    parts = [f"{key} {va!r} vs {vb!r}" for key, va, vb in zip(MACHINE_KEYS, a, b)
             if va is not None and vb is not None and va != vb]
    return "; ".join(parts)


def counts_instructions(doc: Mapping[str, Any]) -> bool:
    """True when a document's figures may sit beside another machine's: a
    failed cell (it has no figures) or one whose primary metric is an
    instruction count."""
    if doc.get("status") != OK:
        return True
    return doc.get("primary") in MACHINE_INDEPENDENT_METRICS


# ---------------------------------------------------------------- the folder

@dataclass
class RunFolder:
    """A run folder as read from disk.

    documents: every line of raw.jsonl, in file order (failed cells included).
    env: env.json, or {} when the folder has none.
    torn: what heaplab.rawlog said about a torn last line, or None.
    """

    path: pathlib.Path
    documents: list[dict[str, Any]] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)
    torn: str | None = None

    def machines(self) -> list[MachineId]:
        """Distinct machines the run's documents were measured on (more than
        one means the run mixes machines). The runner's own env in each
        document counts; env.json only when no document has an env."""
        found = distinct_machines(machine_id(d.get("env")) for d in self.documents)
        return found or distinct_machines([machine_id(self.env)])

    def add(self, documents: Iterable[dict[str, Any]], force: bool = False) -> None:
        """Adds documents to this run, refusing (RunFolderError) timings
        measured on another machine than the run's own unless force: a run's
        figures must compare with each other."""
        new = list(documents)
        if not force:
            mine = self.machines()
            for doc in new:
                theirs = machine_id(doc.get("env"))
                if mine and theirs is not None and not same_machine(mine[0], theirs) \
                        and not counts_instructions(doc):
                    raise RunFolderError(
                        f"refusing to mix timings from different machines "
                        f"({machine_difference(mine[0], theirs)}); only instruction counts "
                        f"mix across machines (or pass --force)")
                if theirs is not None and not mine:
                    mine = [theirs]
        self.documents += new


def machines_of(run: RunFolder) -> list[MachineId]:
    return run.machines()


def utc_stamp(now: datetime.datetime | None = None) -> str:
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y%m%d-%H%M%S")


def create(parent: pathlib.Path, suffix: str = "", raw: bool = True) -> pathlib.Path:
    """Makes a new run folder under `parent` (never reuses one), named by
    the UTC time and `suffix` (-2, -3, ... when that exists), holding an
    empty raw.jsonl unless `raw` is False (gbench keeps reports instead)."""
    parent.mkdir(parents=True, exist_ok=True)
    base = utc_stamp() + (f"-{suffix}" if suffix else "")
    for attempt in range(1, 1000):
        folder = parent / (base if attempt == 1 else f"{base}-{attempt}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        if raw:
            (folder / RAW).touch()
        return folder
    raise RuntimeError(f"cannot create a run folder under {parent}")


def point_latest(folder: pathlib.Path) -> None:
    atomicio.replace_symlink(folder.parent / LATEST, folder.name)


def is_run_folder(path: pathlib.Path) -> bool:
    """A folder `run`, `reproduce`, `merge` or `gbench` wrote."""
    return (path / RAW).is_file() or any(path.glob("gbench-*.json"))


def resolve(given: str | os.PathLike[str]) -> pathlib.Path:
    """The run folder a command-line path names: the folder itself, or a
    parent of run folders (`--out DIR`) through its `latest`, or the one run
    folder it holds. RunFolderError (one line) otherwise."""
    path = pathlib.Path(given)
    if not path.exists():
        raise RunFolderError(f"{path}: no such run folder")
    if path.is_file():
        if path.name.endswith(".jsonl"):
            return path
        raise RunFolderError(f"{path}: not a run folder")
    if is_run_folder(path):
        return path
    latest = path / LATEST
    if latest.is_dir() and is_run_folder(latest):
        return latest.resolve()   # the folder itself: `latest` may move on
    runs = sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink() and is_run_folder(p))
    if len(runs) == 1:
        return runs[0]
    if runs:
        raise RunFolderError(f"{path}: holds {len(runs)} run folders and no '{LATEST}'; "
                             f"name one, e.g. {runs[-1]}")
    raise RunFolderError(f"{path}: not a run folder (no {RAW}, no '{LATEST}', no run folder inside)")


def read_raw(path: pathlib.Path, warn: bool = True) -> rawlog.RawLog:
    """raw.jsonl's documents (rawlog's policy); RunFolderError when damaged
    anywhere but its last line. The torn last line is said on stderr."""
    try:
        log = rawlog.read(path)
    except rawlog.RawLogError as exc:
        raise RunFolderError(str(exc)) from None
    if log.torn and warn:
        print(f"run.py: {log.torn}", file=sys.stderr)
    return log


def read_json_object(path: pathlib.Path) -> dict[str, Any]:
    """A file holding one JSON object (env.json, summary.json, merge.json, a
    ci folder's summary); RunFolderError (one line) when it cannot be read
    or holds something else."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(loaded, dict):
        raise RunFolderError(f"{path}: must hold a JSON object")
    return loaded


def read_env(folder: pathlib.Path) -> dict[str, Any]:
    """env.json, {} when there is none; RunFolderError when unreadable."""
    env_path = folder / ENV
    return read_json_object(env_path) if env_path.is_file() else {}


def load(given: str | os.PathLike[str], warn: bool = True) -> RunFolder:
    """Reads a run folder (see resolve(); a raw.jsonl file given directly
    too). A gbench folder's reports become documents (heaplab.gbench_reports).
    Raises RunFolderError on anything missing or malformed."""
    path = resolve(given)
    if path.is_file():
        folder, raw = path.parent, path
    else:
        folder, raw = path, path / RAW
    if not raw.is_file():
        from . import gbench_reports  # a gbench folder: reports, not raw.jsonl
        return RunFolder(path=folder, documents=gbench_reports.documents(folder),
                         env=read_env(folder))
    log = read_raw(raw, warn)
    return RunFolder(path=folder, documents=log.documents, env=read_env(folder), torn=log.torn)
