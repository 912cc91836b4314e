"""The per-record chain in Beam streaming mode gives the batch job's bytes."""

import json

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to, is_empty
from shipped_path import run_files

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.readers.formats import read_physionet
from deid_pipeline.synthetic import generate_notes
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.composites import DeidentifyRecords

KEY = b"streaming-test-key-0123456789abcd"
CONFIG = TaggerConfig(detectors=("rules", "dictionary"))


def test_when_records_stream_in_steps_then_output_equals_batch(tmp_path):
    notes = generate_notes(12, seed=7, min_tokens=60, max_tokens=200)
    # PhysioNet records carry their person (patient) as the HL7 ones do.
    path = tmp_path / "id.text"
    path.write_text("".join(
        f"START_OF_RECORD={d.person_key.rsplit(':', 1)[1]}||||{n}||||\n"
        f"{d.text}\n||||END_OF_RECORD\n" for n, d in enumerate(notes, start=1)),
        encoding="utf-8")
    rewriter = Rewriter("surrogate", KEY, as_of_year=2026)
    # The batch job's own path over the file ...
    documents, quarantine = run_files(tmp_path, [str(path)], CONFIG, rewriter)
    assert quarantine == [] and len(documents) == len(notes)
    batch_rows = [json.dumps([d["doc_id"], d["person_id"], d["text"]])
                  for d in documents]

    # ... and the per-record chain, streamed, over the records it read.
    docs = list(read_physionet(str(path), path.read_bytes()))
    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    stream = TestStream()
    for step in range(0, len(docs), 5):
        stream = stream.add_elements(docs[step : step + 5]).advance_watermark_to(
            step + 10
        )
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=options) as p:
        research, streamed_quarantine = p | stream | DeidentifyRecords(CONFIG, rewriter)
        assert_that(
            research | "StreamRows" >> beam.Map(
                lambda d: json.dumps([d.doc_id, d.person_id, d.text])),
            equal_to(batch_rows),
            label="same-as-batch",
        )
        assert_that(streamed_quarantine, is_empty(), label="none-quarantined")
