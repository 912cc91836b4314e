"""Linking: documents sharing strong identifiers become one person."""

from deid_pipeline.linking.graph import link_record, resolve
from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    PhiSpan,
    TaggedDocument,
)


def _tagged(doc_id, text, spans=(), entries=(), key=None):
    dictionary = (
        PatientDictionary(tuple(DictionaryEntry(*e) for e in entries), person_key=key)
        if entries or key
        else None
    )
    doc = ClinicalDocument(doc_id, text, "test", dictionary=dictionary)
    found = []
    for sub, label in spans:
        start = text.index(sub)
        found.append(PhiSpan(start, start + len(sub), label, "test"))
    return TaggedDocument(doc, tuple(found))


HEADER = [
    ("00123456", "MEDICALRECORD", "PID.3.1"),
    ("Carla Mendez", "PATIENT", "PID.5"),
    ("1950-03-04", "DATE", "PID.7"),
    ("123-45-6789", "SSN", "PID.19"),
]


def _persons(*tagged):
    return {
        a.doc_key.split("|", 1)[1]: a for a in resolve(link_record(t) for t in tagged)
    }


def test_when_headerless_note_quotes_mrn_then_linked_to_header_person():
    persons = _persons(
        _tagged("hl7-1", "report", entries=HEADER, key="mrn:HOSP:123456"),
        _tagged("note-1", "MRN 123456 seen today", spans=[("123456", "MEDICALRECORD")]),
        _tagged("note-2", "nothing identifying"),
    )
    assert persons["hl7-1"].person_key == "mrn:HOSP:123456"
    assert persons["note-1"].person_key == "mrn:HOSP:123456"
    assert "mrn" in persons["note-1"].linked_by
    assert persons["note-2"].person_key == "document:test:|note-2"


def test_when_name_with_birth_date_then_linked_but_name_alone_is_not():
    persons = _persons(
        _tagged("hl7-1", "report", entries=HEADER, key="mrn:HOSP:123456"),
        _tagged(
            "n1",
            "Carla Mendez DOB: 03/04/1950 admitted",
            spans=[("Carla Mendez", "PATIENT"), ("03/04/1950", "DATE")],
        ),
        _tagged("n2", "Carla Mendez admitted", spans=[("Carla Mendez", "PATIENT")]),
    )
    assert persons["n1"].person_key == "mrn:HOSP:123456"
    assert persons["n2"].person_key == "document:test:|n2"


def test_when_two_headerless_notes_share_ssn_then_one_person_key():
    persons = _persons(
        _tagged("a", "SSN 123-45-6789", spans=[("123-45-6789", "SSN")]),
        _tagged("b", "ssn 123456789 on file", spans=[("123456789", "SSN")]),
    )
    assert persons["a"].person_key == persons["b"].person_key == "ssn:123456789"


def test_when_header_keys_differ_then_each_keeps_its_own_even_if_linked():
    persons = _persons(
        _tagged("x", "r", entries=HEADER, key="mrn:HOSP:123456"),
        _tagged(
            "y", "r", entries=[("123-45-6789", "SSN", "PID.19")], key="mrn:OTHER:999"
        ),
        _tagged("z", "SSN 123-45-6789", spans=[("123-45-6789", "SSN")]),
    )
    assert persons["x"].person_key == "mrn:HOSP:123456"
    assert persons["y"].person_key == "mrn:OTHER:999"
    # The header-less note joins the component; its key is the smallest record key.
    assert persons["z"].person_key == "mrn:HOSP:123456"


def test_when_input_order_changes_then_assignment_is_the_same():
    docs = [
        _tagged(
            f"d{i}", f"SSN 123-45-678{i % 2}", spans=[(f"123-45-678{i % 2}", "SSN")]
        )
        for i in range(6)
    ]
    forward = resolve(link_record(t) for t in docs)
    backward = resolve(link_record(t) for t in reversed(docs))
    assert forward == backward


def test_when_birth_date_written_differently_then_same_key():
    from deid_pipeline.linking.graph import _date_key

    forms = [
        "03/04/1950",
        "3/4/50",
        "1950-03-04",
        "March 4, 1950",
        "Mar. 4 1950",
        "19500304",
    ]
    assert {_date_key(f) for f in forms} == {"3-4-50"}
    assert _date_key("13/45/1950") == ""
