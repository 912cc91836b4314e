"""Persons: one row per linked person, quasi-identifiers generalised."""

from __future__ import annotations

import apache_beam as beam

from deid_pipeline.deidentify import Rewriter
from deid_pipeline.linking.persons import (
    birth_year_column,
    merge_quasi,
    quasi_identifiers,
)


def persons_row(person_id: str, items, rewriter: Rewriter) -> dict:
    """Aggregate one person's documents into a persons-table row.

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


class Persons(beam.PTransform):
    """(tagged document, person assignment) pairs -> persons-table rows."""

    def __init__(self, rewriter: Rewriter) -> None:
        super().__init__()
        self._rewriter = rewriter

    def expand(self, linked):
        rewriter = self._rewriter
        return (
            linked
            | "PersonOf"
            >> beam.MapTuple(
                lambda tagged, person: (
                    rewriter.person_id_for(tagged, person.person_key),
                    (person.linked_by, quasi_identifiers(tagged.document)),
                )
            )
            | "ByPerson" >> beam.GroupByKey()
            | "PersonRow"
            >> beam.MapTuple(lambda pid, items: persons_row(pid, items, rewriter))
        )
