"""Arrow schemas of every table deid-pipeline writes (``deid_pipeline.schemas``).

Each schema is built once here and used by the Beam Parquet sinks and by the
readers of our own outputs (run.json counts, reports), so a column cannot be
renamed in one place and not the other. Column docs live in the field metadata
and in ``schemas/README.md``.
"""

from __future__ import annotations

import pyarrow as pa


def _field(name: str, type_: pa.DataType, doc: str, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


DOCUMENTS = pa.schema(
    [
        _field(
            "doc_id",
            pa.string(),
            "Document id from the input (file stem, jsonl id, "
            "<patient>-<note>, <MSH-10>-<OBR-1>).",
        ),
        _field(
            "person_id",
            pa.string(),
            "Pseudonymous person id: keyed HMAC of the "
            "person's canonical key; stable across runs with the same key.",
        ),
        _field("source", pa.string(), "Input format the document came from."),
        _field("text", pa.string(), "De-identified text."),
        _field("n_phi", pa.int32(), "Number of PHI spans replaced in this document."),
        _field(
            "confidence",
            pa.float64(),
            "Tagger's document confidence (CRF sequence "
            "probability); null when no probabilistic detector ran.",
            nullable=True,
        ),
        _field(
            "pipeline_version",
            pa.string(),
            "Package version and model id that produced this row.",
        ),
        _field(
            "metadata",
            pa.map_(pa.string(), pa.string()),
            "The jsonl keys and parquet columns run --keep-metadata names, as "
            "written (no other: they are not de-identified); for HL7, header "
            "columns: birth_year as in persons, birth_date_shifted, "
            "age_90_or_over, shifted visit and report dates.",
            nullable=True,
        ),
    ]
)

IDENTIFIERS = pa.schema(
    [
        _field("doc_id", pa.string(), "Document the span is in."),
        _field("person_id", pa.string(), "Pseudonymous person id of the document."),
        _field("start", pa.int32(), "Start offset in the ORIGINAL text."),
        _field("end", pa.int32(), "End offset (exclusive) in the ORIGINAL text."),
        _field("label", pa.string(), "PHI label (i2b2 2014 / N-GRID set)."),
        _field("category", pa.string(), "Label category: NAME, LOCATION, DATE, ..."),
        _field("source", pa.string(), "Detector(s) that found the span, '+'-joined."),
        _field(
            "confidence",
            pa.float64(),
            "Span confidence, null if the detector gives none.",
            nullable=True,
        ),
        _field("original", pa.string(), "PHI: the original text of the span."),
        _field("replacement", pa.string(), "What the research text has in its place."),
    ]
)

QUARANTINE = pa.schema(
    [
        _field(
            "doc_id", pa.string(), "Document or record id (file/line when unknown)."
        ),
        _field("stage", pa.string(), "Stage that failed: read, tag, rewrite, ..."),
        _field("error_type", pa.string(), "Exception class name or InvalidRecord."),
        _field("error_message", pa.string(), "PHI possible: the error message."),
        _field("raw", pa.binary(), "PHI: the raw input record, so nothing is lost."),
        _field("origin", pa.string(), "Input file the record came from."),
        _field("source", pa.string(), "Input format."),
    ]
)

PERSONS = pa.schema(
    [
        _field("person_id", pa.string(), "Pseudonymous person id (as in documents)."),
        _field("n_documents", pa.int32(), "Documents of this person in the run."),
        _field(
            "linked_by",
            pa.list_(pa.string()),
            "Kinds of identifier that joined the "
            "documents: record (header key), mrn, ssn, name-dob.",
        ),
        _field(
            "birth_year",
            pa.string(),
            "Birth year from a header (PID-7), shifted like the person's dates; "
            "'90+' for people over 89 at --as-of-year (Safe Harbor); the original "
            "year under the limited data set. Equals the HL7 documents' "
            "metadata birth_year (surrogates.years.birth_of).",
            nullable=True,
        ),
        _field("sex", pa.string(), "Administrative sex from a header.", nullable=True),
        _field(
            "zip3",
            pa.string(),
            "First three ZIP digits from a header; '000' for "
            "the low-population prefixes (Safe Harbor).",
            nullable=True,
        ),
    ]
)

# Only --incremental runs write it (person_merges/run=<ts>/): earlier persons a
# new document joined. Not in TABLES: a plain run has no earlier persons.
PERSON_MERGES = pa.schema(
    [
        _field("person_id", pa.string(), "The person id kept from now on."),
        _field(
            "merged_person_id",
            pa.string(),
            "An earlier person id merged into it; rows already published keep it.",
        ),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "documents": DOCUMENTS,
    "identifiers": IDENTIFIERS,
    "quarantine": QUARANTINE,
    "persons": PERSONS,
}
