"""`run.py ci`: instruction counts of a small selection, compared with a
baseline run folder, summaries in Markdown and JSON, exit status as compare.

Each end-to-end test runs one workload on two allocators under valgrind
(a few seconds a run)."""
from __future__ import annotations

import json
import pathlib
import shutil
from typing import Any

from heaplab import catalog as catalog_mod, cmd_ci, compare, merge

TINY = ("--workload", "tmalloc-st-huge", "--alloc", "system,heaplab")


def _summary(out: pathlib.Path) -> tuple[str, dict[str, Any]]:
    return (out / "summary.md").read_text(), json.loads((out / "summary.json").read_text())


def _docs(folder: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "raw.jsonl").read_text().splitlines() if line.strip()]


def _record_baseline(ci, runner: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    status, _, err = ci("--out", str(out), "--runner", str(runner), "--update-baseline", *TINY)
    assert status == 0, err
    return out / "baseline"


def test_without_a_baseline_the_run_is_recorded_and_nothing_compared(ci, runner, tmp_path):
    status, out, err = ci("--out", str(tmp_path), "--runner", str(runner), *TINY)
    assert status == 0, err
    md, doc = _summary(tmp_path)
    assert "no baseline: nothing compared" in err
    assert "No baseline: nothing compared" in md
    assert doc["schema"] == "heaplab.ci/1"
    assert doc["against_baseline"] is None and doc["exit_code"] == 0 and doc["verdict"] == "recorded"
    # the in-run comparison of the allocators against system is there
    assert doc["allocators"]["baseline_alloc"] == "system"
    assert [c["allocator"] for c in doc["allocators"]["cells"]] == ["heaplab"]
    assert "allocators against system" in md
    runs = [p for p in (tmp_path / "runs").iterdir() if not p.is_symlink()]
    assert len(runs) == 1 and doc["run"] == str(runs[0])
    docs = _docs(runs[0])
    assert len(docs) == 2   # one repetition of two cells
    assert all(d["primary"] == "instructions" and d["metrics"]["instructions"]["value"] > 0 for d in docs)
    assert not (tmp_path / "baseline").exists(), "no baseline is made unless asked"


def test_the_summary_names_the_run_folder_this_job_made_even_when_latest_moves(
        ci, runner, tmp_path, monkeypatch):
    # another job sharing the output folder repoints `latest` while this one runs
    from heaplab import runfolder
    other = tmp_path / "runs" / "99991231-235959"
    real_point = runfolder.point_latest

    def point_then_steal(folder: pathlib.Path) -> None:
        real_point(folder)
        other.mkdir(parents=True, exist_ok=True)
        real_point(other)
    monkeypatch.setattr(runfolder, "point_latest", point_then_steal)
    status, _, err = ci("--out", str(tmp_path), "--runner", str(runner), *TINY)
    assert status == 0, err
    _, doc = _summary(tmp_path)
    assert doc["run"] != str(other)
    assert (pathlib.Path(doc["run"]) / "raw.jsonl").is_file()


def test_update_baseline_copies_the_new_run_folder(ci, runner, tmp_path):
    baseline = _record_baseline(ci, runner, tmp_path)
    run = json.loads((tmp_path / "summary.json").read_text())["run"]
    assert (baseline / "raw.jsonl").read_text() == (pathlib.Path(run) / "raw.jsonl").read_text()
    assert (baseline / "env.json").is_file()


def test_the_same_code_against_its_own_baseline_is_unchanged_exit_0(ci, runner, tmp_path):
    _record_baseline(ci, runner, tmp_path)
    # the default baseline is OUT/baseline
    status, out, err = ci("--out", str(tmp_path), "--runner", str(runner), *TINY)
    assert status == 0, err
    md, doc = _summary(tmp_path)
    cells = doc["against_baseline"]["cells"]
    assert {c["allocator"] for c in cells} == {"system", "heaplab"}
    assert all(c["verdict"] == "unchanged" for c in cells)
    assert "unchanged" in md and "**Verdict: no regression beyond 5%** (exact counts)" in md
    assert md.startswith("# heaplab CI") and "**CI verdict: ok**" in md
    assert doc["verdict"] == "ok"


def test_instruction_counts_are_shown_per_operation_too(ci, runner, tmp_path):
    # tmalloc-st-huge at quick sizes: 12,000 pairs, a malloc and a free each
    operations = 2 * 12_000
    _record_baseline(ci, runner, tmp_path)
    status, _, err = ci("--out", str(tmp_path), "--runner", str(runner), *TINY)
    assert status == 0, err
    md, doc = _summary(tmp_path)
    folder = pathlib.Path(doc["run"])
    assert all(d["operations"] == operations for d in _docs(folder))
    for part in ("against_baseline", "allocators"):
        for cell in doc[part]["cells"]:
            for side in (cell["base"], cell["new"]):
                assert side["operations"] == operations
                assert side["per_operation"] == side["median"] / operations
    # compare's rows: BASE and NEW each with their figure per operation
    rows = [line for line in md.splitlines() if line.startswith("| tmalloc-st-huge |")]
    assert rows and all(line.count("/op)") == 2 for line in rows)
    # the run's own tables: the total, then per operation
    tables = (folder / "tables.md").read_text()
    row = next(line for line in tables.splitlines() if line.startswith("| tmalloc-st-huge"))
    assert row.count("/op)") == 2


def test_a_baseline_with_fewer_instructions_makes_the_run_slower_exit_1(ci, runner, tmp_path):
    baseline = _record_baseline(ci, runner, tmp_path / "first")
    doctored = tmp_path / "doctored"
    shutil.copytree(baseline, doctored)
    lines = []
    for doc in _docs(doctored):
        doc["metrics"]["instructions"]["value"] = round(doc["metrics"]["instructions"]["value"] * 0.8)
        lines.append(json.dumps(doc))
    (doctored / "raw.jsonl").write_text("\n".join(lines) + "\n")

    out = tmp_path / "second"
    status, _, err = ci("--out", str(out), "--baseline", str(doctored), "--runner", str(runner), *TINY)
    assert status == 1
    md, doc = _summary(out)
    assert "**slower**" in md and "Verdict: regression" in md
    assert "**CI verdict: regression**" in md
    assert doc["verdict"] == "regression" and doc["exit_code"] == 1
    assert all(c["verdict"] == "slower" for c in doc["against_baseline"]["cells"])
    assert "regression" in err


def test_a_named_baseline_that_does_not_exist_is_bad_input(ci, runner, tmp_path):
    status, _, err = ci("--out", str(tmp_path), "--baseline", str(tmp_path / "nope"),
                        "--runner", str(runner), *TINY)
    assert status == 2
    assert "nope" in err and "no such run folder" in err


def test_a_negative_threshold_is_bad_input(ci, tmp_path):
    status, _, err = ci("--out", str(tmp_path), "--threshold", "-0.1")
    assert status == 2
    assert "--threshold" in err


def test_the_default_selection_is_single_threaded_builtin_and_script_workloads(runner):
    cat = catalog_mod.load(runner)
    chosen = cmd_ci.default_workloads(cat)
    assert chosen
    by_name = {w.name: w for w in cat.workloads}
    for name in chosen:
        w = by_name[name]
        assert w.kind in ("builtin", "script"), name
        assert cmd_ci.single_threaded(w) and w.default_threads == 1, name
        assert w.kind == "script" or not w.threaded, name
    assert cmd_ci.multi_threaded(cat, ",".join(chosen)) == []


def test_the_preset_stands_for_run_quick_instructions_one_repetition(tmp_path):
    choices = cmd_ci.run_choices("w", "a")
    assert choices.quick is True and choices.metric == "instructions" and choices.reps == "1"
    assert choices.workload == "w" and choices.alloc == "a"


def _doc(allocator: str, instructions: int) -> dict[str, Any]:
    return {"schema": "heaplab.run/1", "status": "ok", "primary": "instructions",
            "workload": {"name": "w", "group": "g", "threads": 1}, "allocator": {"name": allocator},
            "metrics": {"instructions": {"value": instructions, "unit": "instructions",
                                         "better": "lower"}}}


def test_an_allocator_costlier_than_system_is_information_not_a_ci_regression(tmp_path):
    (tmp_path / "raw.jsonl").write_text(json.dumps(_doc("system", 100)) + "\n"
                                        + json.dumps(_doc("heaplab", 200)) + "\n")
    allocators = compare.compare_allocators(merge.load_run_folder(tmp_path), "system", "instructions")
    assert allocators.regression()   # compare alone would call it one
    md = cmd_ci.allocators_markdown(allocators)
    assert "Verdict: regression" not in md
    assert "1 need more instructions than system" in md
    assert "not part of the CI verdict" in md


def test_ci_help_lists_the_default_workloads(capsys):
    from heaplab import cli
    try:
        cli.main(["ci", "--help"])
    except SystemExit:
        pass
    out = " ".join(capsys.readouterr().out.split())
    assert f"The default workloads ({len(cmd_ci.DEFAULT_WORKLOADS)}):" in out
    assert all(name in out for name in cmd_ci.DEFAULT_WORKLOADS)
