"""A replay's "operations": the allocator calls it makes, which are the
recorded calls less usable_size queries and the frees of blocks the
recording never saw allocated -- and exactly what a counting allocator
(tests/operations/countalloc.c) receives."""
from __future__ import annotations

import json
import re

import pytest

from conftest import header, replay

COUNTED_LINE = re.compile(r"^countalloc: (\d+) calls$", re.MULTILINE)


@pytest.mark.parametrize("which", ["handoff", "python"])
def test_replay_operations_are_the_calls_it_makes(which, request, build_dir, counting_alloc):
    trace = {"handoff": lambda: request.getfixturevalue("handoff")[0],
             "python": lambda: request.getfixturevalue("python_trace")}[which]()
    counts = header(trace)["counts"]
    proc = replay(build_dir, trace, counting_alloc, "--param", "samples=2")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    calls = [int(n) for n in COUNTED_LINE.findall(proc.stderr)]
    assert calls == [doc["operations"]]
    # every recorded call but the queries and the skipped frees
    assert doc["operations"] == counts["ops"] - counts["usable_size"] - counts["skipped_frees"]
