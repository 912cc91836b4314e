"""read_hl7: one document per report, quarantine per failed message, nothing raised."""

from __future__ import annotations

import os

import pytest

from deid_pipeline.hl7.documents import (
    COLUMN_KEYS,
    extract_reports,
    header_columns,
    parse_hl7_message,
    read_hl7,
)
from deid_pipeline.hl7.testing import FakeRewriter
from deid_pipeline.model import ClinicalDocument, QuarantineRecord

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "hl7")


def _read(name: str) -> list:
    path = os.path.join(FIXTURES, name)
    with open(path, "rb") as fh:
        return list(read_hl7(path, fh.read()))


@pytest.mark.parametrize("name,doc_ids", [
    ("oru_escapes.hl7", ["RAD-20230314-0042-1"]),
    ("oru_repetitions.hl7", ["LAB0211-77-1"]),
    ("oru_zsegments.hl7", ["PATH-1002-9-1"]),
    ("oru_wrapped.hl7", ["WR-0707-1-1", "WR-0707-1-2"]),
    ("lf_terminators.hl7", ["MDM-0517-001-1", "ADT-0518-014-0", "RAD-0519-3-1"]),
    ("batch.hl7", ["P0301-01-1", "P0301-02-1", "P0301-03-1"]),
    ("mllp.mllp", ["ECHO-0605-1-1", "ECHO-0605-2-1"]),
    ("latin1.hl7", ["LAT-0110-1-1", "LAT-0110-2-1"]),
    ("custom_delimiters.hl7", ["CU-0801-1-1", "CU-0801-1-2"]),  # empty OBR-1
    ("truncated.hl7", ["TR-0420-3-1"]),
])
def test_when_fixture_read_then_one_document_per_report(name, doc_ids):
    docs = [r for r in _read(name) if isinstance(r, ClinicalDocument)]
    assert [d.doc_id for d in docs] == doc_ids
    for doc in docs:
        assert doc.source == "hl7" and doc.origin.endswith(name)
        assert doc.person_key and doc.person_key.startswith("mrn:")
        assert doc.dictionary is not None
        assert doc.dictionary.person_key == doc.person_key


def test_when_messages_fail_then_quarantined_with_stage_and_no_phi():
    records = [r for r in _read("truncated.hl7") if isinstance(r, QuarantineRecord)]
    assert [(r.doc_id, r.stage) for r in records] == [
        ("truncated.hl7#1", "read"), ("truncated.hl7#2", "parse"),
        ("truncated.hl7#3", "parse")]
    assert records[1].error_message == (
        "message truncated: no OBR segment (last is segment 2 (PID))")
    for record in records:
        assert record.raw and record.source == "hl7"
        for phi in ("STRAND", "TOBIAS", "ORPHAN", "MR55"):
            assert phi not in record.error_message


def test_when_escapes_then_narrative_is_the_decoded_text():
    (doc,) = _read("oru_escapes.hl7")
    assert doc.text.splitlines()[:3] == [
        "EXAM: Chest PA & lateral", "",
        "HISTORY: Cough x 3 weeks. Pt Chidinma Okafor, DOB 11/07/1962."]
    assert "normal | mediastinum" in doc.text and "clear ^ no effusion" in doc.text
    assert "hex A and bold text." in doc.text
    assert "165" not in doc.text  # NM values are not narrative
    assert doc.text.endswith("Results phoned to Ms. Okafor on 3/14/23 ~ read back "
                             "verified.")


def test_when_report_has_pieces_then_each_character_maps_to_its_field():
    path = os.path.join(FIXTURES, "oru_repetitions.hl7")
    with open(path, "rb") as fh:
        text = fh.read().decode()
    message, (report,) = parse_hl7_message(text)
    at = report.text.index("Oyelaran")
    piece = report.locate(at)
    assert (piece.name, piece.field, piece.repetition) == ("OBX", 5, 1)
    assert message.segments[piece.segment].name == "OBX"
    nte = report.locate(report.text.index("Lan Nguyen"))
    assert (nte.address, nte.repetition) == ("NTE.3", 1)
    assert report.locate(report.text.index("\n")) is None  # the joining line break


def test_when_oru_has_patient_notes_and_groups_then_notes_go_to_first_report():
    docs = _read("oru_wrapped.hl7")
    assert docs[0].text.startswith("Patient prefers to be called Ken Yamamoto.\n"
                                   "Order comment: prior MRI 2021 at Summit.\n"
                                   "MRI lumbar spine for Kenji Yamamoto.\n"
                                   "Findings: mild L4-L5 disc bulge.\n\nNo stenosis.")
    assert docs[1].text == ("ADDENDUM: discussed with Mr. Yamamoto by phone "
                            "303-555-7120.\nAddendum by L. Ferreira.")


def test_when_adt_then_one_header_document_without_text():
    docs = {d.doc_id: d for d in _read("lf_terminators.hl7")}
    adt = docs["ADT-0518-014-0"]
    assert adt.text == ""
    assert dict(adt.metadata)["hl7_document"] == "header"
    assert any(e.value == "HONORA" for e in adt.dictionary.entries)
    mdm = dict(docs["MDM-0517-001-1"].metadata)
    assert mdm["hl7_document"] == "note" and mdm["report_type"] == "Discharge Summary"


def test_when_metadata_written_then_only_non_phi_columns():
    (doc,) = _read("oru_escapes.hl7")
    assert dict(doc.metadata) == {
        "hl7_message_type": "ORU^R01", "hl7_version": "2.5", "hl7_charset": "utf-8",
        "hl7_document": "report", "report_type": "XR CHEST 2 VIEWS",
        "ordering_service": "RAD", "result_status": "F", "sex": "F",
        "patient_class": "O"}


def test_when_header_columns_made_then_dates_shifted_like_the_text():
    (doc,) = _read("oru_escapes.hl7")
    rewriter = FakeRewriter()
    pid = "p1"
    columns = dict(header_columns(doc, rewriter, pid))
    assert set(columns) <= set(COLUMN_KEYS)
    shifted_dob = rewriter.replace_value("11/07/1962", "DATE", pid)
    month, day, year = shifted_dob.split("/")
    assert columns["birth_date_shifted"] == f"{year}-{month}-{day}"
    assert columns["birth_year"] == year
    assert columns["observation_date_shifted"] != "2023-03-14"
    assert "age_90_or_over" not in columns


def test_when_patient_over_89_then_birth_year_90_plus_under_safe_harbor():
    text = ("MSH|^~\\&|A|H|||20240101||ORU^R01|OLD1|P|2.5\r"
            "PID|1||5^^^H^MR||ROE^ANN||19300101|F\rOBR|1|||||||20240101\r")
    message, reports = parse_hl7_message(text)
    from deid_pipeline.hl7.documents import build_documents

    (doc,) = build_documents(message, "x", "utf-8", reports)
    columns = dict(header_columns(doc, FakeRewriter(), "p"))
    assert columns["age_90_or_over"] == "true"
    assert columns["birth_year"] == "90+" and "birth_date_shifted" not in columns
    columns = dict(header_columns(doc, FakeRewriter(policy="limited-dataset"), "p"))
    assert columns["birth_year"] == "1930"
    assert columns["birth_date_shifted"] == "1930-01-01"


def test_when_report_message_holds_two_patients_then_refused():
    text = ("MSH|^~\\&|A|H|||1||ORU^R01|TWO|P|2.5\rPID|1||1^^^H^MR\rOBR|1\r"
            "PID|2||2^^^H^MR\rOBR|2\r")
    (record,) = list(read_hl7("two.hl7", text.encode()))
    assert record.stage == "parse"
    assert record.error_message == "2 patients (PID segments) in one report message"


def test_when_reports_extracted_then_groups_cover_obr_to_next_obr():
    path = os.path.join(FIXTURES, "oru_wrapped.hl7")
    with open(path, "rb") as fh:
        message, _ = parse_hl7_message(fh.read().decode())
    first, second = extract_reports(message)
    names = [s.name for s in message.segments]
    assert [names[i] for i in first.group] == ["OBR", "NTE", "OBX", "OBX"]
    assert [names[i] for i in second.group] == ["OBR", "OBX", "NTE"]


def test_when_file_is_utf16_with_a_mark_then_read_as_its_utf8_twin():
    path = os.path.join(FIXTURES, "oru_repetitions.hl7")
    with open(path, "rb") as fh:
        data = fh.read()
    wide = b"\xfe\xff" + data.decode("utf-8").encode("utf-16-be")
    narrow_records = list(read_hl7(path, data))
    wide_records = list(read_hl7(path, wide))
    assert [r.doc_id for r in wide_records] == [r.doc_id for r in narrow_records]
    assert [r.text for r in wide_records] == [r.text for r in narrow_records]
    assert all(isinstance(r, ClinicalDocument) for r in wide_records)
