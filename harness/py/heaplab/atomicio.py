"""Atomic file writes and the append-only raw log.

Every derived file (summary.json, tables, env.json) is written to a temporary
file in the same folder and renamed over the target, so a reader or an
interrupted run never sees half a file. raw.jsonl is only ever appended to,
one line per document, flushed and fsynced before the next cell starts.
"""
from __future__ import annotations

import json
import os
import pathlib
import tempfile
from typing import Any, Iterator


def write_text(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # never leave the temporary file behind, whatever interrupted us
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json(path: pathlib.Path, value: Any) -> None:
    write_text(path, json.dumps(value, indent=2, sort_keys=False) + "\n")


def append_jsonl(path: pathlib.Path, document: dict[str, Any]) -> None:
    """Appends one document as one line and makes it durable."""
    line = json.dumps(document, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def read_jsonl(path: pathlib.Path) -> Iterator[dict[str, Any]]:
    """Yields every complete document; a torn last line (power loss) is skipped."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                yield value


def replace_symlink(link: pathlib.Path, target: str) -> None:
    """Points `link` at `target`, atomically (new link renamed over the old)."""
    tmp = link.with_name("." + link.name + ".tmp")
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(target, tmp)
    os.replace(tmp, link)
