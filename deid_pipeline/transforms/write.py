"""Write: dataclasses become rows only here, at the edge, then Beam's Parquet sinks."""

from __future__ import annotations

import os

import apache_beam as beam

from deid_pipeline.labels import category
from deid_pipeline.model import DeidentifiedDocument, QuarantineRecord
from deid_pipeline.schemas import DOCUMENTS, IDENTIFIERS, PERSONS, QUARANTINE


def document_row(doc: DeidentifiedDocument) -> dict:
    """The research-extract row of a document (no original PHI in it)."""
    return {
        "doc_id": doc.doc_id,
        "person_id": doc.person_id,
        "source": doc.source,
        "text": doc.text,
        "n_phi": doc.n_phi,
        "confidence": doc.confidence,
        "pipeline_version": doc.pipeline_version,
        "metadata": list(doc.metadata) or None,
    }


def identifier_rows(doc: DeidentifiedDocument) -> list[dict]:
    """Protected identifier-view rows: one per replaced span, original included."""
    return [
        {
            "doc_id": doc.doc_id,
            "person_id": doc.person_id,
            "start": r.span.start,
            "end": r.span.end,
            "label": r.span.label,
            "category": category(r.span.label),
            "source": r.span.source,
            "confidence": r.span.confidence,
            "original": r.original,
            "replacement": r.replacement,
        }
        for r in doc.replacements
    ]


def quarantine_row(record: QuarantineRecord) -> dict:
    """Protected quarantine row: the failure and the raw record, whole."""
    return {
        "doc_id": record.doc_id,
        "stage": record.stage,
        "error_type": record.error_type,
        "error_message": record.error_message,
        "raw": record.raw,
        "origin": record.origin,
        "source": record.source,
    }


def _sink(directory: str, table: str, schema):
    return beam.io.WriteToParquet(
        os.path.join(directory, table, "part"),
        schema=schema,
        file_name_suffix=".parquet",
    )


class WriteTables(beam.PTransform):
    """Write documents, identifiers, persons and quarantine under ``directory``."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self._directory = directory

    def expand(self, outputs):
        research, persons, quarantine = outputs
        d = self._directory
        persons | "WritePersons" >> _sink(d, "persons", PERSONS)
        (
            research
            | "DocumentRows" >> beam.Map(document_row)
            | "WriteDocuments" >> _sink(d, "documents", DOCUMENTS)
        )
        (
            research
            | "IdentifierRows" >> beam.FlatMap(identifier_rows)
            | "WriteIdentifiers" >> _sink(d, "identifiers", IDENTIFIERS)
        )
        return (
            quarantine
            | "QuarantineRows" >> beam.Map(quarantine_row)
            | "WriteQuarantine" >> _sink(d, "quarantine", QUARANTINE)
        )
