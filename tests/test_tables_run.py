"""``run --table``: a generated three-table export end to end (issue 43).

One small export (20 patients) is run three times in this module: night 1,
night 1 again (byte-identical), night 2 (more rows, same pseudonyms). The
audit (``deid_pipeline.evaluation.table_audit``) counts joins, intervals and
leaks; the hostile tables use the rule detectors only, to stay fast.
"""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from deid_pipeline.evaluation.table_audit import audit
from deid_pipeline.pipelines.job import RunError, main, run
from deid_pipeline.synthetic.tables import write_tables

TABLES = ("patients", "encounters", "notes")


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    base = tmp_path_factory.mktemp("tables")
    key = base / "deid.key"
    key.write_text("a-test-key-of-thirty-two-bytes!!")
    write_tables(str(base / "night1"), 20, seed=5, night=1)
    write_tables(str(base / "night2"), 20, seed=5, night=2)
    return base


def _argv(export, night: str, output, *extra: str) -> list[str]:
    argv = []
    for t in TABLES:
        argv += ["--table", f"{t}={export / night / f'{t}.csv'}",
                 "--column-policy", f"{t}={export / night / f'{t}.policy.yaml'}"]
    return argv + ["--output", str(output), "--key-file", str(export / "deid.key"),
                   "--as-of-year", "2026", *extra]


@pytest.fixture(scope="module")
def runs(export):
    outputs = {name: export / f"out-{name}" for name in ("a", "b", "night2")}
    summaries = {
        "a": run(_argv(export, "night1", outputs["a"])),
        "b": run(_argv(export, "night1", outputs["b"])),
        "night2": run(_argv(export, "night2", outputs["night2"])),
    }
    return outputs, summaries


def test_when_export_is_run_then_accounted_joined_intervals_kept_nothing_leaks(
        export, runs):
    outputs, summaries = runs
    summary = summaries["a"]
    assert summary["accounted"] and summary["records_quarantined"] == 0
    assert summary["records_read"] == sum(
        summary["tables"][t]["rows_read"] for t in TABLES)
    found = audit(str(export / "night1"), str(outputs["a"]))
    assert found["persons"] == 20
    assert set(found["joins"].values()) == {0}
    assert found["intervals"]["persons_with_two_offsets"] == 0
    assert found["intervals"]["dates_compared"] > 100
    assert found["leaks"]["person_values"] == found["leaks"]["row_dates"] == 0
    assert found["leaks"]["ids_anywhere"] == 0
    on_disk = json.loads((outputs["a"] / "run.json").read_text())
    assert sorted(on_disk["files"]["tables"]) == [
        f"{t}/part-00000-of-00001.parquet" for t in sorted(TABLES)]


def test_when_run_again_with_the_same_key_then_byte_identical(runs):
    outputs, _ = runs
    found = audit_compare(outputs["a"], outputs["b"])
    assert found["different_files"] == 0 and found["identical_files"] >= 5


def audit_compare(first, second) -> dict:
    from deid_pipeline.evaluation.table_audit import _compare

    return _compare(str(first), str(second))


def test_when_a_second_night_has_new_rows_then_pseudonyms_are_kept(export, runs):
    outputs, summaries = runs
    assert summaries["night2"]["records_read"] > summaries["a"]["records_read"]
    found = audit_compare(outputs["a"], outputs["night2"])
    assert found["pseudonyms_compared"] > 100 and found["pseudonyms_changed"] == 0
    first = pq.read_table(outputs["a"] / "tables" / "encounters").to_pylist()
    second = pq.read_table(outputs["night2"] / "tables" / "encounters").to_pylist()
    assert {r["encounter_id"] for r in first} < {r["encounter_id"] for r in second}


def _hostile(tmp_path, notes: str, policy: str, *extra: str) -> list[str]:
    (tmp_path / "notes.csv").write_bytes(notes.encode("latin-1"))
    (tmp_path / "notes.json").write_text(policy)
    key = tmp_path / "k"
    key.write_text("another-test-key-thirty-two-byte")
    return ["--table", f"notes={tmp_path / 'notes.csv'}", "--column-policy",
            f"notes={tmp_path / 'notes.json'}", "--output", str(tmp_path / "out"),
            "--key-file", str(key), "--detectors", "rules,dictionary", *extra]


_POLICY = json.dumps({"columns": {"id": "person", "seen": "date", "text": "text"}})


def test_when_rows_are_ragged_or_dates_unparseable_then_quarantined_and_counted(
        tmp_path):
    notes = ('id,seen,text,mrn\n1,2020-01-02,"Seen 1/2/2020,\nJos\xe9 ok",9\n'
             '2,2020-13-45,Bad date,9\n3,2020-01-05,ragged,9,extra\n'
             '4,1/6/2020,Seen 1/6/2020,9\n')
    summary = run(_hostile(tmp_path, notes, _POLICY))
    table = summary["tables"]["notes"]
    assert (table["rows_read"], table["rows_written"], table["rows_quarantined"]) == (
        4, 2, 2)
    assert table["quarantined_by_stage"] == {"columns": 1, "read": 1}
    assert table["dropped_columns"] == ["mrn"] and summary["accounted"]
    rows = pq.read_table(tmp_path / "out" / "tables" / "notes").to_pylist()
    assert [r["text"].startswith("Seen ") for r in rows] == [True, True]
    assert "1/2/2020" not in rows[0]["text"] and "mrn" not in rows[0]
    quarantine = pq.read_table(tmp_path / "out" / "quarantine").to_pylist()
    assert sorted(q["doc_id"] for q in quarantine) == ["notes/2", "notes/3"]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"columns": {"id": "person", "text": "txt"}}, "unknown action 'txt'"),
        ({"columns": {"id": "person", "nope": "keep"}}, "column 'nope'"),
        ({"columns": {"id": "person"}, "undeclared": "error"},
         "column 'text' is not in the policy"),
    ],
)
def test_when_policy_or_table_do_not_fit_then_exit_2_and_nothing_written(
        tmp_path, capsys, policy, message):
    argv = _hostile(tmp_path, "id,text\n1,x\n", json.dumps(policy))
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "out" / "run.json")


def test_when_table_options_do_not_pair_then_usage_error(tmp_path):
    argv = _hostile(tmp_path, "id,text\n1,x\n", _POLICY)
    with pytest.raises(RunError, match="needs a --column-policy"):
        run(argv[:2] + argv[4:])
    with pytest.raises(RunError, match="--input"):
        run(["--output", str(tmp_path / "o"), "--ephemeral-key"])
