"""Header identifiers are PHI wherever they occur, whatever case or spacing."""

from deid_pipeline.dictionary import DictionaryDetector
from deid_pipeline.model import ClinicalDocument, DictionaryEntry, PatientDictionary


def _doc(text, *entries):
    return ClinicalDocument(
        doc_id="d",
        text=text,
        source="hl7",
        dictionary=PatientDictionary(tuple(DictionaryEntry(*e) for e in entries)),
    )


def test_when_header_name_appears_in_any_case_then_tagged():
    doc = _doc(
        "PT ANDERSEN SEEN; andersen stable. Andersen's wife here.",
        ("Andersen", "PATIENT", "PID.5.1"),
    )
    spans = DictionaryDetector().detect(doc)
    assert [doc.text[s.start : s.end] for s in spans] == [
        "ANDERSEN",
        "andersen",
        "Andersen",
    ]
    assert all(s.source == "dictionary:PID.5.1" for s in spans)


def test_when_value_is_inside_another_word_then_not_tagged():
    doc = _doc(
        "Lee was seen; fleeing and Leeds are not names.", ("Lee", "DOCTOR", "PV1.7")
    )
    spans = DictionaryDetector().detect(doc)
    assert [doc.text[s.start : s.end] for s in spans] == ["Lee"]


def test_when_multiword_value_has_other_spacing_then_tagged():
    doc = _doc(
        "Seen at Mercy   General\nHospital today.",
        ("Mercy General Hospital", "HOSPITAL", "MSH.4"),
    )
    (s,) = DictionaryDetector().detect(doc)
    assert doc.text[s.start : s.end] == "Mercy   General\nHospital"


def test_when_no_dictionary_or_single_letters_then_nothing():
    assert DictionaryDetector().detect(ClinicalDocument("d", "text", "text")) == ()
    assert DictionaryDetector().detect(_doc("A B C", ("A", "PATIENT", "PID.5.3"))) == ()


def test_when_mrn_in_text_then_tagged_with_id_label():
    doc = _doc("MRN 00123456 on file", ("00123456", "MEDICALRECORD", "PID.3.1"))
    (s,) = DictionaryDetector().detect(doc)
    assert s.label == "MEDICALRECORD" and doc.text[s.start : s.end] == "00123456"
