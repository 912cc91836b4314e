"""The document confidence: an expected F-score, not a path probability.

The figure it replaced (the Viterbi path's probability) fell with length:
the same well-tagged sentence scored lower the longer the note around it.
"""

from __future__ import annotations

import numpy as np
import pytest

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.confidence import TokenPhi, document_confidence
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger


def _tokens(p):
    starts = np.arange(len(p)) * 5
    return TokenPhi(starts, starts + 4, np.asarray(p, dtype=float))


def test_when_nothing_doubtful_then_confidence_near_one():
    assert document_confidence(_tokens([0.001] * 50), []) > 0.9


def test_when_a_likely_phi_token_is_left_unmarked_then_confidence_drops():
    sure = document_confidence(_tokens([0.99, 0.001, 0.001]),
                               [PhiSpan(0, 4, "PATIENT", "crf", 0.99)])
    missed = document_confidence(_tokens([0.99, 0.001, 0.001]), [])
    assert missed < 0.7 < sure


def test_when_a_doubtful_token_is_marked_by_a_sure_rule_then_it_counts_as_sure():
    tokens = _tokens([0.2, 0.001])
    by_rule = document_confidence(tokens, [PhiSpan(0, 4, "DATE", "rules", 0.95)])
    by_crf = document_confidence(tokens, [PhiSpan(0, 4, "DATE", "crf", 0.2)])
    assert by_rule > 0.95 > by_crf


def test_when_no_tokens_then_no_confidence():
    assert document_confidence(None, []) is None


@pytest.fixture(scope="module")
def tagger():
    return PhiTagger.from_config(TaggerConfig())


def test_when_a_note_grows_longer_then_its_confidence_does_not_collapse(tagger):
    note = ("Pt seen today by Dr. Harold Whitcombe. Family (wife Maria) at bedside. "
            "Plan: follow up 3/14 with cardiology. BP 120/80, HR 72, afebrile.\n")
    filler = "Patient resting comfortably, no acute distress, vital signs stable.\n"
    short = tagger.tag(ClinicalDocument("c1", note, "text"))
    long_doc = ClinicalDocument("c2", filler * 400 + note, "text")
    long = tagger.tag(long_doc)
    assert short.confidence is not None and long.confidence is not None
    assert short.confidence > 0.5
    assert long.confidence > 0.5
    assert abs(long.confidence - short.confidence) < 0.3


def test_when_tagged_in_windows_then_confidence_covers_every_token_once(tagger):
    note = "Seen by Dr. Harold Whitcombe on 3/14/2091, MRN 4412983.\n"
    doc = ClinicalDocument("c3", "Stable, no events.\n" * 60 + note, "text")
    whole = tagger.tag(doc)
    parts = PhiTagger(tagger.detectors, part_chars=400).tag(doc)
    assert parts.confidence == pytest.approx(whole.confidence, abs=0.05)


def test_tokens_out_of_order_count_as_in_order():
    """Parts of a long document may come out of order: read sorted, stably."""
    starts = np.array([8, 0, 4, 12])
    tokens = TokenPhi(starts, starts + 3, np.array([0.9, 0.2, 0.001, 0.6]))
    ordered = TokenPhi(np.sort(starts), np.sort(starts) + 3,
                       np.array([0.2, 0.001, 0.9, 0.6]))
    spans = [PhiSpan(8, 11, "DOCTOR", "crf", 0.8)]
    assert document_confidence(tokens, spans) == document_confidence(ordered, spans)
    assert document_confidence(ordered, spans) < document_confidence(ordered, [
        *spans, PhiSpan(12, 15, "DATE", "rules", 0.9)])
