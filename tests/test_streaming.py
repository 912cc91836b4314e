"""The per-record chain in Beam streaming mode gives the batch pipeline's bytes."""

import json

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to

from deid_pipeline.deidentify import Rewriter
from deid_pipeline.synthetic import generate_notes
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.deidentify import (
    DeidentifyClinicalDocuments,
    DeidentifyRecords,
)

KEY = b"streaming-test-key-0123456789abcd"
CONFIG = TaggerConfig(detectors=("rules", "dictionary"))


def _as_row(doc):
    return json.dumps(
        [
            doc.doc_id,
            doc.person_id,
            doc.text,
            [[r.span.start, r.span.end, r.replacement] for r in doc.replacements],
        ]
    )


def test_when_records_stream_in_steps_then_output_equals_batch(tmp_path):
    docs = generate_notes(12, seed=7, min_tokens=60, max_tokens=200)
    assert all(d.person_key for d in docs)
    rewriter = Rewriter("surrogate", KEY)

    with TestPipeline() as p:
        batch = (
            p | beam.Create(docs) | DeidentifyClinicalDocuments(CONFIG, rewriter)
        ).research
        _ = (
            batch
            | "BatchRows" >> beam.Map(_as_row)
            | beam.io.WriteToText(str(tmp_path / "batch"))
        )
    batch_rows = [
        line
        for path in sorted(tmp_path.glob("batch*"))
        for line in path.read_text().splitlines()
    ]

    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    stream = TestStream()
    for step in range(0, len(docs), 5):
        stream = stream.add_elements(docs[step : step + 5]).advance_watermark_to(
            step + 10
        )
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=options) as p:
        research, quarantine = p | stream | DeidentifyRecords(CONFIG, rewriter)
        assert_that(
            research | "StreamRows" >> beam.Map(_as_row),
            equal_to(batch_rows),
            label="same-as-batch",
        )
    assert len(batch_rows) == len(docs)
