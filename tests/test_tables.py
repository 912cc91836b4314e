"""Table inputs without Beam: column policies, readers, column actions (issue 43)."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.keys import person_id
from deid_pipeline.tables.columns import deidentify_row, pseudonym, seed_entries
from deid_pipeline.tables.policy import (
    PolicyError,
    check_header,
    load_policy,
    parse_policy,
)
from deid_pipeline.tables.read import TableRow, read_table
from deid_pipeline.tables.schema import table_schema

KEY = b"k" * 32


def _policy(columns: dict, **top) -> object:
    return parse_policy("p.yaml", {"columns": columns, **top})


@pytest.mark.parametrize(
    ("columns", "named"),
    [
        ({"a": "shred"}, "unknown action 'shred'"),
        ({"a": {"action": "date", "domain": "x"}}, "takes no option 'domain'"),
        ({"a": {"action": "keep", "colour": "red"}}, "takes no option 'colour'"),
        ({"a": {"action": "pseudonym", "label": "NOPE"}}, "unknown label"),
        ({"a": "date"}, "needs a person column"),
        ({"a": "person", "b": "person"}, "more than one person column"),
        ({"a": 3}, "column 'a' must be an action"),
    ],
)
def test_when_policy_is_wrong_then_the_error_names_it(columns, named):
    with pytest.raises(PolicyError, match=named):
        _policy(columns)


def test_when_policy_has_an_unknown_top_key_then_it_is_named(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"columns": {"a": "keep"}, "colums": {}}')
    with pytest.raises(PolicyError, match="colums: unknown key"):
        load_policy(str(path))


def test_when_policy_is_yaml_then_it_loads(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("columns:\n  id: person\n"
                    "  seen: {action: date, format: '%d.%m.%Y'}\n")
    policy = load_policy(str(path))
    assert policy.person_column == "id"
    assert policy.columns["seen"].format == "%d.%m.%Y"


def test_when_header_lacks_a_column_or_has_an_undeclared_one_then_said():
    policy = _policy({"id": "person", "text": "text"})
    with pytest.raises(PolicyError, match="column 'text'"):
        check_header("notes", policy, ["id"])
    assert check_header("notes", policy, ["id", "text", "mrn"]) == ["mrn"]
    strict = _policy({"id": "person"}, undeclared="error")
    with pytest.raises(PolicyError, match="column 'mrn' is not in the policy"):
        check_header("notes", strict, ["id", "mrn"])


def test_when_csv_has_bom_quoted_newlines_and_a_ragged_row_then_rows_and_an_error():
    data = ('\ufeffid,text\n1,"two\nlines, quoted ""here"""\n2,a,b\n3,ok\n'
            ).encode("utf-8")
    table = read_table("t", "t.csv", data)
    assert table.header == ["id", "text"]
    assert [r.index for r in table.rows] == [1, 2, 3]
    assert dict(table.rows[0].values)["text"] == 'two\nlines, quoted "here"'
    assert table.rows[1].error.startswith("ragged row") and table.rows[1].raw
    assert not table.rows[2].error


def test_when_csv_is_latin1_or_tsv_or_utf16_then_decoded():
    latin = read_table("t", "t.csv", "id,name\n1,Jos\xe9\n".encode("latin-1"))
    assert dict(latin.rows[0].values)["name"] == "Jos\u00e9"
    tsv = read_table("t", "t.tsv", b"id\tname\n1\tA, B\n")
    assert dict(tsv.rows[0].values)["name"] == "A, B"
    wide = read_table("t", "t.csv", "id,name\n1,Zo\u00eb\n".encode("utf-16"))
    assert dict(wide.rows[0].values)["name"] == "Zo\u00eb"


def test_when_jsonl_and_parquet_then_rows_and_types(tmp_path):
    jsonl = read_table("t", "t.jsonl", b'{"id": 1, "a": "x"}\nnot json\n{"id": 2}\n')
    assert jsonl.header == ["id", "a"]
    assert jsonl.rows[1].error == "not a JSON object"
    assert dict(jsonl.rows[2].values) == {"id": 2, "a": None}
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": [7], "day": [datetime.date(2020, 1, 2)]}), path)
    table = read_table("t", str(path), path.read_bytes())
    assert table.types["id"] == pa.int64() and dict(table.rows[0].values)["id"] == 7


class _NoTagger:
    """A flow for rows without text columns (never called)."""

    def process(self, *_args):  # pragma: no cover - must not run
        raise AssertionError("no text column to tag")


_POLICY = {
    "mrn": "person",
    "enc": {"action": "pseudonym", "domain": "encounter"},
    "seen": "date",
    "at": "datetime",
    "born": "birth_date",
    "born_year": {"action": "birth_date", "form": "year"},
    "age": "age",
    "zip": "zip",
    "ward": "keep",
    "first": {"action": "drop", "seed": "PATIENT"},
}


def _row(**values) -> TableRow:
    base = {"mrn": "123456", "enc": "E0012345", "seen": "2020-03-01",
            "at": "2020-03-01T08:30:00", "born": "1950-06-15", "born_year": "1950",
            "age": "70", "zip": "02139", "ward": "7B", "first": "Ada"}
    base.update(values)
    return TableRow("enc", 1, tuple(base.items()))


def test_when_each_action_applies_then_values_follow_the_shared_rules():
    rewriter = Rewriter(mode="surrogate", key=KEY, as_of_year=2026)
    policy = _policy(_POLICY)
    out = deidentify_row(policy, _row(), rewriter, _NoTagger())
    assert out.quarantine is None
    row = out.research
    pid = person_id(KEY, "123456")
    offset = rewriter.date_offset(pid)
    assert row["person_id"] == pid and "mrn" not in row and "first" not in row
    assert row["enc"] != "E0012345" and len(row["enc"]) == 8
    assert row["enc"][1:].isdigit() and row["enc"][0].isalpha()
    assert row["enc"] == pseudonym(KEY, "encounter", "IDNUM", "E0012345")
    assert row["seen"] == datetime.date(2020, 3, 1) + datetime.timedelta(offset)
    assert row["at"] == datetime.datetime(2020, 3, 1, 8, 30) + datetime.timedelta(
        offset)
    assert row["born"] == datetime.date(1950, 6, 15) + datetime.timedelta(offset)
    assert row["born_year"] == str(1950 + round(offset / 365.2425))
    assert (row["age"], row["zip"], row["ward"]) == (70, "021", "7B")
    assert {r["source"] for r in out.identifiers} >= {"column:mrn", "column:enc",
                                                      "column:seen", "column:zip"}


def test_when_over_89_or_restricted_zip3_then_safe_harbor():
    rewriter = Rewriter(mode="surrogate", key=KEY, as_of_year=2026)
    out = deidentify_row(_policy(_POLICY), _row(age="93", zip="03601",
                                                born="1930-01-01",
                                                born_year="1930"),
                         rewriter, _NoTagger()).research
    assert (out["age"], out["zip"], out["born"], out["born_year"]) == (
        90, "000", None, "90+")


def test_when_limited_dataset_then_dates_and_zip_kept():
    rewriter = Rewriter(mode="surrogate", key=KEY, policy="limited-dataset",
                        as_of_year=2026)
    out = deidentify_row(_policy(_POLICY), _row(age="93"), rewriter,
                         _NoTagger()).research
    assert (out["seen"], out["zip"], out["age"]) == (datetime.date(2020, 3, 1),
                                                     "02139", 93)


@pytest.mark.parametrize(("column", "value"), [("seen", "31/31/2020"),
                                               ("age", "old"), ("zip", "MA"),
                                               ("mrn", " ")])
def test_when_a_value_cannot_be_read_then_the_row_is_quarantined_naming_the_column(
        column, value):
    rewriter = Rewriter(mode="surrogate", key=KEY, as_of_year=2026)
    out = deidentify_row(_policy(_POLICY), _row(**{column: value}), rewriter,
                         _NoTagger())
    assert out.research is None and out.quarantine.stage == "columns"
    assert repr(column) in out.quarantine.error_message
    if value.strip():
        assert value not in out.quarantine.error_message


def test_when_pseudonyms_are_keyed_then_stable_and_domain_scoped():
    a = pseudonym(KEY, "encounter", "IDNUM", "E0012345")
    assert a == pseudonym(KEY, "encounter", "IDNUM", "E0012345")
    assert a != pseudonym(KEY, "note", "IDNUM", "E0012345")
    assert a != pseudonym(b"j" * 32, "encounter", "IDNUM", "E0012345")
    assert isinstance(pseudonym(KEY, "x", "IDNUM", 1234567), int)


def test_when_seeded_then_names_ids_and_birth_dates_are_dictionary_entries():
    entries = seed_entries(_policy(_POLICY), _row())
    by_label = {(e.label, e.value) for e in entries}
    assert ("PATIENT", "Ada") in by_label and ("MEDICALRECORD", "123456") in by_label
    assert ("IDNUM", "E0012345") in by_label and ("ZIP", "02139") in by_label
    assert ("DATE", "6/15/1950") in by_label


def test_when_schema_is_built_then_typed_and_documented():
    schema = table_schema(_policy(_POLICY), {"ward": pa.int32()})
    assert schema.names[0] == "person_id"
    assert schema.field("seen").type == pa.date32()
    assert schema.field("at").type == pa.timestamp("us")
    assert schema.field("born_year").type == pa.string()
    assert schema.field("ward").type == pa.int32()
    assert all(f.metadata[b"doc"] for f in schema)


def test_when_a_person_has_birth_and_zip_columns_then_the_persons_row_has_them():
    from deid_pipeline.tables.columns import person_row

    rewriter = Rewriter(mode="surrogate", key=KEY, as_of_year=2026)
    pid = person_id(KEY, "123456")
    row = person_row(pid, [(_policy(_POLICY), _row(born="1930-01-01",
                                                   zip="03601"))], 1, rewriter)
    assert (row["birth_year"], row["zip3"], row["n_documents"]) == ("90+", "000", 1)


def test_when_a_table_file_is_gzipped_then_it_is_read_and_its_header_checked(
        tmp_path):
    import gzip

    from deid_pipeline.pipelines.job import RunError
    from deid_pipeline.pipelines.tables_job import load_tables

    (tmp_path / "n.csv.gz").write_bytes(gzip.compress(b"id,text\n1,a\n2,b\n"))
    (tmp_path / "p.json").write_text('{"columns": {"id": "person", "text": "text"}}')
    tables = {"n": str(tmp_path / "n.csv.gz")}
    inputs, rows, facts = load_tables(tables, {"n": str(tmp_path / "p.json")})
    assert [r.index for r in rows] == [1, 2] and facts["n"]["rows_read"] == 2
    with pytest.raises(RunError, match="limit"):
        load_tables(tables, {"n": str(tmp_path / "p.json")}, max_bytes=5)


def test_when_text_names_a_pseudonym_column_id_then_it_gets_the_columns_pseudonym():
    from deid_pipeline.flow import DocumentFlow
    from deid_pipeline.tables.columns import pseudonyms_of
    from deid_pipeline.tagger.detectors import TaggerConfig
    from deid_pipeline.tagger.tagging import PhiTagger

    flow = DocumentFlow(PhiTagger.from_config(TaggerConfig(detectors=(
        "rules", "dictionary"))), Rewriter(mode="surrogate", key=KEY,
                                           as_of_year=2026))
    policy = _policy({"mrn": "person", "enc": {"action": "pseudonym",
                                               "domain": "encounter"},
                      "text": "text"})
    row = TableRow("notes", 1, (("mrn", "123456"), ("enc", "E0012345"),
                                ("text", "Seen for encounter E0012345 today.")))
    out = deidentify_row(policy, row, flow.rewriter, flow,
                         tuple(seed_entries(policy, row)), "",
                         pseudonyms_of(policy, row, KEY)).research
    assert "E0012345" not in out["text"]
    assert out["text"] == f"Seen for encounter {out['enc']} today."
