"""The per-document flow: stages raise typed errors, made rows in one place."""

from __future__ import annotations

import dataclasses

import pytest

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.flow import DocumentFlow, StageError, quarantine_record, stage
from deid_pipeline.model import DeidentifiedDocument, QuarantineRecord
from deid_pipeline.runtime.interrupts import RunInterrupted
from deid_pipeline.synthetic import generate_notes
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.tagger.tagging import PhiTagger

KEY = b"flow-test-key-0123456789abcdefgh"


@pytest.fixture(scope="module")
def tagger():
    return PhiTagger.from_config(TaggerConfig(detectors=("rules", "dictionary")))


@pytest.fixture(scope="module")
def notes():
    return generate_notes(3, seed=11, min_tokens=60, max_tokens=160)


class _BrokenTagger:
    def tag(self, doc):
        raise RuntimeError(f"detector failed on {doc.text[:20]}")


class _EchoingRewriter(Rewriter):
    """A rewrite step with a bug: it appends a value it has just replaced."""

    def rewrite(self, tagged, person_key=None, avoid=None):
        result = super().rewrite(tagged, person_key, avoid)
        echo = result.replacements[0].original
        return dataclasses.replace(result, text=f"{result.text} {echo}")


def test_when_a_document_goes_through_then_its_phi_is_replaced(tagger, notes):
    flow = DocumentFlow(tagger, Rewriter("surrogate", KEY, as_of_year=2026))
    doc = notes[0]
    result = flow.process(doc)
    assert isinstance(result, DeidentifiedDocument)
    tagged = flow.tag(doc)
    assert tagged.spans and result.n_phi == len(tagged.spans)
    assert result == flow.write(tagged)  # the same stages, one at a time


def test_when_tagger_fails_then_quarantined_at_tag_with_the_document(notes):
    flow = DocumentFlow(_BrokenTagger(), Rewriter("surrogate", KEY))
    record = flow.process(notes[1])
    assert isinstance(record, QuarantineRecord)
    assert (record.doc_id, record.stage, record.error_type) == (
        notes[1].doc_id, "tag", "RuntimeError")
    assert notes[1].text.encode("utf-8")[:40] in record.raw.replace(b"\\n", b"\n")


def test_when_rewrite_lets_phi_through_then_quarantined_at_leak_guard(tagger, notes):
    flow = DocumentFlow(tagger, _EchoingRewriter("surrogate", KEY))
    record = flow.process(notes[2])
    assert isinstance(record, QuarantineRecord)
    assert (record.stage, record.error_type) == ("leak_guard", "LeakDetectedError")


def test_when_a_stage_fails_then_stage_error_names_it_and_chains_the_cause():
    with pytest.raises(StageError) as info:
        with stage("surrogate"):
            raise KeyError("ANDERSEN")
    error = info.value
    assert (error.stage, error.error_type) == ("surrogate", "KeyError")
    assert error.__cause__ is error.cause and "ANDERSEN" not in str(error)
    record = quarantine_record(error, None, doc_id="n1")
    assert (record.doc_id, record.stage, record.error_message) == (
        "n1", "surrogate", "KeyError('ANDERSEN')")


def test_when_inner_stage_fails_then_outer_stage_keeps_its_name():
    with pytest.raises(StageError) as info:
        with stage("tag"):
            with stage("link"):
                raise ValueError("bad key")
    assert info.value.stage == "link"


def test_when_an_interrupt_lands_in_a_stage_then_it_is_not_a_record_error(notes):
    class _Interrupted:
        def tag(self, doc):
            try:
                raise KeyboardInterrupt
            except BaseException as exc:
                raise SystemError("returned a result with an exception set") from exc

    flow = DocumentFlow(_Interrupted(), Rewriter("surrogate", KEY))
    with pytest.raises(RunInterrupted):
        flow.process(notes[0])


def test_when_the_tagger_is_unsure_then_held_for_review_not_published(notes):
    crf_tagger = PhiTagger.from_config(TaggerConfig())
    tagged = crf_tagger.tag(notes[0])
    assert tagged.confidence is not None
    unsure = DocumentFlow(crf_tagger, Rewriter("surrogate", KEY,
                                               review_floor=tagged.confidence + 1e-6))
    record = unsure.process(notes[0])
    assert isinstance(record, QuarantineRecord)
    assert (record.stage, record.error_type) == ("review", "HeldForReviewError")
    assert "review floor" in record.error_message
    assert notes[0].text[:40] not in record.error_message
    sure = DocumentFlow(crf_tagger, Rewriter("surrogate", KEY,
                                             review_floor=tagged.confidence))
    assert isinstance(sure.process(notes[0]), DeidentifiedDocument)
    # Tag mode is itself a review format: nothing is held.
    tag_mode = DocumentFlow(crf_tagger, Rewriter("tag", KEY, review_floor=1.0))
    assert isinstance(tag_mode.process(notes[0]), DeidentifiedDocument)
