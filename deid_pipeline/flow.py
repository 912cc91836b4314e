"""One document's way through de-identification, Beam-free, written once.

tag -> reconcile (reports of one HL7 message) -> originals (what no
surrogate may spell) -> rewrite -> leak guard. The batch job's chunks
(``transforms/chunks.py``), the composites (``transforms/composites.py``),
HL7 write-back (``hl7/writeback.py``) and, through it, the MLLP gateway all
call these methods, so a test of one path tests the code the others run.

A path that must stop between stages (the batch job spills tagged chunks to
disk and links persons before it rewrites; HL7 reconciles the reports of one
message and rewrites them against the message's originals) calls the stages
in its own order; :meth:`DocumentFlow.process` is the whole chain for one
document that needs nothing from the others.

Errors are data, turned into quarantine rows in one place: a stage that
fails raises :class:`StageError` (the stage's name on it, the cause
chained), and :func:`quarantine_record` makes the row. Interrupts are never
a record's error: :func:`stage` lets them through (``interrupts.py``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from deid_pipeline.document_rewriter import Rewriter, originals_of
from deid_pipeline.model import (
    ClinicalDocument,
    DeidentifiedDocument,
    QuarantineRecord,
    TaggedDocument,
)
from deid_pipeline.runtime.interrupts import reraise_interrupt
from deid_pipeline.surrogates import Originals

__all__ = [
    "DocumentFlow",
    "StageError",
    "Tagger",
    "quarantine_record",
    "stage",
]

TAG = "tag"
SURROGATE = "surrogate"
LEAK_GUARD = "leak_guard"
REVIEW = "review"


class Tagger(Protocol):
    """Tags one document (``tagger.tagging.PhiTagger``, or a test's fake)."""

    def tag(self, doc: ClinicalDocument) -> TaggedDocument: ...


class StageError(Exception):
    """A stage failed on one record; the cause is chained and kept as ``cause``.

    Its own message is the stage name only: the cause's text may hold PHI
    and goes only to the protected quarantine table.
    """

    def __init__(self, stage_name: str, cause: Exception) -> None:
        super().__init__(stage_name)
        self.stage = stage_name
        self.cause = cause

    @property
    def error_type(self) -> str:
        """The cause's class name, as the quarantine table records it."""
        return type(self.cause).__name__


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Run a block as stage ``name``: what it raises comes out as StageError.

    A StageError from an inner stage keeps its own name; an interrupt (or an
    error in a process that was signalled) ends the run instead.
    """
    try:
        yield
    except StageError:
        raise
    except Exception as exc:  # noqa: BLE001 - errors are data
        reraise_interrupt(exc)
        raise StageError(name, exc) from exc


def _identify(element: object) -> tuple[str, bytes, str, str]:
    """Doc id, raw bytes, origin and source of whatever element failed."""
    if isinstance(element, tuple) and element:  # (tagged document, person)
        element = element[0]
    if isinstance(element, TaggedDocument):
        element = element.document
    if isinstance(element, ClinicalDocument):
        raw = json.dumps(
            {
                "id": element.doc_id,
                "text": element.text,
                "metadata": dict(element.metadata),
            },
            ensure_ascii=False,
        )
        return element.doc_id, raw.encode("utf-8"), element.origin, element.source
    path = getattr(getattr(element, "metadata", None), "path", None)
    if path is not None:  # a fileio.ReadableFile
        return path, b"", path, ""
    return "<unknown>", repr(element).encode("utf-8", "replace"), "", ""


def quarantine_record(error: StageError, element: object,
                      doc_id: str | None = None, raw: bytes | None = None,
                      origin: str | None = None, source: str | None = None,
                      message: str | None = None) -> QuarantineRecord:
    """The quarantine row of ``element`` that failed with ``error``.

    Identity and raw bytes come from the element (a document, a tagged one,
    a file) unless given (an HL7 message is kept as its bytes, under the
    file's name and its ordinal); the message is the cause's repr unless
    given (HL7 write-back gives PHI-free words an ACK may carry).
    """
    found = _identify(element)
    return QuarantineRecord(
        doc_id=found[0] if doc_id is None else doc_id,
        stage=error.stage,
        error_type=error.error_type,
        error_message=repr(error.cause) if message is None else message,
        raw=found[1] if raw is None else raw,
        origin=found[2] if origin is None else origin,
        source=found[3] if source is None else source,
    )


@dataclass(frozen=True)
class DocumentFlow:
    """The stages of one document with one tagger and one rewriter.

    A Beam step holds what its stages need: the tag step no rewriter, the
    batch job's write step (which reads tagged documents from its spill
    files) no tagger.
    """

    tagger: Tagger | None = None
    rewriter: Rewriter | None = None

    def tag(self, doc: ClinicalDocument) -> TaggedDocument:
        """Every detector over ``doc``, merged (stage ``tag``)."""
        with stage(TAG):
            return self.tagger.tag(doc)

    @staticmethod
    def reconcile(tagged: Sequence[TaggedDocument]) -> list[TaggedDocument]:
        """Documents marked wherever a related one's value stands.

        Reports of one HL7 message share every value, documents of one
        patient their sure names, places and ids
        (:func:`~deid_pipeline.tagger.tagging.reconcile_documents`). Part of
        the tag stage: the caller runs it inside its own ``stage``. Imported
        here: a process that builds a pipeline and never tags (its client)
        does not load the tagger (its rules alone were 0.1 CPU-s).
        """
        from deid_pipeline.tagger.tagging import reconcile_documents

        return reconcile_documents(tagged)

    @staticmethod
    def originals(*tagged: TaggedDocument) -> Originals:
        """What no surrogate of these documents may spell (see ``originals_of``)."""
        return originals_of(*tagged)

    def rewrite(self, tagged: TaggedDocument, person_key: str | None = None,
                avoid: Originals | None = None) -> DeidentifiedDocument:
        """Surrogates for every span (stage ``surrogate``)."""
        with stage(SURROGATE):
            return self.rewriter.rewrite(tagged, person_key=person_key, avoid=avoid)

    def guard(self, tagged: TaggedDocument,
              result: DeidentifiedDocument) -> DeidentifiedDocument:
        """``result``, unless held for review or a removed value is still in it.

        Held: the tagger's confidence is below the rewriter's review floor
        (stage ``review``); a leak is stage ``leak_guard``.
        """
        with stage(REVIEW):
            self.rewriter.hold_if_unsure(tagged)
        with stage(LEAK_GUARD):
            return self.rewriter.guard(tagged, result)

    def write(self, tagged: TaggedDocument, person_key: str | None = None,
              avoid: Originals | None = None) -> DeidentifiedDocument:
        """Rewrite then guard: a research document, or StageError."""
        return self.guard(tagged, self.rewrite(tagged, person_key, avoid))

    def process(self, doc: ClinicalDocument, person_key: str | None = None,
                avoid: Originals | None = None
                ) -> DeidentifiedDocument | QuarantineRecord:
        """The whole chain for one document alone; a failure as its quarantine row.

        ``avoid`` defaults to the document's own originals (all a record
        alone can know); its person key to its own (header MRN, else itself).
        """
        try:
            return self.write(self.tag(doc), person_key, avoid)
        except StageError as error:
            return quarantine_record(error, doc)
