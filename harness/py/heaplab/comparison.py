"""Comparing two runs, or allocators within one run: the statistics (pure).

From a run folder's documents (heaplab.runfolder) to a Comparison: each
cell's samples, their median and spread, the test (Mann-Whitney U on two
runs; the signed-rank test on per-repetition ratios within one interleaved
run; none for instruction counts, which are exact), the verdict, and the
warnings. heaplab.compare_render writes it as Markdown and JSON;
heaplab.compare is the command.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import advice, detectable, fmt, paired as paired_mod, perop, stability, stats
from .catalog import format_params
from .mannwhitney import RECOMMENDED_REPETITIONS, mann_whitney_u
from .runfolder import (MACHINE_INDEPENDENT_METRICS, OK as OK_STATUS, CellKey, MachineId, RunFolder,
                        RunFolderError, distinct_machines, key_of, machine_difference, machines_of)

DEFAULT_THRESHOLD = advice.DEFAULT_THRESHOLD
DEFAULT_ALPHA = advice.DEFAULT_ALPHA

EXIT_OK = 0
EXIT_REGRESSION = 1

# Verdict codes (JSON) and how the Markdown says them.
FASTER = "faster"
SLOWER = "slower"
UNCHANGED = "unchanged"
NOT_SIGNIFICANT = "not_significant"
NEW_FAILED = "new_failed"
BASE_FAILED = "base_failed"
BOTH_FAILED = "both_failed"
ONLY_BASE = "only_base"
ONLY_NEW = "only_new"
VERDICT_ORDER = (SLOWER, NEW_FAILED, FASTER, UNCHANGED, NOT_SIGNIFICANT,
                 BASE_FAILED, BOTH_FAILED, ONLY_BASE, ONLY_NEW)

BETTER_VALUES = ("lower", "higher")
UNGROUPED = "other"  # table heading for workloads whose documents name no group


class CompareInputError(RunFolderError):
    """Bad input to compare; str(error) is one line naming the problem."""




@dataclass
class Samples:
    """One cell's repetitions of one metric, as read from a run folder.

    values: the metric's value in each repetition that produced one.
    failed: repetitions whose status is not "ok" (crashed, timeout, error).
    no_value: "ok" repetitions without a value for the metric (null or absent).
    """

    workload: str
    group: str | None
    threads: Any
    allocator: str
    metric: str | None = None
    unit: str | None = None
    better: str | None = None
    values: list[float] = field(default_factory=list)
    # the repetition number ("rep") of each value, None where a document has none
    reps: list[Any] = field(default_factory=list)
    failed: int = 0
    no_value: int = 0
    # the workload parameters the cell ran with (the first document that
    # names them): sizes differ between --quick, --full and --param runs
    params: dict[str, Any] | None = None
    # the allocator calls of each repetition with a value that counts them
    operations: list[float] = field(default_factory=list)


@dataclass
class SideSummary:
    """Median and spread of one side's samples (max_over_min and cv as
    stability.variation gives them); `operations`, the median count of
    allocator calls where the documents have one, and `per_operation`, the
    median over it for an instruction count (heaplab.perop)."""

    n: int
    median: float
    min: float
    max: float
    failed: int
    no_value: int
    max_over_min: float | None = None
    cv: float | None = None
    operations: float | None = None
    per_operation: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "median": self.median, "min": self.min, "max": self.max,
                "max_over_min": self.max_over_min, "cv": self.cv,
                "failed": self.failed, "no_value": self.no_value,
                "operations": self.operations, "per_operation": self.per_operation}


@dataclass
class CellComparison:
    """One cell's comparison. `ratio` is NEW median / BASE median; `change`
    is ratio - 1; `p_value` is the two-sided Mann-Whitney p (None when a side
    has no values)."""

    workload: str
    group: str
    threads: Any
    allocator: str
    base_allocator: str
    metric: str | None
    unit: str | None
    better: str | None
    base: SideSummary | None
    new: SideSummary | None
    ratio: float | None = None
    change: float | None = None
    u: float | None = None
    p_value: float | None = None
    test: str | None = None
    significant: bool = False
    verdict: str = UNCHANGED
    warnings: list[str] = field(default_factory=list)
    # the detectable effect of the test that decided (the paired one when
    # there is one), and of the unpaired Mann-Whitney test beside it
    detectable: detectable.Detectable | None = None
    unpaired_detectable: detectable.Detectable | None = None
    unpaired_p: float | None = None
    paired: paired_mod.PairedResult | None = None
    # set when the detectable effect is above the threshold
    noisy: advice.NoisyCell | None = None

    def label(self) -> str:
        return f"{self.workload}/{self.allocator}/{self.threads}t"

    def cost_ratio(self) -> float | None:
        """NEW/BASE oriented so that below 1 means NEW is better: the ratio
        itself for lower-is-better metrics, its inverse for higher-is-better."""
        if self.base is None or self.new is None or self.base.n == 0 or self.new.n == 0:
            return None
        if self.base.median <= 0 or self.new.median <= 0:
            return None
        ratio = self.new.median / self.base.median
        return ratio if self.better == "lower" else 1.0 / ratio


@dataclass
class GeoMean:
    """Geometric mean of one allocator's cost ratios over `cells` cells."""

    allocator: str
    ratio: float
    cells: int


@dataclass
class Comparison:
    """Everything compare found; rendered by to_markdown / to_json."""

    mode: str                      # "runs" or "allocators"
    base_path: str
    new_path: str
    base_label: str                # "BASE" or the baseline allocator's name
    new_label: str                 # "NEW" or "allocator"
    baseline_alloc: str | None
    metric: str | None             # as requested; None = each document's primary
    threshold: float
    alpha: float
    forced: bool
    base_machines: list[MachineId]  # machines_of(BASE); more than one: a mixed run
    new_machines: list[MachineId]
    cells: list[CellComparison]
    warnings: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many cells got each verdict (every verdict code present)."""
        result = {code: 0 for code in VERDICT_ORDER}
        for cell in self.cells:
            result[cell.verdict] += 1
        return result

    def regression(self) -> bool:
        """True when the exit status must be 1."""
        return any(c.verdict in (SLOWER, NEW_FAILED) for c in self.cells)

    def exit_code(self) -> int:
        return EXIT_REGRESSION if self.regression() else EXIT_OK

    def noisy(self) -> list[advice.NoisyCell]:
        """The cells whose detectable effect is above the threshold."""
        return [c.noisy for c in self.cells if c.noisy is not None]

    def recommendation(self) -> str | None:
        return advice.recommendation(self.noisy(), self.threshold)

    def geomeans(self) -> list[GeoMean]:
        """Per allocator (in name order), the geometric mean of its cells'
        cost ratios (see CellComparison.cost_ratio)."""
        by_alloc: dict[str, list[float]] = {}
        for cell in self.cells:
            ratio = cell.cost_ratio()
            if ratio is not None:
                by_alloc.setdefault(cell.allocator, []).append(ratio)
        return [GeoMean(alloc, math.exp(statistics.fmean(math.log(r) for r in ratios)), len(ratios))
                for alloc, ratios in sorted(by_alloc.items())]


# --- reading samples ----------------------------------------------------------

def _cell_key(doc: dict[str, Any]) -> CellKey:
    """The document's cell, its parameters left out: cells of two runs are
    matched by workload, threads and allocator, and parameters that differ
    are refused (_check_params) rather than left unmatched."""
    key = key_of(doc)
    assert key is not None
    return CellKey(key.workload, key.threads, key.allocator)


def collect_samples(run: RunFolder, metric: str | None = None) -> dict[CellKey, Samples]:
    """Groups a run's documents into cells and gathers each cell's values of
    `metric` (default: the documents' primary metric). Raises
    CompareInputError when a document lacks its workload or allocator name, or
    when a metric's `better` is not "lower"/"higher" or changes within a cell."""
    cells: dict[CellKey, Samples] = {}
    for number, doc in enumerate(run.documents, start=1):
        workload = doc.get("workload") or {}
        allocator = doc.get("allocator") or {}
        if not workload.get("name") or not allocator.get("name"):
            raise CompareInputError(
                f"{run.path}: document {number} has no workload.name or allocator.name")
        key = _cell_key(doc)
        samples = cells.get(key)
        if samples is None:
            samples = Samples(workload=key.workload, group=None, threads=key.threads,
                              allocator=key.allocator)
            cells[key] = samples
        if samples.group is None and workload.get("group"):
            # a failed cell's stand-in document may not name the group
            samples.group = str(workload["group"])
        if samples.params is None and isinstance(workload.get("params"), dict):
            samples.params = dict(workload["params"])
        name = metric or doc.get("primary")
        if samples.metric is None and name:
            samples.metric = name
        if doc.get("status") != OK_STATUS:
            samples.failed += 1
            continue
        entry = (doc.get("metrics") or {}).get(name) if name else None
        value = entry.get("value") if isinstance(entry, dict) else None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            samples.no_value += 1
            continue
        better = entry.get("better")
        if better not in BETTER_VALUES:
            raise CompareInputError(
                f"{run.path}: document {number}: metric {name!r} has better={better!r} "
                f"(expected 'lower' or 'higher')")
        if samples.better is not None and samples.better != better:
            raise CompareInputError(
                f"{run.path}: cell {key.workload}/{key.threads}/{key.allocator}: metric {name!r} is both "
                f"lower- and higher-is-better")
        samples.better = better
        samples.unit = entry.get("unit", samples.unit)
        samples.values.append(float(value))
        samples.reps.append(doc.get("rep"))
        operations = perop.operations_of(doc)
        if operations is not None:
            samples.operations.append(float(operations))
    return cells


def _require_metric(runs: list[RunFolder], cells: list[dict[CellKey, Samples]],
                    metric: str | None) -> None:
    """Refuses a --metric that no document of the runs carries."""
    if metric is None or any(s.values for side in cells for s in side.values()):
        return
    known = sorted({name for run in runs for doc in run.documents
                    for name in (doc.get("metrics") or {})})
    raise CompareInputError(f"no document has a value for metric {metric!r} "
                            f"(metrics present: {', '.join(known) or 'none'})")


def summarize(samples: Samples) -> SideSummary:
    """Median and min-max of one side (NaN-free; n = 0 gives zeros), with
    instructions per operation for an instruction count whose documents
    count the allocator calls."""
    found = stats.spread(samples.values)
    if found is None:
        return SideSummary(0, 0.0, 0.0, 0.0, samples.failed, samples.no_value)
    spread = stability.variation(samples.values)
    counted = stats.spread(samples.operations)
    operations = counted.median if counted else None
    per_operation = (perop.per_operation(found.median, operations)
                     if perop.applies(samples.metric) else None)
    return SideSummary(found.n, found.median, found.min, found.max,
                       samples.failed, samples.no_value, spread.max_over_min, spread.cv,
                       operations, per_operation)


def drift_warning(samples: Samples, threshold: float, who: str) -> str | None:
    """`system's repetitions rise 12.0% ...` when the side drifts beyond the
    threshold and its scatter (stability.drift), else None."""
    found = stability.drift(stability.in_run_order(samples.values, samples.reps))
    if found is None or not found.beyond(threshold):
        return None
    return f"{who} {stability.describe_drift(found)}: the machine drifted during the run"


# --- comparing ------------------------------------------------------------------

def decide(base_median: float, new_median: float, better: str, p_value: float,
           threshold: float, alpha: float) -> tuple[float | None, str]:
    """(ratio NEW/BASE, verdict) for two sides that both have values.

    The medians must differ by more than `threshold` (relative to BASE) and
    the test must give p < alpha before a cell is faster or slower.
    """
    if base_median == 0:
        ratio = 1.0 if new_median == 0 else None
    else:
        ratio = new_median / base_median
    beyond = ratio is None or abs(ratio - 1.0) > threshold
    if not beyond:
        return ratio, UNCHANGED
    if p_value >= alpha:
        return ratio, NOT_SIGNIFICANT
    worse = new_median > base_median if better == "lower" else new_median < base_median
    return ratio, SLOWER if worse else FASTER


# Metrics that do not move from run to run: valgrind's instruction counts of
# the same binary and inputs agree to a few parts per million. A rank test
# would only measure how few repetitions there are, so for these the verdict
# rests on the threshold alone, provided each side's own spread is well
# inside it (otherwise the figure is not deterministic here after all).
DETERMINISTIC_METRICS = frozenset({"instructions"})
DETERMINISTIC_SPREAD_SHARE = 0.1   # of the threshold


def _decide_deterministic(cell: CellComparison, base: Samples, new: Samples,
                          threshold: float) -> CellComparison:
    assert cell.base is not None and cell.new is not None and cell.better is not None
    cell.test = "deterministic"
    spreads = [(max(s.values) - min(s.values)) / cell_median
               for s, cell_median in ((base, cell.base.median), (new, cell.new.median))
               if cell_median > 0]
    steady = all(spread <= threshold * DETERMINISTIC_SPREAD_SHARE for spread in spreads)
    if not steady:
        cell.warnings.append(f"{cell.metric} varies by more than "
                             f"{threshold * DETERMINISTIC_SPREAD_SHARE:.1%} between repetitions")
    cell.significant = steady
    cell.ratio, cell.verdict = decide(cell.base.median, cell.new.median, cell.better,
                                      0.0 if steady else 1.0, threshold, alpha=0.5)
    cell.change = None if cell.ratio is None else cell.ratio - 1.0
    return cell


def compare_cell(base: Samples | None, new: Samples | None, base_allocator: str,
                 threshold: float, alpha: float, pair: bool = False,
                 drift_labels: tuple[str | None, str | None] = ("BASE", "NEW")) -> CellComparison:
    """Compares one cell's NEW samples with its BASE samples (either may be
    None when the cell exists on one side only).

    pair: test the per-repetition ratios NEW_k/BASE_k (signed-rank) rather
    than the two sides as independent samples (Mann-Whitney); the two sides
    must come from one interleaved run. drift_labels: what to call BASE and
    NEW when their repetitions drift, None for a side not to check here
    (the caller may rather say it once per run)."""
    ref = new if new is not None else base
    assert ref is not None, "compare_cell needs at least one side"

    def known(attribute: str) -> Any:
        # NEW's description of the cell, else BASE's (a failed side may lack it)
        for side in (new, base):
            if side is not None and getattr(side, attribute):
                return getattr(side, attribute)
        return None

    better, metric = known("better"), known("metric")
    cell = CellComparison(
        workload=ref.workload, group=known("group") or UNGROUPED, threads=ref.threads,
        allocator=ref.allocator, base_allocator=base_allocator, metric=metric,
        unit=known("unit"), better=better,
        base=summarize(base) if base is not None else None,
        new=summarize(new) if new is not None else None)
    if base is None:
        cell.verdict = ONLY_NEW
        return cell
    if new is None:
        cell.verdict = ONLY_BASE
        return cell
    if base.better and new.better and base.better != new.better:
        raise CompareInputError(
            f"cell {ref.workload}/{ref.threads}/{ref.allocator}: metric {metric!r} is "
            f"{base.better}-is-better in BASE but {new.better}-is-better in NEW")
    if base.metric and new.metric and base.metric != new.metric:
        raise CompareInputError(
            f"cell {ref.workload}/{ref.threads}/{ref.allocator}: BASE measures {base.metric!r} "
            f"but NEW measures {new.metric!r}; choose one with --metric")
    for side, samples in (("BASE", base), ("NEW", new)):
        lost = samples.failed + samples.no_value
        if lost:
            cell.warnings.append(f"{lost} of {lost + len(samples.values)} repetitions in "
                                 f"{side} gave no value")
    if not base.values or not new.values:
        cell.verdict = (BOTH_FAILED if not base.values and not new.values
                        else NEW_FAILED if not new.values else BASE_FAILED)
        return cell
    if metric in DETERMINISTIC_METRICS:
        return _decide_deterministic(cell, base, new, threshold)
    if min(len(base.values), len(new.values)) < RECOMMENDED_REPETITIONS:
        cell.warnings.append(f"fewer than {RECOMMENDED_REPETITIONS} repetitions per side "
                             f"({len(base.values)}/{len(new.values)}): the test is weak")
    for side, samples in zip(drift_labels, (base, new)):
        warning = drift_warning(samples, threshold, f"{side}'s repetitions") if side else None
        if warning:
            cell.warnings.append(warning)
    test = mann_whitney_u(new.values, base.values)
    cell.u, cell.p_value, cell.test = test.u_x, test.p_value, test.method
    cell.unpaired_p = test.p_value
    cell.unpaired_detectable = cell.detectable = detectable.unpaired(base.values, new.values, alpha)
    assert cell.base is not None and cell.new is not None and better is not None
    # what decides: medians of the two sides, or the median paired ratio
    base_middle, new_middle, p_value = cell.base.median, cell.new.median, test.p_value
    repetitions, log_ratios = min(len(base.values), len(new.values)), None
    if pair:
        pairs = paired_mod.pairs_by_rep(base.values, base.reps, new.values, new.reps)
        result = paired_mod.paired_test(pairs, alpha) if pairs else None
        if result is None:
            cell.warnings.append("repetitions cannot be paired (numbers missing or repeated, "
                                 "or a value not positive): tested as independent samples")
        else:
            cell.paired, cell.detectable = result, result.detectable
            cell.test, cell.p_value, cell.u = f"signed-rank {result.method}", result.p_value, None
            base_middle, new_middle, p_value = 1.0, result.ratio_median, result.p_value
            repetitions, log_ratios = result.n, list(result.log_ratios)
    cell.significant = p_value < alpha
    cell.ratio, cell.verdict = decide(base_middle, new_middle, better, p_value, threshold, alpha)
    cell.change = None if cell.ratio is None else cell.ratio - 1.0
    if cell.verdict in (UNCHANGED, NOT_SIGNIFICANT):
        effect = cell.detectable.effect if cell.detectable else None
        cell.noisy = advice.assess(cell.label(), effect, repetitions, threshold, alpha,
                                   base.values, new.values, log_ratios)
    return cell


def _check_machines(runs: list[RunFolder], cells: Iterable[CellComparison], force: bool
                    ) -> list[str]:
    """Refuses (CompareInputError) timing comparisons across machines unless
    force; returns the warnings to show."""
    timing = sorted({c.metric for c in cells
                     if c.base is not None and c.new is not None and c.metric
                     and c.metric not in MACHINE_INDEPENDENT_METRICS})
    if not timing:
        return []
    machines = distinct_machines(ident for run in runs for ident in machines_of(run))
    if len(machines) <= 1:
        unknown = [str(r.path) for r in runs if not machines_of(r)]
        if unknown:
            return [f"cannot tell which machine {', '.join(unknown)} ran on (no env)"]
        return []
    difference = machine_difference(machines[0], machines[1])
    if not force:
        raise CompareInputError(
            f"runs come from different machines ({difference}): timing metrics "
            f"({', '.join(timing)}) cannot be compared; use --metric instructions, or --force")
    return [f"compared across different machines because of --force ({difference})"]


def _params_text(params: dict[str, Any]) -> str:
    return format_params(sorted(params.items())) or "none"


def _check_params(base_cells: dict[CellKey, Samples], new_cells: dict[CellKey, Samples],
                  force: bool) -> list[str]:
    """Refuses (CompareInputError) cells that ran with different workload
    parameters (another size is another workload) unless force; returns the
    warnings to show."""
    differing = sorted((k for k in base_cells.keys() & new_cells.keys()
                        if base_cells[k].params is not None and new_cells[k].params is not None
                        and base_cells[k].params != new_cells[k].params), key=str)
    if not differing:
        return []
    k = differing[0]
    what = (f"{len(differing)} cell(s) ran with different workload parameters, e.g. "
            f"{k.label()}: BASE {_params_text(base_cells[k].params or {})}; "
            f"NEW {_params_text(new_cells[k].params or {})}")
    if not force:
        raise CompareInputError(f"{what} (compare runs of the same sizes: --quick, --full and "
                                f"--param change them; or --force)")
    return [f"compared despite different parameters because of --force: {what}"]


def _baseline_drift(baseline: Iterable[Samples], threshold: float) -> list[str]:
    """One warning per baseline cell whose repetitions drift."""
    found = []
    for samples in baseline:
        warning = drift_warning(samples, threshold,
                                f"{samples.allocator}'s repetitions of {samples.workload} "
                                f"({_threads_text(samples.threads)})")
        if warning:
            found.append(warning + "; paired ratios share it, independent samples do not")
    return found


def _threads_text(threads: Any) -> str:
    return "1 thread" if threads == 1 else f"{threads} threads"


def _finish(comparison: Comparison) -> Comparison:
    """Sorts cells and adds the summary warnings."""
    comparison.cells.sort(key=lambda c: (c.group, c.workload, str(c.threads), c.allocator))
    weak = sum(1 for c in comparison.cells
               if c.base and c.new and c.base.n and c.new.n and c.test != "deterministic"
               and min(c.base.n, c.new.n) < RECOMMENDED_REPETITIONS)
    if weak:
        comparison.warnings.append(
            f"{fmt.cells(weak)} with fewer than {RECOMMENDED_REPETITIONS} repetitions on a side; "
            f"results are unreliable ({RECOMMENDED_REPETITIONS}+ repetitions recommended)")
    return comparison


def _check_options(threshold: float, alpha: float) -> None:
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise CompareInputError(f"--threshold {threshold}: must be a fraction >= 0, e.g. 0.05")
    if not 0 < alpha < 1:
        raise CompareInputError(f"--alpha {alpha}: must be between 0 and 1, e.g. 0.05")


def compare_runs(base: RunFolder, new: RunFolder, metric: str | None = None,
                 threshold: float = DEFAULT_THRESHOLD, alpha: float = DEFAULT_ALPHA,
                 force: bool = False) -> Comparison:
    """Every cell of NEW against the same cell of BASE.

    Raises CompareInputError on bad input: no cells in common, or timings from
    different machines without force."""
    _check_options(threshold, alpha)
    base_cells = collect_samples(base, metric)
    new_cells = collect_samples(new, metric)
    _require_metric([base, new], [base_cells, new_cells], metric)
    common = base_cells.keys() & new_cells.keys()
    if not common:
        raise CompareInputError(f"{base.path} and {new.path} have no cell in common")
    params_warnings = _check_params(base_cells, new_cells, force)
    cells = [compare_cell(base_cells.get(k), new_cells.get(k), k.allocator, threshold, alpha)
             for k in base_cells.keys() | new_cells.keys()]
    warnings = _check_machines([base, new], cells, force) + params_warnings
    comparison = Comparison(
        mode="runs", base_path=str(base.path), new_path=str(new.path),
        base_label="BASE", new_label="NEW", baseline_alloc=None, metric=metric,
        threshold=threshold, alpha=alpha, forced=force, base_machines=machines_of(base), new_machines=machines_of(new),
        cells=cells, warnings=warnings)
    return _finish(comparison)


def compare_allocators(run: RunFolder, baseline_alloc: str, metric: str | None = None,
                       threshold: float = DEFAULT_THRESHOLD, alpha: float = DEFAULT_ALPHA,
                       force: bool = False, pair: bool = True) -> Comparison:
    """Within one run, every allocator's cells against the baseline
    allocator's cell of the same (workload, threads): repetition k against
    repetition k (paired) unless pair is False.

    Raises CompareInputError when the baseline allocator is not in the run,
    or is the only allocator in it."""
    _check_options(threshold, alpha)
    samples = collect_samples(run, metric)
    _require_metric([run], [samples], metric)
    allocators = sorted({k.allocator for k in samples})
    if baseline_alloc not in allocators:
        raise CompareInputError(f"allocator {baseline_alloc!r} is not in {run.path} "
                                f"(it has: {', '.join(allocators)})")
    others = [k for k in samples if k.allocator != baseline_alloc]
    if not others:
        raise CompareInputError(f"{run.path} holds no allocator besides {baseline_alloc!r}")
    cells = [compare_cell(samples.get(k.with_allocator(baseline_alloc)), samples[k],
                          baseline_alloc, threshold, alpha, pair=pair, drift_labels=(None, None))
             for k in others]
    warnings = _check_machines([run], cells, force) + _baseline_drift(
        [s for k, s in sorted(samples.items())
         if k.allocator == baseline_alloc and s.values and s.metric not in DETERMINISTIC_METRICS],
        threshold)
    comparison = Comparison(
        mode="allocators", base_path=str(run.path), new_path=str(run.path),
        base_label=baseline_alloc, new_label="allocator", baseline_alloc=baseline_alloc,
        metric=metric, threshold=threshold, alpha=alpha, forced=force,
        base_machines=machines_of(run), new_machines=machines_of(run), cells=cells, warnings=warnings)
    return _finish(comparison)
