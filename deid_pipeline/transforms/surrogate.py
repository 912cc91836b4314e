"""Surrogate and leak guard of linked documents, each person's together.

A person's documents are rewritten side by side, as the batch job's chunks
rewrite them (``chunks.PersonOriginals``): no surrogate of a person spells
an original of any of that person's documents.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.metrics import Metrics

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.flow import DocumentFlow, StageError
from deid_pipeline.model import TaggedDocument
from deid_pipeline.runtime.progress import process_progress
from deid_pipeline.surrogates import Originals
from deid_pipeline.transforms.quarantine import dead_letter, with_quarantine


class WritePersonFn(beam.DoFn):
    """(person id, [(tagged, person key)]) -> research documents, or dead letters.

    Rewrite failures are stage ``surrogate``, guard failures ``leak_guard``.
    """

    def __init__(self, rewriter: Rewriter) -> None:
        self._flow = DocumentFlow(rewriter=rewriter)
        self._docs = Metrics.counter("deid", "documents_written")

    def process(self, element):
        _pid, members = element
        members: list[tuple[TaggedDocument, str | None]] = list(members)
        flow = self._flow
        # One document alone is rewritten against its own originals.
        avoid = (Originals.union(flow.originals(t) for t, _ in members)
                 if len(members) > 1 else None)
        for tagged, person_key in members:
            try:
                result = flow.write(tagged, person_key, avoid)
            except StageError as error:
                yield dead_letter(error, tagged)
                continue
            self._docs.inc()
            process_progress("deidentify").add(documents=1, spans=result.n_phi)
            yield result


class Surrogate(beam.PTransform):
    """(tagged, ``PersonAssignment``) -> (research documents, quarantine)."""

    def __init__(self, rewriter: Rewriter) -> None:
        super().__init__()
        self._rewriter = rewriter

    def expand(self, linked):
        rewriter = self._rewriter
        persons = (
            linked
            | "ByPerson" >> beam.MapTuple(lambda tagged, person: (
                rewriter.person_id_for(tagged, person.person_key),
                (tagged, person.person_key)))
            | "GroupByPerson" >> beam.GroupByKey()
        )
        return with_quarantine(persons, "Write", WritePersonFn(rewriter))
