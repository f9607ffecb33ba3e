"""The seeds' published benchmark tables, as data (results/published/*.json).

Each file holds one table exactly as its authors published it, with credit,
the machine it came from and how it was measured, and -- per column -- the
allocator heaplab runs in its place. Nothing here runs anything: this module
loads and validates the files, says which measurements a table needs, and
extracts one such measurement from a runner document ("heaplab.run/1").

A row's `metric` says which figure of a run document is compared with the
published one (see METRIC_HELP); that mapping is data, so a renamed metric is
fixed in the JSON file, not here.
"""
from __future__ import annotations

import json
import math
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple

# harness/py/heaplab/published.py -> the repository root is three folders up.
PUBLISHED_DIR = pathlib.Path(__file__).resolve().parents[3] / "results" / "published"

SCHEMA = "heaplab.published/1"

LAYOUT_ALLOCATOR_COLUMNS = "allocator-columns"  # rows are workloads (tmalloc, kevy)
LAYOUT_ALLOCATOR_ROWS = "allocator-rows"        # rows are allocators (memalloc, MemAlloc)
LAYOUT_RATIO_CLAIMS = "ratio-claims"            # rows are "A's figure / B's figure" claims (mimalloc README)
LAYOUTS = (LAYOUT_ALLOCATOR_COLUMNS, LAYOUT_ALLOCATOR_ROWS, LAYOUT_RATIO_CLAIMS)

# How a ratio claim bounds A / B: "more than 2.5x" is at_least 2.5.
BOUND_AT_LEAST = "at_least"
BOUND_AT_MOST = "at_most"
BOUND_ABOUT = "about"
BOUNDS = (BOUND_AT_LEAST, BOUND_AT_MOST, BOUND_ABOUT)
BOUND_SIGNS = {BOUND_AT_LEAST: "≥", BOUND_AT_MOST: "≤", BOUND_ABOUT: "≈"}

ROLE_ALLOCATOR = "allocator"   # an allocator, run here as `runs_as`
ROLE_REFERENCE = "reference"   # a workload fact such as the live bytes: no ordering
ROLES = (ROLE_ALLOCATOR, ROLE_REFERENCE)

BETTER = ("lower", "higher")
STATISTICS = ("median", "min", "max")

# Allocators a table's column may run as; `so:PATH` loads any other library.
# A list here, not the runner's `--list-json`, because table files are
# validated before anything is built (`reproduce` refuses a bad table name
# before it builds the runner; the table tests run without one). `reproduce`
# then checks every name against the runner's own list (cmd_reproduce.plan:
# a name it does not offer is "not installed (... not offered by this runner)").
KNOWN_ALLOCATORS = ("system", "heaplab", "heaplab-nocache", "mimalloc", "jemalloc", "tcmalloc")

# Figures a metric spec may name, by section of the run document.
PROCESS_FIELDS = ("wall_ns", "rss_start_bytes", "peak_rss_bytes", "minor_faults",
                  "major_faults", "user_ns", "sys_ns")
PHASE_FIELDS = ("elapsed_ns", "ops", "rss_bytes", "ws_above_start_bytes", "live_bytes")
# Derived from one phase's own fields.
PHASE_DERIVED = ("unused_fraction_of_rss", "ws_over_live")
ALL_PHASES = "*"   # phase:*:FIELD is the largest value over all phases (a peak)

METRIC_HELP = ("'primary', a metric name such as 'p99_ns', 'process:FIELD', "
               "or 'phase:NAME:FIELD' (NAME '*' = largest over all phases)")

_METRIC_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_ID = re.compile(r"^[0-9]{3}-[a-z0-9]+(?:-[a-z0-9]+)*$")


class PublishedError(ValueError):
    """A published-table file is wrong; the message is one line naming file and field."""


@dataclass(frozen=True)
class Column:
    name: str                   # as published ("tmalloc without thread caches")
    role: str                   # ROLE_ALLOCATOR or ROLE_REFERENCE
    runs_as: str | None         # allocator run here in its place; None = cannot run
    note: str | None            # how the mapping should be read
    cannot_run: str | None      # why there is no runs_as (allocator columns only)
    reference_field: str | None  # reference columns: the phase field measured instead


@dataclass(frozen=True)
class Ratio:
    """A published relative figure: column `of`'s figure divided by column
    `to`'s on the row's workload and metric, bounded by `value` as `bound` says
    ("more than 2.5x faster than tcmalloc": tcmalloc / mimalloc at_least 2.5).
    The ordering it implies is `of` against `to`: a value above 1 says `of`'s
    figure is the larger one."""
    of: str                     # column names
    to: str
    bound: str                  # one of BOUNDS
    value: float

    @property
    def text(self) -> str:
        return f"{self.of} ÷ {self.to} {BOUND_SIGNS[self.bound]} {self.value:g}"


@dataclass(frozen=True)
class Row:
    label: str
    workload: str | None        # None only when nothing of the row is reproduced
    threads: int
    metric: str | None          # metric spec; None = published only (see not_reproduced)
    figures: Mapping[str, float | None]  # column name -> published figure (None = dash)
    params: Mapping[str, int] = field(default_factory=dict)
    statistic: str = "median"   # which statistic of the repetitions the figure is
    scale: float = 1.0          # measured value * scale = the published unit
    unit: str = ""
    better: str = "lower"
    published_range: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    published_extra: Mapping[str, float | None] = field(default_factory=dict)
    not_reproduced: str | None = None
    decimals: int | None = None  # decimals the figures were published with, when repr loses them
    verdict_words: tuple[str, str] | None = None  # overrides the table's (a row in MB, say)
    suspect: bool = False       # a note says the published figure is not to be trusted
    ratio: Ratio | None = None  # ratio-claims tables: the claim (then figures is empty)

    def columns_used(self, columns: Iterable["Column"]) -> list["Column"]:
        """The columns this row reads: a ratio claim's two, else every column."""
        if self.ratio is None:
            return list(columns)
        return [c for c in columns if c.name in (self.ratio.of, self.ratio.to)]


@dataclass(frozen=True)
class Note:
    text: str
    suspect: bool
    row: str | None             # the row label it is about, if any


@dataclass(frozen=True)
class PublishedTable:
    id: str
    title: str
    seed: str | None            # the seed document, or None for a public source named by url
    section: str
    table: str                  # which table of the section
    credit: str
    machine: Mapping[str, str]
    method: tuple[str, ...]
    unit: str
    better: str
    baseline: str               # a column name
    layout: str
    verdict_words: tuple[str, str]  # (better, worse): ("faster", "slower")
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    notes: tuple[Note, ...]
    path: pathlib.Path
    url: str | None = None      # a public source outside the seeds: where it is
    version: str | None = None  # and which version of it (tag, date, revision)

    @property
    def source_text(self) -> str:
        """ "seed file, section ..., table" or "url, version, section ..., table"."""
        where = self.seed if self.seed is not None else f"{self.url}, {self.version}"
        return f"{where}, section \"{self.section}\", {self.table}"

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def baseline_column(self) -> Column:
        return self.column(self.baseline)


class Need(NamedTuple):
    """One measured figure a table needs: its key in the measured mapping."""
    workload: str
    threads: int
    allocator: str
    metric: str


class RunSpec(NamedTuple):
    """One cell the runner must run (all metrics of a row come from it)."""
    workload: str
    threads: int
    allocator: str
    params: tuple[tuple[str, int], ...]


# ---------------------------------------------------------------- validation

class _Where:
    """Builds the "FILE: FIELD: problem" messages."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> PublishedError:
        return PublishedError(f"{self.path.name}: {where}: {problem}")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_word_pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) and x.strip() for x in v)


def _keys(w: _Where, obj: Any, where: str, required: Iterable[str],
          optional: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise w.fail(where, "must be an object")
    req, opt = tuple(required), tuple(optional)
    for k in req:
        if k not in obj:
            raise w.fail(f"{where}.{k}" if where else k, "missing")
    for k in obj:
        if k not in req and k not in opt:
            raise w.fail(f"{where}.{k}" if where else k, "unknown field")
    return obj


def _text(w: _Where, obj: dict[str, Any], key: str, where: str, optional: bool = False) -> str | None:
    v = obj.get(key)
    if v is None and optional:
        return None
    if not isinstance(v, str) or not v.strip():
        raise w.fail(f"{where}.{key}" if where else key, "must be non-empty text")
    return v


def _choice(w: _Where, obj: dict[str, Any], key: str, where: str, choices: tuple[str, ...],
            default: str | None = None) -> str:
    v = obj.get(key, default)
    if v not in choices:
        raise w.fail(f"{where}.{key}" if where else key, f"must be one of {', '.join(choices)}")
    return v


def metric_problem(spec: str) -> str | None:
    """Why `spec` is not a valid metric spec, or None when it is."""
    if spec == "primary" or _METRIC_NAME.match(spec):
        return None
    parts = spec.split(":")
    if parts[0] == "process":
        if len(parts) == 2 and parts[1] in PROCESS_FIELDS:
            return None
        return f"'{spec}': process fields are {', '.join(PROCESS_FIELDS)}"
    if parts[0] == "phase":
        if len(parts) != 3 or not parts[1]:
            return f"'{spec}': expected phase:NAME:FIELD"
        if parts[2] in PHASE_FIELDS or parts[2] in PHASE_DERIVED:
            return None
        return f"'{spec}': phase fields are {', '.join(PHASE_FIELDS + PHASE_DERIVED)}"
    return f"'{spec}': expected {METRIC_HELP}"


def with_phase_field(spec: str, new_field: str) -> str:
    """The same phase (or process) spec with its field replaced."""
    parts = spec.split(":")
    if parts[0] != "phase" or len(parts) != 3:
        raise ValueError(f"'{spec}' is not a phase metric")
    return f"phase:{parts[1]}:{new_field}"


def _column(w: _Where, raw: Any, where: str) -> Column:
    obj = _keys(w, raw, where, ("name",), ("role", "runs_as", "note", "cannot_run", "reference_field"))
    name = _text(w, obj, "name", where)
    role = _choice(w, obj, "role", where, ROLES, ROLE_ALLOCATOR)
    runs_as = obj.get("runs_as")
    cannot_run = _text(w, obj, "cannot_run", where, optional=True)
    reference_field = obj.get("reference_field")
    if role == ROLE_ALLOCATOR:
        if runs_as is None:
            if cannot_run is None:
                raise w.fail(f"{where}.cannot_run", "a column with no runs_as must say why it cannot run")
        elif not isinstance(runs_as, str) or not (runs_as in KNOWN_ALLOCATORS or runs_as.startswith("so:")):
            raise w.fail(f"{where}.runs_as", f"'{runs_as}' is not one of {', '.join(KNOWN_ALLOCATORS)} or so:PATH")
        elif cannot_run is not None:
            raise w.fail(f"{where}.cannot_run", "given together with runs_as")
        if reference_field is not None:
            raise w.fail(f"{where}.reference_field", "only reference columns have one")
    else:
        if runs_as is not None:
            raise w.fail(f"{where}.runs_as", "a reference column runs no allocator")
        if reference_field not in PHASE_FIELDS:
            raise w.fail(f"{where}.reference_field", f"must be one of {', '.join(PHASE_FIELDS)}")
    return Column(name, role, runs_as, _text(w, obj, "note", where, optional=True), cannot_run,
                  reference_field)


def _figures(w: _Where, raw: Any, where: str, columns: tuple[Column, ...]) -> dict[str, float | None]:
    if not isinstance(raw, dict):
        raise w.fail(where, "must be an object of column name -> number or null")
    names = [c.name for c in columns]
    for k, v in raw.items():
        if k not in names:
            raise w.fail(f"{where}.{k}", "no such column")
        if v is not None and not _is_number(v):
            raise w.fail(f"{where}.{k}", "must be a number or null")
    for n in names:
        if n not in raw:
            raise w.fail(f"{where}.{n}", "missing (use null for a dash)")
    return dict(raw)


def _ranges(w: _Where, raw: Any, where: str, columns: tuple[Column, ...]) -> dict[str, tuple[float, float]]:
    if not isinstance(raw, dict):
        raise w.fail(where, "must be an object of column name -> [min, max]")
    names = [c.name for c in columns]
    out: dict[str, tuple[float, float]] = {}
    for k, v in raw.items():
        if k not in names:
            raise w.fail(f"{where}.{k}", "no such column")
        if not (isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v) and v[0] <= v[1]):
            raise w.fail(f"{where}.{k}", "must be [min, max] with min <= max")
        out[k] = (v[0], v[1])
    return out


def _ratio(w: _Where, raw: Any, where: str, columns: tuple[Column, ...]) -> Ratio:
    bound_keys = [b for b in BOUNDS if isinstance(raw, dict) and b in raw]
    obj = _keys(w, raw, where, ("of", "to"), BOUNDS)
    if len(bound_keys) != 1:
        raise w.fail(where, f"must give exactly one of {', '.join(BOUNDS)}")
    allocators = {c.name for c in columns if c.role == ROLE_ALLOCATOR}
    for k in ("of", "to"):
        name = obj[k]
        if name not in allocators:
            raise w.fail(f"{where}.{k}", f"'{name}' is not an allocator column")
    if obj["of"] == obj["to"]:
        raise w.fail(where, "of and to name the same column")
    bound = bound_keys[0]
    value = obj[bound]
    if not _is_number(value) or value <= 0:
        raise w.fail(f"{where}.{bound}", "must be a positive number")
    return Ratio(obj["of"], obj["to"], bound, float(value))


def _row(w: _Where, raw: Any, where: str, columns: tuple[Column, ...], unit: str, better: str,
         layout: str = LAYOUT_ALLOCATOR_COLUMNS) -> Row:
    claims = layout == LAYOUT_RATIO_CLAIMS
    obj = _keys(w, raw, where, ("label", "ratio") if claims else ("label", "figures"),
                ("workload", "threads", "metric", "params", "statistic", "scale", "unit", "better",
                 "published_range", "published_extra", "not_reproduced", "decimals",
                 "verdict_words", "figures", "ratio"))
    if claims and "figures" in obj:
        raise w.fail(f"{where}.figures", "a ratio-claims row gives its figure in ratio, not figures")
    if not claims and "ratio" in obj:
        raise w.fail(f"{where}.ratio", f"only a {LAYOUT_RATIO_CLAIMS} table has ratio rows")
    ratio = _ratio(w, obj["ratio"], f"{where}.ratio", columns) if claims else None
    label = _text(w, obj, "label", where)
    metric = obj.get("metric")
    not_reproduced = _text(w, obj, "not_reproduced", where, optional=True)
    if metric is None:
        if not_reproduced is None:
            raise w.fail(f"{where}.not_reproduced", "a row with no metric must say why")
    else:
        if not isinstance(metric, str) or metric_problem(metric):
            raise w.fail(f"{where}.metric", metric_problem(str(metric)) or "must be text")
        if not_reproduced is not None:
            raise w.fail(f"{where}.not_reproduced", "given together with a metric")
    workload = _text(w, obj, "workload", where, optional=metric is None)
    threads = obj.get("threads", 1)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise w.fail(f"{where}.threads", "must be a whole number >= 1")
    params = obj.get("params", {})
    if not isinstance(params, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in params.values()):
        raise w.fail(f"{where}.params", "must be an object of name -> whole number")
    scale = obj.get("scale", 1.0)
    if not _is_number(scale) or scale <= 0:
        raise w.fail(f"{where}.scale", "must be a positive number")
    extra = obj.get("published_extra", {})
    if not isinstance(extra, dict) or not all(v is None or _is_number(v) for v in extra.values()):
        raise w.fail(f"{where}.published_extra", "must be an object of label -> number or null")
    decimals = obj.get("decimals")
    if decimals is not None and (not isinstance(decimals, int) or isinstance(decimals, bool)
                                 or not 0 <= decimals <= 6):
        raise w.fail(f"{where}.decimals", "must be a whole number from 0 to 6")
    words = obj.get("verdict_words")
    if words is not None and not _is_word_pair(words):
        raise w.fail(f"{where}.verdict_words", "must be [word for better, word for worse]")
    row_unit = obj.get("unit", unit)
    if not isinstance(row_unit, str) or not row_unit.strip():
        raise w.fail(f"{where}.unit", "must be non-empty text")
    return Row(
        label=label, workload=workload, threads=threads, metric=metric,
        figures={} if claims else _figures(w, obj["figures"], f"{where}.figures", columns),
        params=dict(params), statistic=_choice(w, obj, "statistic", where, STATISTICS, "median"),
        scale=float(scale), unit=row_unit, better=_choice(w, obj, "better", where, BETTER, better),
        published_range=_ranges(w, obj.get("published_range", {}), f"{where}.published_range", columns),
        published_extra=dict(extra), not_reproduced=not_reproduced, decimals=decimals,
        verdict_words=(words[0], words[1]) if words is not None else None, ratio=ratio)


def _table(w: _Where, doc: Any) -> PublishedTable:
    obj = _keys(w, doc, "", ("schema", "id", "title", "source", "credit", "machine", "method",
                              "unit", "better", "baseline", "columns", "rows"),
                ("layout", "verdict_words", "notes"))
    if obj["schema"] != SCHEMA:
        raise w.fail("schema", f"must be '{SCHEMA}'")
    tid = _text(w, obj, "id", "")
    if not _ID.match(tid):
        raise w.fail("id", "must look like 000-name (seed number, then lowercase words joined by '-')")
    if w.path.suffix == ".json" and w.path.stem != tid:
        raise w.fail("id", f"'{tid}' differs from the file name '{w.path.stem}'")
    # a seed document, or a public source: its address and which version of it
    if isinstance(obj["source"], dict) and "seed" not in obj["source"]:
        src = _keys(w, obj["source"], "source", ("url", "version", "section", "table"))
        for k in ("url", "version", "section", "table"):
            _text(w, src, k, "source")
        if not src["url"].startswith("https://"):
            raise w.fail("source.url", "must be an https:// address")
    else:
        src = _keys(w, obj["source"], "source", ("seed", "section", "table"))
        for k in ("seed", "section", "table"):
            _text(w, src, k, "source")
    machine = obj["machine"]
    if not isinstance(machine, dict) or not machine or not all(
            isinstance(v, str) and v.strip() for v in machine.values()):
        raise w.fail("machine", "must be a non-empty object of name -> text")
    method = obj["method"]
    if not isinstance(method, list) or not method or not all(isinstance(m, str) and m.strip() for m in method):
        raise w.fail("method", "must be a non-empty list of text")
    unit = _text(w, obj, "unit", "")
    better = _choice(w, obj, "better", "", BETTER)
    words = obj.get("verdict_words", ["faster", "slower"])
    if not _is_word_pair(words):
        raise w.fail("verdict_words", "must be [word for better, word for worse]")

    raw_cols = obj["columns"]
    if not isinstance(raw_cols, list) or len(raw_cols) < 2:
        raise w.fail("columns", "must list at least two columns")
    columns = tuple(_column(w, c, f"columns[{i}]") for i, c in enumerate(raw_cols))
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise w.fail("columns", "two columns have the same name")
    baseline = _text(w, obj, "baseline", "")
    base_col = next((c for c in columns if c.name == baseline), None)
    if base_col is None:
        raise w.fail("baseline", f"'{baseline}' is not a column")
    if base_col.role != ROLE_ALLOCATOR or base_col.runs_as is None:
        raise w.fail("baseline", "must be an allocator column that runs here")

    raw_rows = obj["rows"]
    if not isinstance(raw_rows, list) or not raw_rows:
        raise w.fail("rows", "must be a non-empty list")
    layout = _choice(w, obj, "layout", "", LAYOUTS, LAYOUT_ALLOCATOR_COLUMNS)
    rows = [_row(w, r, f"rows[{i}]", columns, unit, better, layout) for i, r in enumerate(raw_rows)]
    labels = [r.label for r in rows]
    if len(set(labels)) != len(labels):
        raise w.fail("rows", "two rows have the same label")
    for i, r in enumerate(rows):
        uses_reference = any(c.role == ROLE_REFERENCE for c in columns)
        if uses_reference and r.metric is not None and not r.metric.startswith("phase:"):
            raise w.fail(f"rows[{i}].metric", "a table with a reference column needs phase:NAME:FIELD metrics")

    notes: list[Note] = []
    for i, raw in enumerate(obj.get("notes", [])):
        where = f"notes[{i}]"
        n = _keys(w, raw, where, ("text",), ("suspect", "row"))
        suspect = n.get("suspect", False)
        if not isinstance(suspect, bool):
            raise w.fail(f"{where}.suspect", "must be true or false")
        row = n.get("row")
        if row is not None and row not in labels:
            raise w.fail(f"{where}.row", f"'{row}' is not a row label")
        if suspect and row is None:
            raise w.fail(f"{where}.row", "a suspect note must name its row")
        notes.append(Note(_text(w, n, "text", where), suspect, row))
    suspect_rows = {n.row for n in notes if n.suspect}
    rows = [Row(**{**r.__dict__, "suspect": r.label in suspect_rows}) for r in rows]

    return PublishedTable(
        id=tid, title=_text(w, obj, "title", ""), seed=src.get("seed"), section=src["section"],
        table=src["table"], credit=_text(w, obj, "credit", ""), machine=dict(machine),
        method=tuple(method), unit=unit, better=better, baseline=baseline, layout=layout,
        verdict_words=(words[0], words[1]), columns=columns, rows=tuple(rows), notes=tuple(notes),
        path=w.path, url=src.get("url"), version=src.get("version"))


# ------------------------------------------------------------------- loading

def parse_table(doc: Any, path: pathlib.Path) -> PublishedTable:
    """Validates an already-decoded document; `path` is only used in messages."""
    return _table(_Where(path), doc)


def load_table(path: pathlib.Path) -> PublishedTable:
    """Loads and validates one file; any problem raises PublishedError (one line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise PublishedError(f"{path.name}: cannot read: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise PublishedError(f"{path.name}: line {e.lineno}: not valid JSON ({e.msg})") from None
    return parse_table(doc, path)


def load_all(folder: pathlib.Path = PUBLISHED_DIR) -> list[PublishedTable]:
    """Every table in `folder`, sorted by id."""
    if not folder.is_dir():
        raise PublishedError(f"{folder}: no such folder of published tables")
    tables = [load_table(p) for p in sorted(folder.glob("*.json"))]
    return sorted(tables, key=lambda t: t.id)


def find_table(tables: Iterable[PublishedTable], name: str) -> PublishedTable:
    """A table by id ("000-tmalloc-st") or by id without its seed number ("tmalloc-st")."""
    tables = list(tables)
    for t in tables:
        if name == t.id or name == t.id.split("-", 1)[1]:
            return t
    known = ", ".join(t.id for t in tables)
    raise PublishedError(f"no published table named '{name}' (known: {known})")


def list_tables(tables: Iterable[PublishedTable]) -> list[tuple[str, str, int]]:
    """(id, title, number of rows) for each table."""
    return [(t.id, t.title, len(t.rows)) for t in tables]


# ---------------------------------------------------------- what a table needs

def reference_allocators(table: PublishedTable) -> list[Column]:
    """Allocator columns a reference column may take its figure from, baseline first."""
    runnable = [c for c in table.columns if c.role == ROLE_ALLOCATOR and c.runs_as is not None]
    return sorted(runnable, key=lambda c: c.name != table.baseline)


def needed_cells(table: PublishedTable) -> set[Need]:
    """Every (workload, threads, allocator, metric) the table's cells read."""
    needs: set[Need] = set()
    for r in table.rows:
        if r.metric is None or r.workload is None:
            continue
        for c in r.columns_used(table.columns):
            if c.role == ROLE_ALLOCATOR and c.runs_as is not None:
                needs.add(Need(r.workload, r.threads, c.runs_as, r.metric))
            elif c.role == ROLE_REFERENCE and c.reference_field is not None:
                metric = with_phase_field(r.metric, c.reference_field)
                for a in reference_allocators(table):
                    needs.add(Need(r.workload, r.threads, a.runs_as or "", metric))
    return needs


def needed_runs(table: PublishedTable) -> set[tuple[str, int, str]]:
    """The (workload, threads, metric) triples the table needs, whatever the allocator."""
    return {(n.workload, n.threads, n.metric) for n in needed_cells(table)}


def run_specs(table: PublishedTable) -> set[RunSpec]:
    """The runner cells to run for this table (one per row and runnable allocator)."""
    specs: set[RunSpec] = set()
    for r in table.rows:
        if r.metric is None or r.workload is None:
            continue
        for c in r.columns_used(table.columns):
            if c.role == ROLE_ALLOCATOR and c.runs_as is not None:
                specs.add(RunSpec(r.workload, r.threads, c.runs_as, tuple(sorted(r.params.items()))))
    return specs


# ------------------------------------------------- one figure of a run document

def _number(v: Any) -> float | None:
    return float(v) if _is_number(v) else None


def _phase_value(phase: Mapping[str, Any], name: str) -> float | None:
    if name == "unused_fraction_of_rss":
        rss, live = _number(phase.get("rss_bytes")), _number(phase.get("live_bytes"))
        return None if rss is None or live is None or rss <= 0 else (rss - live) / rss
    if name == "ws_over_live":
        ws, live = _number(phase.get("ws_above_start_bytes")), _number(phase.get("live_bytes"))
        return None if ws is None or live is None or live <= 0 else ws / live
    return _number(phase.get(name))


def metric_value(doc: Mapping[str, Any], spec: str) -> float | None:
    """The figure `spec` names in one "heaplab.run/1" document, or None when the
    document does not have it (a failed run, a missing metric or phase)."""
    problem = metric_problem(spec)
    if problem:
        raise ValueError(f"bad metric spec {problem}")
    if doc.get("status") != "ok":
        return None
    metrics = doc.get("metrics") or {}
    if spec == "primary":
        spec = doc.get("primary") or ""
    if _METRIC_NAME.match(spec):
        m = metrics.get(spec)
        return _number(m.get("value")) if isinstance(m, dict) else None
    parts = spec.split(":")
    if parts[0] == "process":
        return _number((doc.get("process") or {}).get(parts[1]))
    phases = [p for p in (doc.get("phases") or []) if isinstance(p, dict)]
    if parts[1] == ALL_PHASES:
        values = [v for v in (_phase_value(p, parts[2]) for p in phases) if v is not None]
        return max(values) if values else None
    for p in phases:
        if p.get("name") == parts[1]:
            return _phase_value(p, parts[2])
    return None
