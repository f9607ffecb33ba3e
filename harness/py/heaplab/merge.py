"""join shard run folders into one run folder

Run folders: reading them, telling their machines apart, sharding the
matrix, and merging shard folders back into one run (`./run.py merge`).

A run folder holds `raw.jsonl` (one "heaplab.run/1" document per line, with
"rep" and "cell" added by run.py) and `env.json` (the machine it ran on).
Timing figures from different machines cannot be mixed, so a merge of shards
that ran on different machines is refused unless every document carries an
instruction count (metric "instructions", machine-independent enough).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Sequence
from . import rawlog

RAW_FILE = "raw.jsonl"
ENV_FILE = "env.json"
MERGE_FILE = "merge.json"
MERGE_SCHEMA = "heaplab.merge/1"

# The env keys that say which machine a document came from: timings taken on
# machines that differ in any of them are not comparable.
MACHINE_KEYS = ("hostname", "cpu_model", "cores")

# Metrics that do not depend on the machine's speed (counted, not timed).
MACHINE_INDEPENDENT_METRICS = frozenset({"instructions"})

OK_STATUS = "ok"


class RunFolderError(ValueError):
    """Bad input: a run folder that is missing, unreadable or inconsistent.
    str(error) is one line naming the problem."""


@dataclass
class RunFolder:
    """A run folder as read from disk.

    documents: every line of raw.jsonl, in file order (failed cells included).
    env: env.json, or {} when the folder has none.
    """

    path: Path
    documents: list[dict[str, Any]]
    env: dict[str, Any] = field(default_factory=dict)


MachineId = tuple[Any, ...]


def machine_id(env: dict[str, Any] | None) -> MachineId | None:
    """The machine a run came from, as (hostname, cpu_model, cores), or None
    when `env` says nothing about it (e.g. a crashed cell's stand-in). Reads
    a document's env, or an env.json that nests the keys under "machine"."""
    if not env:
        return None
    if isinstance(env.get("machine"), dict):
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


def machines_of(run: RunFolder) -> list[MachineId]:
    """Distinct machines the run's documents were measured on (more than one
    means the run mixes machines). The runner's own env in each document is
    what counts; env.json (written by run.py, which may describe the machine
    in other words) is used only when no document has an env."""
    found = distinct_machines(machine_id(d.get("env")) for d in run.documents)
    return found or distinct_machines([machine_id(run.env)])


def machine_difference(a: MachineId, b: MachineId) -> str:
    """`hostname 'x' vs 'y'; cores 2 vs 4`: the keys on which two machines differ."""
    parts = [f"{key} {va!r} vs {vb!r}" for key, va, vb in zip(MACHINE_KEYS, a, b)
             if va is not None and vb is not None and va != vb]
    return "; ".join(parts)


def read_raw_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every document of a raw.jsonl file (heaplab.rawlog: a torn last line
    is left out and reported on stderr); any other line that is not a JSON
    object raises RunFolderError naming file and line."""
    try:
        log = rawlog.read(path)
    except rawlog.RawLogError as exc:
        raise RunFolderError(str(exc)) from None
    if log.torn:
        print(f"run.py: {log.torn}", file=sys.stderr)
    return log.documents


def load_run_folder(path: str | os.PathLike[str]) -> RunFolder:
    """Reads a run folder (or a raw.jsonl file given directly).
    Raises RunFolderError on anything missing or malformed."""
    given = Path(path)
    if given.is_file() and given.name.endswith(".jsonl"):
        folder, raw = given.parent, given
    elif given.is_dir():
        folder, raw = given, given / RAW_FILE
        if not raw.is_file():
            raise RunFolderError(f"{given}: not a run folder (no {RAW_FILE})")
    else:
        raise RunFolderError(f"{given}: no such run folder")
    documents = read_raw_jsonl(raw)
    env: dict[str, Any] = {}
    env_path = folder / ENV_FILE
    if env_path.is_file():
        try:
            loaded = json.loads(env_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunFolderError(f"{env_path}: not valid JSON ({exc})") from None
        if not isinstance(loaded, dict):
            raise RunFolderError(f"{env_path}: must hold a JSON object")
        env = loaded
    return RunFolder(path=folder, documents=documents, env=env)


# --- sharding ---------------------------------------------------------------

def canonical_key(cell: Any) -> str:
    """A text form of a cell that is the same for equal cells whatever their
    Python type (tuple or list, dict key order), used to order and identify
    them. Only JSON values (str, numbers, lists, dicts) are accepted: the text
    of other objects may change from one process to the next."""
    try:
        return json.dumps(cell, sort_keys=True, separators=(",", ":"))
    except TypeError:
        raise TypeError(f"cell {cell!r} is not a JSON value; pass key= to shard_of") from None


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N) with 1 <= K <= N; ValueError with a one-line message otherwise."""
    parts = text.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--shard {text!r}: expected K/N, e.g. 2/4")
    k, n = int(parts[0]), int(parts[1])
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"--shard {text!r}: K must be between 1 and N (N >= 1)")
    return k, n


def shard_of(cells: Sequence[Any], k: int, n: int,
             key: Callable[[Any], Any] | None = None) -> list[Any]:
    """The cells shard k of n runs (k counts from 1), in their given order.

    Each cell is identified by key(cell) (default: the cell itself), which
    must be a JSON value such as run.py's "workload/allocator/Nt" string. The
    distinct keys are sorted and dealt round-robin, so for a given cell set
    the shards are deterministic (whatever the input order or process), of
    sizes differing by at most one, and shards 1..n partition it. Cells with
    equal keys land in the same shard.
    """
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"shard {k}/{n}: K must be between 1 and N (N >= 1)")
    identify = (lambda c: canonical_key(key(c))) if key else canonical_key
    keys = [identify(c) for c in cells]
    mine = {ident for position, ident in enumerate(sorted(set(keys))) if position % n == k - 1}
    return [c for c, ident in zip(cells, keys) if ident in mine]


# --- merging ----------------------------------------------------------------

def document_cell(doc: dict[str, Any]) -> Hashable:
    """The cell a document belongs to: run.py's "cell" key when present,
    else (workload name, threads, allocator name)."""
    if "cell" in doc:
        return canonical_key(doc["cell"])
    workload = doc.get("workload") or {}
    allocator = doc.get("allocator") or {}
    return canonical_key([workload.get("name"), workload.get("threads"), allocator.get("name")])


def counts_instructions(doc: dict[str, Any]) -> bool:
    """True when a document's figures may be merged across machines: a failed
    cell (it has no figures) or one whose primary metric is an instruction
    count (a `--metric instructions` run; its timings were taken under
    valgrind and are not the point)."""
    if doc.get("status") != OK_STATUS:
        return True
    return doc.get("primary") in MACHINE_INDEPENDENT_METRICS


@dataclass
class MergeResult:
    """What merge_runs wrote: the documents kept, how many duplicates of a
    (cell, rep) were dropped, and the machines seen."""

    out: Path
    documents: list[dict[str, Any]]
    duplicates_dropped: int
    machines: list[MachineId]
    sources: list[Path]


def _prefer(current: dict[str, Any], candidate: dict[str, Any]) -> bool:
    """For two documents of one (cell, rep): keep the first, unless the first
    failed and the later one (a retried shard) succeeded."""
    return current.get("status") != OK_STATUS and candidate.get("status") == OK_STATUS


def merge_documents(runs: Sequence[RunFolder], force: bool = False
                    ) -> tuple[list[dict[str, Any]], int, list[MachineId]]:
    """Joins the runs' documents, keeping one per (cell, rep) in first-seen
    order (see _prefer). Raises RunFolderError when the runs come from
    different machines and some document is a timing (not an instruction
    count), unless force is set."""
    machines = distinct_machines(ident for run in runs for ident in machines_of(run))
    if len(machines) > 1 and not force:
        timing = [(run, doc) for run in runs for doc in run.documents if not counts_instructions(doc)]
        if timing:
            raise RunFolderError(
                f"refusing to merge timings from different machines "
                f"({machine_difference(machines[0], machines[1])}); "
                f"only instruction counts merge across machines (or pass --force)")
    if not force:
        refuse_mixed_runs(runs)
    kept: dict[tuple[Hashable, Any], int] = {}
    documents: list[dict[str, Any]] = []
    dropped = 0
    for run in runs:
        for number, doc in enumerate(run.documents, start=1):
            if "rep" not in doc:
                raise RunFolderError(f"{run.path / RAW_FILE}: document {number} has no 'rep'")
            key = (document_cell(doc), doc["rep"])
            if key not in kept:
                kept[key] = len(documents)
                documents.append(doc)
                continue
            dropped += 1
            if _prefer(documents[kept[key]], doc):
                documents[kept[key]] = doc
    return documents, dropped, machines


def _params_of(doc: dict[str, Any]) -> tuple[tuple[str, Any], ...] | None:
    params = (doc.get("workload") or {}).get("params")
    return tuple(sorted(params.items())) if isinstance(params, dict) else None


def refuse_mixed_runs(runs: Sequence[RunFolder]) -> None:
    """Shards of one run share their sizes and repetitions: RunFolderError
    when a workload ran with other parameters in one run than in another
    (--quick/--full, --param) or the runs asked for different --reps, as
    compare refuses cells of different parameters."""
    reps = {run.path: (run.env.get("options") or {}).get("reps") for run in runs}
    asked = sorted({r for r in reps.values() if isinstance(r, int)})
    if len(asked) > 1:
        raise RunFolderError(f"refusing to merge runs of different --reps ({', '.join(map(str, asked))}); "
                             f"pass --force to merge them anyway")
    seen: dict[str, tuple[Path, tuple[tuple[str, Any], ...]]] = {}
    for run in runs:
        for doc in run.documents:
            name = (doc.get("workload") or {}).get("name")
            params = _params_of(doc)
            if not isinstance(name, str) or params is None:
                continue
            first = seen.setdefault(name, (run.path, params))
            if first[1] != params:
                differ = sorted({k for k, _ in set(first[1]) ^ set(params)})
                a, b = dict(first[1]), dict(params)
                said = ", ".join(f"{k}={a.get(k)} in {first[0]} but {b.get(k)} in {run.path}"
                                 for k in differ)
                raise RunFolderError(f"refusing to merge {name} run with different parameters "
                                     f"({said}: --quick/--full or --param differ); pass --force "
                                     f"to merge them anyway")


def _write_atomic(path: Path, text: str) -> None:
    """Writes through a temporary file and a rename, so a reader never sees
    half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def merge_plans(envs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """One plan for the merged run (what summaries and tables are built
    from): every shard's rows and allocators, first seen first, and the most
    repetitions any shard planned. None when no shard has a plan."""
    plans = [e["plan"] for e in envs if isinstance(e.get("plan"), dict)]
    if not plans:
        return None
    rows: list[dict[str, Any]] = []
    allocators: list[dict[str, Any]] = []
    seen_rows: set[tuple[Any, Any]] = set()
    seen_allocs: set[Any] = set()
    for plan in plans:
        for row in plan.get("rows") or []:
            key = (row.get("workload"), row.get("threads"))
            if key not in seen_rows:
                seen_rows.add(key)
                rows.append(row)
        for alloc in plan.get("allocators") or []:
            if alloc.get("name") not in seen_allocs:
                seen_allocs.add(alloc.get("name"))
                allocators.append(alloc)
    reps = max((p.get("reps") or 0 for p in plans), default=0)
    return {"reps": reps, "allocators": allocators, "rows": rows}


def merge_runs(dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str],
               force: bool = False) -> MergeResult:
    """Merges shard run folders into the run folder `out`: raw.jsonl joined
    (one document per (cell, rep)), env.json of the first folder that has one
    with the shards' plans joined, and merge.json recording the sources. Refuses an `out` that already holds
    a raw.jsonl, and timing data from different machines unless force."""
    if not dirs:
        raise RunFolderError("merge: give at least one run folder")
    out_path = Path(out)
    if (out_path / RAW_FILE).exists():
        raise RunFolderError(f"{out_path}: already holds a run ({RAW_FILE}); choose a new --out")
    runs = [load_run_folder(d) for d in dirs]
    paths = [r.path.resolve() for r in runs]
    if len(set(paths)) != len(paths):
        raise RunFolderError("merge: the same run folder is given twice")
    if out_path.resolve() in paths:
        raise RunFolderError(f"{out_path}: --out must not be one of the folders merged")
    documents, dropped, machines = merge_documents(runs, force)
    env = dict(next((r.env for r in runs if r.env), {}))
    plan = merge_plans([r.env for r in runs if r.env])
    if plan is not None:
        env["plan"] = plan
    out_path.mkdir(parents=True, exist_ok=True)
    _write_atomic(out_path / RAW_FILE,
                  "".join(json.dumps(d, sort_keys=False) + "\n" for d in documents))
    if env:
        _write_atomic(out_path / ENV_FILE, json.dumps(env, indent=2) + "\n")
    provenance = {
        "schema": MERGE_SCHEMA,
        "sources": [str(r.path) for r in runs],
        "documents": len(documents),
        "duplicates_dropped": dropped,
        "machines": [dict(zip(MACHINE_KEYS, m)) for m in machines],
        "forced": bool(force and len(machines) > 1),
    }
    _write_atomic(out_path / MERGE_FILE, json.dumps(provenance, indent=2) + "\n")
    return MergeResult(out=out_path, documents=documents, duplicates_dropped=dropped,
                       machines=machines, sources=[r.path for r in runs])


# --- command line -------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers `merge DIR... --out DIR [--force]` on a (sub)parser."""
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="shard run folders to merge")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="run folder to create with the merged documents")
    parser.add_argument("--force", action="store_true",
                        help="merge even when the shards ran on different machines, at other "
                             "sizes (--quick/--full, --param) or with other --reps")


def main(args: argparse.Namespace) -> int:
    """`./run.py merge`: 0 on success, 2 on bad input (one line on stderr)."""
    try:
        result = merge_runs(args.dirs, args.out, force=args.force)
    except RunFolderError as exc:
        print(f"merge: error: {exc}", file=sys.stderr)
        return 2
    cells = iter_cells(result.documents)
    # the same summary and tables a run writes (imported here: the merging
    # itself needs only the standard library)
    from . import rundir, tables
    print(tables.markdown(rundir.derive(result.out)))
    print(f"merged {len(result.sources)} run folders: {len(result.documents)} documents, "
          f"{len(cells)} cells, {result.duplicates_dropped} duplicates dropped -> {result.out}")
    if len(result.machines) > 1:
        print(f"merge: note: documents come from {len(result.machines)} machines",
              file=sys.stderr)
    from . import cmd_report
    cmd_report.finish(result.out)  # report.html, its path the last line
    return 0


def iter_cells(documents: Iterable[dict[str, Any]]) -> set[Hashable]:
    """The set of cells the documents cover (what a merge must preserve)."""
    return {document_cell(d) for d in documents}
