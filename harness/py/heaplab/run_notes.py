"""The notes under a run's tables: how steady each cell was, and what to do.

- a spread table: per cell, max ÷ min of the repetitions and their
  coefficient of variation (stability.variation);
- a drift warning for each baseline cell whose repetitions trend from the
  first to the last beyond their scatter (stability.drift);
- the recommendation line (advice) for the cells whose detectable effect
  against the baseline, repetition k paired with repetition k as
  `compare RUN --baseline-alloc` pairs them, is above compare's default
  threshold.

Instruction counts are deterministic: they get the spread table only.
"""
from __future__ import annotations

from typing import Any

from . import advice, paired, stability
from .comparison import DETERMINISTIC_METRICS
from .summary import STATUS_OK


def _label(cell: dict[str, Any]) -> str:
    return f"{cell['workload']}/{cell['allocator']}/{cell['threads']}t"


def spread_table(summary: dict[str, Any]) -> list[str]:
    allocs = [a["name"] for a in summary["allocators"]]
    index = {(c["workload"], int(c["threads"]), c["allocator"]): c for c in summary["cells"]}
    lines = ["## Spread of the repetitions", "",
             "Each cell: max ÷ min of its repetitions, and their coefficient of variation "
             "(standard deviation ÷ mean).", "",
             "| workload | threads | metric | " + " | ".join(allocs) + " |",
             "| --- | ---: | --- | " + " | ".join("---:" for _ in allocs) + " |"]
    for row in summary["rows"]:
        texts = []
        for alloc in allocs:
            cell = index.get((row["workload"], int(row["threads"]), alloc))
            ok = cell is not None and cell["status"] == STATUS_OK and cell["n"] > 1
            texts.append(stability.format_variation(stability.variation(cell["values"])) if ok
                         else "–")
        lines.append(f"| {row['workload']} | {row['threads']} | {row.get('metric') or '–'} | "
                     + " | ".join(texts) + " |")
    return lines + [""]


def notes(summary: dict[str, Any], threshold: float = advice.DEFAULT_THRESHOLD,
          alpha: float = advice.DEFAULT_ALPHA) -> list[str]:
    """Drift warnings and the recommendation line (Markdown lines)."""
    baseline = summary["baseline"]
    timed = [c for c in summary["cells"] if c["status"] == STATUS_OK
             and c["metric"] not in DETERMINISTIC_METRICS]
    bases = {(c["workload"], c["threads"]): c for c in timed if c["allocator"] == baseline}
    lines: list[str] = []
    for base in bases.values():
        found = stability.drift(stability.in_run_order(base["values"], base.get("reps") or []))
        if found is not None and found.beyond(threshold):
            lines += [f"> **Drift:** {baseline}'s repetitions of {base['workload']} "
                      f"({base['threads']}t) {stability.describe_drift(found)}: the machine "
                      f"changed during the run.", ""]
    noisy: list[advice.NoisyCell] = []
    for cell in timed:
        base = bases.get((cell["workload"], cell["threads"]))
        if base is None or cell is base or base["metric"] != cell["metric"]:
            continue
        pairs = paired.pairs_by_rep(base["values"], base.get("reps") or [],
                                    cell["values"], cell.get("reps") or [])
        result = paired.paired_test(pairs, alpha) if pairs else None
        if result is None:
            continue
        beyond = abs(result.ratio_median - 1) > threshold and result.p_value < alpha
        effect = result.detectable.effect if result.detectable else None
        if not beyond:
            found = advice.assess(_label(cell), effect, result.n, threshold, alpha,
                                  base["values"], cell["values"], list(result.log_ratios))
            if found is not None:
                noisy.append(found)
    line = advice.recommendation(noisy, threshold)
    if line:
        lines += [line.replace("cannot detect", f"cannot detect against {baseline}", 1), ""]
    return lines


def markdown(summary: dict[str, Any]) -> str:
    """The spread table and the notes; '' for a run with no repetitions to speak of."""
    if not any(c["status"] == STATUS_OK and c["n"] > 1 for c in summary["cells"]):
        return ""
    return "\n".join(spread_table(summary) + notes(summary))
