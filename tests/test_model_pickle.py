"""The data model pickles compactly and back to equal objects (spill files, Beam)."""

from __future__ import annotations

import pickle

from deid_pipeline.benchmarks.bench_hl7 import oru_messages
from deid_pipeline.hl7.documents import read_hl7
from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    PhiSpan,
    QuarantineRecord,
)


def test_header_documents_round_trip_and_share_nothing_mutable():
    messages, _ = oru_messages(20, 3)
    items = list(read_hl7("feed.hl7", "\n".join(messages).encode()))
    docs = [d for d in items if isinstance(d, ClinicalDocument)]
    assert docs and all(d.dictionary and len(d.dictionary.entries) > 50 for d in docs)
    back = pickle.loads(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == items
    assert [type(x) for x in back] == [type(x) for x in items]
    assert all(type(e) is DictionaryEntry for d in back if d.dictionary
               for e in d.dictionary.entries)


def test_small_objects_round_trip_with_their_defaults():
    objects = [
        PhiSpan(3, 9, "PATIENT", "crf", 0.75),
        PhiSpan(0, 1, "DATE", "rules"),
        PatientDictionary(),
        PatientDictionary((DictionaryEntry("MOSS", "PATIENT", "PID-5.1"),), "k1"),
        ClinicalDocument("d1", "Mr. Moss seen 3/4.", "text"),
    ]
    for obj in objects:
        assert pickle.loads(pickle.dumps(obj)) == obj


def test_a_bad_value_cannot_be_smuggled_in_through_a_pickle():
    # Unpickling builds objects through their constructors, so the label check
    # still runs on data from a spill file.
    data = pickle.dumps(PatientDictionary((DictionaryEntry("X", "PATIENT", "f"),)))
    tampered = data.replace(b"PATIENT", b"PATIENX")
    try:
        pickle.loads(tampered)
    except ValueError:
        return
    raise AssertionError("an unknown label was accepted")


def test_quarantine_records_round_trip():
    items = list(read_hl7("bad.hl7", b"\x0bMSH|^~\\&|A\x1c\x0d garbage"))
    records = [x for x in items if isinstance(x, QuarantineRecord)]
    assert records
    assert pickle.loads(pickle.dumps(records)) == records


def _header_documents(n: int) -> list[ClinicalDocument]:
    messages, _ = oru_messages(n, 3)
    items = list(read_hl7("feed.hl7", "\n".join(messages).encode()))
    return [d for d in items if isinstance(d, ClinicalDocument)]


def test_a_dictionary_pickles_as_columns_and_makes_entries_only_when_read():
    doc = _header_documents(1)[0]
    dictionary = doc.dictionary
    data = pickle.dumps(dictionary, protocol=pickle.HIGHEST_PROTOCOL)
    # Three tuples of strings cross a spill file, not one object per entry.
    assert b"DictionaryEntry" not in data
    back = pickle.loads(data)
    assert back == dictionary and hash(back) == hash(dictionary)
    assert list(back.rows()) == [(e.value, e.label, e.field)
                                 for e in dictionary.entries]
    assert back.entries == dictionary.entries


def test_tagging_linking_rewriting_and_guarding_read_a_header_without_entries(
        monkeypatch):
    from deid_pipeline.document_rewriter import Rewriter
    from deid_pipeline.flow import DocumentFlow
    from deid_pipeline.linking.graph import link_record
    from deid_pipeline.tagger.detectors import TaggerConfig
    from deid_pipeline.tagger.tagging import PhiTagger

    docs = pickle.loads(pickle.dumps(_header_documents(4)))
    flow = DocumentFlow(PhiTagger.from_config(TaggerConfig(("rules", "dictionary"))),
                        rewriter=Rewriter(mode="surrogate", key=b"k" * 32))
    made = []
    monkeypatch.setattr(DictionaryEntry, "__post_init__",
                        lambda self: made.append(self.label))
    tagged = [flow.tag(d) for d in docs]
    assert any("dictionary" in s.source for t in tagged for s in t.spans)
    for t in flow.reconcile(tagged):
        link_record(t)
        flow.write(t, None, flow.originals(t))
    # The steps a run takes over spilled documents read the columns only.
    assert made == []


def test_a_dictionary_is_immutable_checked_and_shows_no_value():
    import dataclasses

    import pytest

    dictionary = PatientDictionary((DictionaryEntry("MOSS", "PATIENT", "PID-5.1"),),
                                   "MRN-0091")
    with pytest.raises(dataclasses.FrozenInstanceError):
        dictionary.person_key = "other"
    assert "MOSS" not in repr(dictionary) and "0091" not in repr(dictionary)
    with pytest.raises(ValueError):
        PatientDictionary.from_columns(("MOSS",), ("PATIENX",), ("PID-5.1",))
    with pytest.raises(ValueError):
        PatientDictionary.from_columns(("MOSS", "X"), ("PATIENT",), ("PID-5.1",))
    assert PatientDictionary() == PatientDictionary.from_columns((), (), ())
