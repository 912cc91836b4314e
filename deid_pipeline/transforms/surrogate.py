"""Surrogate: replace every merged span (surrogate, redact or tag mode)."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.metrics import Metrics

from deid_pipeline.deidentify import Rewriter
from deid_pipeline.linking.graph import PersonAssignment
from deid_pipeline.model import TaggedDocument
from deid_pipeline.progress import process_progress
from deid_pipeline.transforms.quarantine import apply_stage


class RewriteFn(beam.DoFn):
    """TaggedDocument -> DeidentifiedDocument (research text + audit of rewrites)."""

    def __init__(self, rewriter: Rewriter) -> None:
        self._rewriter = rewriter
        self._docs = Metrics.counter("deid", "documents_rewritten")

    def process(
        self, element: TaggedDocument | tuple[TaggedDocument, PersonAssignment]
    ):
        if isinstance(element, tuple):  # linked: the batch pipeline
            tagged, person = element
            result = self._rewriter.rewrite(tagged, person_key=person.person_key)
        else:  # per record: streaming, or HL7 with its header key
            result = self._rewriter.rewrite(element)
        self._docs.inc()
        process_progress("deidentify").add(documents=1, spans=result.n_phi)
        for replacement in result.replacements:
            Metrics.counter("deid", f"spans_{replacement.span.label}").inc()
        yield result


class Surrogate(beam.PTransform):
    """The rewrite stage; failures go to quarantine (stage ``surrogate``)."""

    def __init__(self, rewriter: Rewriter) -> None:
        super().__init__()
        self._rewriter = rewriter

    def expand(self, tagged):
        return apply_stage(tagged, "surrogate", RewriteFn(self._rewriter))
