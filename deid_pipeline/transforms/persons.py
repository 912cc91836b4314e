"""Persons: one row per linked person, quasi-identifiers generalised."""

from __future__ import annotations

import apache_beam as beam

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.linking.persons import persons_row, quasi_identifiers


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
