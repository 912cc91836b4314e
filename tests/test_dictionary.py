"""Header identifiers are PHI wherever they occur, whatever case or spacing."""

import random

from deid_pipeline.dictionary import DictionaryDetector, find_entries, index_dictionary
from deid_pipeline.model import ClinicalDocument, DictionaryEntry, PatientDictionary
from deid_pipeline.tokenizer import tokenize


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


def _one_value_at_a_time(text, dictionary):
    """The plain algorithm find_entries must agree with: tokenize each value alone."""
    low = [t.text.lower() for t in tokenize(text)]
    tokens = tokenize(text)
    found = set()
    for entry in dictionary.entries:
        parts = tokenize(entry.value)
        if not parts or len(entry.value.strip()) < 2:
            continue
        want = [p.text.lower() for p in parts]
        gaps = [parts[k].start > parts[k - 1].end for k in range(1, len(parts))]
        for i in range(len(tokens) - len(want) + 1):
            if low[i:i + len(want)] == want and gaps == [
                    tokens[i + k].start > tokens[i + k - 1].end
                    for k in range(1, len(want))]:
                found.add((tokens[i].start, tokens[i + len(want) - 1].end))
    return found


def test_when_values_are_many_and_odd_then_same_spans_as_one_value_at_a_time():
    # find_entries tokenizes all values in one call and indexes only the forms
    # whose tokens all occur in the text; neither may change what is found.
    rng = random.Random(7)
    alphabet = "abAB 12-.,/\n\t\u00e9\u0130\u03a3\u03c2'"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        values = []
        for _ in range(rng.randint(1, 8)):
            if text and rng.random() < 0.6:
                start = rng.randrange(len(text))
                value = text[start:start + rng.randint(1, 10)]
            else:
                value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
            values.append(value.swapcase() if rng.random() < 0.3 else value)
        doc = _doc(text, *((v, "PATIENT", f"PID.5.{k}") for k, v in enumerate(values)))
        spans = find_entries(text, doc.dictionary)
        assert {(s.start, s.end) for s in spans} == _one_value_at_a_time(
            text, doc.dictionary), (text, values)
        # Indexed for the text's tokens: the full index, less the forms with
        # a token the text lacks (same forms, same fields, same order).
        vocabulary = frozenset(t.text.lower() for t in tokenize(text))
        narrow = {first: [f for f in forms if vocabulary.issuperset(f.tokens)]
                  for first, forms in index_dictionary(doc.dictionary).items()}
        assert index_dictionary(doc.dictionary, vocabulary) == {
            first: forms for first, forms in narrow.items() if forms}, (text, values)


def test_when_indexed_for_a_vocabulary_then_only_forms_made_of_its_tokens():
    dictionary = PatientDictionary((
        DictionaryEntry("Smith, Renee", "PATIENT", "PID.5"),
        DictionaryEntry("June 8, 1912", "DATE", "PID.7"),
        DictionaryEntry("SMITH", "PATIENT", "PID.5.1"),
    ))
    full = index_dictionary(dictionary)
    assert sorted(full) == ["june", "smith"] and len(full["smith"]) == 2
    narrow = index_dictionary(dictionary, {"smith", ",", "renee", "june"})
    assert narrow == {"smith": full["smith"]}
