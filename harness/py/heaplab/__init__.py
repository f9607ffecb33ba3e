"""heaplab's Python driver: builds the runner, runs the benchmark matrix and
turns the runner's JSON documents into summaries and tables.

Standard library only; matplotlib is used by the separate `plots` package,
which this driver imports lazily (or runs under an interpreter that has it).
"""
