"""What the runner offers (`heaplab-run --list-json`) and choosing from it.

The catalog is the single source of truth for allocator and workload names:
the driver never hard-codes them. Selections are validated here and a bad
name is reported in one line that lists what exists.
"""
from __future__ import annotations

import fnmatch
import json
import pathlib
import subprocess
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

LIST_SCHEMA = "heaplab.list/1"
# Allocators given as a shared library path are passed to the runner as is.
SO_PREFIX = "so:"
LIST_TIMEOUT_S = 60


class SelectionError(ValueError):
    """Bad user input: the message is one line naming the problem."""


@dataclass(frozen=True)
class Allocator:
    name: str
    available: bool
    reason: str | None = None
    version: str | None = None
    # False for baselines ("floor") run only when named
    default: bool = True


@dataclass(frozen=True)
class Workload:
    name: str
    group: str
    kind: str = "builtin"
    source: str | None = None
    describe: str = ""
    metric: str = ""
    unit: str = ""
    better: str = "lower"
    threaded: bool = False
    default_threads: int = 1
    params: tuple[dict[str, Any], ...] = ()
    # what to pass the runner's --workload: the name, or for a script named
    # by its path (outside workloads/) that path
    run_as: str = ""

    @property
    def argument(self) -> str:
        return self.run_as or self.name


@dataclass
class Catalog:
    allocators: list[Allocator]
    workloads: list[Workload]
    broken_scripts: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Catalog":
        if doc.get("schema") != LIST_SCHEMA:
            raise ValueError(f"runner --list-json: expected schema {LIST_SCHEMA!r}, got {doc.get('schema')!r}")
        allocs = [Allocator(a["name"], bool(a.get("available")), a.get("reason"), a.get("version"),
                            bool(a.get("default", True)))
                  for a in doc.get("allocators", [])]
        works = [Workload(
            name=w["name"], group=w.get("group") or "", kind=w.get("kind") or "builtin",
            source=w.get("source"), describe=w.get("describe") or "",
            metric=w.get("metric") or "", unit=w.get("unit") or "",
            better=w.get("better") or "lower", threaded=bool(w.get("threaded")),
            default_threads=int(w.get("default_threads") or 1),
            params=tuple(w.get("params") or ()),
        ) for w in doc.get("workloads", [])]
        return cls(allocs, works, list(doc.get("broken_scripts") or []), doc)

    def allocator(self, name: str) -> Allocator | None:
        return next((a for a in self.allocators if a.name == name), None)


def load(runner: pathlib.Path) -> Catalog:
    """Runs `runner --list-json`; raises RuntimeError with a one-line message."""
    try:
        proc = subprocess.run([str(runner), "--list-json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=LIST_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"cannot run {runner} --list-json: {e}") from None
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["(no message)"])[0]
        raise RuntimeError(f"{runner} --list-json failed (exit {proc.returncode}): {first}")
    try:
        return Catalog.from_json(json.loads(proc.stdout))
    except (ValueError, KeyError, TypeError) as e:
        raise RuntimeError(f"{runner} --list-json: unreadable output: {e}") from None


def split_list(text: str | None) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c']."""
    if not text:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


# NAME in NAME=so:PATH[:PREFIX]: what columns and legends call the library
SO_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-")
SO_NAMED = "="


def alloc_name(spec: str) -> str:
    """The name a --alloc entry's cells and documents go by: NAME for
    NAME=so:PATH[:PREFIX], the entry itself otherwise."""
    name, sep, rest = spec.partition(SO_NAMED)
    return name if sep and rest.startswith(SO_PREFIX) else spec


def check_so(spec: str, catalog: Catalog) -> None:
    """so:PATH[:PREFIX] or NAME=so:PATH[:PREFIX]: SelectionError (one line)
    when the library file is missing or NAME is not a plain name, before
    anything runs."""
    name, sep, rest = spec.partition(SO_NAMED)
    target = rest if sep else spec
    if sep:
        if not name or not set(name) <= SO_NAME_CHARS:
            raise SelectionError(f"--alloc {spec}: NAME in NAME=so:PATH must be letters, digits "
                                 f"or ._+- (got '{name}')")
        if catalog.allocator(name) is not None:
            raise SelectionError(f"--alloc {spec}: '{name}' is already an allocator's name")
    path = target[len(SO_PREFIX):].split(":", 1)[0]
    if not path:
        raise SelectionError(f"--alloc {spec}: no library path after so:")
    if not pathlib.Path(path).is_file():
        raise SelectionError(f"--alloc {spec}: {path}: no such library file")


def is_so(spec: str) -> bool:
    """so:PATH[:PREFIX], named or not."""
    return spec.startswith(SO_PREFIX) or alloc_name(spec) != spec


def select_allocators(catalog: Catalog, spec: str | None) -> list[str]:
    """Allocator entries to run, in the order asked (by default every listed
    one but the baselines that run only when named). Globs are allowed;
    so:PATH[:PREFIX] and NAME=so:PATH[:PREFIX] pass through to the runner
    once their library file is there (alloc_name() gives their name)."""
    if not spec:
        return [a.name for a in catalog.allocators if a.default]
    names = [a.name for a in catalog.allocators]
    chosen: list[str] = []
    for pattern in split_list(spec):
        if is_so(pattern):
            check_so(pattern, catalog)
            matched = [pattern]
        else:
            matched = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not matched:
            raise SelectionError(f"unknown allocator '{pattern}'; allocators: {', '.join(names)}")
        chosen += [n for n in matched if n not in chosen]
    return chosen


SCRIPT_SUFFIX = ".wl"


def is_script_path(pattern: str) -> bool:
    """A --workload entry that names a script file (as the runner takes it)."""
    return "/" in pattern or pattern.endswith(SCRIPT_SUFFIX)


def _stem(source: str | None) -> str:
    name = pathlib.PurePath(source or "").name
    return name[:-len(SCRIPT_SUFFIX)] if name.endswith(SCRIPT_SUFFIX) else name


def _broken_match(catalog: Catalog, pattern: str) -> dict[str, Any] | None:
    """The broken script a name would have meant (its file name without .wl)."""
    return next((b for b in catalog.broken_scripts
                 if fnmatch.fnmatchcase(_stem(b.get("source")), pattern)), None)


def load_script(runner: pathlib.Path, path: str) -> Workload:
    """The script at `path`, as the runner lists it (it is read from its own
    folder); SelectionError with the runner's `file:line: what` when it does
    not load."""
    file = pathlib.Path(path)
    if not file.is_file():
        raise SelectionError(f"--workload {path}: no such script file")
    try:
        proc = subprocess.run([str(runner), "--list-json", "--workloads-dir", str(file.parent)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=LIST_TIMEOUT_S, check=False)
        listed = Catalog.from_json(json.loads(proc.stdout))
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError) as e:
        raise SelectionError(f"--workload {path}: the runner cannot list it: {e}") from None
    wanted = file.resolve()
    for b in listed.broken_scripts:
        if pathlib.Path(str(b.get("source"))).resolve() == wanted:
            raise SelectionError(str(b.get("error")))
    for w in listed.workloads:
        if w.source and pathlib.Path(w.source).resolve() == wanted:
            return replace(w, run_as=str(file))
    raise SelectionError(f"--workload {path}: not a workload script (no {SCRIPT_SUFFIX} the runner reads)")


def select_workloads(catalog: Catalog, spec: str | None,
                     runner: pathlib.Path | None = None) -> list[Workload]:
    """Workloads whose name matches one of the comma-separated globs (a bare
    group name selects the whole group), in catalog order, then scripts named
    by their path (read through `runner`). A name that only a broken script
    has is refused with that script's error."""
    if not spec:
        return list(catalog.workloads)
    picked: set[str] = set()
    by_path: list[Workload] = []
    traced: list[Workload] = []
    for pattern in split_list(spec):
        if pattern.startswith("trace:"):
            from . import traces  # traces imports this module
            traced.append(traces.workload(pattern))
            continue
        if runner is not None and is_script_path(pattern):
            w = load_script(runner, pattern)
            if w.name not in {x.name for x in by_path}:
                by_path.append(w)
            continue
        matched = {w.name for w in catalog.workloads if fnmatch.fnmatchcase(w.name, pattern)}
        if not matched:
            matched = {w.name for w in catalog.workloads if w.group == pattern}
        if not matched:
            broken = _broken_match(catalog, pattern)
            if broken is not None:
                raise SelectionError(f"workload '{pattern}' does not load: {broken.get('error')}")
            names = ", ".join(w.name for w in catalog.workloads)
            raise SelectionError(f"no workload matches '{pattern}'; workloads: {names}")
        picked |= matched
    clash = [w.name for w in by_path if w.name in picked]
    if clash:
        raise SelectionError(f"--workload: {', '.join(clash)} is named both by name and by path")
    return [w for w in catalog.workloads if w.name in picked] + by_path + traced


# The runner's limit (RUNNER_MAX_THREADS in harness/runner/runner.h): checked here
# so a bad count is refused before a run folder exists.
MAX_THREADS = 1024


def parse_threads(spec: str | None) -> list[int]:
    """'1,2,4' -> [1, 2, 4]; empty means each workload's default. An empty
    entry ('1,,2') or a count above the runner's limit is bad input."""
    counts: list[int] = []
    if spec and any(not part.strip() for part in spec.split(",")):
        raise SelectionError(f"--threads: '{spec}' has an empty entry")
    for part in split_list(spec):
        if not part.isdigit() or not 1 <= int(part) <= MAX_THREADS:
            raise SelectionError(f"--threads: '{part}' is not a thread count in [1, {MAX_THREADS}]")
        if int(part) not in counts:
            counts.append(int(part))
    return counts


def format_params(pairs: Iterable[tuple[str, Any]]) -> str:
    """`count=2000, rounds=10`: workload parameters as the user writes them."""
    return ", ".join(f"{k}={v}" for k, v in pairs)


def parse_params(specs: Sequence[str], workloads: Sequence[Workload]
                 ) -> dict[str, tuple[tuple[str, int], ...]]:
    """`--param KEY=VALUE` (repeatable) -> for each selected workload that has
    parameter KEY, its overrides as sorted (KEY, VALUE) pairs. A KEY no
    selected workload has, a VALUE that is not a whole number, or one outside
    a workload's range is bad input."""
    wanted: dict[str, str] = {}
    for spec in specs:
        key, sep, text = spec.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not key or not text:
            raise SelectionError(f"--param {spec!r}: expected KEY=VALUE, e.g. --param count=1000")
        wanted[key] = text
    overrides: dict[str, list[tuple[str, int]]] = {}
    for key, text in wanted.items():
        having = [(w, p) for w in workloads for p in w.params if p.get("name") == key]
        if not having:
            known = sorted({p.get("name") for w in workloads for p in w.params})
            raise SelectionError(f"--param {key}: no selected workload has a parameter '{key}' "
                                 f"(theirs: {', '.join(known) or 'none'})")
        for w, p in having:
            value = param_value(p, text)
            lo, hi = p.get("min"), p.get("max")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise SelectionError(f"--param {key}={value}: {w.name} takes {key} from {lo} to {hi}")
            overrides.setdefault(w.name, []).append((key, value))
    for w in workloads:
        _check_ranges(w, dict(overrides.get(w.name, ())))
    return {name: tuple(sorted(pairs)) for name, pairs in overrides.items()}


def param_value(p: dict[str, Any], text: str) -> int:
    """The value `text` gives parameter `p`: a whole number, or for a
    parameter with named values (`touch`: none, first, pages, all) one of
    its names."""
    names = list(p.get("values") or [])
    if text in names:
        return int(p.get("min") or 0) + names.index(text)
    try:
        return int(text.replace("_", ""), 10)
    except ValueError:
        expected = f"one of {', '.join(names)}" if names else "a whole number"
        raise SelectionError(f"--param {p.get('name')}={text}: '{text}' is not {expected}") from None


def value_name(p: dict[str, Any] | None, value: Any) -> str:
    """How a parameter's value reads: its name where it has one."""
    names = list((p or {}).get("values") or [])
    index = value - int((p or {}).get("min") or 0) if isinstance(value, int) else -1
    return names[index] if 0 <= index < len(names) else str(value)


TOUCH = "touch"
# The runner's names for the values of `touch`, 0 up (harness/wl/workload.h).
TOUCH_NAMES = ("none", "first", "pages", "all")


def touch_of(w: Workload, quick: bool, given: Iterable[tuple[str, Any]] = ()) -> str | None:
    """What a run of `w` writes into its blocks (`none`, `first`, `pages`,
    `all`): the `touch` set for it, else its default at that size; None for
    a workload without the parameter (scripts say it per operation)."""
    p = next((p for p in w.params if p.get("name") == TOUCH), None)
    if p is None:
        return None
    value = dict(given).get(TOUCH, p.get("quick" if quick else "default"))
    return value_name(p, value)


MIN_PREFIX, MAX_PREFIX = "min_", "max_"


def _check_ranges(w: Workload, given: dict[str, int]) -> None:
    """A pair of parameters min_X and max_X is a range (the runner refuses
    min above max too): checked here with the values a run would use, at
    the quick and the published sizes, before anything runs."""
    if not given:
        return
    by_name = {p.get("name"): p for p in w.params}
    for lo_name in by_name:
        if not str(lo_name).startswith(MIN_PREFIX):
            continue
        hi_name = MAX_PREFIX + str(lo_name)[len(MIN_PREFIX):]
        if hi_name not in by_name or (lo_name not in given and hi_name not in given):
            continue
        for size in ("quick", "default"):
            lo = given.get(lo_name, by_name[lo_name].get(size))
            hi = given.get(hi_name, by_name[hi_name].get(size))
            if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
                raise SelectionError(f"--param: {w.name} would run with {lo_name}={lo} above "
                                     f"{hi_name}={hi}")


def parse_positive(value: str, option: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise SelectionError(f"{option}: '{value}' is not a positive whole number")
    return int(value)
