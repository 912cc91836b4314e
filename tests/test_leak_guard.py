"""The residual-leak guard: a missed identifier sends the document to quarantine."""

import dataclasses

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to, is_empty

from deid_pipeline.deidentify import Rewriter
from deid_pipeline.detectors import TaggerConfig
from deid_pipeline.leak_guard import LeakDetectedError, Suspect, find_leaks
from deid_pipeline.model import (
    ClinicalDocument,
    DictionaryEntry,
    PatientDictionary,
    PhiSpan,
    Replacement,
    TaggedDocument,
)
from deid_pipeline.transforms.deidentify import DeidentifyClinicalDocuments

KEY = b"leak-guard-test-key-0123456789ab"


def _header_doc(text, doc_id="msg1-1"):
    return ClinicalDocument(
        doc_id,
        text,
        "hl7",
        dictionary=PatientDictionary(
            (
                DictionaryEntry("Andersen", "PATIENT", "PID.5.1"),
                DictionaryEntry("617-555-0142", "PHONE", "PID.13"),
            ),
            person_key="mrn:HOSP:1",
        ),
    )


@pytest.mark.parametrize(
    "text, value, leaked",
    [
        ("call 6175550142 today", "617-555-0142", True),
        ("call (617) 555 0142 today", "617-555-0142", True),
        ("call 617-555-01429 today", "617-555-0142", False),
        ("PT ANDERSEN STABLE", "Andersen", True),
        ("Andersenville clinic", "Andersen", False),
        ("seen by J. Smith", "J.", False),  # initials are not searched for
    ],
)
def test_when_value_in_text_then_found_with_tolerant_matching(text, value, leaked):
    assert bool(find_leaks(text, [Suspect(value, "PHONE")])) is leaked


def test_when_match_lies_inside_a_surrogate_then_not_a_leak():
    text = "Dr. Andersen saw the patient"
    assert find_leaks(text, [Suspect("Andersen", "PATIENT")], [(4, 12)]) == {}
    assert find_leaks(text, [Suspect("Andersen", "PATIENT")], [(0, 3)])


def test_when_a_surrogate_plus_untouched_initial_spell_a_value_then_not_a_leak():
    # "Hernandez" is a surrogate here; "M.D." was never PHI. The original
    # "Hernandez M." (found elsewhere) is not what stands in the output.
    text = "followed by Hernandez M.D. at clinic"
    regions = [(12, 21)]
    assert find_leaks(text, [Suspect("Hernandez M.", "DOCTOR")], regions) == {}
    # Three letters of the original outside the surrogate are a leak.
    text = "followed by Hernandez Mos. at clinic"
    assert find_leaks(text, [Suspect("Hernandez Mos.", "DOCTOR")], regions)


class _SkipsPatientNames(Rewriter):
    """A rewrite step with a bug: it leaves PATIENT spans as they are."""

    def rewrite(self, tagged, person_key=None):
        kept = tuple(s for s in tagged.spans if s.label != "PATIENT")
        return super().rewrite(dataclasses.replace(tagged, spans=kept), person_key)


def test_when_a_step_lets_a_header_name_through_then_quarantined_at_leak_guard():
    # The tagger marks ANDERSEN (the header knows it); the buggy rewrite skips it.
    config = TaggerConfig(detectors=("rules",))
    docs = [
        _header_doc("PT ANDERSEN STABLE, SEEN 7/22/2006."),
        _header_doc("PT STABLE, SEEN 7/23/2006.", "msg2-1"),
    ]
    with TestPipeline() as p:
        out = (
            p
            | beam.Create(docs)
            | DeidentifyClinicalDocuments(config, _SkipsPatientNames("surrogate", KEY))
        )
        assert_that(
            out.research | beam.Map(lambda d: d.doc_id),
            equal_to(["msg2-1"]),
            label="only-the-clean-one",
        )
        assert_that(
            out.quarantine
            | beam.Map(
                lambda q: (q.stage, q.error_type, "ANDERSEN" in q.error_message)
            ),
            equal_to([("leak_guard", "LeakDetectedError", False)]),
            label="quarantined",
        )


def test_when_dictionary_runs_then_same_document_passes_the_guard():
    config = TaggerConfig(detectors=("rules", "dictionary"))
    with TestPipeline() as p:
        out = (
            p
            | beam.Create([_header_doc("PT ANDERSEN STABLE, SEEN 7/22/2006.")])
            | DeidentifyClinicalDocuments(config, Rewriter("surrogate", KEY))
        )
        assert_that(
            out.research | beam.Map(lambda d: "ANDERSEN" in d.text),
            equal_to([False]),
            label="written",
        )
        assert_that(out.quarantine, is_empty(), label="no-quarantine")


def test_when_policy_keeps_a_value_then_guard_does_not_flag_it():
    rewriter = Rewriter("surrogate", KEY)
    doc = ClinicalDocument("n", "45 year old seen", "text")
    tagged = TaggedDocument(doc, (PhiSpan(0, 2, "AGE", "rules:age"),))
    result = rewriter.rewrite(tagged)
    assert result.text == doc.text  # ages under 90 are kept
    assert rewriter.guard(tagged, result) is result


def test_when_replacement_equals_original_unexpectedly_then_raises():
    rewriter = Rewriter("redact", KEY)
    doc = ClinicalDocument("n", "Andersen seen", "text")
    tagged = TaggedDocument(doc, ())
    result = rewriter.rewrite(tagged)
    leaky = TaggedDocument(
        ClinicalDocument(
            "n",
            "Andersen seen",
            "text",
            dictionary=PatientDictionary(
                (DictionaryEntry("Andersen", "PATIENT", "PID.5.1"),)
            ),
        ),
        (),
    )
    with pytest.raises(LeakDetectedError, match="PATIENT x1"):
        rewriter.guard(leaky, result)


def test_when_operator_echoes_the_original_then_guard_still_catches_it():
    rewriter = Rewriter("redact", KEY)
    doc = ClinicalDocument("n", "Call 617-555-0142 now", "text")
    span = PhiSpan(5, 17, "PHONE", "rules:phone")
    echoed = rewriter.rewrite(TaggedDocument(doc, ()))  # text unchanged
    broken = echoed.__class__(
        **{
            **{
                f: getattr(echoed, f)
                for f in (
                    "doc_id",
                    "person_id",
                    "source",
                    "text",
                    "confidence",
                    "metadata",
                    "pipeline_version",
                )
            },
            "replacements": (Replacement(span, "617-555-0142", "617-555-0142"),),
        }
    )
    with pytest.raises(LeakDetectedError, match="PHONE x1"):
        rewriter.guard(TaggedDocument(doc, (span,)), broken)


@pytest.mark.parametrize(
    "label, value, policy, kept",
    [
        ("AGE", "45", "safe-harbor", True),
        ("AGE", "92", "safe-harbor", False),
        ("DATE", "1992", "safe-harbor", True),
        ("DATE", "7/22/1992", "safe-harbor", False),
        ("DATE", "7/22/1992", "limited-dataset", True),
        ("CITY", "Boston", "limited-dataset", True),
        ("PATIENT", "Boston", "limited-dataset", False),
    ],
)
def test_when_policy_decides_then_kept_values_are_not_suspects(
    label, value, policy, kept
):
    from deid_pipeline.leak_guard import policy_keeps

    assert policy_keeps(label, value, policy) is kept
