"""join shard run folders into one run folder

Merging shard run folders (heaplab.shards deals the cells) back into one
run (`./run.py merge DIR... --out PARENT`): one document per (cell, rep), the
shards' plans joined, merge.json recording the sources. Reading the folders,
their cell keys and machines is heaplab.runfolder's.
Timing figures from different machines cannot be mixed, so a merge of shards
that ran on different machines is refused unless every document carries an
instruction count (metric "instructions", machine-independent enough).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Hashable, Iterable, Sequence

from . import atomicio, report, rundir, runfolder, tables
from .shards import canonical_key, parse_shard, shard_of  # noqa: F401  (sharding, for its users)
# the run-folder model, by the names merge's users know
from .runfolder import (MACHINE_KEYS, MachineId, RunFolder, RunFolderError,  # noqa: F401
                        distinct_machines, machines_of, same_machine)

RAW_FILE = runfolder.RAW
ENV_FILE = runfolder.ENV
MERGE_FILE = runfolder.MERGE
MERGE_SCHEMA = "heaplab.merge/1"
MERGE_SUFFIX = "merge"
OK_STATUS = runfolder.OK


def load_run_folder(path: str | os.PathLike[str]) -> RunFolder:
    """runfolder.load: a run folder, a parent holding one (or its `latest`),
    or a raw.jsonl file. Raises RunFolderError on anything missing or malformed."""
    return runfolder.load(path)


# --- merging ----------------------------------------------------------------

def document_cell(doc: dict[str, Any]) -> Hashable:
    """The cell a document belongs to (runfolder.key_of)."""
    return runfolder.key_of(doc)


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
    # the model's rule for documents added to one run: no timings of two machines
    joined = RunFolder(Path("merged"))
    for run in runs:
        joined.add(run.documents, force)
    machines = distinct_machines(ident for run in runs for ident in machines_of(run))
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
    atomicio.write_text(out_path / RAW_FILE,
                  "".join(json.dumps(d, sort_keys=False) + "\n" for d in documents))
    if env:
        atomicio.write_text(out_path / ENV_FILE, json.dumps(env, indent=2) + "\n")
    provenance = {
        "schema": MERGE_SCHEMA,
        "sources": [str(r.path) for r in runs],
        "documents": len(documents),
        "duplicates_dropped": dropped,
        "machines": [dict(zip(MACHINE_KEYS, m)) for m in machines],
        "forced": bool(force and len(machines) > 1),
    }
    atomicio.write_text(out_path / MERGE_FILE, json.dumps(provenance, indent=2) + "\n")
    return MergeResult(out=out_path, documents=documents, duplicates_dropped=dropped,
                       machines=machines, sources=[r.path for r in runs])


# --- command line -------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Registers `merge DIR... --out DIR [--force]` on a (sub)parser."""
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="shard run folders to merge")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="parent of the merged run folder (a new <timestamp>-merge folder "
                             "is made in it and DIR/latest points at it), as for `run --out`")
    parser.add_argument("--force", action="store_true",
                        help="merge even when the shards ran on different machines, at other "
                             "sizes (--quick/--full, --param) or with other --reps")


def main(args: argparse.Namespace) -> int:
    """`./run.py merge`: 0 on success, 2 on bad input (one line on stderr)."""
    try:
        parent = Path(args.out)
        if (parent / RAW_FILE).exists():
            raise RunFolderError(f"{parent}: already holds a run ({RAW_FILE}); --out is the parent "
                                 f"of the merged run folder")
        sources = [runfolder.resolve(d) for d in args.dirs]
        if parent.resolve() in {s.resolve() for s in sources}:
            raise RunFolderError(f"{parent}: --out must not be one of the folders merged")
        # every refusal before the folder exists: nothing is left behind
        merge_documents([load_run_folder(s) for s in sources], args.force)
        folder = runfolder.create(parent, MERGE_SUFFIX, raw=False)
        result = merge_runs(sources, folder, force=args.force)
        runfolder.point_latest(folder)
    except RunFolderError as exc:
        print(f"merge: error: {exc}", file=sys.stderr)
        return 2
    cells = iter_cells(result.documents)
    print(tables.markdown(rundir.derive(result.out)))
    print(f"merged {len(result.sources)} run folders: {len(result.documents)} documents, "
          f"{len(cells)} cells, {result.duplicates_dropped} duplicates dropped -> {result.out}")
    if len(result.machines) > 1:
        print(f"merge: note: documents come from {len(result.machines)} machines",
              file=sys.stderr)
    report.finish(result.out)  # report.html, its path the last line
    return 0


def iter_cells(documents: Iterable[dict[str, Any]]) -> set[Hashable]:
    """The set of cells the documents cover (what a merge must preserve)."""
    return {document_cell(d) for d in documents}
