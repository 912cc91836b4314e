"""The hybrid tagger: every configured detector, then the one merge policy.

This is the single function training-time evaluation, the Beam tag stage and
the MLLP gateway call, so the score measured is the score shipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from deid_pipeline.detectors import Detector, TaggerConfig, create
from deid_pipeline.merge import merge_spans
from deid_pipeline.model import ClinicalDocument, TaggedDocument


class PhiTagger:
    """Runs detectors over a document and merges their spans (recall first)."""

    def __init__(self, detectors: Sequence[Detector]) -> None:
        self.detectors = tuple(detectors)

    @classmethod
    def from_config(cls, config: TaggerConfig) -> PhiTagger:
        return cls(create(config))

    def tag(self, doc: ClinicalDocument) -> TaggedDocument:
        spans = []
        confidences = []
        for detector in self.detectors:
            found = detector.analyze(doc)
            spans.extend(found.spans)
            if found.confidence is not None:
                confidences.append(found.confidence)
        return TaggedDocument(
            document=doc,
            spans=merge_spans(spans),
            confidence=min(confidences) if confidences else None,
        )

    def versions(self) -> dict[str, str]:
        """Detector name -> version, for run.json."""
        return {d.name: d.version for d in self.detectors}
