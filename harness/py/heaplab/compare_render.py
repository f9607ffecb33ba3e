"""Writing a Comparison (heaplab.comparison) as Markdown for a terminal or a
CI step summary, and as JSON ("heaplab.compare/1")."""

from __future__ import annotations

import math
from typing import Any, Sequence

from . import advice, detectable, fmt, perop, stability
from .comparison import (BASE_FAILED, BOTH_FAILED, FASTER, NEW_FAILED, NOT_SIGNIFICANT, ONLY_BASE,
                         ONLY_NEW, SLOWER, UNCHANGED, CellComparison, Comparison, SideSummary)
from .mannwhitney import RECOMMENDED_REPETITIONS
from .runfolder import MACHINE_KEYS, MachineId, describe_machine

COMPARE_SCHEMA = "heaplab.compare/1"

VERDICT_TEXT = {
    FASTER: "**faster**",
    SLOWER: "**slower**",
    UNCHANGED: "unchanged",
    NOT_SIGNIFICANT: "not significant",
    NEW_FAILED: "**failed in {new}**",
    BASE_FAILED: "failed in {base}",
    BOTH_FAILED: "failed in both",
    ONLY_BASE: "only in {base}",
    ONLY_NEW: "only in {new}",
}

format_value = fmt.precise
_md = fmt.md


def format_p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _side(summary: SideSummary | None) -> str:
    """`66,312,345 [66,312,345–66,401,002] (72.10/op)`: the median, its
    min–max and, for an instruction count, instructions per operation."""
    if summary is None or summary.n == 0:
        return "–"
    text = f"{format_value(summary.median)} [{format_value(summary.min)}–{format_value(summary.max)}]"
    if summary.per_operation is not None:
        text += f" ({perop.text(summary.per_operation, format_value)})"
    return text


def _verdict_text(comparison: Comparison, verdict: str) -> str:
    return VERDICT_TEXT[verdict].format(base=comparison.base_label,
                                        new="NEW" if comparison.mode == "runs" else "allocator")


def verdict_line(comparison: Comparison) -> str:
    """The one-line verdict that ends the Markdown."""
    counts = comparison.counts()
    limit = f"{comparison.threshold:.0%}"
    others = ", ".join(f"{counts[code]} {_plain(code)}"
                       for code in (FASTER, UNCHANGED, NOT_SIGNIFICANT, BASE_FAILED,
                                    BOTH_FAILED, ONLY_BASE, ONLY_NEW) if counts[code])
    exact = exact_only(comparison)
    if comparison.regression():
        bad = []
        if counts[SLOWER]:
            # instruction counts are exact: the threshold alone decides, no test runs
            how = "" if exact else f" (p < {comparison.alpha:g})"
            bad.append(f"{fmt.cells(counts[SLOWER])} slower by more than {limit}{how}")
        if counts[NEW_FAILED]:
            bad.append(f"{fmt.cells(counts[NEW_FAILED])} failed in every repetition")
        return (f"**Verdict: regression** — {'; '.join(bad)}" + (f"; {others}" if others else "")
                + _noise_clause(comparison) + ".")
    head = (f"**Verdict: no regression beyond {limit}** (exact counts)" if exact
            else f"**Verdict: no significant regression beyond {limit}**")
    return head + (f" — {others}" if others else "") + _noise_clause(comparison) + "."


def exact_only(comparison: Comparison) -> bool:
    """Every cell with two sides compared exact figures (instruction counts):
    no significance test ran."""
    tested = [c for c in comparison.cells if c.test is not None]
    return bool(tested) and all(c.test == "deterministic" for c in tested)


def _noise_clause(comparison: Comparison) -> str:
    """`; changes below 34% are not detectable with 9 repetitions here — …`
    when some cell is too noisy for the threshold (its worst cell's figure)."""
    noisy = comparison.noisy()
    if not noisy:
        return ""
    worst = max(noisy, key=lambda c: float("inf") if c.effect is None else c.effect)
    fixable = [c.needed for c in noisy if c.needed is not None]
    more = f"more repetitions (`--reps {max(fixable)}`)" if fixable else "more repetitions"
    if worst.effect is None:
        seen = f"no change is detectable with {worst.repetitions} repetitions on {fmt.cells(len(noisy))}"
    else:
        seen = (f"changes below {worst.effect:.0%} are not detectable with {worst.repetitions} "
                f"repetitions here")
    return f"; {seen} — use {more} or `--metric instructions`"


def _plain(code: str) -> str:
    return {FASTER: "faster", UNCHANGED: "unchanged", NOT_SIGNIFICANT: "not significant",
            BASE_FAILED: "failed in the baseline", BOTH_FAILED: "failed on both sides",
            ONLY_BASE: "only in the baseline", ONLY_NEW: "without a baseline"}[code]


def _env_line(run_machines: list[MachineId]) -> str:
    if not run_machines:
        return "machine unknown"
    return "; ".join(describe_machine(m) for m in run_machines)


FEW_REPS_PREFIX = "fewer than "


def cell_notes(cells: Sequence[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """(cell, its warnings) for the cells that have any, given as (cell,
    warnings) pairs; when several cells have too few repetitions the
    comparison's summary warning says so once, and their notes leave it out
    (a folder of 125 cells gave 125 such lines). The Markdown and the HTML
    page both list these."""
    few = [name for name, warnings in cells if any(w.startswith(FEW_REPS_PREFIX) for w in warnings)]
    fold = len(few) > 1
    out = []
    for name, warnings in cells:
        own = [w for w in warnings if not (fold and w.startswith(FEW_REPS_PREFIX))]
        if own:
            out.append((name, own))
    return out


def cell_name(workload: Any, threads: Any, allocator: Any) -> str:
    return f"{workload}, threads {threads}, {allocator}"


def _notes_markdown(cells: Sequence[CellComparison]) -> list[str]:
    """The cells' warnings, one line per cell (cell_notes)."""
    found = cell_notes([(f"{_md(cell.workload)}, threads {_md(cell.threads)}, {_md(cell.allocator)}",
                         cell.warnings) for cell in cells])
    lines = [f"- {name}: {_md('; '.join(own))}" for name, own in found]
    return ["⚠ notes:", "", *lines, ""] if lines else []


def to_markdown(comparison: Comparison) -> str:
    """Markdown for a terminal or a CI step summary: a header, warnings, one
    table per workload group, geometric means per allocator, the verdict."""
    c = comparison
    lines: list[str] = []
    if c.mode == "runs":
        lines.append("## heaplab compare: BASE → NEW")
        lines.append("")
        lines.append(f"- BASE: `{_md(c.base_path)}` ({_md(_env_line(c.base_machines))})")
        lines.append(f"- NEW: `{_md(c.new_path)}` ({_md(_env_line(c.new_machines))})")
    else:
        lines.append(f"## heaplab compare: allocators against {c.baseline_alloc}")
        lines.append("")
        lines.append(f"- run: `{_md(c.base_path)}` ({_md(_env_line(c.base_machines))})")
    lines.append(f"- metric: {c.metric or 'each workload’s primary metric'}; "
                 f"threshold {c.threshold:.0%}; " + (
                     "no significance test: the counts are exact, a change beyond the threshold "
                     "counts" if exact_only(c) else
                     f"significance: {_tests_text(c)}, p < {c.alpha:g}"))
    if any(side is not None and side.per_operation is not None
           for cell in c.cells for side in (cell.base, cell.new)):
        lines.append(f"- {perop.SUFFIX}: instructions per operation, the count over the "
                     f"allocator calls the workload made (its documents' `operations`)")
    if not exact_only(c):
        lines.append(f"- {detectable_method_text(detectable.POWER, detectable.TRIALS)}")
    lines.append("")
    for warning in c.warnings:
        lines.append(f"> **Warning:** {_md(warning)}")
        lines.append("")
    ratio_head = "NEW/BASE" if c.mode == "runs" else f"ratio to {c.baseline_alloc}"
    if any(cell.paired for cell in c.cells):
        ratio_head = f"paired ratio to {c.baseline_alloc} [min–max]"
    base_head = "BASE" if c.mode == "runs" else c.baseline_alloc
    new_head = "NEW" if c.mode == "runs" else "allocator"
    groups: dict[str, list[CellComparison]] = {}
    for cell in c.cells:
        groups.setdefault(cell.group, []).append(cell)
    for group, cells in groups.items():
        lines.append(f"### {_md(group)}")
        lines.append("")
        lines.append(f"| workload | threads | allocator | metric | {_md(base_head)} median "
                     f"[min–max] | {new_head} median [min–max] | spread (max÷min, cv) | n | "
                     f"{_md(ratio_head)} | p | detectable | verdict |")
        lines.append("|---|---:|---|---|---:|---:|---|---:|---:|---:|---:|---|")
        for cell in cells:
            metric = cell.metric or "–"
            if cell.unit or cell.better:
                metric += f" ({', '.join(x for x in (cell.unit, cell.better and cell.better + ' is better') if x)})"
            n = f"{cell.base.n if cell.base else 0}/{cell.new.n if cell.new else 0}"
            ratio = "–" if cell.ratio is None else f"{cell.ratio:.3f} ({cell.ratio - 1:+.1%})"
            if cell.paired:
                ratio += f" [{cell.paired.ratio_min:.3f}–{cell.paired.ratio_max:.3f}]"
            verdict = _verdict_text(c, cell.verdict) + _detectable_note(cell, c.threshold)
            if cell.warnings:
                verdict += " ⚠"
            lines.append(f"| {_md(cell.workload)} | {_md(cell.threads)} | {_md(cell.allocator)} | "
                         f"{_md(metric)} | {_side(cell.base)} | {_side(cell.new)} | "
                         f"{_spread_text(cell)} | {n} | {ratio} | "
                         f"{'exact' if cell.test == 'deterministic' else format_p(cell.p_value)} | "
                         f"{_detectable_text(cell)} | {verdict} |")
        lines.append("")
    lines += _notes_markdown(c.cells)
    geomeans = c.geomeans()
    if geomeans:
        against = "BASE" if c.mode == "runs" else c.baseline_alloc
        lines.append(f"### Geometric mean per allocator (against {_md(against)}; below 1 is better)")
        lines.append("")
        for g in geomeans:
            lines.append(f"- {_md(g.allocator)}: {g.ratio:.3f}× over {fmt.cells(g.cells)} "
                         f"({_geomean_words(g.ratio)})")
        lines.append("")
    advice_line = c.recommendation()
    if advice_line:
        lines.append(advice_line)
        lines.append("")
    lines.append(verdict_line(c))
    return "\n".join(lines) + "\n"


def _tests_text(comparison: Comparison) -> str:
    tests = []
    if any(cell.paired for cell in comparison.cells):
        tests.append("two-sided Wilcoxon signed-rank on the per-repetition ratios "
                     "(repetition k against repetition k)")
    if any(cell.test in ("exact", "normal") for cell in comparison.cells) or not tests:
        tests.append("two-sided Mann-Whitney U")
    return "; ".join(tests)


def detectable_method_text(power: float, trials: int) -> str:
    return (f"detectable: the smallest change the test flags in {power:.0%} of {trials} "
            f"resamplings of the cell's own repetitions (spread: max ÷ min and coefficient of "
            f"variation; exact counts have neither)")


def spread_text(test: str | None, sides: Sequence[tuple[float | None, float | None]]) -> str:
    """`×1.60, cv 16.1% · ×1.58, cv 15.9%`: each side's (max ÷ min, cv);
    `exact` for instruction counts, which do not vary by chance."""
    if test == "deterministic":
        return "exact"
    if not sides:
        return "–"
    return " · ".join(stability.format_variation(stability.Variation(ratio, cv))
                      for ratio, cv in sides)


def _spread_text(cell: CellComparison) -> str:
    return spread_text(cell.test, [(s.max_over_min, s.cv) for s in (cell.base, cell.new)
                                   if s is not None and s.n])


def format_effect(effect: float) -> str:
    return f"±{effect:.0%}" if effect >= 0.01 else f"±{effect:.1%}"


def detectable_text(test: str | None, effect: float | None) -> str:
    """The detectable column: `±34%`, `none` (too few repetitions for any
    p < alpha), `exact` (instruction counts), `–` (no test ran)."""
    if test == "deterministic":
        return "exact"
    if test is None:
        return "–"
    return "none" if effect is None else format_effect(effect)


def _detectable_text(cell: CellComparison) -> str:
    return detectable_text(cell.test, cell.detectable.effect if cell.detectable else None)


def detectable_note(test: str | None, verdict: str, effect: float | None, n: int,
                    threshold: float) -> str:
    """`; changes below 34% are not detectable with 9 repetitions` beside a
    verdict that the noise makes uninformative ("not significant", or
    "unchanged" with a detectable effect above the threshold); n: the
    repetitions the test had (pairs, or the smaller side)."""
    if test in (None, "deterministic") or verdict not in (NOT_SIGNIFICANT, UNCHANGED):
        return ""
    if effect is None:
        return f"; no change is detectable with {n} repetitions"
    if verdict == UNCHANGED and effect <= threshold:
        return ""
    return f"; changes below {effect:.0%} are not detectable with {n} repetitions"


def tested_n(paired_n: int | None, base_n: int, new_n: int) -> int:
    """The repetitions a cell's test had: its pairs when paired, else the
    smaller side."""
    return paired_n if paired_n is not None else min(base_n, new_n)


def _detectable_note(cell: CellComparison, threshold: float) -> str:
    n = tested_n(cell.paired.n if cell.paired else None,
                 cell.base.n if cell.base else 0, cell.new.n if cell.new else 0)
    return detectable_note(cell.test, cell.verdict,
                           cell.detectable.effect if cell.detectable else None, n, threshold)


def _geomean_words(ratio: float) -> str:
    """`4.8% better` / `20.0% worse` / `the same` for a cost ratio."""
    if ratio < 1:
        return f"{1 - ratio:.1%} better"
    if ratio > 1:
        return f"{ratio - 1:.1%} worse"
    return "the same"


def _machines_json(machines: list[MachineId]) -> list[dict[str, Any]]:
    return [dict(zip(MACHINE_KEYS, m)) for m in machines]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _detectable_json(found: detectable.Detectable | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {"effect": found.effect, "up": found.up, "down": found.down, "paired": found.paired,
            "n_base": found.n_base, "n_new": found.n_new}


def to_json(comparison: Comparison) -> dict[str, Any]:
    """The machine-readable form, schema "heaplab.compare/1"."""
    c = comparison
    return {
        "schema": COMPARE_SCHEMA,
        "mode": c.mode,
        "base": {"path": c.base_path, "machines": _machines_json(c.base_machines)},
        "new": {"path": c.new_path, "machines": _machines_json(c.new_machines)},
        "baseline_alloc": c.baseline_alloc,
        "metric": c.metric,
        "threshold": c.threshold,
        "alpha": c.alpha,
        "forced": c.forced,
        "recommended_repetitions": RECOMMENDED_REPETITIONS,
        "cells": [{
            "workload": cell.workload, "group": cell.group, "threads": cell.threads,
            "allocator": cell.allocator, "base_allocator": cell.base_allocator,
            "metric": cell.metric, "unit": cell.unit, "better": cell.better,
            "base": cell.base.to_json() if cell.base else None,
            "new": cell.new.to_json() if cell.new else None,
            "ratio": _finite(cell.ratio), "change": _finite(cell.change),
            "u": cell.u, "p_value": cell.p_value, "test": cell.test,
            "significant": cell.significant, "verdict": cell.verdict,
            "detectable": _detectable_json(cell.detectable),
            "unpaired": None if cell.paired is None else {
                "u": cell.u, "p_value": cell.unpaired_p, "test": "mann-whitney",
                "detectable": _detectable_json(cell.unpaired_detectable)},
            "paired": None if cell.paired is None else {
                **cell.paired.to_json(), "detectable": _detectable_json(cell.paired.detectable)},
            "too_noisy": cell.noisy.to_json() if cell.noisy else None,
            "warnings": cell.warnings,
        } for cell in c.cells],
        "detectable_method": {"power": detectable.POWER, "trials": detectable.TRIALS,
                              "seed": detectable.SEED, "resampled": "the cell's own repetitions"},
        "recommendation": advice.recommendation_json(c.noisy(), c.threshold),
        "geomean": [{"allocator": g.allocator, "ratio": g.ratio, "cells": g.cells}
                    for g in c.geomeans()],
        "counts": c.counts(),
        "verdict": "regression" if c.regression() else "ok",
        "exit_code": c.exit_code(),
        "warnings": c.warnings,
    }
