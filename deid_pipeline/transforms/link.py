"""Link: the pipeline's one shuffle. Tagged documents -> (document, person key).

Every document's linkable identifiers go to one place where the identifier
graph is solved (union-find fits in memory for tens of millions of documents:
each contributes a handful of short strings), then the person keys are joined
back to the documents by doc id.
"""

from __future__ import annotations

import apache_beam as beam

from deid_pipeline.linking.graph import PersonAssignment, link_record, resolve
from deid_pipeline.linking.keys import document_key


def _solve(_key, records):
    yield from resolve(records)


def _pair(element):
    doc_key, grouped = element
    assignments: list[PersonAssignment] = list(grouped["person"])
    for tagged in grouped["document"]:
        if assignments:
            yield tagged, assignments[0]
        else:  # cannot happen: every document contributes a link record
            raise RuntimeError("a document got no person assignment")


class Link(beam.PTransform):
    """Assign every tagged document its person (HIDE data linking)."""

    def expand(self, tagged):
        assignments = (
            tagged
            | "LinkRecords" >> beam.Map(lambda t: (None, link_record(t)))
            | "AllRecords" >> beam.GroupByKey()
            | "Solve" >> beam.FlatMapTuple(_solve)
            | "ByDocAssignment" >> beam.Map(lambda a: (a.doc_key, a))
        )
        documents = tagged | "ByDocDocument" >> beam.Map(
            lambda t: (document_key(t.document), t)
        )
        return (
            {"document": documents, "person": assignments}
            | "Join" >> beam.CoGroupByKey()
            | "Pair" >> beam.FlatMap(_pair)
        )
