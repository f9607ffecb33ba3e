"""A runner process killed at its timeout leaves nothing in /tmp: each
process gets a TMPDIR of its own that the driver removes however it ended
(a program cell's $TMPDIR/heaplab-<workload>-XXXXXX was left behind)."""
from __future__ import annotations

import pathlib
import stat
import sys

from heaplab import catalog, matrix, runner

# Stands in for heaplab-run on a program cell: makes its scratch folder the
# way harness/script/script_program.c does, says where, then hangs.
FAKE = """#!{python}
import os, sys, tempfile, time
folder = tempfile.mkdtemp(prefix="heaplab-prog-x-", dir=os.environ.get("TMPDIR", "/tmp"))
open(os.path.join(folder, "data"), "w").write("x")
open({said!r}, "w").write(folder)
time.sleep(60)
"""


def test_a_timed_out_cell_leaves_no_scratch_folder(tmp_path: pathlib.Path) -> None:
    said = tmp_path / "where"
    fake = tmp_path / "heaplab-run"
    fake.write_text(FAKE.format(python=sys.executable, said=str(said)))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    w = catalog.Workload(name="prog-x", group="programs", kind="program")
    cell = matrix.Cell(w, "system", 1)
    outcome = runner.run_cell(fake, cell, quick=True, timeout_s=2)
    assert outcome.status == "timeout"
    folder = pathlib.Path(said.read_text())
    assert folder.name.startswith("heaplab-prog-x-")
    assert not folder.exists(), f"{folder} was left behind"
