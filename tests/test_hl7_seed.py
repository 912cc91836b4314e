"""Seeding: header values expanded into the forms reports write them in."""

from __future__ import annotations

import pytest

from deid_pipeline.hl7.message import parse_message
from deid_pipeline.hl7.seed import (
    date_forms,
    id_forms,
    name_forms,
    person_key,
    phone_forms,
    seed_dictionary,
)
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.dictionary import DictionaryDetector


def _seg(name: str, fields: dict[int, str]) -> str:
    """A segment from {field number: raw value}, so no field is miscounted."""
    return "|".join([name] + [fields.get(n, "") for n in range(1, max(fields) + 1)])


HEADER = "\r".join([
    "MSH|^~\\&|RIS|MERCY^1.2.3^ISO|EHR|MERCY|20240105||ORU^R01|C1|P|2.5",
    _seg("PID", {1: "1", 3: "00123456^^^MERCY^MR~987-65-4321^^^SSA^SS",
                 5: "OKONKWO^ADAEZE^NNEKA", 6: "EZE", 7: "19500304", 8: "F",
                 11: "12 Elm St^^Salem^MA^01970", 13: "(978) 555-0142^PRN^PH",
                 18: "ACC778", 19: "987-65-4321"}),
    _seg("NK1", {1: "1", 2: "OKONKWO^CHIDI", 3: "SPO^Spouse",
                 5: "^PRN^PH^^1^978^5550143"}),
    _seg("PV1", {1: "1", 2: "I", 3: "ICU^412^B^MERCY",
                 7: "1234^FARNSWORTH^HUBERT^^^DR", 19: "V99120", 39: "MERCY",
                 44: "20240101"}),
    _seg("OBR", {1: "1", 3: "S24-7", 4: "88305^PATH", 7: "20240102",
                 32: "&LINDQVIST&ERIK"}),
]) + "\r"


@pytest.fixture(scope="module")
def dictionary():
    return seed_dictionary(parse_message(HEADER))


def _values(dictionary, label):
    return {e.value.lower() for e in dictionary.entries if e.label == label}


def test_when_name_seeded_then_orders_and_initials_are_forms():
    forms = {f.lower() for f in name_forms("OKONKWO", "ADAEZE", "NNEKA")}
    for form in ("okonkwo", "adaeze", "adaeze okonkwo", "okonkwo, adaeze",
                 "a. okonkwo", "okonkwo, a.", "adaeze n. okonkwo", "a.n.o.",
                 "okonkwo, adaeze nneka", "ao"):
        assert form in forms, form


def test_when_initials_are_a_word_then_bare_initials_left_out():
    forms = name_forms("SMITH", "IAN")
    assert "IS" not in forms and "I.S." in forms


def test_when_hyphenated_or_particle_name_then_parts_are_forms():
    forms = name_forms("VAN DER BERG-O'NEIL", "ANNA")
    assert "BERG" in forms and "O'NEIL" in forms and "VAN" not in forms


def test_when_id_seeded_then_separators_and_leading_zeros_vary():
    forms = set(id_forms("00-123456"))
    assert {"00-123456", "00123456", "123456", "00 123456"} <= forms
    assert {"123-456-789", "123 45 6789"} <= set(id_forms("123456789"))


def test_when_phone_seeded_then_every_us_format_is_a_form():
    forms = set(phone_forms("(978)555-0142"))
    assert {"(978) 555-0142", "978-555-0142", "978.555.0142", "9785550142",
            "+1 978 555 0142", "555-0142"} <= forms


def test_when_birth_date_seeded_then_numeric_and_written_forms():
    forms = set(date_forms("19500304"))
    assert {"03/04/1950", "3/4/1950", "3/4/50", "1950-03-04", "March 4, 1950",
            "Mar 4, 1950", "4 March 1950", "04-Mar-1950"} <= forms
    assert date_forms("1950") == [] and date_forms("not a date") == []


def test_when_header_seeded_then_every_phi_field_is_in_the_dictionary(dictionary):
    assert "adaeze okonkwo" in _values(dictionary, "PATIENT")
    assert "eze" in _values(dictionary, "RELATIVE")  # mother's maiden name
    assert "chidi okonkwo" in _values(dictionary, "RELATIVE")
    assert {"hubert farnsworth", "erik lindqvist"} <= _values(dictionary, "DOCTOR")
    assert {"00123456", "123456"} <= _values(dictionary, "MEDICALRECORD")
    assert {"987-65-4321", "987654321"} <= _values(dictionary, "SSN")
    assert "acc778" in _values(dictionary, "ACCOUNT")
    assert "v99120" in _values(dictionary, "IDNUM")
    assert {"(978) 555-0142", "978-555-0143"} <= _values(dictionary, "PHONE")
    assert {"12 elm st", "12 elm street"} <= _values(dictionary, "STREET")
    assert "salem" in _values(dictionary, "CITY")
    assert {"massachusetts", "salem, ma"} <= _values(dictionary, "STATE")
    assert "ma" not in _values(dictionary, "STATE")
    assert "01970" in _values(dictionary, "ZIP")
    assert "mercy" in _values(dictionary, "HOSPITAL")
    assert {"412", "room 412"} <= _values(dictionary, "ROOM")
    assert "icu" not in _values(dictionary, "DEPARTMENT")  # unit codes are words
    assert {"march 4, 1950", "3/4/50"} <= _values(dictionary, "DATE")


def test_when_linking_reads_the_dictionary_then_fields_are_accessor_keys(dictionary):
    fields = {e.field for e in dictionary.entries if e.label == "PATIENT"}
    assert fields == {"PID.5"}
    assert any(e.field == "PID.7" and e.value == "19500304" for e in dictionary.entries)


@pytest.mark.parametrize("pid3,key", [
    ("00123456^^^MERCY^MR", "mrn:MERCY:123456"),
    ("987^^^SSA^SS~55-01^^^St Mary^MR", "mrn:ST_MARY:5501"),
    ("X1^^^A^PI~X2^^^B^MR", "mrn:B:X2"),
    ("77^^^&2.16.840.1&ISO^MR", "mrn:2.16.840.1:77"),
    ("77", "mrn:MERCY:77"),  # no authority: the sending facility issued it
    ("", None),
])
def test_when_person_key_made_then_mrn_with_authority_normalised(pid3, key):
    msh = "MSH|^~\\&|RIS|MERCY|||1||ADT^A01|C|P|2.5"
    message = parse_message(f"{msh}\rPID|1||{pid3}\r")
    assert person_key(message) == key


def test_when_dictionary_detector_runs_then_text_forms_are_found(dictionary):
    text = ("Mrs. Okonkwo (MRN 123456, DOB March 4, 1950) was seen by Dr. Farnsworth. "
            "Call her husband Chidi at 978.555.0143. A.N.O. lives in Salem, MA.")
    doc = ClinicalDocument("d", text, "hl7", dictionary=dictionary)
    found = {text[s.start:s.end] for s in DictionaryDetector().detect(doc)}
    for value in ("Okonkwo", "123456", "March 4, 1950", "Farnsworth", "Chidi",
                  "978.555.0143", "A.N.O.", "Salem, MA"):
        assert value in found, value


REPEATS = HEADER + "\r".join([
    # The attending and placer again, a dated kind (PPN, NDL) twice, an MRN
    # twice with another type, and a name that only differs in case.
    _seg("ORC", {1: "RE", 2: "P1^H", 12: "1234^FARNSWORTH^HUBERT^^^DR"}),
    _seg("OBR", {1: "2", 2: "P1^H", 3: "S24-7", 7: "20240103",
                 16: "1234^FARNSWORTH^HUBERT^^^DR", 28: "1234^Farnsworth^Hubert",
                 32: "&LINDQVIST&ERIK", 33: "&LINDQVIST&ERIK"}),
    _seg("MRG", {1: "00123456^^^MERCY^MR~00123456^^^MERCY^PI", 7: "EZE"}),
    _seg("TXA", {1: "1", 22: "~".join(["9^DOC^A^^^^^^^^^^^^20240101"] * 2)}),
]) + "\r"


def test_when_a_repetition_repeats_then_dictionary_as_if_each_were_seeded(
        monkeypatch):
    # seed_dictionary skips a repetition already seeded for a field of the
    # same kind and label: it may only drop entries that are already in (not
    # a date's per-field YYYYMMDD form), so the entries, their order and
    # fields are those of seeding every repetition.
    from deid_pipeline.hl7 import seed
    from deid_pipeline.hl7.testing import sample_oru

    messages = [parse_message(REPEATS), parse_message(HEADER)]
    messages += [parse_message(sample_oru(n)[0]) for n in range(8)]
    skipping = [seed.seed_dictionary(m) for m in messages]
    monkeypatch.setattr(seed, "_UNDATED_KINDS", frozenset())
    assert skipping == [seed.seed_dictionary(m) for m in messages]


def test_when_documents_built_then_report_dates_join_as_before():
    # Report dates (OBR-7/22, TXA-4/6) join each document's dictionary: the
    # YYYYMMDD form always, other forms unless a DATE entry has them already.
    from deid_pipeline.hl7.documents import (
        _report_dates,
        build_documents,
        extract_reports,
    )

    for text in (REPEATS, HEADER):
        message = parse_message(text)
        dictionary = seed_dictionary(message)
        for doc in build_documents(message, dictionary=dictionary):
            own = doc.dictionary.entries[len(dictionary.entries):]
            assert doc.dictionary.entries[:len(dictionary.entries)] == \
                dictionary.entries
            seen = {(e.value.lower(), e.label) for e in dictionary.entries}
            report = next(r for r in extract_reports(message)
                          if r.doc_id == doc.doc_id)
            expected = [(form, field) for form, field in _report_dates(message, report)
                        if len(form) == 8 and form.isdigit()
                        or (form.lower(), "DATE") not in seen]
            assert [(e.value, e.field) for e in own] == expected
            assert all(e.label == "DATE" for e in own)
            assert own  # the YYYYMMDD form at least
