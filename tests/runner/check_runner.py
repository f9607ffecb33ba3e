#!/usr/bin/env python3
"""Drives a runner binary (heaplab-run or heaplab-run-testwl) the way run.py
does and checks what comes back: the document's shape ("heaplab.run/1"),
--list-json ("heaplab.list/1"), exit statuses and one-line errors.

Each subcommand is one ctest test; it prints what it found and exits 1 on the
first broken expectation. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

RUN_SCHEMA = "heaplab.run/1"
LIST_SCHEMA = "heaplab.list/1"

# Key -> accepted JSON types (None stands for null), from docs/schema.md.
RUN_TOP = {"schema": (str,), "status": (str,), "error": (str, type(None)),
           "workload": (dict,), "allocator": (dict,), "primary": (str,),
           "metrics": (dict,), "phases": (list,), "samples": (list,),
           "frees": (dict, type(None)), "operations": (int, type(None)),
           "process": (dict,), "env": (dict,)}
WORKLOAD_KEYS = {"name": (str,), "group": (str,), "kind": (str,),
                 "source": (str, type(None)), "describe": (str,), "params": (dict,),
                 "threads": (int,), "seed": (int,)}
ALLOCATOR_KEYS = {"name": (str,), "path": (str, type(None)), "version": (str,),
                  "library": (str,), "hooks": (dict,),
                  "stats_version": (int, type(None))}
HOOK_KEYS = ("free_sized", "stats", "trim", "thread_flush")
NUMBER = (int, float)
NUMBER_OR_NULL = (int, float, type(None))
PHASE_KEYS = {"name": (str,), "elapsed_ns": (int,), "ops": (int,),
              "rss_bytes": NUMBER_OR_NULL, "ws_above_start_bytes": NUMBER_OR_NULL,
              "live_bytes": (int,), "alloc_stats": (dict, type(None))}
SAMPLE_KEYS = {"t_ns": (int,), "ops": (int,), "rss_bytes": NUMBER_OR_NULL,
               "live_bytes": (int,)}
PROCESS_KEYS = {"wall_ns": (int,), "rss_start_bytes": NUMBER_OR_NULL,
                "peak_rss_bytes": NUMBER_OR_NULL, "minor_faults": (int,),
                "major_faults": (int,), "user_ns": (int,), "sys_ns": (int,)}
ENV_KEYS = {"hostname": (str, type(None)), "cpu_model": (str, type(None)),
            "cores": (int, type(None)), "kernel": (str, type(None)),
            "glibc": (str,), "compiler": (str,), "git_commit": (str, type(None)),
            "build_type": (str, type(None)), "page_size": (int, type(None))}
LIST_ALLOCATOR_KEYS = {"name": (str,), "available": (bool,),
                       "reason": (str, type(None)), "version": (str, type(None)),
                       "default": (bool,)}
LIST_WORKLOAD_KEYS = {"name": (str,), "group": (str,), "kind": (str,),
                      "source": (str, type(None)), "describe": (str,), "metric": (str,),
                      "unit": (str,), "better": (str,), "threaded": (bool,),
                      "default_threads": (int,), "params": (list,)}
LIST_PARAM_KEYS = {"name": (str,), "default": (int,), "quick": (int,), "min": (int,),
                   "max": (int,), "help": (str, type(None))}


class Broken(Exception):
    """An expectation that does not hold."""


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise Broken(what)


def check_keys(obj: Any, spec: dict[str, tuple[type, ...]], where: str) -> None:
    expect(isinstance(obj, dict), f"{where} is not an object")
    for key, types in spec.items():
        expect(key in obj, f"{where} has no '{key}'")
        value = obj[key]
        # bool is an int in Python; a count must not be true/false
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        expect(ok, f"{where}.{key} = {value!r} is not {[t.__name__ for t in types]}")


def validate_run_document(doc: Any) -> None:
    check_keys(doc, RUN_TOP, "document")
    expect(doc["schema"] == RUN_SCHEMA, f"schema is {doc['schema']!r}")
    expect(doc["status"] in ("ok", "error"), f"status is {doc['status']!r}")
    expect((doc["status"] == "ok") == (doc["error"] is None), "error must be set iff status is error")
    check_keys(doc["workload"], WORKLOAD_KEYS, "workload")
    expect(doc["workload"]["kind"] in ("builtin", "script", "program"), "workload.kind")
    for name, value in doc["workload"]["params"].items():
        expect(isinstance(value, int), f"workload.params.{name} is not an integer")
    check_keys(doc["allocator"], ALLOCATOR_KEYS, "allocator")
    for hook in HOOK_KEYS:
        expect(isinstance(doc["allocator"]["hooks"].get(hook), bool), f"allocator.hooks.{hook}")
    for name, metric in doc["metrics"].items():
        check_keys(metric, {"value": NUMBER_OR_NULL, "unit": (str,), "better": (str,)},
                   f"metrics.{name}")
        expect(metric["better"] in ("lower", "higher"), f"metrics.{name}.better")
    if doc["status"] == "ok":
        expect(doc["primary"] in doc["metrics"], "the primary metric is not among the metrics")
    for i, phase in enumerate(doc["phases"]):
        check_keys(phase, PHASE_KEYS, f"phases[{i}]")
        if phase["alloc_stats"] is not None:
            for key, value in phase["alloc_stats"].items():
                expect(isinstance(value, NUMBER), f"phases[{i}].alloc_stats.{key}")
    for i, sample in enumerate(doc["samples"]):
        check_keys(sample, SAMPLE_KEYS, f"samples[{i}]")
    check_keys(doc["process"], PROCESS_KEYS, "process")
    check_keys(doc["env"], ENV_KEYS, "env")


def run(binary: str, args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary, *args], capture_output=True, text=True, env=env, timeout=300)


def parse_document(proc: subprocess.CompletedProcess[str]) -> Any:
    lines = proc.stdout.splitlines()
    expect(len(lines) == 1, f"expected one line of JSON on stdout, got {len(lines)}; stderr: {proc.stderr.strip()}")
    return json.loads(lines[0])


def cmd_document(a: argparse.Namespace) -> None:
    """A run exits 0 and prints a valid "ok" document for this allocator."""
    proc = run(a.binary, ["--alloc", a.alloc, "--workload", a.workload, *a.extra])
    expect(proc.returncode == 0, f"exit {proc.returncode}, stderr: {proc.stderr.strip()}")
    doc = parse_document(proc)
    validate_run_document(doc)
    expect(doc["status"] == "ok", f"status {doc['status']}: {doc['error']}")
    alloc = doc["allocator"]
    # NAME=so:PATH is called NAME; every other allocator by what --alloc said
    name = a.expect_name if a.expect_name is not None else a.alloc
    expect(alloc["name"] == name, f"allocator.name is {alloc['name']!r}, not {name!r}")
    is_so = a.alloc.startswith("so:") or "=so:" in a.alloc
    expect(alloc["version"] not in ("", "unknown") or is_so,
           f"allocator.version is {alloc['version']!r}")
    expect((alloc["path"] is None) == (not is_so),
           f"allocator.path is {alloc['path']!r} for {a.alloc!r}")
    if a.expect_path is not None:
        expect(alloc["path"] == a.expect_path,
               f"allocator.path is {alloc['path']!r}, not {a.expect_path!r}")
    if a.expect_version:
        expect(a.expect_version in alloc["version"],
               f"allocator.version {alloc['version']!r} lacks {a.expect_version!r}")
    if a.expect_phases is not None:
        expect(len(doc["phases"]) == a.expect_phases,
               f"{len(doc['phases'])} phases, expected {a.expect_phases}")
    if a.expect_samples is not None:
        expect(len(doc["samples"]) == a.expect_samples,
               f"{len(doc['samples'])} samples, expected {a.expect_samples}")
    if alloc["name"] in ("heaplab", "heaplab-nocache"):
        expect(isinstance(alloc["stats_version"], int) and alloc["stats_version"] >= 1,
               f"heaplab's document carries no stats version ({alloc['stats_version']!r})")
    if a.expect_stats:
        expect(alloc["hooks"]["stats"], "allocator has no stats hook")
        expect(all(p["alloc_stats"] for p in doc["phases"]), "a phase has no alloc_stats")
    if a.expect_null_metric:
        expect(doc["metrics"].get(a.expect_null_metric, {}).get("value", 0) is None,
               f"metric {a.expect_null_metric} is not null")
    if a.expect_phase_name:
        # given with backslash escapes (\n, \t, \"), compared decoded
        wanted = a.expect_phase_name.encode().decode("unicode_escape")
        names = [p["name"] for p in doc["phases"]]
        expect(wanted in names, f"no phase named {wanted!r} in {names}")
    if a.expect_threads is not None:
        expect(doc["workload"]["threads"] == a.expect_threads, f"threads {doc['workload']['threads']}")
    if a.expect_operations is not None:
        expect(doc["operations"] == a.expect_operations,
               f"operations {doc['operations']}, not {a.expect_operations}")
    print(f"ok: {alloc['name']} {alloc['version']} ({alloc['library']}), "
          f"{doc['primary']} = {doc['metrics'][doc['primary']]['value']}")


def cmd_failed_run(a: argparse.Namespace) -> None:
    """The workload fails: exit 1, and the document still comes, with status error."""
    proc = run(a.binary, a.extra)
    expect(proc.returncode == 1, f"exit {proc.returncode}, expected 1; stderr: {proc.stderr.strip()}")
    doc = parse_document(proc)
    validate_run_document(doc)
    expect(doc["status"] == "error", f"status is {doc['status']!r}")
    expect(a.message in doc["error"], f"error {doc['error']!r} lacks {a.message!r}")
    expect(a.message in proc.stderr, f"stderr {proc.stderr!r} lacks {a.message!r}")
    print(f"ok: status error: {doc['error']}")


def cmd_bad_input(a: argparse.Namespace) -> None:
    """Bad command-line input: exit 2, no document, exactly one line on stderr."""
    proc = run(a.binary, a.extra)
    expect(proc.returncode == 2, f"exit {proc.returncode}, expected 2; stderr: {proc.stderr.strip()}")
    expect(proc.stdout == "", f"a document was printed: {proc.stdout[:200]!r}")
    lines = proc.stderr.splitlines()
    expect(len(lines) == 1, f"stderr has {len(lines)} lines: {proc.stderr!r}")
    expect(a.message in lines[0], f"stderr {lines[0]!r} lacks {a.message!r}")
    print(f"ok: {lines[0]}")


def validate_list(doc: Any) -> None:
    expect(doc.get("schema") == LIST_SCHEMA, f"schema is {doc.get('schema')!r}")
    for key in ("allocators", "workloads", "broken_scripts"):
        expect(isinstance(doc.get(key), list), f"'{key}' is not a list")
    for i, alloc in enumerate(doc["allocators"]):
        check_keys(alloc, LIST_ALLOCATOR_KEYS, f"allocators[{i}]")
        expect(alloc["available"] == (alloc["reason"] is None), f"allocators[{i}]: reason iff unavailable")
        expect(alloc["available"] == (alloc["version"] is not None), f"allocators[{i}]: version iff available")
    for i, wl in enumerate(doc["workloads"]):
        check_keys(wl, LIST_WORKLOAD_KEYS, f"workloads[{i}]")
        for k, p in enumerate(wl["params"]):
            check_keys(p, LIST_PARAM_KEYS, f"workloads[{i}].params[{k}]")
            expect(p["min"] <= p["default"] <= p["max"], f"{wl['name']}.{p['name']}: default outside range")
            expect(p["min"] <= p["quick"] <= p["max"], f"{wl['name']}.{p['name']}: quick outside range")
    for i, broken in enumerate(doc["broken_scripts"]):
        check_keys(broken, {"source": (str,), "error": (str,)}, f"broken_scripts[{i}]")


def cmd_list_json(a: argparse.Namespace) -> None:
    """--list-json parses and every installed allocator named is available."""
    args = ["--list-json", *a.extra]
    proc = run(a.binary, args)
    expect(proc.returncode == 0, f"exit {proc.returncode}; stderr: {proc.stderr.strip()}")
    doc = json.loads(proc.stdout)
    validate_list(doc)
    names = {x["name"]: x for x in doc["allocators"]}
    # the one baseline is listed, and a run that names no allocator skips it
    expect(names.get("floor", {}).get("default") is False, f"floor: {names.get('floor')}")
    for name in a.available:
        expect(name in names and names[name]["available"],
               f"allocator {name} is not available: {names.get(name)}")
    workloads = {w["name"] for w in doc["workloads"]}
    for name in a.workload:
        expect(name in workloads, f"workload {name} is not listed")
    print(f"ok: {len(doc['allocators'])} allocators, {len(doc['workloads'])} workloads, "
          f"{len(doc['broken_scripts'])} broken scripts")


def cmd_broken_script(a: argparse.Namespace) -> None:
    """A script that does not parse is listed under broken_scripts with its
    PATH:LINE error, and selecting it gives that error with exit 2."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "broken-on-purpose.wl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("this is not a workload script @@@\n")
        proc = run(a.binary, ["--list-json", "--workloads-dir", folder])
        expect(proc.returncode == 0, f"--list-json exit {proc.returncode}: {proc.stderr.strip()}")
        doc = json.loads(proc.stdout)
        validate_list(doc)
        broken = [b for b in doc["broken_scripts"] if b["source"] == path]
        expect(len(broken) == 1, f"{path} not in broken_scripts: {doc['broken_scripts']}")
        expect(broken[0]["error"].startswith(path + ":"), f"error {broken[0]['error']!r} lacks PATH:LINE")
        proc = run(a.binary, ["--alloc", "system", "--workload", "broken-on-purpose",
                              "--workloads-dir", folder])
        expect(proc.returncode == 2, f"selecting it: exit {proc.returncode}")
        expect(proc.stderr.strip().endswith(broken[0]["error"]), f"stderr {proc.stderr!r}")
        proc = run(a.binary, ["--alloc", "system", "--workload", path])
        expect(proc.returncode == 2, f"loading it by path: exit {proc.returncode}")
        expect(broken[0]["error"] in proc.stderr, f"stderr {proc.stderr!r}")
        print(f"ok: {broken[0]['error']}")


def cmd_reexec_once(a: argparse.Namespace) -> None:
    """jemalloc: the runner re-executes itself once with the static-TLS
    tunable; started with the tunable already set it needs no re-exec, and a
    re-executed process that still fails stops instead of looping."""
    base = ["--alloc", "jemalloc", "--workload", a.workload, *a.extra]
    env = {k: v for k, v in os.environ.items()
           if k not in ("GLIBC_TUNABLES", "HEAPLAB_STATIC_TLS_REEXEC")}
    proc = run(a.binary, base, env)
    expect(proc.returncode == 0, f"plain start: exit {proc.returncode}: {proc.stderr.strip()}")
    expect(parse_document(proc)["allocator"]["name"] == "jemalloc", "not jemalloc")
    # a mark saying "already re-executed" with a surplus too small must give
    # a clear error, not another exec
    env_loop = dict(env, HEAPLAB_STATIC_TLS_REEXEC="1", GLIBC_TUNABLES="glibc.rtld.optional_static_tls=0")
    proc = run(a.binary, base, env_loop)
    expect(proc.returncode == 2, f"guarded start: exit {proc.returncode}")
    expect("static TLS" in proc.stderr, f"guarded start: stderr {proc.stderr!r}")
    print("ok: re-exec works and is guarded")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("binary")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("document")
    p.add_argument("alloc")
    p.add_argument("workload")
    p.add_argument("--expect-version")
    p.add_argument("--expect-phases", type=int)
    p.add_argument("--expect-samples", type=int)
    p.add_argument("--expect-stats", action="store_true")
    p.add_argument("--expect-null-metric")
    p.add_argument("--expect-phase-name")
    p.add_argument("--expect-threads", type=int)
    p.add_argument("--expect-operations", type=int)
    p.add_argument("--expect-name")
    p.add_argument("--expect-path")
    p.set_defaults(fn=cmd_document)

    for name, fn in (("failed-run", cmd_failed_run), ("bad-input", cmd_bad_input)):
        p = sub.add_parser(name)
        p.add_argument("message")
        p.set_defaults(fn=fn)

    p = sub.add_parser("list-json")
    p.add_argument("--available", action="append", default=[])
    p.add_argument("--workload", action="append", default=[])
    p.set_defaults(fn=cmd_list_json)

    p = sub.add_parser("broken-script")
    p.set_defaults(fn=cmd_broken_script)

    p = sub.add_parser("reexec-once")
    p.add_argument("workload")
    p.set_defaults(fn=cmd_reexec_once)

    # everything after "--" goes to the runner untouched
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    a = parser.parse_args(argv)
    a.extra = extra
    try:
        a.fn(a)
    except (Broken, json.JSONDecodeError) as e:
        print(f"FAIL ({a.command}): {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
