"""The committed fixture run folders are exactly what make_fixtures.py
writes, so they cannot drift from the script that documents them."""

from __future__ import annotations

from pathlib import Path

import make_fixtures


def test_fixtures_regenerate_byte_for_byte(tmp_path: Path):
    written = make_fixtures.build_fixtures(tmp_path)
    assert written
    for path in written:
        relative = path.relative_to(tmp_path)
        committed = make_fixtures.FIXTURES / relative
        assert committed.is_file(), f"{relative} is not committed; run make_fixtures.py"
        assert committed.read_bytes() == path.read_bytes(), f"{relative} differs; run make_fixtures.py"


def test_every_committed_run_folder_is_generated():
    generated = set(make_fixtures.fixture_runs())
    committed = {p.name for p in make_fixtures.FIXTURES.iterdir()
                 if p.is_dir() and (p / "raw.jsonl").exists()}
    assert committed == generated
