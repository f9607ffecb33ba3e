"""docs/workloads.md's walkthrough "Record your program, replay it on every
allocator", run exactly as written: every ```sh block of that section, in
order, from a folder laid out like the repository's root (run.py and
build/ are the real ones; results/ is the test's own)."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "workloads.md"
SECTION = "## Record your program, replay it on every allocator"
FENCE = re.compile(r"^([ \t]*)```sh\n(.*?)^\1```", re.S | re.M)
# `compare` exits 1 when some allocator is significantly slower (the doc says so)
COMPARE = "./run.py compare"


def walkthrough_blocks() -> list[str]:
    text = DOC.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end >= 0 else len(text)]
    return ["\n".join(line[len(indent):] for line in body.splitlines())
            for indent, body in FENCE.findall(section)]


def test_the_walkthrough_has_its_five_steps() -> None:
    blocks = walkthrough_blocks()
    assert len(blocks) == 5
    assert blocks[0].startswith("./run.py record ") and blocks[3].startswith(COMPARE)


def test_the_walkthrough_runs_as_written(repo_root, build_dir, tmp_path) -> None:
    (tmp_path / "run.py").symlink_to(repo_root / "run.py")
    (tmp_path / "build").symlink_to(build_dir)
    env = dict(os.environ, HEAPLAB_RUN=str(build_dir / "heaplab-run"))
    outputs = []
    for block in walkthrough_blocks():
        proc = subprocess.run(["/bin/sh", "-e", "-c", block], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=900, check=False)
        allowed = (0, 1) if block.startswith(COMPARE) else (0,)
        assert proc.returncode in allowed, (block, proc.stderr[-3000:])
        outputs.append(proc.stdout)
    trace = tmp_path / "results" / "traces" / "pydict.hltrace"
    checked = json.loads(outputs[1])
    assert checked["ops"] > 1000
    runs = sorted(p for p in (tmp_path / "results" / "runs").iterdir() if p.name != "latest")
    assert len(runs) == 2                                # the trace, then the script
    replay = [json.loads(line) for line in (runs[0] / "raw.jsonl").read_text().splitlines()]
    assert replay and all(d["status"] == "ok" for d in replay)
    assert all(d["metrics"]["ops"]["value"] == checked["ops"] for d in replay)
    assert (runs[0] / "memory-time-trace-pydict.png").exists()
    assert "verdict" in outputs[3].lower() or "faster" in outputs[3] or "slower" in outputs[3] \
        or "unchanged" in outputs[3]
    phases = [json.loads(line) for line in (runs[1] / "raw.jsonl").read_text().splitlines()]
    assert all([p["name"] for p in d["phases"]] == ["early", "late"] for d in phases)
    assert (runs[1] / "memory-phases-pydict-phases.png").exists()
    assert (runs[1] / "memory-time-pydict-phases.png").exists()
    assert trace.exists()
