"""Header identifiers are PHI wherever they occur, whatever case or spacing."""

import random

from deid_pipeline.model import ClinicalDocument, DictionaryEntry, PatientDictionary
from deid_pipeline.tagger.dictionary import (
    DictionaryDetector,
    find_entries,
    index_dictionary,
)
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

def _check_against_definitions(text: str, values: list[str]) -> None:
    """find_entries equals matching one value at a time, and the index narrowed
    to the text's tokens equals the full index less forms with a missing token
    (same forms, same fields, same order)."""
    doc = _doc(text, *((v, "PATIENT", f"PID.5.{k}") for k, v in enumerate(values)))
    spans = find_entries(text, doc.dictionary)
    assert {(s.start, s.end) for s in spans} == _one_value_at_a_time(
        text, doc.dictionary), (text, values)
    vocabulary = frozenset(t.text.lower() for t in tokenize(text))
    narrow = {first: [f for f in forms if vocabulary.issuperset(f.tokens)]
              for first, forms in index_dictionary(doc.dictionary).items()}
    assert index_dictionary(doc.dictionary, vocabulary) == {
        first: forms for first, forms in narrow.items() if forms}, (text, values)



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
        _check_against_definitions(text, values)


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


def _may_occur_one_by_one(values, vocabulary):
    """The plain definition _possible_rows must agree with."""
    from deid_pipeline.tagger.dictionary import _may_occur

    return [i for i, value in enumerate(values)
            if len(value.strip()) >= 2 and _may_occur(value, vocabulary)]


def _realistic_value(rng):
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(
        rng.randint(1, 7)))
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 5)))
    return rng.choice([
        word.title(), f"{word.upper()}, {word[:1].upper()}.", f"{digits}/{digits[:2]}",
        f"({digits}) {digits}-{digits}", f"MRN{digits}", f"{word}-{digits}",
        f"{word} {word}", f"  {word}  ", "-", "--", f"{word}@{word}.com", digits,
        f"{word}\u00e9", "\u212a" + word, f"\u0130{word}", f"{word}\u03a3",
        f"{word}\t{digits}", f"{word}\n{word}", "", "\u00a0" + word, f"{word}_{digits}",
    ])


def test_when_entries_filtered_in_bulk_then_same_as_one_by_one():
    # _possible_rows lower-cases and cuts all values in one call each; it
    # must keep exactly the rows the per-value test keeps, in order, for
    # ASCII and non-ASCII values, a value with a line break of its own (the
    # lines would not line up), and a vocabulary that is not a set.
    from deid_pipeline.tagger.dictionary import _possible_rows

    rng = random.Random(11)
    for _ in range(400):
        values = [_realistic_value(rng) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.5:  # mostly lines that can be bulk-filtered
            values = [v for v in values if "\n" not in v]
        if rng.random() < 0.5:
            values = [v for v in values if v.isascii()]
        words = {w for v in values for w in v.lower().replace(",", " ").split()}
        vocabulary = frozenset(w for w in words if rng.random() < 0.6) | {"mrn", ","}
        expected = _may_occur_one_by_one(values, vocabulary)
        assert _possible_rows(values, vocabulary) == expected, values
        assert _possible_rows(tuple(values), sorted(vocabulary)) == expected, values


def test_when_realistic_values_then_prefilter_drops_only_unmatchable_forms():
    # _may_occur drops a form when one of its letter or digit runs is not a
    # token of the text; the forms it keeps are then checked token by token.
    # Against the one-value-at-a-time algorithm, on ASCII texts (where the
    # bulk paths apply) with the values' own words and near misses.
    rng = random.Random(5)
    for _ in range(300):
        values = [_realistic_value(rng) for _ in range(rng.randint(1, 10))]
        pieces = [v for v in values if rng.random() < 0.5]
        pieces += ["seen by", "on", "Dr.", "12/03", "MRN 123", "x-1", "(555)"]
        rng.shuffle(pieces)
        text = " ".join(p.swapcase() if rng.random() < 0.3 else p for p in pieces)
        if rng.random() < 0.8:
            text = text.encode("ascii", "ignore").decode()
        _check_against_definitions(text, values)
