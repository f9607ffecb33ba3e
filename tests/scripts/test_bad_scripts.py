"""Every bad script in tests/scripts/bad/ is refused before anything runs,
with one line `PATH:LINE: what is wrong`. Each fixture's first line says
what it expects: `# expect: LINE: MESSAGE-FRAGMENT`."""
from __future__ import annotations

import pathlib
import re
import subprocess

import pytest

from wl_script_helpers import BAD_DIR, CELL_TIMEOUT_S, list_json

EXPECT = re.compile(r"^# expect: (\d+): (.+)$")
BAD_SCRIPTS = sorted(BAD_DIR.glob("*.wl"))


def expectation(path: pathlib.Path) -> tuple[int, str]:
    first = path.read_text().splitlines()[0]
    m = EXPECT.match(first)
    assert m, f"{path.name}: first line must be '# expect: LINE: MESSAGE'"
    return int(m.group(1)), m.group(2)


def test_there_are_bad_scripts_to_check() -> None:
    assert len(BAD_SCRIPTS) >= 30


@pytest.mark.parametrize("path", BAD_SCRIPTS, ids=lambda p: p.stem)
def test_bad_script_is_refused_with_its_line(heaplab_run: pathlib.Path, path: pathlib.Path) -> None:
    line, fragment = expectation(path)
    proc = subprocess.run([str(heaplab_run), "--alloc", "system", "--workload", str(path)],
                          capture_output=True, text=True, timeout=CELL_TIMEOUT_S)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "", "a refused script must not produce a document"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got: {proc.stderr!r}"
    message = lines[0]
    prefix = f"{path}:{line}: "
    assert prefix in message, f"want {prefix!r} in {message!r}"
    assert fragment in message.split(prefix, 1)[1], f"want {fragment!r} in {message!r}"


def test_bad_scripts_are_listed_as_broken_not_as_workloads(heaplab_run: pathlib.Path) -> None:
    listing = list_json(heaplab_run, BAD_DIR)
    broken = {pathlib.Path(b["source"]).name: b["error"] for b in listing["broken_scripts"]}
    assert set(broken) == {p.name for p in BAD_SCRIPTS}
    for path in BAD_SCRIPTS:
        line, fragment = expectation(path)
        assert f":{line}: " in broken[path.name] and fragment in broken[path.name]
    assert not [w for w in listing["workloads"] if w["kind"] != "builtin"]
