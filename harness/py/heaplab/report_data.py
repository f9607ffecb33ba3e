"""Everything the report and the export read from a folder, in one place.

A run folder (run, reproduce, merge) is read through heaplab.runfolder:
env.json, raw.jsonl (one reader, one policy), summary.json (re-derived from
the two when it is missing), and for a reproduce folder the published
tables it reproduced (heaplab.reproduced). A CI output folder (`run.py ci
--out DIR`): its summary.json ("heaplab.ci/1") with the comparisons, and
the run folder it names. A comparison alone (`compare --html-out`) is
handed in as its "heaplab.compare/1" document.

The report's modules (report_html, report_svg) and the export never open a
file themselves; they take a Folder from load() and the series below.
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from typing import Any

from . import published, reproduced as reproduced_mod, runfolder, stats, summary as summary_mod
from .runfolder import RunFolderError

CI_SCHEMA = "heaplab.ci/1"
CI_RUNS = "runs"                # a ci output folder's run folders
BYTES_PER_MB = 1e6
PEAK = "peak"
REPORT = "report.html"


@dataclass
class Reproduced:
    """One published table reproduced: its Markdown as reproduce renders it,
    and for a memory table the published and measured chart series."""
    table_id: str
    title: str
    markdown: str
    charts: list[tuple[str, "PhaseSeries"]] = field(default_factory=list)


@dataclass
class Comparison:
    title: str
    document: dict[str, Any]        # "heaplab.compare/1"


@dataclass
class Folder:
    path: pathlib.Path
    kind: str                       # "run", "reproduce", "merge", "ci", "compare"
    env: dict[str, Any]
    summary: dict[str, Any]
    docs: list[dict[str, Any]]
    torn: str | None = None
    reproduced: list[Reproduced] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    verdict: str | None = None      # a CI folder's verdict line
    merged_from: list[str] = field(default_factory=list)

    @property
    def report_path(self) -> pathlib.Path:
        return self.path / REPORT


def _is_ci_folder(path: pathlib.Path) -> bool:
    target = path / runfolder.SUMMARY
    if (path / runfolder.RAW).exists() or not target.is_file():
        return False
    return runfolder.read_json_object(target).get("schema") == CI_SCHEMA


def load(path: str | pathlib.Path) -> Folder:
    """The folder at `path`: a CI output folder, or a run folder as
    runfolder.resolve() finds one (RunFolderError, one line, otherwise)."""
    path = pathlib.Path(path)
    if path.is_dir() and _is_ci_folder(path):
        return _load_ci(path)
    return load_run(path)


def load_run(path: str | pathlib.Path) -> Folder:
    run = runfolder.load(path, warn=False)
    summary_path = run.path / runfolder.SUMMARY
    summary = (runfolder.read_json_object(summary_path) if summary_path.is_file()
               else summary_mod.summarize(run.documents, run.env.get("plan") or {}))
    folder = Folder(path=run.path, kind=_kind(run.path), env=run.env, summary=summary,
                    docs=run.documents, torn=run.torn)
    if folder.kind == "reproduce":
        folder.reproduced = _reproduced(run.path, run.env)
    if folder.kind == "merge":
        sources = runfolder.read_json_object(run.path / runfolder.MERGE).get("sources") or []
        folder.merged_from = [str(s) for s in sources]
    return folder


def _kind(path: pathlib.Path) -> str:
    if path.name.endswith(reproduced_mod.FOLDER_SUFFIX) or reproduced_mod.table_ids(path):
        return "reproduce"
    if (path / runfolder.MERGE).exists():
        return "merge"
    return "run"


def _reproduced(path: pathlib.Path, env: dict[str, Any]) -> list[Reproduced]:
    ids = reproduced_mod.table_ids(path)
    if not ids:
        return []
    try:
        known = published.load_all()
        tables = [published.find_table(known, tid) for tid in ids]
    except (published.PublishedError, LookupError, ValueError) as e:
        raise RunFolderError(f"{path}: cannot read the published tables: {e}") from None
    results = reproduced_mod.results_of(path, tables)
    rendered = reproduced_mod.render(results, env)
    out = []
    for result in results:
        t = result.table
        item = Reproduced(t.id, t.title, rendered[t.id])
        if reproduced_mod.is_memory_table(t):
            for side in ("published", "measured"):
                phases, series, live, spread, notes = reproduced_mod.chart_series(result, side)
                item.charts.append((side, PhaseSeries(phases, dict(series), list(live),
                                                      dict(spread), dict(notes), unit=t.unit)))
        out.append(item)
    return out


def _load_ci(path: pathlib.Path) -> Folder:
    doc = runfolder.read_json_object(path / runfolder.SUMMARY)
    named = pathlib.Path(str(doc.get("run") or ""))
    # as ci wrote it (relative to where it ran, when --out was), or moved
    # along with the ci folder: its runs/ holds it
    run_path = next((p for p in (named, path / CI_RUNS / named.name)
                     if str(named) and runfolder.is_run_folder(p)), named)
    folder = load_run(run_path)
    folder.path, folder.kind = path, "ci"
    if doc.get("against_baseline"):
        folder.comparisons.append(Comparison(f"Against the baseline {doc.get('baseline')}",
                                             doc["against_baseline"]))
    if doc.get("allocators"):
        folder.comparisons.append(Comparison("Allocators of this run against system "
                                             "(information, not part of the CI verdict)",
                                             doc["allocators"]))
    folder.verdict = f"CI verdict: {doc.get('verdict')}" + (
        f" ({doc['no_baseline']})" if doc.get("no_baseline") else "")
    return folder


def comparison_only(document: dict[str, Any], out: pathlib.Path) -> Folder:
    """A Folder for a comparison alone (`compare --html-out FILE`): its
    verdicts, and what was run from the new run folder's env.json while
    that folder is there."""
    base = str((document.get("base") or {}).get("path") or "")
    new = str((document.get("new") or {}).get("path") or "")
    env = runfolder.read_env(pathlib.Path(new)) if new and pathlib.Path(new).is_dir() else {}
    folder = Folder(path=out.parent, kind="compare", env=env,
                    summary={"cells": [], "rows": [], "allocators": []}, docs=[])
    title = (f"{new} against {base}" if document.get("mode") == "runs"
             else f"allocators of {new} against {document.get('baseline_alloc')}")
    folder.comparisons.append(Comparison(title, document))
    return folder


# ------------------------------------------------------------ chart series

@dataclass
class PhaseSeries:
    """Memory by phase: per allocator one figure per phase (None: no figure),
    its (min, max), the live bytes requested, and why an allocator has none."""
    phases: list[str]
    series: dict[str, list[float | None]]
    live: list[float | None]
    spread: dict[str, list[tuple[float, float] | None]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    unit: str = "MB above start"


@dataclass
class Line:
    """One allocator's line: (x, median y, min y, max y) points."""
    name: str
    points: list[tuple[float, float, float, float]]
    note: str | None = None


_number = runfolder.number


def _ok(doc: dict[str, Any]) -> bool:
    return doc.get("status") == runfolder.OK


def _allocator(doc: dict[str, Any]) -> str | None:
    key = runfolder.key_of(doc)
    return key.allocator if key is not None else None


def docs_at(folder: Folder, workload: str, threads: int) -> list[dict[str, Any]]:
    """The documents of row (workload, threads), by their cell key."""
    return [d for d in folder.docs
            for key in [runfolder.key_of(d)] if key is not None and key.row == (workload, threads)]


def _phase_figure(doc: dict[str, Any], phase: str, key: str) -> float | None:
    for entry in doc.get("phases") or []:
        if isinstance(entry, dict) and entry.get("name") == phase:
            value = _number(entry.get(key))
            return None if value is None else value / BYTES_PER_MB
    return None


def _peak_above_start(doc: dict[str, Any]) -> float | None:
    process = doc.get("process") or {}
    peak, start = _number(process.get("peak_rss_bytes")), _number(process.get("rss_start_bytes"))
    return None if peak is None or start is None else (peak - start) / BYTES_PER_MB


def allocators(folder: Folder) -> list[str]:
    return [a["name"] for a in folder.summary.get("allocators") or []]


def phase_series(folder: Folder, workload: str, threads: int) -> PhaseSeries | None:
    """The working set above start at the end of each phase, and the peak,
    per allocator (medians of the repetitions); None without phases."""
    docs = docs_at(folder, workload, threads)
    phases = list(dict.fromkeys(p["name"] for d in docs if _ok(d)
                                for p in d.get("phases") or [] if isinstance(p, dict)
                                and isinstance(p.get("name"), str)))
    if not phases:
        return None
    table = PhaseSeries(phases=phases + [PEAK], series={}, live=[])
    for phase in phases:
        live = [v for d in docs if _ok(d) for v in [_phase_figure(d, phase, "live_bytes")] if v is not None]
        found = stats.spread(live)
        table.live.append(found.median if found else None)
    known = [v for v in table.live if v is not None]
    table.live.append(max(known) if known else None)
    for name in allocators(folder):
        mine = [d for d in docs if _allocator(d) == name]
        if not mine:
            continue
        getters = [lambda d, p=p: _phase_figure(d, p, "ws_above_start_bytes") for p in phases]
        getters.append(_peak_above_start)
        values, spread = [], []
        for getter in getters:
            found = stats.spread(v for d in mine if _ok(d) for v in [getter(d)] if v is not None)
            values.append(found.median if found else None)
            spread.append((found.min, found.max) if found else None)
        table.series[name], table.spread[name] = values, spread
        failed = [d for d in mine if not _ok(d)]
        if failed:
            table.notes[name] = f"{len(failed)} of {len(mine)} {runfolder.Failure.of(failed[0]).label}"
    return table


FIRST_REPETITION = "first repetition"


def time_lines(folder: Folder, workload: str, threads: int) -> tuple[list[Line], str] | None:
    """RSS over time per allocator (MB against ms, or against operations when
    every sample counts them), the median per x over repetitions sampled
    alike, else the first repetition (Line.note says so); None when no
    document has samples."""
    docs = [d for d in docs_at(folder, workload, threads) if _ok(d) and d.get("samples")]
    if not docs:
        return None
    by_ops = all(_number(s.get("ops")) is not None for d in docs for s in d["samples"])
    x_key, x_scale, x_label = ("ops", 1.0, "operations") if by_ops else ("t_ns", 1e6, "ms")
    lines = []
    for name in allocators(folder):
        runs = []
        for d in docs:
            if _allocator(d) != name:
                continue
            points = [(x / x_scale, y / BYTES_PER_MB) for s in d["samples"]
                      for x, y in [(_number(s.get(x_key)), _number(s.get("rss_bytes")))]
                      if x is not None and y is not None]
            if points:
                runs.append(points)
        if not runs:
            continue
        xs = [x for x, _ in runs[0]]
        if all([x for x, _ in r] == xs for r in runs):
            columns = [stats.spread(r[i][1] for r in runs) for i in range(len(xs))]
            lines.append(Line(name, [(x, c.median, c.min, c.max) for x, c in zip(xs, columns) if c]))
        else:
            lines.append(Line(name, [(x, y, y, y) for x, y in runs[0]], note=FIRST_REPETITION))
    return lines, x_label


def scaling_lines(folder: Folder, workload: str) -> list[Line] | None:
    """The primary metric against threads per allocator; None below two
    thread counts."""
    cells = [c for c in folder.summary.get("cells") or [] if c.get("workload") == workload]
    counts = sorted({int(c["threads"]) for c in cells})
    if len(counts) < 2:
        return None
    lines = []
    for name in allocators(folder):
        mine = {int(c["threads"]): c for c in cells if c["allocator"] == name}
        points = [(float(t), mine[t]["median"], mine[t]["min"], mine[t]["max"]) for t in counts
                  if t in mine and mine[t].get("median") is not None]
        missing = [f"{mine[t]['status']} at {t}" for t in counts
                   if t in mine and mine[t].get("median") is None]
        if points or missing:
            lines.append(Line(name, points, note="; ".join(missing) or None))
    return lines


def machine(folder: Folder) -> dict[str, Any]:
    """The machine as env.json and the runner's documents describe it."""
    out = dict(folder.env.get("machine") or {})
    for doc in folder.docs:
        for key, value in (doc.get("env") or {}).items():
            out.setdefault(key, value)
        if doc.get("env"):
            break
    return out
