"""Output rows: dataclasses become plain dicts only here, at the edge.

One definition of each table's row, shared by the Beam sinks and the MLLP
gateway's protected files, so every output of the project has the same
columns as ``deid_pipeline.schemas``.
"""

from __future__ import annotations

from deid_pipeline.labels import category
from deid_pipeline.model import DeidentifiedDocument, QuarantineRecord


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
