"""Every ```wl example in docs/workloads.md is a complete script that the
runner loads and runs."""
from __future__ import annotations

import pathlib
import re
import textwrap

import pytest

from wl_script_helpers import REPO, list_json, run_cell, script_entries

DOC = REPO / "docs" / "workloads.md"
FENCE = re.compile(r"^([ \t]*)```wl\n(.*?)^\1```", re.S | re.M)


def doc_examples() -> list[str]:
    return [textwrap.dedent(body) for _, body in FENCE.findall(DOC.read_text())]


def test_the_docs_have_examples() -> None:
    # one per operation group, one for the distributions, the walkthrough, a program
    assert len(doc_examples()) >= 10


def test_every_docs_example_loads(heaplab_run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    for i, body in enumerate(doc_examples()):
        (tmp_path / f"example{i:02d}.wl").write_text(body)
    listing = list_json(heaplab_run, tmp_path)
    assert listing["broken_scripts"] == []
    assert len(script_entries(listing)) == len(doc_examples())


@pytest.mark.parametrize("index", range(len(doc_examples())))
def test_docs_example_runs_quick(heaplab_run: pathlib.Path, tmp_path: pathlib.Path,
                                 index: int) -> None:
    path = tmp_path / "example.wl"
    path.write_text(doc_examples()[index])
    cell = run_cell(heaplab_run, path, "system", "--quick")
    assert cell.returncode == 0, cell.stderr
    assert cell.doc is not None and cell.doc["status"] == "ok"
