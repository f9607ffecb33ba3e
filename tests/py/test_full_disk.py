"""A full disk (simulated by a file-size limit, so no mount is needed) ends a
run with one line, keeps every finished cell, and leaves a folder that every
command reads; a torn last line of raw.jsonl is left out and reported, a
damaged line elsewhere is an error naming it."""
from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys

import pytest

from heaplab import atomicio, merge, rawlog

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from plots import rundata  # noqa: E402

# raw.jsonl may grow to this many bytes; env.json (the fake runner's listing) is smaller
FILE_LIMIT = 24 * 1024


def _limited() -> None:
    # a write past the limit fails with EFBIG instead of killing the process
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


@pytest.fixture
def full_run(tmp_path, driver_fixtures, repo_root):
    config = tmp_path / "fake.json"
    config.write_text(json.dumps({"list": json.loads((driver_fixtures / "list.json").read_text()),
                                  "log": str(tmp_path / "calls.jsonl"), "behaviour": {},
                                  "values": {}}))
    env = dict(os.environ, FAKE_RUNNER_CONFIG=str(config))
    env.pop("HEAPLAB_RUN", None)
    cmd = [sys.executable, str(repo_root / "run.py"), "run", "--reps", "40", "--no-plots",
           "--runner", str(driver_fixtures / "fake_runner.py"), "--out", str(tmp_path / "runs")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited)
    return proc, tmp_path / "runs" / "latest"


def test_a_full_disk_ends_the_run_with_one_line_and_keeps_whole_lines(full_run):
    proc, folder = full_run
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "cannot write" in proc.stderr and "raw.jsonl" in proc.stderr
    text = (folder / "raw.jsonl").read_text()
    assert text.endswith("\n")
    log = rawlog.read(folder / "raw.jsonl")
    assert log.documents and log.torn is None
    # every command reads what was kept
    assert merge.load_run_folder(folder).documents == log.documents
    assert len(rundata.load_run(folder).docs) == len(log.documents)


def test_a_failed_append_is_cut_back_to_the_last_whole_line(tmp_path, monkeypatch):
    raw = tmp_path / "raw.jsonl"
    atomicio.append_jsonl(raw, {"rep": 1})
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomicio.os, "write", half_then_full)
    with pytest.raises(OSError):
        atomicio.append_jsonl(raw, {"rep": 2, "text": "x" * 100})
    assert raw.read_text() == '{"rep":1}\n'


TORN = '{"rep": 1}\n{"rep": 2}\n{"rep": 3, "val'


def _folder_with(tmp_path, text):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "raw.jsonl").write_text(text)
    for rep in (1, 2, 3):  # documents the chart reader accepts
        text = text.replace(f'{{"rep": {rep}', f'{{"rep": {rep}, "workload": {{"name": "w"}}, '
                                                f'"allocator": {{"name": "system"}}, "status": "ok"')
    (folder / "raw.jsonl").write_text(text)
    return folder


def test_a_torn_last_line_is_left_out_and_reported_by_every_reader(tmp_path, capsys):
    folder = _folder_with(tmp_path, TORN)
    log = rawlog.read(folder / "raw.jsonl")
    assert [d["rep"] for d in log.documents] == [1, 2]
    assert log.torn and "raw.jsonl:3: torn last line left out" in log.torn
    assert [d["rep"] for d in merge.load_run_folder(folder).documents] == [1, 2]
    assert "torn last line" in capsys.readouterr().err
    assert [d.rep for d in rundata.load_run(folder).docs] == [1, 2]
    assert "torn last line" in capsys.readouterr().err


def test_a_damaged_line_before_the_last_is_an_error_naming_it(tmp_path):
    folder = _folder_with(tmp_path, '{"rep": 1}\n{"rep": 2, "val\n{"rep": 3}\n')
    with pytest.raises(rawlog.RawLogError, match=r"raw.jsonl:2: not valid JSON"):
        rawlog.read(folder / "raw.jsonl")
    with pytest.raises(merge.RunFolderError, match=r"raw.jsonl:2"):
        merge.load_run_folder(folder)
