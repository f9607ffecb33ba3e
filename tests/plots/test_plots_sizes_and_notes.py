"""Chart subtitles say the sizes that ran (quick or full) — a workload's
description gives the full ones — and a memory chart of blocks that were
never written says why RSS sits below the live bytes (issue #17 item 8)."""
from __future__ import annotations

import json
from pathlib import Path

from plots import memory_phases, style
from plots.rundata import load_run


def _folder(tmp_path: Path, quick: bool, touch: str) -> Path:
    doc = {"schema": "heaplab.run/1", "status": "ok", "rep": 1, "primary": "ns",
           "workload": {"name": "tmalloc-st-mixed", "group": "tmalloc", "threads": 1,
                        "describe": "300k blocks of 16 B to 64 KiB",
                        "params": {"count": 30000, "rounds": 2, "touch": 0},
                        "param_names": {"touch": touch}},
           "allocator": {"name": "system"},
           "metrics": {"ns": {"value": 1.0, "unit": "ns", "better": "lower"}},
           "phases": [{"name": "allocated", "ws_above_start_bytes": 1e6, "live_bytes": 9e6},
                      {"name": "freed", "ws_above_start_bytes": 5e5, "live_bytes": 0}]}
    (tmp_path / "raw.jsonl").write_text(json.dumps(doc) + "\n")
    (tmp_path / "env.json").write_text(json.dumps({"options": {"quick": quick}}))
    return tmp_path


def _subtitle(folder: Path) -> str:
    with style.chart_style():
        (_, fig), = memory_phases.figures(load_run(folder))
    return " ".join(fig.axes[0].get_title(loc="left").split())


def test_a_quick_run_says_quick_and_the_sizes_that_ran(tmp_path):
    text = _subtitle(_folder(tmp_path, quick=True, touch="first"))
    assert "Quick sizes ran: count=30000, rounds=2." in text
    assert "never written" not in text


def test_a_full_run_says_full(tmp_path):
    assert "Full sizes ran: count=30000" in _subtitle(_folder(tmp_path, quick=False, touch="first"))


def test_unwritten_blocks_are_said_on_the_memory_chart(tmp_path):
    text = _subtitle(_folder(tmp_path, quick=True, touch="none"))
    assert "never written (touch=none)" in text and "live bytes may lie far above" in text
