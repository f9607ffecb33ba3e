"""Writes the run folders that the compare/merge tests read (fixtures/).

Every value comes from a fixed seed (random.Random(seed).random(), whose
sequence Python keeps stable for integer seeds), so running this again gives
the same bytes; test_fixtures.py checks that. Run:

    /usr/bin/python3 tests/compare/make_fixtures.py

The folders, and what each is for:
  base           machine A; 3 workloads x 3 allocators x 9 repetitions, 1% noise
  rerun          base's true values, fresh noise: every cell "unchanged"
  slower         heaplab 20% slower (ns up, throughput down), mimalloc 20% faster
  noisy-base     30% noise, no real change between the two: medians still
  noisy-new      drift apart by more than 5%, which must read "not significant"
  other-machine  rerun, but on machine B
  few-reps       base's true values with 5 repetitions
  crashed        rerun, with heaplab/tmalloc-mt-64 crashing in every repetition
                 and one timeout of system/tmalloc-st-64
  instr-a        instruction counts (primary "instructions") on machine A
  instr-b        the same on machine B, heaplab/tmalloc-st-64 10% more
  slower-30      base's true values with heaplab 30% slower, 1% noise
  noisy-slower   noisy-base's noise (30%), heaplab 30% slower: a shift too
                 small for 9 noisy repetitions to show
  drifting       one run whose host slows down steadily, by 60% from the
                 first repetition to the last, for every allocator alike
                 (1% noise of their own); heaplab 10% slower than system
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any, Callable

FIXTURES = Path(__file__).resolve().parent / "fixtures"

MACHINE_A = {"hostname": "runner-a", "cpu_model": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
             "cores": 2, "kernel": "6.1.0-18-amd64", "glibc": "2.36", "compiler": "gcc 12.2.0",
             "git_commit": "0000000", "build_type": "Release", "page_size": 4096}
MACHINE_B = dict(MACHINE_A, hostname="runner-b",
                 cpu_model="AMD EPYC 7763 64-Core Processor", cores=4)

# (workload, group, threads, metric, unit, better)
WORKLOADS = [
    ("tmalloc-st-64", "tmalloc", 1, "ns_per_pair", "ns", "lower"),
    ("tmalloc-mt-64", "tmalloc", 2, "ns_per_pair", "ns", "lower"),
    ("kevy-throughput", "kevy", 2, "mops", "Mops/s", "higher"),
]
ALLOCATORS = ["heaplab", "mimalloc", "system"]

# The true value of every cell's primary metric. heaplab is within 2% of
# system and mimalloc 30% better, which the --baseline-alloc tests rely on.
TRUE_VALUE = {
    ("tmalloc-st-64", "system"): 50.0, ("tmalloc-st-64", "mimalloc"): 35.0,
    ("tmalloc-st-64", "heaplab"): 49.0,
    ("tmalloc-mt-64", "system"): 80.0, ("tmalloc-mt-64", "mimalloc"): 56.0,
    ("tmalloc-mt-64", "heaplab"): 81.0,
    ("kevy-throughput", "system"): 10.0, ("kevy-throughput", "mimalloc"): 13.0,
    ("kevy-throughput", "heaplab"): 10.2,
}
# Instructions per cell in instruction-count runs.
TRUE_INSTRUCTIONS = {key: int(value * 1_000_000) for key, value in TRUE_VALUE.items()}

REPETITIONS = 9
DECIMALS = 4
# How many instructions a count wobbles by from run to run.
INSTRUCTION_WOBBLE = 500

Factor = Callable[[str, str], float]


def no_change(_workload: str, _allocator: str) -> float:
    return 1.0


def slower_change(workload: str, allocator: str) -> float:
    """heaplab 20% worse everywhere, mimalloc 20% better on two cells; the
    factor multiplies the value, so for throughput (higher is better) 0.8
    is worse."""
    better = {"lower": 0.8, "higher": 1.2}
    worse = {"lower": 1.2, "higher": 0.8}
    direction = next(w[5] for w in WORKLOADS if w[0] == workload)
    if allocator == "heaplab":
        return worse[direction]
    if allocator == "mimalloc" and workload in ("tmalloc-st-64", "kevy-throughput"):
        return better[direction]
    return 1.0


def document(workload: tuple, allocator: str, rep: int, value: float, env: dict[str, Any],
             metrics: dict[str, Any] | None = None, primary: str | None = None) -> dict[str, Any]:
    name, group, threads, metric, unit, better = workload
    return {
        "schema": "heaplab.run/1", "status": "ok", "error": None,
        "workload": {"name": name, "group": group, "kind": "builtin", "source": None,
                     "describe": f"fixture workload {name}", "params": {"pairs": 1000},
                     "threads": threads, "seed": 1},
        "allocator": {"name": allocator, "version": "fixture", "library": None, "hooks": {}},
        "primary": primary or metric,
        "metrics": metrics or {metric: {"value": value, "unit": unit, "better": better}},
        "phases": [], "samples": [], "env": env,
        "rep": rep, "cell": f"{name}/{threads}/{allocator}",
    }


def failed_document(workload: tuple, allocator: str, rep: int, status: str) -> dict[str, Any]:
    name, _group, threads, *_ = workload
    doc: dict[str, Any] = {"schema": "heaplab.run/1", "status": status,
                           "workload": {"name": name, "threads": threads},
                           "allocator": {"name": allocator},
                           "stderr": f"fixture: {status}", "rep": rep,
                           "cell": f"{name}/{threads}/{allocator}"}
    if status == "crashed":
        doc["signal"] = 11
    return doc


def timing_run(seed: int, env: dict[str, Any], noise: float, factor: Factor = no_change,
               reps: int = REPETITIONS) -> list[dict[str, Any]]:
    """Documents of a timing run: every cell's true value times factor,
    spread uniformly by +-noise."""
    rng = random.Random(seed)
    docs = []
    for rep in range(reps):
        for workload in WORKLOADS:
            for allocator in ALLOCATORS:
                true = TRUE_VALUE[(workload[0], allocator)] * factor(workload[0], allocator)
                value = round(true * (1 + noise * (2 * rng.random() - 1)), DECIMALS)
                docs.append(document(workload, allocator, rep, value, env))
    return docs


def instruction_run(seed: int, env: dict[str, Any], factor: Factor = no_change
                    ) -> list[dict[str, Any]]:
    """Documents of a `--metric instructions` run: instruction counts that
    wobble by a few hundred (as valgrind's do), timings taken under valgrind."""
    rng = random.Random(seed)
    docs = []
    for rep in range(REPETITIONS):
        for workload in WORKLOADS:
            for allocator in ALLOCATORS:
                name, _group, _threads, metric, unit, better = workload
                count = int(TRUE_INSTRUCTIONS[(name, allocator)] * factor(name, allocator))
                count += int(rng.random() * INSTRUCTION_WOBBLE)
                slowed = round(TRUE_VALUE[(name, allocator)] * 50 * (1 + 0.1 * rng.random()), DECIMALS)
                metrics = {metric: {"value": slowed, "unit": unit, "better": better},
                           "instructions": {"value": count, "unit": "instructions", "better": "lower"}}
                docs.append(document(workload, allocator, rep, slowed, env, metrics, "instructions"))
    return docs


def thirty_percent_slower_heaplab(workload: str, allocator: str) -> float:
    direction = next(w[5] for w in WORKLOADS if w[0] == workload)
    if allocator != "heaplab":
        return 1.0
    return 1.3 if direction == "lower" else 1 / 1.3


# How much slower the host is at the last repetition of the drifting run
# than at the first (every allocator alike: they share the host).
SHARED_DRIFT = 0.6
PAIRED_GAP = 1.1   # heaplab's cost over system's in the drifting run


def drifting_run(seed: int, env: dict[str, Any], noise: float = 0.01) -> list[dict[str, Any]]:
    """Interleaved repetitions on a host that slows down steadily: rep k of
    every cell is slowed by the same factor, 1 + SHARED_DRIFT * k / (reps - 1),
    and then spread by +-noise of its own. heaplab costs PAIRED_GAP times
    system, mimalloc what TRUE_VALUE says."""
    rng = random.Random(seed)
    docs = []
    for rep in range(REPETITIONS):
        host = 1 + SHARED_DRIFT * rep / (REPETITIONS - 1)
        for workload in WORKLOADS:
            direction = workload[5]
            for allocator in ALLOCATORS:
                true = TRUE_VALUE[(workload[0], allocator)]
                if allocator == "heaplab":
                    system = TRUE_VALUE[(workload[0], "system")]
                    true = system * PAIRED_GAP if direction == "lower" else system / PAIRED_GAP
                slowed = true * host if direction == "lower" else true / host
                value = round(slowed * (1 + noise * (2 * rng.random() - 1)), DECIMALS)
                docs.append(document(workload, allocator, rep, value, env))
    return docs


def ten_percent_more_heaplab_st(workload: str, allocator: str) -> float:
    return 1.1 if (workload, allocator) == ("tmalloc-st-64", "heaplab") else 1.0


def crashed_run() -> list[dict[str, Any]]:
    docs = []
    for doc in timing_run(8, MACHINE_A, 0.01):
        key = (doc["workload"]["name"], doc["allocator"]["name"])
        workload = next(w for w in WORKLOADS if w[0] == key[0])
        if key == ("tmalloc-mt-64", "heaplab"):
            doc = failed_document(workload, key[1], doc["rep"], "crashed")
        elif key == ("tmalloc-st-64", "system") and doc["rep"] == 0:
            doc = failed_document(workload, key[1], doc["rep"], "timeout")
        docs.append(doc)
    return docs


def fixture_runs() -> dict[str, tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Folder name -> (documents, env.json)."""
    return {
        "base": (timing_run(1, MACHINE_A, 0.01), MACHINE_A),
        "rerun": (timing_run(2, MACHINE_A, 0.01), MACHINE_A),
        "slower": (timing_run(3, MACHINE_A, 0.01, slower_change), MACHINE_A),
        "noisy-base": (timing_run(4, MACHINE_A, 0.30), MACHINE_A),
        "noisy-new": (timing_run(5, MACHINE_A, 0.30), MACHINE_A),
        "other-machine": (timing_run(6, MACHINE_B, 0.01), MACHINE_B),
        "few-reps": (timing_run(7, MACHINE_A, 0.01, reps=5), MACHINE_A),
        "crashed": (crashed_run(), MACHINE_A),
        "instr-a": (instruction_run(9, MACHINE_A), MACHINE_A),
        "instr-b": (instruction_run(10, MACHINE_B, ten_percent_more_heaplab_st), MACHINE_B),
        "slower-30": (timing_run(11, MACHINE_A, 0.01, thirty_percent_slower_heaplab), MACHINE_A),
        "noisy-slower": (timing_run(12, MACHINE_A, 0.30, thirty_percent_slower_heaplab), MACHINE_A),
        "drifting": (drifting_run(13, MACHINE_A), MACHINE_A),
    }


def render(documents: list[dict[str, Any]], env: dict[str, Any]) -> dict[str, str]:
    """File name -> text, exactly as written."""
    return {"raw.jsonl": "".join(json.dumps(d) + "\n" for d in documents),
            "env.json": json.dumps(env, indent=2) + "\n"}


def build_fixtures(root: Path = FIXTURES) -> list[Path]:
    """Writes every fixture folder under root; returns the files written."""
    written = []
    for folder, (documents, env) in fixture_runs().items():
        target = root / folder
        target.mkdir(parents=True, exist_ok=True)
        for name, text in render(documents, env).items():
            (target / name).write_text(text, encoding="utf-8")
            written.append(target / name)
    return written


if __name__ == "__main__":
    files = build_fixtures(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES)
    print(f"wrote {len(files)} files under {files[0].parent.parent}")
