"""Schema checks: a wrong file is refused with one line naming file and field."""
from __future__ import annotations

import pytest

from heaplab import published
from heaplab.published import PublishedError

import published_helpers as h


def refused(doc) -> str:
    with pytest.raises(PublishedError) as info:
        h.parse(doc)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("900-mini.json: ")
    return message


def test_fixture_itself_is_valid():
    mini = h.mini()
    assert mini.id == "900-mini" and len(mini.rows) == 2 and mini.baseline == "system"


def test_missing_top_level_field_is_named():
    mini_doc = h.mini_doc()
    del mini_doc["unit"]
    assert refused(mini_doc) == "900-mini.json: unit: missing"


def test_unknown_field_is_named_with_its_row():
    mini_doc = h.mini_doc()
    mini_doc["rows"][1]["metrc"] = "primary"
    assert refused(mini_doc) == "900-mini.json: rows[1].metrc: unknown field"


def test_figure_for_a_column_that_does_not_exist():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["figures"]["jemalloc"] = 3
    assert "rows[0].figures.jemalloc: no such column" in refused(mini_doc)


def test_figure_missing_for_a_column_must_be_null_not_absent():
    mini_doc = h.mini_doc()
    del mini_doc["rows"][0]["figures"]["other"]
    assert "rows[0].figures.other: missing (use null for a dash)" in refused(mini_doc)


def test_text_figure_is_refused():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["figures"]["toy"] = "5"
    assert "rows[0].figures.toy: must be a number or null" in refused(mini_doc)


def test_baseline_must_be_a_column():
    mini_doc = h.mini_doc()
    mini_doc["baseline"] = "glibc"
    assert "baseline: 'glibc' is not a column" in refused(mini_doc)


def test_baseline_must_be_runnable():
    mini_doc = h.mini_doc()
    mini_doc["baseline"] = "other"
    assert "baseline: must be an allocator column that runs here" in refused(mini_doc)


def test_bad_metric_spec_is_explained():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["metric"] = "phase:built"
    assert "rows[0].metric: 'phase:built': expected phase:NAME:FIELD" in refused(mini_doc)


def test_unknown_allocator_is_refused():
    mini_doc = h.mini_doc()
    mini_doc["columns"][0]["runs_as"] = "heaplab2"
    assert "columns[0].runs_as: 'heaplab2' is not one of" in refused(mini_doc)


def test_column_that_cannot_run_must_say_why():
    mini_doc = h.mini_doc()
    del mini_doc["columns"][4]["cannot_run"]
    assert "columns[4].cannot_run: a column with no runs_as must say why" in refused(mini_doc)


def test_suspect_note_must_name_an_existing_row():
    mini_doc = h.mini_doc()
    mini_doc["notes"][0]["row"] = "no such row"
    assert "notes[0].row: 'no such row' is not a row label" in refused(mini_doc)


def test_row_without_metric_must_say_why():
    mini_doc = h.mini_doc()
    mini_doc["rows"][0]["metric"] = None
    assert "rows[0].not_reproduced: a row with no metric must say why" in refused(mini_doc)


def test_id_must_match_the_file_name():
    mini_doc = h.mini_doc()
    mini_doc["id"] = "900-other"
    assert "id: '900-other' differs from the file name '900-mini'" in refused(mini_doc)


def test_invalid_json_names_file_and_line(tmp_path):
    bad = tmp_path / "900-bad.json"
    bad.write_text('{\n  "schema": "heaplab.published/1",\n  "id": \n}\n', encoding="utf-8")
    with pytest.raises(PublishedError, match=r"^900-bad\.json: line 4: not valid JSON"):
        published.load_table(bad)


def test_suspect_flag_comes_from_the_note():
    mini = h.mini()
    assert [r.suspect for r in mini.rows] == [False, True]


def test_find_table_accepts_id_with_or_without_seed_number():
    mini = h.mini()
    memory_table = h.memory_table()
    tables = [mini, memory_table]
    assert published.find_table(tables, "900-mini") is mini
    assert published.find_table(tables, "memory") is memory_table
    with pytest.raises(PublishedError, match="no published table named 'nope' .known: 900-mini, 901-memory"):
        published.find_table(tables, "nope")
