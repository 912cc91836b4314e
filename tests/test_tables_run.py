"""``run --table``: a generated three-table export end to end (issue 43).

One small export (20 patients) is run three times in this module: night 1,
night 1 again (byte-identical), night 2 (more rows, same pseudonyms). The
audit (``deid_pipeline.evaluation.table_audit``) counts joins, intervals and
leaks; the hostile tables use the rule detectors only, to stay fast.
"""

from __future__ import annotations

import json
import os
import shutil

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
    outputs = {name: export / f"out-{name}" for name in ("a", "b", "nightly")}
    summaries = {
        "a": run(_argv(export, "night1", outputs["a"])),
        "b": run(_argv(export, "night1", outputs["b"])),
    }
    # Nightly: the export's files, then the same files with night 2's rows.
    shutil.copytree(export / "night1", export / "feed")
    summaries["night1"] = run(_argv(export, "feed", outputs["nightly"],
                                    "--incremental"))
    for name in os.listdir(export / "night2"):
        shutil.copy(export / "night2" / name, export / "feed" / name)
    summaries["night2"] = run(_argv(export, "feed", outputs["nightly"],
                                    "--incremental"))
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
    joins = dict(found["joins"])
    assert joins.pop("notes_text_naming_encounter_pseudonym") == found["rows"][
        "notes"][1]
    assert set(joins.values()) == {0}
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


def _partitions(output, table: str) -> list[list[dict]]:
    return [pq.read_table(p).to_pylist()
            for p in sorted((output / "tables" / table).glob("run=*/*.parquet"))]


def test_when_a_second_night_has_new_rows_then_pseudonyms_are_kept(runs):
    outputs, summaries = runs
    night1, night2 = summaries["night1"], summaries["night2"]
    assert night2["incremental"]["unchanged"] == 1  # patients.csv: same bytes
    assert night2["incremental"]["changed"] == 2
    assert set(night2["tables"]) == {"encounters", "notes"}
    assert night2["records_read"] > night1["records_read"] - 20
    (patients,) = _partitions(outputs["nightly"], "patients")
    first, second = _partitions(outputs["nightly"], "encounters")
    # The night-2 file holds night 1's encounters too: the same pseudonyms.
    assert {r["encounter_id"] for r in first} < {r["encounter_id"] for r in second}
    assert {r["person_id"] for r in second} <= {r["person_id"] for r in patients}
    same = {(r["encounter_id"], r["admit_date"], r["person_id"]) for r in first}
    assert same <= {(r["encounter_id"], r["admit_date"], r["person_id"])
                    for r in second}
    notes = [r for part in _partitions(outputs["nightly"], "notes") for r in part]
    assert {r["encounter_id"] for r in notes} <= {r["encounter_id"] for r in second}
    # Night 1 of the nightly runs wrote what the plain run wrote, byte for byte.
    (nightly,) = (outputs["nightly"] / "tables" / "patients").glob("run=*/*.parquet")
    plain = outputs["a"] / "tables" / "patients" / "part-00000-of-00001.parquet"
    assert nightly.read_bytes() == plain.read_bytes()


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


def test_when_tables_are_parquet_and_jsonl_then_types_are_kept_and_they_join(
        tmp_path):
    import datetime

    import pyarrow as pa

    pq.write_table(pa.table({
        "mrn": ["A1", "B2"], "visit": pa.array([11223344, 55667788], pa.int64()),
        "seen": [datetime.date(2020, 1, 2), datetime.date(2021, 5, 6)],
        "beds": pa.array([3, 4], pa.int16())}), tmp_path / "visits.parquet")
    (tmp_path / "labs.jsonl").write_text(
        '{"mrn": "A1", "visit": 11223344, "drawn": "2020-01-03T07:15:00", "k": 4.1}\n')
    policies = {
        "visits": {"columns": {"mrn": "person", "seen": "date", "beds": "keep",
                               "visit": {"action": "pseudonym", "domain": "visit"}}},
        "labs": {"columns": {"mrn": "person", "drawn": "datetime", "k": "keep",
                             "visit": {"action": "pseudonym", "domain": "visit"}}},
    }
    argv = []
    for name, policy in policies.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(policy))
        data = "visits.parquet" if name == "visits" else "labs.jsonl"
        argv += ["--table", f"{name}={tmp_path / data}",
                 "--column-policy", f"{name}={tmp_path / f'{name}.json'}"]
    run(argv + ["--output", str(tmp_path / "out"), "--ephemeral-key",
                "--detectors", "rules"])
    visits = pq.read_table(tmp_path / "out" / "tables" / "visits")
    labs = pq.read_table(tmp_path / "out" / "tables" / "labs")
    assert visits.schema.field("seen").type == pa.date32()
    assert visits.schema.field("beds").type == pa.int16()
    assert visits.schema.field("visit").type == pa.int64()
    assert labs.schema.field("drawn").type == pa.timestamp("us")
    first, lab = visits.to_pylist()[0], labs.to_pylist()[0]
    assert (lab["person_id"], lab["visit"]) == (first["person_id"], str(first["visit"]))
    assert first["visit"] != 11223344 and len(str(first["visit"])) == 8
    shift = lab["drawn"].date() - first["seen"]
    assert shift == datetime.timedelta(days=1)


def test_when_every_row_fails_then_exit_4_and_the_previous_tables_stay(tmp_path):
    good = _hostile(tmp_path, "id,seen,text\n1,2020-01-02,Seen.\n", _POLICY,
                    "--detectors", "rules")
    assert main(good) == 0
    published = tmp_path / "out" / "tables" / "notes" / "part-00000-of-00001.parquet"
    before = published.read_bytes(), (tmp_path / "out" / "run.json").read_bytes()
    bad = _hostile(tmp_path, "id,seen,text\n1,soon,Seen.\n2,later,Seen.\n", _POLICY,
                   "--detectors", "rules")
    assert main(bad) == 4
    assert (published.read_bytes(), (tmp_path / "out" / "run.json").read_bytes()
            ) == before
    # A plain text run over the same output replaces the tables: none are left.
    (tmp_path / "n.txt").write_text("Seen.")
    assert main(["--input", str(tmp_path / "n.txt"), "--output",
                 str(tmp_path / "out"), "--ephemeral-key", "--detectors",
                 "rules"]) == 0
    assert not (tmp_path / "out" / "tables").exists()
