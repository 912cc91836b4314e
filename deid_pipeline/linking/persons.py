"""The persons table: one row per person, with generalised quasi-identifiers.

Quasi-identifiers (birth year, sex, ZIP3) are what a k-anonymity check needs.
A document's header gives them raw; :func:`persons_columns` generalises them
once the person (and so the date shift) is known, before they reach any
output: the birth year by the rule every research table follows
(:func:`deid_pipeline.surrogates.years.birth_of`: shifted like the person's
dates, ``90+`` for people over 89 under Safe Harbor), the ZIP code to its
Safe Harbor three digits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.surrogates.years import birth_of, parse_birth
from deid_pipeline.tokenizer import ASCII_DIGITS

if TYPE_CHECKING:  # document_rewriter imports linking: no cycle at run time
    from deid_pipeline.document_rewriter import Rewriter


@dataclass(frozen=True, slots=True)
class QuasiIdentifiers:
    """What a document's header says about its person.

    ``birth`` is the header's date of birth as written (PHI: it travels only
    between stages, to :func:`birth_year_column`, and is kept out of the
    repr); ``zip3`` is already generalised.
    """

    birth: str | None = field(default=None, repr=False)
    sex: str | None = None
    zip3: str | None = None


def quasi_identifiers(doc: ClinicalDocument) -> QuasiIdentifiers:
    """Date of birth, sex and ZIP3 from the document's header, when it has one."""
    from deid_pipeline.surrogates.zip3 import safe_harbor_zip3

    birth = zip3 = None
    if doc.dictionary is not None:
        for value, label, field in doc.dictionary.rows():
            if (
                label == "DATE"
                and field.startswith("PID.7")
                and not birth
                and parse_birth(value) is not None
            ):
                birth = value.strip()
            elif label == "ZIP" and field.startswith("PID.11") and not zip3:
                digits = "".join(ch for ch in value if ch in ASCII_DIGITS)
                if len(digits) >= 5:
                    zip3 = safe_harbor_zip3(digits[:3])
    sex = dict(doc.metadata).get("sex") or None
    return QuasiIdentifiers(birth, sex, zip3)


def merge_quasi(items: Iterable[QuasiIdentifiers]) -> QuasiIdentifiers:
    """One person's values across documents: the first (sorted) known value of each."""
    items = list(items)

    def first(values):
        known = sorted(v for v in values if v)
        return known[0] if known else None

    return QuasiIdentifiers(
        first(q.birth for q in items),
        first(q.sex for q in items),
        first(q.zip3 for q in items),
    )


def birth_year_column(quasi: QuasiIdentifiers, rewriter, person_id: str) -> str | None:
    """The persons table's ``birth_year``: what the documents' header columns say.

    ``rewriter`` is the run's (its policy, ``as_of_year`` and the person's
    date shift).
    """
    original = parse_birth(quasi.birth) if quasi.birth else None
    return birth_of(original, rewriter.date_offset(person_id), rewriter.as_of_year,
                    rewriter.policy).year


def persons_row(person_id: str, items, rewriter: Rewriter) -> dict:
    """Aggregate one person's documents into a persons-table row.

    ``items`` are ``(linked_by kinds, QuasiIdentifiers)`` of each document;
    ``rewriter`` gives the policy, ``as_of_year`` and date shift the birth
    year is written with (the documents' own birth columns use the same).
    """
    items = list(items)
    quasi = merge_quasi(q for _, q in items)
    return {
        "person_id": person_id,
        "n_documents": len(items),
        "linked_by": sorted({k for kinds, _ in items for k in kinds}),
        "birth_year": birth_year_column(quasi, rewriter, person_id),
        "sex": quasi.sex,
        "zip3": quasi.zip3,
    }
