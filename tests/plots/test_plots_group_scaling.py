"""The group thread-scaling chart: one panel per workload of a group run at
several thread counts (the classic workloads over --threads 1,2,4,8)."""
from __future__ import annotations

import json
from pathlib import Path

from plots import scaling, style
from plots.rundata import load_run


def _doc(workload: str, alloc: str, threads: int, value: float) -> dict:
    return {"schema": "heaplab.run/1", "status": "ok", "rep": 1,
            "cell": f"{workload}/{alloc}/{threads}t",
            "workload": {"name": workload, "group": "classic", "threads": threads},
            "allocator": {"name": alloc}, "primary": "ns_per_op",
            "metrics": {"ns_per_op": {"value": value, "unit": "ns", "better": "lower"}},
            "phases": [], "samples": [], "process": {}, "env": {"cores": 2}}


def _run(tmp_path: Path, workloads: tuple[str, ...]):
    docs = [_doc(w, a, t, 10.0 * t + i)
            for i, w in enumerate(workloads) for t in (1, 2, 4, 8) for a in ("system", "heaplab")]
    (tmp_path / "raw.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "env.json").write_text(json.dumps({"machine": {"cores": 2}}))
    return load_run(tmp_path)


def test_a_group_of_scaled_workloads_gets_one_chart_with_a_panel_each(tmp_path: Path) -> None:
    run = _run(tmp_path, ("larson", "xmalloc", "threadtest", "cache-scratch", "cache-thrash"))
    stems = [stem for stem, _ in scaling.figures(run)]
    assert stems[-1] == "scaling-group-classic"
    with style.chart_style():
        fig = scaling.draw_group(run, "classic")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in panels] == [
        "larson", "xmalloc", "threadtest", "cache-scratch", "cache-thrash"]
    heaplab = next(line for line in panels[0].lines if line.get_label() == "heaplab")
    assert list(heaplab.get_ydata()) == [10.0, 20.0, 40.0, 80.0]


def test_one_scaled_workload_gets_no_group_chart(tmp_path: Path) -> None:
    assert scaling.draw_group(_run(tmp_path, ("larson",)), "classic") is None
