"""Trace files (docs/trace-format.md): reading a trace's header, and a trace
as a workload of the run matrix (`--workload trace:FILE`).

Only the uncompressed JSON header is read here; the runner loads and checks
the whole file (and refuses a bad one with one line, exit 2).
"""
from __future__ import annotations

import json
import pathlib
import struct
from typing import Any

from .catalog import SelectionError, Workload

PREFIX = "trace:"
SUFFIX = ".hltrace"
MAGIC = b"HLTRACE\n"
VERSION = 1
PREFIX_BYTES = 16
# The replay's parameters, as the runner declares them (trace_replay.c).
PARAMS: tuple[dict[str, Any], ...] = (
    {"name": "phases", "default": 4, "quick": 4, "min": 1, "max": 100},
    {"name": "samples", "default": 20, "quick": 20, "min": 0, "max": 1000},
    {"name": "touch", "default": 2, "quick": 2, "min": 0, "max": 3,
     "values": ["none", "first", "pages", "all"]},
    {"name": "turns", "default": 0, "quick": 0, "min": 0, "max": 1},
)


class TraceError(ValueError):
    """A trace that cannot be read; str(error) is one line naming the file."""


def read_header(path: pathlib.Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            prefix = f.read(PREFIX_BYTES)
            if len(prefix) < PREFIX_BYTES or prefix[:len(MAGIC)] != MAGIC:
                raise TraceError(f"{path}: not a heaplab trace (no \"HLTRACE\" magic at offset 0)")
            version, length = struct.unpack_from("<II", prefix, len(MAGIC))
            if version != VERSION:
                raise TraceError(f"{path}: trace format version {version} at offset 8; "
                                 f"this driver reads version {VERSION}")
            text = f.read(length)
    except OSError as e:
        raise TraceError(f"{path}: cannot open trace: {e.strerror}") from None
    if len(text) < length:
        raise TraceError(f"{path}: truncated trace: the header ends at offset "
                         f"{PREFIX_BYTES + len(text)}, not {PREFIX_BYTES + length}")
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise TraceError(f"{path}: corrupt trace: the header at offset {PREFIX_BYTES} "
                         "is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != "heaplab.trace":
        raise TraceError(f"{path}: corrupt trace: the header is not a heaplab.trace header")
    return header


def workload_name(path: pathlib.Path) -> str:
    """`trace-STEM`: what tables and charts call the replay of FILE (the
    runner names it the same way, trace_replay.c)."""
    name = path.name
    return "trace-" + (name[:-len(SUFFIX)] if name.endswith(SUFFIX) and name != SUFFIX else name)


def workload(spec: str) -> Workload:
    """The matrix entry for `trace:FILE`; the runner is given `trace:FILE`."""
    path = pathlib.Path(spec[len(PREFIX):])
    try:
        header = read_header(path)
    except TraceError as e:
        raise SelectionError(str(e)) from None
    command = " ".join(header.get("command") or [])
    return Workload(name=workload_name(path), group="trace", kind="trace", source=str(path),
                    describe=f"replay of: {command}", metric="ns_per_op", unit="ns",
                    better="lower", threaded=False, default_threads=1, params=PARAMS)


def summary_line(header: dict[str, Any], size: int) -> str:
    counts = header.get("counts") or {}
    ops = int(counts.get("ops") or 0)
    kinds = ", ".join(f"{k} {counts[k]}" for k in
                      ("malloc", "calloc", "realloc", "free", "free_sized", "aligned", "usable_size")
                      if counts.get(k))
    per_op = f"{size / ops:.2f}" if ops else "n/a"
    return (f"{ops} calls ({kinds}) on {len(header.get('streams') or [])} thread(s); "
            f"peak live {header.get('peak_live_bytes')} bytes; {size} bytes on disk "
            f"({per_op} bytes per call)")
