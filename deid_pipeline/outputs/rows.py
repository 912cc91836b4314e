"""Output rows: dataclasses become plain dicts only here, at the edge.

One definition of each table's row, shared by the Beam sinks and the MLLP
gateway's protected files, so every output of the project has the same
columns as ``deid_pipeline.schemas``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

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


IDENTIFIER_FIELDS = ("doc_id", "person_id", "start", "end", "label", "category",
                     "source", "confidence", "original", "replacement")


def _identifier_values(doc: DeidentifiedDocument) -> Iterator[tuple]:
    """Each replaced span's identifier-view values, in ``IDENTIFIER_FIELDS`` order."""
    doc_id, person_id = doc.doc_id, doc.person_id
    for r in doc.replacements:
        span = r.span
        yield (doc_id, person_id, span.start, span.end, span.label,
               category(span.label), span.source, span.confidence, r.original,
               r.replacement)


def identifier_rows(doc: DeidentifiedDocument) -> list[dict]:
    """Protected identifier-view rows: one per replaced span, original included."""
    return [dict(zip(IDENTIFIER_FIELDS, values, strict=True))
            for values in _identifier_values(doc)]


class IdentifierColumns:
    """Identifier-view rows of many documents, kept as columns.

    A document of 40,000 notes has a million replaced spans: a dict per row
    (and a sort key tuple per row) took more than a gigabyte where the
    columns take a tenth of it.
    """

    def __init__(self) -> None:
        self.columns: tuple[list, ...] = tuple([] for _ in IDENTIFIER_FIELDS)
        self._rows = 0

    def add(self, doc: DeidentifiedDocument) -> None:
        """Append ``doc``'s rows."""
        appends = [column.append for column in self.columns]
        for values in _identifier_values(doc):
            for append, value in zip(appends, values):
                append(value)
            self._rows += 1

    def __len__(self) -> int:
        return self._rows

    def table(self, schema: pa.Schema, order: Sequence[str]) -> pa.Table:
        """The rows as a table of ``schema``, sorted by the ``order`` columns.

        Arrow's sort is stable and puts nulls last, as the row sort does. The
        columns are handed over, one at a time: each list is emptied once it
        is an Arrow array, and each unsorted array let go once it is sorted (a
        million rows held as objects, as Arrow and sorted at once were the
        peak of a written run). So the rows can be taken once.
        """
        arrays = {}
        for name, column in zip(IDENTIFIER_FIELDS, self.columns, strict=True):
            arrays[name] = pa.array(column, type=schema.field(name).type)
            column.clear()
        indices = pc.sort_indices(pa.table(arrays, schema=schema),
                                  sort_keys=[(name, "ascending") for name in order])
        for name in list(arrays):
            arrays[name] = arrays[name].take(indices)
        return pa.table(arrays, schema=schema)


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
