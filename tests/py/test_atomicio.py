"""Atomic writes and the append-only raw log."""
import json
import os

import pytest

from heaplab import atomicio, rawlog


def test_write_replaces_the_whole_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "summary.json"
    target.write_text("old")
    atomicio.write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "tables.md"
    target.write_text("old table")

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(atomicio.os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomicio.write_text(target, "new table")
    assert target.read_text() == "old table"
    assert [p.name for p in tmp_path.iterdir()] == ["tables.md"]


def test_append_adds_one_line_per_document_and_fsyncs(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(atomicio.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    raw = tmp_path / "raw.jsonl"
    atomicio.append_jsonl(raw, {"rep": 1})
    atomicio.append_jsonl(raw, {"rep": 2, "text": "two\nlines"})
    assert raw.read_text().count("\n") == 2
    assert [d["rep"] for d in rawlog.read(raw).documents] == [1, 2]
    assert len(synced) == 2


def test_reading_skips_a_torn_last_line(tmp_path):
    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"rep": 1}\n{"rep": 2, "val')
    assert [d["rep"] for d in rawlog.read(raw).documents] == [1]


def test_symlink_is_replaced_atomically(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "latest"
    atomicio.replace_symlink(link, "a")
    atomicio.replace_symlink(link, "b")
    assert os.readlink(link) == "b"


def test_written_files_get_the_users_umask_not_a_private_mode(tmp_path):
    old = os.umask(0o022)
    try:
        atomicio.write_text(tmp_path / "tables.md", "shared")
        atomicio.write_json(tmp_path / "summary.json", {})
    finally:
        os.umask(old)
    for name in ("tables.md", "summary.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name
