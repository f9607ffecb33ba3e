"""Sampling memory over time is the harness's work, not the workload's: a
script with `sample every=N` gets the same instruction count (counted inside
the workload, as `--metric instructions` does) as the same script without
it, and its phases' elapsed times leave the sampling out."""
from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from heaplab import instructions

REPO = pathlib.Path(__file__).resolve().parents[2]
RUNNER = pathlib.Path(os.environ.get("HEAPLAB_RUN", REPO / "build" / "heaplab-run"))

pytestmark = [
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
    pytest.mark.skipif(not RUNNER.exists(), reason=f"no runner at {RUNNER}"),
]

SCRIPT = """\
workload  sampled-or-not
seed      5
phase built
{sample}
  repeat 4
    alloc   5000  size=uniform(16,1K)
    free    100%
  end
"""
# the bookkeeping left inside the workload: a counter per operation and
# publishing two words per sample (a few instructions per 200 operations)
NOISE = 0.005


def _count(tmp_path: pathlib.Path, allocator: str, sample: str) -> int:
    path = tmp_path / f"{allocator}-{'sampled' if sample else 'plain'}.wl"
    path.write_text(SCRIPT.format(sample=sample))
    argv = [str(RUNNER), "--alloc", allocator, "--workload", str(path)]
    return instructions.run_under_callgrind(argv, timeout=300).instructions


@pytest.mark.parametrize("allocator", ["system", "heaplab"])
def test_sampling_leaves_the_instruction_count_within_noise(tmp_path, allocator):
    plain = _count(tmp_path, allocator, "")
    sampled = _count(tmp_path, allocator, "  sample every=200")
    assert plain > 0
    assert abs(sampled - plain) <= plain * NOISE, (plain, sampled)
