"""Canonical person keys available from a record alone (no shuffle needed).

Streaming and batch must agree on a message's person id, so the key a record
carries by itself (HL7 MRN with assigning authority, a corpus patient number)
is used directly. Only records without one need the batch linking stage.
"""

from __future__ import annotations

from deid_pipeline.model import ClinicalDocument


def record_person_key(doc: ClinicalDocument) -> str | None:
    """The strong person key the record itself carries, if any."""
    if doc.dictionary is not None and doc.dictionary.person_key:
        return doc.dictionary.person_key
    return doc.person_key


def document_key(doc: ClinicalDocument) -> str:
    """Unique per input record: ids repeat across files (``a/1.txt``, ``b/1.txt``)."""
    return f"{doc.origin}|{doc.doc_id}"


def fallback_person_key(doc: ClinicalDocument) -> str:
    """A document with no identifier at all is its own person."""
    return f"document:{doc.source}:{document_key(doc)}"
