"""A published table beside this machine's figures: cells, ratios, orderings.

Pure: given a PublishedTable and the measured figures, it computes every cell
and renders Markdown; it never runs anything. Machines differ, so absolute
figures are shown but compared only through ratios to the table's own
baseline column, and the question each row answers is whether the published
ordering ("A faster than B") holds here.

`measured` maps Need(workload, threads, allocator, metric) -- plain 4-tuples
work too -- to either {"median", "min", "max", "n"} or a failure string such
as "crashed (SIGSEGV)" or "not installed (apt install libmimalloc2.0)".
A published figure is never shown as a measured one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from . import fmt, published, stats
from .catalog import TOUCH, TOUCH_NAMES, format_params
from .published import (BOUND_ABOUT, BOUND_AT_LEAST, BOUND_AT_MOST, LAYOUT_ALLOCATOR_ROWS,
                        LAYOUT_RATIO_CLAIMS, ROLE_ALLOCATOR, ROLE_REFERENCE, Column, Need,
                        PublishedTable, Ratio, Row, metric_value, reference_allocators,
                        with_phase_field)
from .runfolder import Failure, key_of

HOLDS = "holds"
DIFFERS = "differs"
NOT_APPLICABLE = "n/a"

SAME = "same"        # a relation: neither better nor worse
NOT_MEASURED = "not measured"
NOT_REPRODUCED = "not reproduced"
NOT_RUN = "not run, see the column list"

Measured = Mapping[tuple[str, int, str, str], "Mapping[str, Any] | str"]


@dataclass(frozen=True)
class CellResult:
    column: str
    published: float | None
    published_range: tuple[float, float] | None
    measured: float | None        # the row's statistic (median unless stated), scaled
    measured_min: float | None
    measured_max: float | None
    n: int | None
    failure: str | None           # why there is no measured figure
    published_ratio: float | None  # published / published baseline
    measured_ratio: float | None   # measured / measured baseline


@dataclass(frozen=True)
class Verdict:
    row: str
    a: str                 # column names; the claim is "a <relation> b"
    b: str
    published: str | None  # better word, worse word, SAME, or None (no published figures)
    here: str | None       # the same, from the measured figures
    verdict: str           # HOLDS, DIFFERS or NOT_APPLICABLE
    within_noise: bool     # the measured min-max ranges of a and b overlap
    why_na: str | None = None
    published_within_noise: bool = False  # published ranges overlap: published as a tie


@dataclass(frozen=True)
class RatioResult:
    """A ratio claim beside this machine's ratio of the same two medians."""
    claim: Ratio
    measured: float | None        # measured `of` / measured `to`, or None
    bound_met: bool | None        # the published bound holds here too; None for "about" or n/a


@dataclass(frozen=True)
class RowResult:
    row: Row
    cells: Mapping[str, CellResult]
    verdicts: tuple[Verdict, ...]
    ratio: RatioResult | None = None  # ratio-claims rows only


@dataclass(frozen=True)
class TableResult:
    table: PublishedTable
    rows: tuple[RowResult, ...]

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.rows for v in r.verdicts if v.verdict == verdict)

    @property
    def holds(self) -> int:
        return self.count(HOLDS)

    @property
    def differs(self) -> int:
        return self.count(DIFFERS)

    @property
    def not_applicable(self) -> int:
        return self.count(NOT_APPLICABLE)

    @property
    def compared(self) -> int:
        return self.holds + self.differs

    @property
    def holds_within_noise(self) -> int:
        return sum(1 for r in self.rows for v in r.verdicts if v.verdict == HOLDS and v.within_noise)


# ------------------------------------------------- measured figures from runs

def measured_from_documents(docs: Iterable[Mapping[str, Any]], needs: Iterable[Need],
                            unavailable: Mapping[str, str] | None = None
                            ) -> dict[Need, dict[str, Any] | str]:
    """The `measured` mapping from raw run documents (raw.jsonl): per need, the
    median, min and max over the repetitions that have the figure, or why
    there is none. `unavailable` maps an allocator that was not run to its
    reason ("not installed (apt install ...)")."""
    by_cell: dict[tuple[str, int, str], list[Mapping[str, Any]]] = {}
    for doc in docs:
        key = key_of(doc)
        if key is not None:
            by_cell.setdefault((key.workload, key.threads, key.allocator), []).append(doc)
    out: dict[Need, dict[str, Any] | str] = {}
    for need in needs:
        cell_docs = by_cell.get((need.workload, need.threads, need.allocator), [])
        values = [v for v in (metric_value(d, need.metric) for d in cell_docs) if v is not None]
        failures = [Failure.of(d).label for d in cell_docs if d.get("status") != "ok"]
        found = stats.spread(values)
        if found is not None:
            out[need] = {"median": found.median, "min": found.min, "max": found.max, "n": found.n}
        elif failures:
            out[need] = failures[0]
        elif cell_docs:
            out[need] = f"no figure {need.metric} in the run"
        elif unavailable and need.allocator in unavailable:
            out[need] = unavailable[need.allocator]
    return out


# ------------------------------------------------------------------ the cells

def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base == 0:
        return None
    return value / base


def _measured_entry(measured: Measured, key: tuple[str, int, str, str]) -> Mapping[str, Any] | str:
    entry = measured.get(key)
    if entry is None:
        return NOT_MEASURED
    if isinstance(entry, str):
        return entry or NOT_MEASURED
    if not isinstance(entry, Mapping):
        raise TypeError(f"measured figure for {key} must be a mapping or a failure string, "
                        f"not {type(entry).__name__}")
    return entry


def _num(entry: Mapping[str, Any], key: str, scale: float) -> float | None:
    v = entry.get(key)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v) * scale
    return None


def _measured_cell(table: PublishedTable, row: Row, col: Column, measured: Measured
                   ) -> tuple[float | None, float | None, float | None, int | None, str | None]:
    """(value, min, max, n, failure) for one cell."""
    if row.metric is None or row.workload is None:
        return None, None, None, None, NOT_REPRODUCED
    if col.role == ROLE_REFERENCE:
        metric = with_phase_field(row.metric, col.reference_field or "")
        # the live bytes are the workload's, whichever allocator ran it: baseline first
        failures = []
        for c in reference_allocators(table):
            entry = _measured_entry(measured, (row.workload, row.threads, c.runs_as or "", metric))
            if isinstance(entry, str):
                failures.append(entry)
            elif _num(entry, row.statistic, row.scale) is not None:
                return _from_entry(entry, row)
        return None, None, None, None, failures[0] if failures else NOT_MEASURED
    if col.runs_as is None:
        return None, None, None, None, NOT_RUN
    entry = _measured_entry(measured, (row.workload, row.threads, col.runs_as, row.metric))
    if isinstance(entry, str):
        return None, None, None, None, entry
    if _num(entry, row.statistic, row.scale) is None:
        return None, None, None, None, NOT_MEASURED
    return _from_entry(entry, row)


def _from_entry(entry: Mapping[str, Any], row: Row
                ) -> tuple[float | None, float | None, float | None, int | None, str | None]:
    n = entry.get("n")
    return (_num(entry, row.statistic, row.scale), _num(entry, "min", row.scale),
            _num(entry, "max", row.scale), n if isinstance(n, int) else None, None)


def _cells(table: PublishedTable, row: Row, measured: Measured) -> dict[str, CellResult]:
    columns = row.columns_used(table.columns)
    raw = {c.name: _measured_cell(table, row, c, measured) for c in columns}
    pub_base = row.figures.get(table.baseline)
    here_base = raw[table.baseline][0] if table.baseline in raw else None
    cells: dict[str, CellResult] = {}
    for c in columns:
        value, lo, hi, n, failure = raw[c.name]
        pub = row.figures.get(c.name)
        cells[c.name] = CellResult(
            column=c.name, published=pub, published_range=row.published_range.get(c.name),
            measured=value, measured_min=lo, measured_max=hi, n=n, failure=failure,
            published_ratio=_ratio(pub, pub_base), measured_ratio=_ratio(value, here_base))
    return cells


# --------------------------------------------------------------- the orderings

def _relation(a: float | None, b: float | None, better: str, words: tuple[str, str]) -> str | None:
    if a is None or b is None:
        return None
    if a == b:
        return SAME
    a_better = a < b if better == "lower" else a > b
    return words[0] if a_better else words[1]


def _ranges_overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    if a is None or b is None:
        return False
    return not (a[1] < b[0] or b[1] < a[0])


def _measured_range(c: CellResult) -> tuple[float, float] | None:
    if c.measured_min is None or c.measured_max is None:
        return None
    return (c.measured_min, c.measured_max)


def _pairs(table: PublishedTable) -> list[tuple[str, str]]:
    """Each allocator column against the baseline, then heaplab against mimalloc."""
    allocs = [c for c in table.columns if c.role == ROLE_ALLOCATOR]
    pairs = [(c.name, table.baseline) for c in allocs if c.name != table.baseline]
    heaplab = next((c for c in allocs if c.runs_as == "heaplab"), None)
    mimalloc = next((c for c in allocs if c.runs_as == "mimalloc"), None)
    if heaplab and mimalloc and table.baseline not in (heaplab.name, mimalloc.name):
        pairs.append((heaplab.name, mimalloc.name))
    return pairs


def _verdict(table: PublishedTable, row: Row, cells: Mapping[str, CellResult], a: str, b: str) -> Verdict:
    ca, cb = cells[a], cells[b]
    words = row.verdict_words or table.verdict_words
    published = _relation(ca.published, cb.published, row.better, words)
    here = _relation(ca.measured, cb.measured, row.better, words)
    # ranges only say something about medians
    medians = row.statistic == "median"
    noise = medians and _ranges_overlap(_measured_range(ca), _measured_range(cb))
    # where the authors' own min-max ranges overlap they published no ordering,
    # only two figures that cannot be told apart: compare that with here
    published_noise = medians and _ranges_overlap(ca.published_range, cb.published_range)
    if published is not None and published_noise:
        published = SAME
    if published is None:
        return Verdict(row.label, a, b, None, here, NOT_APPLICABLE, noise, "no published figure")
    if here is None:
        why = next((c.failure for c in (ca, cb) if c.measured is None), None) or NOT_MEASURED
        return Verdict(row.label, a, b, published, None, NOT_APPLICABLE, noise, why, published_noise)
    if published == SAME:
        # a published tie holds when the figures here cannot be told apart either
        holds = here == SAME or noise
    else:
        holds = here == published
    return Verdict(row.label, a, b, published, here, HOLDS if holds else DIFFERS, noise, None,
                   published_noise)


def _claimed_relation(claim: Ratio, better: str, words: tuple[str, str]) -> str | None:
    """The ordering of `of` against `to` that a ratio claim publishes, or None
    when its bound says none ("at least 0.8" allows either order)."""
    v = claim.value
    if claim.bound == BOUND_AT_LEAST and v <= 1 or claim.bound == BOUND_AT_MOST and v >= 1:
        return None
    if claim.bound == BOUND_ABOUT and v == 1:
        return SAME
    larger = v > 1
    of_better = not larger if better == "lower" else larger
    return words[0] if of_better else words[1]


def _bound_met(claim: Ratio, ratio: float | None) -> bool | None:
    if ratio is None or claim.bound == BOUND_ABOUT:
        return None
    return ratio >= claim.value if claim.bound == BOUND_AT_LEAST else ratio <= claim.value


def _ratio_row(table: PublishedTable, row: Row, measured: Measured) -> RowResult:
    """A ratio claim: its two cells, the measured ratio of their figures, and
    whether the ordering the claim implies holds here (the one verdict)."""
    claim = row.ratio
    assert claim is not None
    cells = _cells(table, row, measured)
    ca, cb = cells[claim.of], cells[claim.to]
    words = row.verdict_words or table.verdict_words
    here_ratio = _ratio(ca.measured, cb.measured)
    published = _claimed_relation(claim, row.better, words)
    here = _relation(ca.measured, cb.measured, row.better, words)
    noise = row.statistic == "median" and _ranges_overlap(_measured_range(ca), _measured_range(cb))
    if published is None:
        v = Verdict(row.label, claim.of, claim.to, None, here, NOT_APPLICABLE, noise,
                    "the published bound implies no ordering")
    elif row.metric is None or here is None:
        why = row.not_reproduced or next(
            (c.failure for c in (ca, cb) if c.measured is None), None) or NOT_MEASURED
        v = Verdict(row.label, claim.of, claim.to, published, None, NOT_APPLICABLE, noise, why)
    else:
        holds = (here == SAME or noise) if published == SAME else here == published
        v = Verdict(row.label, claim.of, claim.to, published, here, HOLDS if holds else DIFFERS, noise)
    return RowResult(row, cells, (v,), RatioResult(claim, here_ratio, _bound_met(claim, here_ratio)))


def reproduce(table: PublishedTable, measured: Measured) -> TableResult:
    """Every cell and ordering of `table` from the `measured` figures."""
    rows: list[RowResult] = []
    pairs = _pairs(table)
    for row in table.rows:
        if row.ratio is not None:
            rows.append(_ratio_row(table, row, measured))
            continue
        cells = _cells(table, row, measured)
        verdicts = tuple(_verdict(table, row, cells, a, b) for a, b in pairs) if row.metric else ()
        rows.append(RowResult(row, cells, verdicts))
    return TableResult(table, tuple(rows))


# -------------------------------------------------------------------- rendering

def fmt_published(v: float | None, decimals: int | None = None) -> str:
    """A published figure as written: whole numbers with thousands separators,
    others with the row's published decimals (46.50 stays 46.50)."""
    if v is None:
        return "—"
    if decimals is not None:
        return f"{v:,.{decimals}f}"
    if isinstance(v, int) or (abs(v) >= 1000 and float(v).is_integer()):
        return f"{int(v):,}"
    return repr(float(v))


fmt_measured = fmt.grouped


def fmt_ratio(r: float | None) -> str:
    return fmt.ratio(r, missing="—")


def summary_line(result: TableResult) -> str:
    """ "N of M orderings hold" with what was left out. """
    text = f"{result.holds} of {result.compared} orderings hold"
    extras = []
    if result.holds_within_noise:
        extras.append(f"{result.holds_within_noise} of them within the noise")
    if result.not_applicable:
        extras.append(f"{result.not_applicable} not comparable")
    return text + (f" ({'; '.join(extras)})" if extras else "")


def _mapping_line(table: PublishedTable, col: Column) -> str:
    if col.role == ROLE_REFERENCE:
        what = f"{col.name}: a workload figure ({col.reference_field}), measured here"
    elif col.runs_as is None:
        what = f"{col.name} → not run ({col.cannot_run})"
    else:
        what = f"{col.name} → {col.runs_as} (measured here)"
    if col.note:
        what += f"; {col.note}"
    if col.name == table.baseline and table.layout != LAYOUT_RATIO_CLAIMS:
        what += "; the baseline column"
    return f"- {what}"


def _cell_text(cell: CellResult, row: Row) -> str:
    d = row.decimals
    pub = fmt_published(cell.published, d)
    if cell.published_range:
        lo, hi = cell.published_range
        pub += f" [{fmt_published(lo, d)}–{fmt_published(hi, d)}]"
    if cell.published is not None and cell.published_ratio is not None:
        pub += f" ({fmt_ratio(cell.published_ratio)})"
    if row.suspect and cell.published is not None:
        pub += " (suspect)"
    here = _measured_text(cell, with_range=row.statistic == "median")
    if cell.measured is not None and cell.measured_ratio is not None:
        here += f" ({fmt_ratio(cell.measured_ratio)})"
    return f"published {pub} · here {here}"


def verdict_text(v: Verdict, with_row: bool = False) -> str:
    prefix = f"{v.row}: " if with_row else ""
    if v.published is None:
        return f"{prefix}{v.a} vs {v.b}: n/a ({v.why_na})"
    claim = f"{v.a} same as {v.b}" if v.published == SAME else f"{v.a} {v.published} than {v.b}"
    if v.published_within_noise:
        claim += " (published ranges overlap)"
    if v.here is None:
        here = f"n/a ({v.why_na})"
    elif v.published == SAME:
        here = "yes" if v.verdict == HOLDS else "no"
    else:
        here = "yes" if v.here == v.published else "no"
    text = f"{prefix}{claim}: published yes, here {here}"
    if v.verdict != NOT_APPLICABLE:
        text += f" — {v.verdict}"
        if v.within_noise:
            text += " (ranges overlap)"
    return text


_escape = fmt.md


def _md_table(header: list[str], lines: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_escape(h) for h in header) + " |",
           "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(_escape(c) for c in line) + " |" for line in lines]
    return out


def _layout_allocator_columns(result: TableResult) -> list[str]:
    t = result.table
    extras: list[str] = []
    for r in t.rows:
        extras += [k for k in r.published_extra if k not in extras]
    header = ["row"] + [c.name if c.runs_as in (None, c.name) else f"{c.name} → {c.runs_as}"
                        for c in t.columns]
    header += [f"{k} (published only)" for k in extras] + ["ordering (published / here)"]
    lines = []
    for rr in result.rows:
        label = rr.row.label + (" (suspect, see notes)" if rr.row.suspect else "")
        if rr.row.threads > 1 and "thread" not in rr.row.label:
            label += f" ({rr.row.threads} threads)"
        line = [label] + [_cell_text(rr.cells[c.name], rr.row) for c in t.columns]
        line += [fmt_published(rr.row.published_extra[k], rr.row.decimals)
                 if k in rr.row.published_extra else "—"
                 for k in extras]
        line.append("; ".join(verdict_text(v) for v in rr.verdicts) if rr.verdicts
                    else (rr.row.not_reproduced or "—"))
        lines.append(line)
    return _md_table(header, lines)


def _layout_allocator_rows(result: TableResult) -> list[str]:
    t = result.table
    header = ["allocator"] + [rr.row.label + (" (suspect)" if rr.row.suspect else "")
                              for rr in result.rows] + [f"ordering vs {t.baseline} (published / here)"]
    lines = []
    for c in t.columns:
        name = c.name if c.runs_as in (None, c.name) else f"{c.name} → {c.runs_as}"
        line = [name] + [_cell_text(rr.cells[c.name], rr.row) for rr in result.rows]
        own = [v for rr in result.rows for v in rr.verdicts if v.a == c.name]
        if c.name == t.baseline:
            line.append("baseline")
        else:
            line.append("; ".join(verdict_text(v, with_row=True) for v in own) or "—")
        lines.append(line)
    return _md_table(header, lines)


def _measured_text(cell: CellResult, with_range: bool = True) -> str:
    """This machine's figure of a cell, with its min–max (`with_range`), or
    why there is none."""
    if cell.measured is None:
        return cell.failure or NOT_MEASURED
    text = fmt_measured(cell.measured)
    if with_range and cell.measured_min is not None and cell.measured_max is not None:
        text += f" [{fmt_measured(cell.measured_min)}–{fmt_measured(cell.measured_max)}]"
    return text


def ratio_text(rr: RowResult) -> str:
    """This machine's ratio beside the claim's bound: "3.10× (≥ 2.5: met)"."""
    r = rr.ratio
    if r is None or r.measured is None:
        return "—"
    sign = published.BOUND_SIGNS[r.claim.bound]
    met = "" if r.bound_met is None else (": met" if r.bound_met else ": not met")
    return f"{fmt_ratio(r.measured)} (published {sign} {r.claim.value:g}{met})"


def _layout_ratio_claims(result: TableResult) -> list[str]:
    header = ["claim", "published", "here (median [min–max] of each)", "here A ÷ B", "ordering (published / here)"]
    lines = []
    for rr in result.rows:
        claim = rr.ratio.claim if rr.ratio else None
        if claim is None:
            continue
        label = rr.row.label
        if rr.row.threads > 1 and "thread" not in label:
            label += f" ({rr.row.threads} threads)"
        sign = published.BOUND_SIGNS[claim.bound]
        pub = f"{claim.of} ÷ {claim.to} {sign} {claim.value:g}"
        here = "; ".join(f"{name} {_measured_text(rr.cells[name])}" for name in (claim.of, claim.to))
        lines.append([label, pub, here, ratio_text(rr),
                      "; ".join(verdict_text(v) for v in rr.verdicts)])
    return _md_table(header, lines)


def oversubscribed_line(t: published.PublishedTable, cores: int | None) -> str:
    """Which rows run more threads than this machine has cores, if any."""
    if not cores:
        return ""
    over = sorted({r.threads for r in t.rows if r.metric and r.threads > cores})
    if not over:
        return ""
    counts = ", ".join(str(n) for n in over)
    return (f"This machine has {cores} cores: rows at {counts} threads oversubscribe it, so they "
            f"measure threads taking turns on {cores} cores, not the scaling the published "
            f"machine ({t.machine.get('cores', 'cores not stated')}) could show.")


def _params_line(t: published.PublishedTable) -> str:
    """The parameters this table's rows run with here, when they are not the
    workloads' own: `touch=none` is the seed's choice of never writing into
    a block, which every other run does (it writes each block's first byte)."""
    seen: dict[str, str] = {}
    for r in t.rows:
        if r.workload and r.params and r.workload not in seen:
            seen[r.workload] = format_params(
                (k, TOUCH_NAMES[v] if k == TOUCH and 0 <= v < len(TOUCH_NAMES) else v)
                for k, v in sorted(r.params.items()))
    if not seen:
        return ""
    text = "Run here with the seed's own choices: " + "; ".join(
        f"{w} {given}" for w, given in seen.items()) + "."
    if any(f"{TOUCH}=" in given for given in seen.values()):
        text += (f" {TOUCH}=none: the seed's benchmark never wrote into these blocks, so "
                 f"neither do these rows; every other run writes each new block's first byte.")
    return text


def render_markdown(result: TableResult, here: str | None = None, cores: int | None = None) -> str:
    """The table in its published layout, with a header naming every mapping;
    `cores`, this machine's, marks the rows that oversubscribe it."""
    t = result.table
    out = [f"### {t.id}: {t.title}", "",
           f"Source: {t.credit} ({t.source_text}).",
           "Published on: " + "; ".join(f"{k}: {v}" for k, v in t.machine.items()) + ".",
           "How it was measured there: " + "; ".join(t.method) + "."]
    given = _params_line(t)
    if given:
        out.append(given)
    if here:
        out.append(f"Measured here on: {here}.")
    over = oversubscribed_line(t, cores)
    if over:
        out.append(over)
    better = "lower is better" if t.better == "lower" else "higher is better"
    if t.layout == LAYOUT_RATIO_CLAIMS:
        out += [f"Unit: {t.unit} ({better}, unless a row says otherwise). Each row is a relative "
                f"figure the source states, A ÷ B of that figure (above 1: A's is the larger); "
                f"\"here\" is the same quotient of this machine's medians. The ordering the "
                f"claim implies is what is judged; whether its bound is met here is shown beside it.",
                "Published figures are the source's; figures \"here\" are measured on this "
                "machine; none is ever filled in from the other.",
                "", "Columns:"]
    else:
        out += [f"Unit: {t.unit} ({better}, unless a row says otherwise). Ratios (×) are to the "
                f"\"{t.baseline}\" column, published figures to published, measured to measured.",
                "Published figures are the seed's; figures \"here\" are measured on this machine; "
                "none is ever filled in from the other.",
                "", "Columns:"]
    out += [_mapping_line(t, c) for c in t.columns]
    odd_rows = [r for r in t.rows if r.metric and (r.unit != t.unit or r.better != t.better)]
    for r in odd_rows:
        out.append(f"- row \"{r.label}\": {r.unit}, {r.better} is better")
    for r in t.rows:
        if r.statistic != "median" and r.metric:
            out.append(f"- row \"{r.label}\": compares the {r.statistic} over repetitions, published and here")
    out.append("")
    if t.layout == LAYOUT_RATIO_CLAIMS:
        out += _layout_ratio_claims(result)
    elif t.layout == LAYOUT_ALLOCATOR_ROWS:
        out += _layout_allocator_rows(result)
    else:
        out += _layout_allocator_columns(result)
    out += ["", f"Orderings: {summary_line(result)}."]
    if t.notes:
        out += ["", "Notes:"]
        for i, n in enumerate(t.notes, 1):
            tag = "SUSPECT FIGURE — " if n.suspect else ""
            about = f" (row \"{n.row}\")" if n.row else ""
            out.append(f"{i}. {tag}{n.text}{about}")
    return "\n".join(out) + "\n"
