"""Allocator colours: fixed for known names, deterministic for others, and
the same in every chart of a run."""

from __future__ import annotations

import os
import subprocess
import sys

from matplotlib.colors import to_hex

from plot_helpers import REPO
from plot_helpers import legend_colours
from plots import medians, memory_phases, memory_time, scaling, style
from plots.rundata import machine_line

KNOWN = ["system", "heaplab", "heaplab-nocache", "mimalloc", "jemalloc",
         "tcmalloc"]


def test_known_allocators_have_fixed_distinct_colours() -> None:
    colours = [style.colour_for(name) for name in KNOWN]
    assert colours == [style.PALETTE[name] for name in KNOWN]
    assert len(set(colours)) == len(KNOWN)


def test_other_allocators_get_a_colour_outside_the_fixed_palette() -> None:
    colour = style.colour_for("so:/opt/hoard/lib/libhoard.so")
    assert colour in style.EXTRA_COLOURS
    assert colour not in style.PALETTE.values()


def colour_in_fresh_process(name: str, hash_seed: str) -> str:
    code = f"from plots import style; print(style.colour_for({name!r}))"
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                            capture_output=True, text=True, check=True)
    return result.stdout.strip()


def test_other_allocators_get_the_same_colour_in_every_process() -> None:
    name = "so:/usr/local/lib/libsnmalloc.so"
    assert colour_in_fresh_process(name, "1") == colour_in_fresh_process(name, "2")
    assert colour_in_fresh_process(name, "1") == style.colour_for(name)


def test_an_allocator_has_the_same_colour_in_every_chart_of_a_run(run) -> None:
    seen: dict[str, set[str]] = {}
    charts = 0
    with style.chart_style():
        for module in (memory_phases, memory_time, scaling, medians):
            for _stem, fig in module.figures(run):
                charts += 1
                for label, colour in legend_colours(fig).items():
                    seen.setdefault(label, set()).add(colour)
    assert charts == 7
    for name in KNOWN:
        assert seen.get(name) == {to_hex(style.colour_for(name))}, name


def test_allocators_are_ordered_palette_first_then_by_name() -> None:
    order = style.allocator_order(["zz", "tcmalloc", "aa", "system", "heaplab"])
    assert order == ["system", "heaplab", "tcmalloc", "aa", "zz"]


def test_machine_line_names_cpu_and_cores_and_admits_when_unknown() -> None:
    line = machine_line({"cpu_model": "Intel(R) Xeon(R) Platinum 8370C "
                               "CPU @ 2.80GHz", "cores": 2})
    assert line == "Intel Xeon Platinum 8370C @ 2.80GHz, 2 cores"
    assert machine_line({}) == "machine not recorded"


def test_subtitles_do_not_promise_whiskers_for_single_runs() -> None:
    assert style.spread_phrase([1, 1], "bars", "whiskers") == \
        "bars: one run each, so no whiskers"
    assert style.spread_phrase([3, 2], "bars", "whiskers") == \
        "bars: median of 2\u20133 runs, whiskers: min\u2013max"
