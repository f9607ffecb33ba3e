"""Reading a run folder (raw.jsonl, env.json) into documents, and the
statistics every chart uses: median, min and max over repetitions.

Charts depend on the run folder's files only. Crashed and timed-out cells are
documents too (written by run.py in the runner's place); they often carry only
the workload and allocator names, so what they lack (group, metric, threads)
is filled in from the same workload's other documents.
"""

from __future__ import annotations

import re
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from heaplab import gbench_reports, rawlog, runfolder, stats

RAW_FILE = "raw.jsonl"
ENV_FILE = "env.json"
SCHEMA_FAMILY = "heaplab.run/"
SCHEMA = "heaplab.run/1"
OK = "ok"


class RunError(Exception):
    """A run folder that cannot be read; the message is one line."""


@dataclass(frozen=True)
class Metric:
    """A workload's primary metric."""
    name: str
    unit: str
    better: str  # "lower" or "higher"


@dataclass(frozen=True)
class Doc:
    """One raw.jsonl line: one (workload, threads, allocator, repetition)."""
    line: int
    workload: str
    group: str
    describe: str
    threads: int | None
    allocator: str
    status: str                  # "ok", or why there is no figure
    rep: int | None
    metric: Metric | None
    value: float | None          # the primary metric's value
    phases: tuple[Mapping[str, Any], ...] = ()
    samples: tuple[Mapping[str, Any], ...] = ()
    process: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, Any] = field(default_factory=dict)
    # what the run wrote into each block ("none", "first", "pages", "all");
    # None for a workload without the parameter (scripts)
    touch: str | None = None
    # the parameters it ran with (its sizes among them)
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == OK


# the spread of a cell's repetitions: median, min, max, n (heaplab.stats)
Spread = stats.Spread
spread = stats.spread


@dataclass
class Cell:
    """What the repetitions of one cell gave: values, and failures by kind."""
    values: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)

    @property
    def reps(self) -> int:
        return len(self.values) + sum(self.failures.values())

    def stats(self) -> Spread | None:
        return spread(self.values)

    def gap_label(self) -> str:
        """Why there is no figure: the commonest failure, or 'no data'."""
        if self.failures:
            return self.failures.most_common(1)[0][0]
        return "no data"

    def failure_note(self) -> str | None:
        """'1 of 3 timeout' when some repetitions failed, else None."""
        failed = sum(self.failures.values())
        if not failed:
            return None
        kinds = ", ".join(sorted(self.failures))
        return f"{failed} of {self.reps} {kinds}"


def cells(docs: Iterable[Doc],
          value_of: Callable[[Doc], float | None]) -> dict[str, Cell]:
    """Groups docs by allocator: ok docs with a value add to the values,
    the others are counted as failures under their status."""
    result: dict[str, Cell] = {}
    for doc in docs:
        cell = result.setdefault(doc.allocator, Cell())
        value = value_of(doc) if doc.ok else None
        if value is not None:
            cell.values.append(value)
        elif doc.ok:
            cell.failures["no value"] += 1
        else:
            cell.failures[doc.status] += 1
    return result


@dataclass
class Run:
    """A run folder's documents and its machine description."""
    folder: Path
    docs: list[Doc]
    env: Mapping[str, Any]
    # allocators the run's plan names (env.json), whether they ran or not
    planned: list[str] = field(default_factory=list)
    # allocator name -> why it could not run (not installed)
    unavailable: dict[str, str] = field(default_factory=dict)
    # True for quick sizes, False for full ones, None when the run does not say
    quick: bool | None = None

    def machine(self) -> str:
        return machine_line(self.env)

    def absent_note(self) -> str:
        """'Not installed: tcmalloc. ' for the subtitles of charts that only
        draw allocators with documents; '' when every allocator ran."""
        if not self.unavailable:
            return ""
        return f"Not installed: {', '.join(sorted(self.unavailable))}. "

    def workloads(self) -> list[str]:
        """Workload names in the order they first appear."""
        return list(dict.fromkeys(d.workload for d in self.docs))

    def docs_of(self, workload: str) -> list[Doc]:
        return [d for d in self.docs if d.workload == workload]

    def docs_at(self, workload: str, threads: int | None) -> list[Doc]:
        return [d for d in self.docs_of(workload) if d.threads == threads]

    def thread_counts(self, workload: str) -> list[int | None]:
        counts = {d.threads for d in self.docs if d.workload == workload}
        return sorted(counts, key=lambda t: (t is None, t or 0))

    def label(self, workload: str) -> str:
        """The workload's name as chart titles and ticks show it: with what
        its blocks had written into them (`touch=first`) where it says."""
        touch = next((d.touch for d in self.docs if d.workload == workload and d.touch), None)
        return f"{workload} (touch={touch})" if touch else workload

    def sizes_note(self, workload: str | None = None) -> str:
        """'Quick sizes ran: count=30000, rounds=8. ' for chart subtitles: a
        workload's description gives its full sizes, this says what ran."""
        which = {True: "Quick sizes", False: "Full sizes", None: "Sizes"}[self.quick]
        params = next((d.params for d in self.docs if d.workload == workload and d.params), None)
        shown = {k: v for k, v in (params or {}).items() if k != "touch"}
        if not shown:
            return f"{which}. " if self.quick is not None else ""
        return f"{which} ran: " + ", ".join(f"{k}={v}" for k, v in shown.items()) + ". "

    def touch_of(self, workload: str) -> str | None:
        return next((d.touch for d in self.docs if d.workload == workload and d.touch), None)

    def describe(self, workload: str) -> str:
        for d in self.docs:
            if d.workload == workload and d.describe:
                return d.describe
        return ""


def machine_line(env: Mapping[str, object]) -> str:
    """'Intel Xeon Platinum 8370C @ 2.80GHz, 2 cores, Linux 6.1.0, glibc 2.36'
    from an env record; 'machine not recorded' when there is none."""
    cpu = str(env.get("cpu_model") or "").strip()
    cpu = re.sub(r"\((R|TM|tm|r)\)", "", cpu)
    cpu = re.sub(r"\s+CPU\s+@", " @", cpu)
    cpu = re.sub(r"\s{2,}", " ", cpu).strip()
    parts = [cpu] if cpu else []
    cores = env.get("cores")
    if isinstance(cores, int) and not isinstance(cores, bool):
        parts.append(f"{cores} core" + ("" if cores == 1 else "s"))
    if env.get("kernel"):
        parts.append(f"Linux {env['kernel']}")
    if env.get("glibc"):
        parts.append(f"glibc {env['glibc']}")
    if not parts:
        return "machine not recorded"
    return ", ".join(parts)


def _name_of(value: Any, what: str, where: str) -> str:
    """The name of a workload/allocator given as an object or a string."""
    if isinstance(value, Mapping):
        value = value.get("name")
    if not isinstance(value, str) or not value:
        raise RunError(f"{where}: document has no {what} name")
    return value


def _allocator_of(raw: Mapping[str, Any], where: str) -> str:
    """The allocator's name as the driver keyed the cell (NAME of
    NAME=so:PATH), checked to be there."""
    _name_of(raw.get("allocator"), "allocator", where)
    key = runfolder.key_of(raw)
    assert key is not None
    return key.allocator


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


_number_or_none = runfolder.number


def _status_label(raw: Mapping[str, Any]) -> str:
    """'ok', or a short label for the gap a failed cell leaves in a chart."""
    status = raw.get("status")
    if status == OK:
        return OK
    if status == "crashed":
        sig = _int_or_none(raw.get("signal"))
        if sig is not None:
            try:
                return f"crashed ({signal.Signals(sig).name})"
            except ValueError:
                return f"crashed (signal {sig})"
        if isinstance(raw.get("signal"), str) and raw["signal"]:
            return f"crashed ({raw['signal']})"
        code = _int_or_none(raw.get("exit_code"))
        return f"crashed (exit {code})" if code is not None else "crashed"
    if status == "error":
        message = str(raw.get("error") or "")
        return "not installed" if "not installed" in message else "error"
    if isinstance(status, str) and status:
        return status.replace("-", " ").replace("_", " ")
    return "no status"


def _metric_of(raw: Mapping[str, Any]) -> tuple[Metric | None, float | None]:
    primary = raw.get("primary")
    metrics = raw.get("metrics")
    if not isinstance(primary, str) or not isinstance(metrics, Mapping):
        return None, None
    entry = metrics.get(primary)
    if not isinstance(entry, Mapping):
        return None, None
    better = entry.get("better")
    metric = Metric(primary, str(entry.get("unit") or ""),
                    better if better in ("lower", "higher") else "lower")
    return metric, _number_or_none(entry.get("value"))


def _list_of_objects(value: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, Mapping))


def parse_doc(raw: Any, where: str, line: int) -> Doc:
    """One document; RunError (naming `where`) when it is not one."""
    if not isinstance(raw, Mapping):
        raise RunError(f"{where}: line is not a JSON object")
    schema = raw.get("schema")
    if isinstance(schema, str) and schema != SCHEMA:
        if schema.startswith(SCHEMA_FAMILY):
            raise RunError(f"{where}: schema {schema!r} is not supported "
                           f"(this code reads {SCHEMA})")
        raise RunError(f"{where}: not a heaplab run document "
                       f"(schema {schema!r})")
    workload = raw.get("workload")
    metric, value = _metric_of(raw)
    group = workload.get("group") if isinstance(workload, Mapping) else None
    describe = workload.get("describe") if isinstance(workload, Mapping) else None
    names = workload.get("param_names") if isinstance(workload, Mapping) else None
    touch = names.get("touch") if isinstance(names, Mapping) else None
    return Doc(
        line=line,
        workload=_name_of(workload, "workload", where),
        group=group if isinstance(group, str) else "",
        describe=describe if isinstance(describe, str) else "",
        threads=runfolder.threads_of(raw),
        allocator=_allocator_of(raw, where),
        status=_status_label(raw),
        rep=_int_or_none(raw.get("rep")),
        metric=metric,
        value=value,
        phases=_list_of_objects(raw.get("phases")),
        samples=_list_of_objects(raw.get("samples")),
        process=raw.get("process") if isinstance(raw.get("process"), Mapping) else {},
        env=raw.get("env") if isinstance(raw.get("env"), Mapping) else {},
        touch=touch if isinstance(touch, str) else None,
        params=workload.get("params") if isinstance(workload, Mapping)
        and isinstance(workload.get("params"), Mapping) else {},
    )


def _fill_in(docs: list[Doc]) -> list[Doc]:
    """Gives documents that lack them (crashed, timeout) the group, metric,
    description and - when the workload ran at one thread count only - the
    thread count of the same workload's other documents."""
    known: dict[str, Doc] = {}
    counts: dict[str, set[int]] = {}
    for d in docs:
        if d.metric is not None and d.workload not in known:
            known[d.workload] = d
        if d.threads is not None:
            counts.setdefault(d.workload, set()).add(d.threads)
    filled = []
    for d in docs:
        ref = known.get(d.workload)
        only = counts.get(d.workload, set())
        filled.append(replace(
            d,
            group=d.group or (ref.group if ref else "") or "ungrouped",
            describe=d.describe or (ref.describe if ref else ""),
            metric=d.metric or (ref.metric if ref else None),
            threads=d.threads if d.threads is not None
            else (next(iter(only)) if len(only) == 1 else None),
        ))
    return filled


def _machine(env_json: Mapping[str, Any], docs: list[Doc]) -> dict[str, Any]:
    """The machine: env.json's (flat, or nested under "machine" as run.py
    writes it), completed and overridden by the runner's own env record in
    the documents, which has the figures the runner measured (glibc...)."""
    nested = env_json.get("machine")
    machine = dict(nested if isinstance(nested, Mapping) else env_json)
    doc_env = next((d.env for d in docs if d.env), {})
    machine.update({k: v for k, v in doc_env.items() if v is not None})
    return machine


def _planned_allocators(env_json: Mapping[str, Any]
                        ) -> tuple[list[str], dict[str, str]]:
    """The allocators the run meant to use (env.json "plan", as run.py
    writes it, or a top-level "allocators" list), and those of them that
    were not available, with the label their gaps get."""
    plan = env_json.get("plan")
    entries = plan.get("allocators") if isinstance(plan, Mapping) else None
    if not isinstance(entries, list):
        entries = env_json.get("allocators")
    planned: list[str] = []
    unavailable: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            planned.append(entry["name"])
            if entry.get("available") is False:
                unavailable[entry["name"]] = "not installed"
    return planned, unavailable


def load_run(folder: Path) -> Run:
    """Reads folder/raw.jsonl (and env.json) through heaplab.runfolder;
    RunError on anything unreadable. A torn last line (a run that stopped
    while writing) is left out and said on stderr."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunError(f"{folder}: not a folder")
    path = folder / RAW_FILE
    if not path.is_file() and runfolder.is_run_folder(folder):
        # a gbench folder: its reports, read as documents
        try:
            raws = gbench_reports.documents(folder)
        except runfolder.RunFolderError as exc:
            raise RunError(str(exc)) from None
        docs = [parse_doc(raw, f"{folder}: report document {n}", n)
                for n, raw in enumerate(raws, start=1)]
        return Run(folder=folder, docs=_fill_in(docs), env=_machine({}, docs))
    if not path.is_file():
        raise RunError(f"{folder}: no {RAW_FILE} here (not a run folder?)")
    try:
        log = rawlog.read(path)
    except rawlog.RawLogError as exc:
        raise RunError(str(exc)) from None
    if log.torn:
        print(f"plots: {log.torn}", file=sys.stderr)
    docs = [parse_doc(raw, f"{path}:{number}", number)
            for raw, number in zip(log.documents, log.lines)]
    docs = _fill_in(docs)
    try:
        env_json = runfolder.read_env(folder)
    except runfolder.RunFolderError as exc:
        raise RunError(str(exc)) from None
    planned, unavailable = _planned_allocators(env_json)
    quick = (env_json.get("options") or {}).get("quick") if isinstance(env_json.get("options"), Mapping) else None
    return Run(folder=folder, docs=docs, env=_machine(env_json, docs),
               planned=planned, unavailable=unavailable,
               quick=quick if isinstance(quick, bool) else None)
