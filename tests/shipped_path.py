"""Run ``run``'s own path (``DeidentifyFiles``: the chunk path) inside a test.

Pipeline-level tests go through the transform the job ships, not a
composite it never uses, and read back what it wrote: the documents table
and the quarantine (as ``(doc_id, stage, error_type, error_message)``).
"""

from __future__ import annotations

import json
import pathlib

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline

from deid_pipeline.transforms.composites import DeidentifyFiles


def _row(record) -> str:
    return json.dumps([record.doc_id, record.stage, record.error_type,
                       record.error_message])


def run_files(tmp_path: pathlib.Path, patterns: list[str], config, rewriter,
              input_format: str = "auto") -> tuple[list[dict], list[list[str]]]:
    """(documents rows sorted by doc id, quarantine rows) of one chunk-path run."""
    out = tmp_path / "out"
    with TestPipeline() as p:
        outputs = p | DeidentifyFiles(patterns, input_format, config, rewriter,
                                      str(out))
        _ = (outputs.quarantine | beam.Map(_row)
             | beam.io.WriteToText(str(tmp_path / "quarantine")))
    documents = sorted(
        (row for path in sorted((out / "documents").glob("*.parquet"))
         for row in pq.read_table(path).to_pylist()),
        key=lambda r: r["doc_id"])
    quarantine = sorted(json.loads(line)
                        for path in sorted(tmp_path.glob("quarantine*"))
                        for line in path.read_text().splitlines())
    return documents, quarantine
