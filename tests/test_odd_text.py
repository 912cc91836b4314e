"""Digit-like characters that are not digits must not cost a record.

``str.isdigit()`` is true for superscripts and circled digits (``²``, ``①``),
which ``int()`` refuses: a note with ``3/4²`` was quarantined at stage
``tag`` with ``ValueError``. Only ASCII digits are read as numbers
(``tokenizer.is_digits``); the other characters stay text and are still
rewritten where they stand inside PHI.
"""

from __future__ import annotations

import pytest

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.hl7.escapes import unescape
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger
from deid_pipeline.tokenizer import is_digits

KEY = b"0123456789abcdef0123456789abcdef"

ODD_NOTES = [
    "Pt seen 3/4\u00b2 by Dr. Hollis, BP stable.",
    "Wound measures 3\u00b2 cm, dressing changed 11/2\u00b3/2019.",
    "F/u \u2460/\u2461 with Dr Pruitt at 555-12\u00b34.",
    "MRN 12\u00b345678 admitted from Springfield on 4\u20445.",
    "Age 9\u2079, lives with daughter Ellen.",
    "Labs drawn \u00b9\u00b2/\u00b3\u2074/2021; K 4.\u00b2",
]


@pytest.fixture(scope="module")
def tagger():
    return PhiTagger.from_config(TaggerConfig())


@pytest.mark.parametrize("text", ODD_NOTES)
def test_when_note_holds_superscript_digits_then_tagged_rewritten_and_guarded(
    tagger, text
):
    doc = ClinicalDocument(doc_id="odd", source="text", text=text)
    tagged = tagger.tag(doc)
    rewriter = Rewriter(mode="surrogate", key=KEY, as_of_year=2026)
    result = rewriter.guard(tagged, rewriter.rewrite(tagged))
    assert result.doc_id == "odd"


def test_when_a_date_has_a_superscript_then_its_ascii_part_is_still_a_date(tagger):
    text = "Admitted 3/14/2019\u00b2 with chest pain."
    spans = tagger.tag(ClinicalDocument(doc_id="d", source="text", text=text)).spans
    assert any(text[s.start:s.end].startswith("3/14/2019") for s in spans)


@pytest.mark.parametrize(
    "text, expected",
    [("2019", True), ("0", True), ("\u00b2", False), ("1\u00b2", False),
     ("\u2460", False), ("\u0663", False), ("", False), ("12a", False)],
)
def test_when_text_checked_then_only_ascii_digit_runs_are_numbers(text, expected):
    assert is_digits(text) is expected


def test_when_hl7_space_escape_has_superscript_count_then_kept_not_raised():
    assert unescape("a\\.sp\u00b2\\b") == "a\\.sp\u00b2\\b"
