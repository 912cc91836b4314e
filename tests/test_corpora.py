"""Readers: every record becomes a document or a quarantine record, never nothing."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_pipeline.model import ClinicalDocument, QuarantineRecord
from deid_pipeline.readers.formats import (
    decode_text,
    read_physionet_gold,
    read_records,
    read_text,
    sniff_format,
)


def test_when_physionet_corpus_then_1619_notes_and_gold_text_matches(
    physionet_docs, corpus_dir
):
    assert len(physionet_docs) == 1619
    by_id = {d.doc_id: d for d in physionet_docs}
    n = 0
    with open(f"{corpus_dir}/id-phi.phrase", encoding="utf-8") as fh:
        for line in fh:
            patient, note, start, end, _tag, phrase = line.rstrip("\n").split(" ", 5)
            doc = by_id[f"{patient}-{note}"]
            assert doc.text[int(start) : int(end)].strip() == phrase.strip()
            n += 1
    assert n == 1146
    # Rejoined phrases still match the text they cover.
    for doc in physionet_docs:
        for span in doc.gold:
            assert (
                doc.text[span.start : span.end].strip()
                == doc.text[span.start : span.end]
            )
    assert physionet_docs[0].person_key == "physionet:1"


def test_when_gold_read_then_labels_mapped_to_label_set(corpus_dir):
    gold = read_physionet_gold(f"{corpus_dir}/id-phi.phrase")
    labels = {s.label for spans in gold.values() for s in spans}
    assert labels <= {
        "PATIENT",
        "DOCTOR",
        "RELATIVE",
        "LOCATION",
        "DATE",
        "PHONE",
        "AGE",
        "IDNUM",
    }
    assert "HCPName" not in labels


def test_when_physionet_record_unterminated_then_quarantined_and_rest_read():
    data = (
        b"START_OF_RECORD=1||||1||||\nfirst note\n||||END_OF_RECORD\n"
        b"START_OF_RECORD=1||||2||||\nno end marker\n"
        b"START_OF_RECORD=2||||1||||\nthird\n||||END_OF_RECORD\n"
    )
    records = list(read_records("id.text", data, "physionet"))
    kinds = [(type(r).__name__, r.doc_id) for r in records]
    assert kinds == [
        ("ClinicalDocument", "1-1"),
        ("QuarantineRecord", "1-2"),
        ("ClinicalDocument", "2-1"),
    ]
    assert records[0].text == "first note\n"


def test_when_jsonl_has_broken_lines_then_each_is_quarantined():
    lines = [
        json.dumps({"id": "a", "text": "Seen by Dr. Lee.", "site": "north"}),
        "{not json",
        json.dumps({"id": "b"}),
        json.dumps(["list"]),
        "",
        json.dumps({"id": 7, "text": "ok"}),
    ]
    records = list(read_records("notes.jsonl", "\n".join(lines).encode(), "jsonl"))
    docs = [r for r in records if isinstance(r, ClinicalDocument)]
    bad = [r for r in records if isinstance(r, QuarantineRecord)]
    assert [d.doc_id for d in docs] == ["a", "7"]
    assert docs[0].metadata == (("site", "north"),)
    assert [b.doc_id for b in bad] == ["notes:2", "b", "notes:4"]
    assert all(b.stage == "read" and b.raw for b in bad)


def test_when_text_file_is_latin1_then_decoded_not_crashed():
    raw = "Patient José Núñez seen 7/22.".encode("latin-1")
    (doc,) = read_records("/x/note-1.txt", raw, "text")
    assert doc.doc_id == "note-1" and "José Núñez" in doc.text
    assert decode_text(b"\xef\xbb\xbfabc") == "abc"


def test_when_text_file_is_binary_then_quarantined():
    (record,) = read_records("/x/blob.txt", b"\x00\x01\x02PK\x00", "text")
    assert isinstance(record, QuarantineRecord) and record.stage == "read"


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_when_parquet_has_id_and_text_then_documents_with_metadata():
    data = _parquet_bytes(
        pa.table({"id": ["r1", "r2"], "text": ["a", None], "ward": ["5A", "6B"]})
    )
    records = list(read_records("in.parquet", data, "auto"))
    assert isinstance(records[0], ClinicalDocument)
    assert records[0].metadata == (("ward", "5A"),)
    assert isinstance(records[1], QuarantineRecord)


def test_person_key_of_jsonl_and_parquet_is_the_documents_person_not_metadata():
    lines = [json.dumps({"id": "a", "text": "x", "person_key": "MRN7", "site": "n"}),
             json.dumps({"id": "b", "text": "y", "person_key": 12345}),
             json.dumps({"id": "c", "text": "z", "person_key": {"mrn": 1}}),
             json.dumps({"id": "d", "text": "w", "person_key": "  "})]
    docs = list(read_records("n.jsonl", "\n".join(lines).encode(), "jsonl"))
    assert [d.person_key for d in docs] == ["MRN7", "12345", None, None]
    assert docs[0].metadata == (("site", "n"),) and docs[1].metadata == ()
    data = _parquet_bytes(pa.table({"id": ["r1"], "text": ["a"],
                                    "person_key": ["MRN7"], "ward": ["5A"]}))
    (doc,) = read_records("in.parquet", data, "auto")
    assert doc.person_key == "MRN7" and doc.metadata == (("ward", "5A"),)


def test_when_parquet_has_wrong_columns_then_whole_file_quarantined():
    data = _parquet_bytes(pa.table({"note": ["a"]}))
    (record,) = read_records("in.parquet", data, "parquet")
    assert (
        isinstance(record, QuarantineRecord) and "lacks column" in record.error_message
    )


def test_when_format_auto_then_sniffed_by_extension_then_content():
    assert sniff_format("a.hl7", b"") == "hl7"
    assert sniff_format("a.dat", b"MSH|^~\\&|") == "hl7"
    assert sniff_format("id.text", b"START_OF_RECORD=1||||1||||") == "physionet"
    assert sniff_format("a.dat", b'{"id": 1}') == "jsonl"
    assert sniff_format("a.txt", b"Patient seen") == "text"
    # A UTF-16 HL7 export, its 64-byte head cut inside a character.
    head = "\ufeffMSH|^~\\&|LAB|MERCY|||202401020304||ORU^R01|77|P|2.5".encode(
        "utf-16-le")[:63]
    assert sniff_format("export.dat", head) == "hl7"


NOTE = "Seen by Dr. Ana Peña on 03/04/2021, call 617-555-0142.\r\nStable."


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                      "utf-32-le", "utf-32-be"])
def test_when_a_text_file_is_utf16_or_utf32_with_its_mark_then_it_is_read(encoding):
    # "utf-16"/"utf-32" write the mark themselves; the others need it spelled.
    data = (NOTE if encoding in ("utf-16", "utf-32") else "\ufeff" + NOTE).encode(
        encoding)
    (doc,) = read_text("/archive/note-7.txt", data)
    assert isinstance(doc, ClinicalDocument)
    assert doc.text == NOTE and doc.doc_id == "note-7"


@pytest.mark.parametrize("data, reason", [
    (NOTE.encode("utf-16-le"), "NUL bytes"),  # no mark: cannot tell it from binary
    (b"\xff\xfe" + NOTE.encode("utf-16-le")[:-1], "not valid UTF-16"),  # odd length
    ("\ufeffok\x00".encode("utf-16-le"), "NUL bytes"),  # a NUL character in it
])
def test_when_a_wide_text_file_cannot_be_read_then_quarantined_with_a_reason(
        data, reason):
    (record,) = read_text("/archive/note-8.txt", data)
    assert isinstance(record, QuarantineRecord)
    assert reason in record.error_message and record.raw == data
