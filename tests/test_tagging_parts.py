"""Very long documents are tagged in parts, with the whole text reconciled once."""

import re

import pytest

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.crf import CrfDetector
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import (
    OVERLAP_CHARS,
    PART_CHARS,
    PhiTagger,
    part_bounds,
)


def _note(i: int) -> str:
    return (f"Nursing note {i}: pt resting comfortably, vitals stable, "
            f"tolerating diet. Family updated by phone.\n")


@pytest.mark.parametrize("text", [
    "".join(f"line {i} of a long shift note\n" for i in range(20_000)),
    "A" * 250_000 + " call 410-555-0199",  # one huge token: cut inside it
    "word " * 60_000,  # no line ends: cut at blanks
    "short note\n",
])
def test_when_text_cut_then_parts_cover_it_exactly_within_the_limit(text):
    bounds = part_bounds(text)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    assert all(a < b for a, b in bounds)
    assert all(b == c for (_, b), (c, _) in zip(bounds, bounds[1:]))
    assert all(b - a <= PART_CHARS for a, b in bounds)
    if "\n" in text[: PART_CHARS]:
        assert all(text[b - 1] == "\n" for _, b in bounds[:-1])
    elif " " in text[PART_CHARS // 2: PART_CHARS]:
        assert all(text[b - 1] == " " for _, b in bounds[:-1])


def test_when_document_long_then_crf_sees_parts_and_values_found_across_them(
        monkeypatch):
    family = "Quilleran"
    first = f"Seen by Dr. Ottavia {family} on 3/14/2011 for chest pain.\n"
    filler = "".join(_note(i) for i in range(4_000))
    last = f"Discussed plan with {family} at bedside.\n"
    text = first + filler + last
    assert len(text) > 3 * PART_CHARS
    seen = []
    original = CrfDetector.posterior

    def recording(self, doc, min_bias=None):
        seen.append(len(doc.text))
        return original(self, doc, min_bias)

    monkeypatch.setattr(CrfDetector, "posterior", recording)
    tagged = PhiTagger.from_config(TaggerConfig()).tag(
        ClinicalDocument("long", text, "text"))
    assert len(seen) == len(part_bounds(text)) > 3
    # Each part with the overlap of its neighbours on either side.
    assert max(seen) <= PART_CHARS + 2 * OVERLAP_CHARS and sum(seen) > len(text)
    found = {(text[s.start:s.end], s.start) for s in tagged.spans}
    last_at = text.rindex(family)
    # Found after "Dr." in the first part, marked again in the last one.
    assert any(value.endswith(family) and start < 100 for value, start in found)
    assert (family, last_at) in found
    assert any(re.fullmatch(r"3/14/2011", value) for value, _ in found)


def test_when_a_report_misses_a_value_its_sibling_tagged_then_it_is_tagged_there():
    """Reports of one HL7 message: a name tagged in one is tagged in the other;
    a report of another message, or a plain note, is left as it was."""
    from deid_pipeline.model import ClinicalDocument, PhiSpan, TaggedDocument
    from deid_pipeline.tagger.tagging import reconcile_documents

    def report(doc_id, text, spans=(), origin="feed.hl7", source="hl7"):
        doc = ClinicalDocument(doc_id=doc_id, text=text, source=source, origin=origin)
        return TaggedDocument(document=doc, spans=tuple(spans))

    first = report("MSG0042-1", "Seen by Dr. Okonkwo today.",
                   [PhiSpan(12, 19, "DOCTOR", "crf", 0.9)])
    second = report("MSG0042-2", "Okonkwo reviewed the film with the family.")
    other_message = report("MSG0043-1", "Okonkwo signed.")
    other_file = report("MSG0042-3", "Okonkwo signed.", origin="other.hl7")
    note = report("note-1", "Okonkwo called.", source="text")
    out = reconcile_documents([first, second, other_message, other_file, note])
    assert out[0] == first
    (span,) = out[1].spans
    assert (span.start, span.end, span.label) == (0, 7, "DOCTOR")
    assert out[2:] == [other_message, other_file, note]


def test_a_patients_notes_lend_each_other_sure_names_places_and_ids_only():
    """Notes of one patient (PhysioNet numbering): a relative tagged surely in
    one note is marked where another names her alone; a date, an unsure span
    and another patient's note are not lent anything."""
    from deid_pipeline.model import ClinicalDocument, PhiSpan, TaggedDocument
    from deid_pipeline.tagger.tagging import reconcile_documents

    def note(doc_id, text, spans=(), patient="physionet:12"):
        doc = ClinicalDocument(doc_id=doc_id, text=text, source="physionet",
                               person_key=patient)
        return TaggedDocument(document=doc, spans=tuple(spans))

    text = ("Daughter Keisha in to visit 3/4, updated by Dr. Alvarez. "
            "Transferred to RJH.")
    first = note("12-1", text,
                 [PhiSpan(9, 15, "RELATIVE", "crf", 0.97),
                  PhiSpan(28, 31, "DATE", "rules:date", 1.0),
                  PhiSpan(48, 55, "DOCTOR", "crf", 0.6),
                  # a hospital's letters after a verb that moves a patient
                  PhiSpan(72, 75, "HOSPITAL", "rules:places", 0.7)])
    second = note("12-2", "Keisha called. Gave 3/4 of dose. Alvarez aware. "
                  "So far at RJH, cx neg.")
    other = note("13-1", "Keisha is the name of this patient's nurse.",
                 patient="physionet:13")
    out = reconcile_documents([first, second, other])
    assert text[72:75] == "RJH"
    assert out[0] == first
    assert [(s.start, s.end, s.label, s.source) for s in out[1].spans] == [
        (0, 6, "RELATIVE", "propagated"), (58, 61, "HOSPITAL", "propagated")]
    assert out[2] == other
