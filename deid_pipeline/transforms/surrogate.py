"""Surrogate and leak guard: rewrite every merged span, then prove nothing survived."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.metrics import Metrics

from deid_pipeline.deidentify import Rewriter
from deid_pipeline.linking.graph import PersonAssignment
from deid_pipeline.model import DeidentifiedDocument, TaggedDocument
from deid_pipeline.progress import process_progress
from deid_pipeline.transforms.quarantine import apply_stage


class RewriteFn(beam.DoFn):
    """TaggedDocument (optionally with its linked person) -> (tagged, rewritten)."""

    def __init__(self, rewriter: Rewriter) -> None:
        self._rewriter = rewriter

    def process(
        self, element: TaggedDocument | tuple[TaggedDocument, PersonAssignment]
    ):
        if isinstance(element, tuple):  # linked: the batch pipeline
            tagged, person = element
            result = self._rewriter.rewrite(tagged, person_key=person.person_key)
        else:  # per record: streaming, or HL7 with its header key
            tagged = element
            result = self._rewriter.rewrite(tagged)
        yield tagged, result


class LeakGuardFn(beam.DoFn):
    """(tagged, rewritten) -> rewritten, or LeakDetectedError into quarantine."""

    def __init__(self, rewriter: Rewriter) -> None:
        self._rewriter = rewriter
        self._docs = Metrics.counter("deid", "documents_written")

    def process(self, element: tuple[TaggedDocument, DeidentifiedDocument]):
        tagged, result = element
        self._rewriter.guard(tagged, result)
        self._docs.inc()
        process_progress("deidentify").add(documents=1, spans=result.n_phi)
        yield result


class Surrogate(beam.PTransform):
    """Rewrite (stage ``surrogate``) then guard (stage ``leak_guard``).

    Returns (research documents, quarantine of both stages).
    """

    def __init__(self, rewriter: Rewriter) -> None:
        super().__init__()
        self._rewriter = rewriter

    def expand(self, tagged):
        rewritten, rewrite_failed = apply_stage(
            tagged, "surrogate", RewriteFn(self._rewriter)
        )
        research, leaked = apply_stage(
            rewritten, "leak_guard", LeakGuardFn(self._rewriter)
        )
        quarantine = (rewrite_failed, leaked) | "SurrogateQuarantine" >> beam.Flatten()
        return research, quarantine
