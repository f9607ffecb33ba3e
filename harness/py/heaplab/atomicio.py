"""Atomic file writes and the append-only raw log.

Every file the driver writes (summary.json, tables, env.json, charts,
reports) is written to a temporary file in the same folder and renamed over
the target (write_with), so a reader or an
interrupted run never sees half a file. raw.jsonl is only ever appended to,
one line per document, flushed and fsynced before the next cell starts.
"""
from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import Any, BinaryIO, Callable


# Results are for sharing: files get the mode a plain open() would give
# them under the user's umask, not mkstemp's private 0600.
SHARED_MODE = 0o666


def shared_mode() -> int:
    """SHARED_MODE less the process's umask (read by setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return SHARED_MODE & ~mask


def write_with(path: pathlib.Path, fill: Callable[[BinaryIO], None]) -> None:
    """The one way the driver writes a file: `fill` writes the content into
    a temporary file in the same folder, which is made durable (fsync) and
    renamed over `path`, with the mode the user's umask gives. A reader, or
    an interrupted run, sees the old file or the new one, never half; the
    temporary file never stays behind, whatever interrupted the write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, shared_mode())
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: pathlib.Path, text: str) -> None:
    data = text.encode("utf-8")
    write_with(path, lambda f: f.write(data))


def write_json(path: pathlib.Path, value: Any) -> None:
    write_text(path, json.dumps(value, indent=2, sort_keys=False) + "\n")


def append_jsonl(path: pathlib.Path, document: dict[str, Any]) -> None:
    """Appends one document as one line and makes it durable. When the write
    fails (a full disk) the part written is cut off again where the kernel
    allows, so the file still ends with a whole line; the OSError propagates.
    (Reading is heaplab.rawlog's job.)"""
    data = (json.dumps(document, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass  # the reader leaves a torn last line out
            raise
    finally:
        os.close(fd)


def replace_symlink(link: pathlib.Path, target: str) -> None:
    """Points `link` at `target`, atomically (new link renamed over the old)."""
    tmp = link.with_name("." + link.name + ".tmp")
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(target, tmp)
    os.replace(tmp, link)
