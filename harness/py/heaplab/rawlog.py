"""Reading raw.jsonl: the one reader every command uses (derive, merge,
compare, reproduce, plots), through heaplab.runfolder.

A run appends one document per line and makes each line durable before the
next cell starts, so the only damage a crash or a full disk can leave is a
torn *last* line, without its newline: it is left out and reported, and the
folder stays usable.
A line that does not parse anywhere else is damage nobody should read past:
RawLogError names the file and the line.
"""
from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field
from typing import Any


class RawLogError(ValueError):
    """raw.jsonl is unreadable; the message is one line naming file and line."""


@dataclass
class RawLog:
    documents: list[dict[str, Any]] = field(default_factory=list)
    # the line number of each document, for messages about its content
    lines: list[int] = field(default_factory=list)
    # "raw.jsonl:12: torn last line left out (…)" when the last line was cut
    torn: str | None = None


def parse(text: str, where: str) -> RawLog:
    """The documents of raw.jsonl's text; `where` names the file in messages."""
    log = RawLog()
    lines = text.split("\n")
    # every complete line ends with its newline: only a last piece without
    # one can have been cut while it was written
    torn_at = len(lines) if lines[-1].strip() else None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == torn_at:
                log.torn = (f"{where}:{number}: torn last line left out ({exc.msg}; "
                            f"{len(line)} bytes: the run stopped while writing it)")
                continue
            raise RawLogError(f"{where}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(doc, dict):
            raise RawLogError(f"{where}:{number}: line is not a JSON object")
        log.documents.append(doc)
        log.lines.append(number)
    return log


def read(path: pathlib.Path) -> RawLog:
    """parse() of the file at `path`; RawLogError when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RawLogError(f"{path}: cannot read: {exc}") from None
    return parse(text, str(path))
