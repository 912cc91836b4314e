"""The Beam transforms: TestPipeline + assert_that over the whole chain."""

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to, is_empty

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.model import ClinicalDocument, DictionaryEntry, PatientDictionary
from deid_pipeline.tagger.detectors import Detector, TaggerConfig, register
from deid_pipeline.transforms.composites import DeidentifyClinicalDocuments

KEY = b"k" * 32


class _ExplodingDetector(Detector):
    """Raises on documents whose id says so: a stage failure on one record."""

    name = "explode"

    def detect(self, doc):
        if "boom" in doc.doc_id:
            raise RuntimeError("detector failed")
        return ()


register("test-explode")(lambda config: _ExplodingDetector())


def _docs():
    return [
        ClinicalDocument(
            "n1", "Seen 7/22/2006, call 617-555-0142 or jdoe@mail.org.", "text"
        ),
        ClinicalDocument(
            "n2",
            "PT ANDERSEN STABLE. WIFE AT BEDSIDE.",
            "hl7",
            dictionary=PatientDictionary(
                (DictionaryEntry("Andersen", "PATIENT", "PID.5.1"),),
                person_key="mrn:HOSP:123",
            ),
        ),
        ClinicalDocument("boom-3", "Seen 7/23/2006.", "text"),
    ]


def test_when_documents_deidentified_then_phi_redacted_and_failures_quarantined():
    config = TaggerConfig(detectors=("rules", "dictionary", "test-explode"))
    with TestPipeline() as p:
        out = (
            p
            | beam.Create(_docs())
            | DeidentifyClinicalDocuments(config, Rewriter("redact", KEY))
        )
        assert_that(
            out.research | "Texts" >> beam.Map(lambda d: (d.doc_id, d.text)),
            equal_to(
                [
                    ("n1", "Seen [**DATE**], call [**PHONE**] or [**EMAIL**]."),
                    ("n2", "PT [**PATIENT**] STABLE. WIFE AT BEDSIDE."),
                ]
            ),
            label="research",
        )
        assert_that(
            out.quarantine
            | "Q" >> beam.Map(lambda q: (q.doc_id, q.stage, q.error_type)),
            equal_to([("boom-3", "tag", "RuntimeError")]),
            label="quarantine",
        )


def test_when_same_person_key_then_same_person_id_and_originals_audited():
    docs = [
        ClinicalDocument("a", "Seen 7/22/2006.", "physionet", person_key="p:1"),
        ClinicalDocument("b", "Seen 7/23/2006.", "physionet", person_key="p:1"),
        ClinicalDocument("c", "Nothing here.", "physionet"),
    ]
    config = TaggerConfig(detectors=("rules",))
    with TestPipeline() as p:
        out = (
            p
            | beam.Create(docs)
            | DeidentifyClinicalDocuments(config, Rewriter("tag", KEY))
        )
        pids = out.research | beam.Map(lambda d: (d.doc_id, d.person_id))
        persons = (
            pids
            | beam.Map(lambda kv: (kv[1], kv[0]))
            | beam.GroupByKey()
            | beam.MapTuple(lambda _pid, ids: tuple(sorted(ids)))
        )
        assert_that(persons, equal_to([("a", "b"), ("c",)]), label="persons")
        audits = out.research | beam.FlatMap(
            lambda d: [(d.doc_id, r.original, r.replacement) for r in d.replacements]
        )
        assert_that(
            audits,
            equal_to(
                [
                    ("a", "7/22/2006", "<DATE>7/22/2006</DATE>"),
                    ("b", "7/23/2006", "<DATE>7/23/2006</DATE>"),
                ]
            ),
            label="audit",
        )
        assert_that(out.quarantine, is_empty(), label="no-quarantine")


def test_when_mode_unknown_then_rejected_before_pipeline_builds():
    with pytest.raises(ValueError, match="mode"):
        Rewriter("scramble", KEY)
