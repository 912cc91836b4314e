"""What HL7 write-back needs from the tagger and the rewriter, and its error.

Protocols, so the message path takes the same tagger and rewriter objects
as the document path (and tests their fakes). The tagger's is the
per-document flow's (``flow.Tagger``): one name, one shape.
"""

from __future__ import annotations

from typing import Protocol

from deid_pipeline.flow import Tagger
from deid_pipeline.model import DeidentifiedDocument, TaggedDocument
from deid_pipeline.policy import Mode, Policy
from deid_pipeline.surrogates import Originals

__all__ = ["PersonKeys", "SupportsRewrite", "Tagger", "WritebackError"]


class PersonKeys(Protocol):
    """Where the document path put a tagged report: ``(known, person key)``.

    ``person key`` None means the report's own key (as ``Rewriter.rewrite``
    reads None); ``known`` False, that the caller has no answer, and the
    message's own key is used.
    """

    def __call__(self, tagged: TaggedDocument) -> tuple[bool, str | None]: ...


class SupportsRewrite(Protocol):
    """Surrogates and guard of the document path (``document_rewriter.Rewriter``)."""

    mode: Mode
    policy: Policy

    def rewrite(self, tagged: TaggedDocument, person_key: str | None = None,
                avoid: Originals | None = None) -> DeidentifiedDocument: ...

    def person_id_for(self, tagged: TaggedDocument,
                      person_key: str | None = None) -> str: ...

    def replace_value(self, value: str, label: str, pid: str,
                      avoid: Originals | None = None) -> str: ...

    def hold_if_unsure(self, tagged: TaggedDocument) -> None: ...

    def guard(self, tagged: TaggedDocument,
              result: DeidentifiedDocument) -> DeidentifiedDocument: ...


class WritebackError(ValueError):
    """The de-identified message could not be made safely (PHI-free message)."""

    def __init__(self, message: str, stage: str = "write") -> None:
        """Carry the quarantine stage (``write``, ``surrogate``, ``leak_guard``)."""
        super().__init__(message)
        self.stage = stage


