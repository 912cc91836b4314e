"""What every detector is: the interface, its result and its configuration.

The small shared types below the registry (:mod:`deid_pipeline.tagger.detectors`)
and every detector (the rules, the header dictionary, the CRF, the
gazetteer), so a detector's module needs nothing of the registry and the
registry builds detectors without their modules importing it back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.confidence import TokenPhi

# The gazetteer joined after a patient-grouped 5-fold CV of the development
# notes: HIPAA token recall 0.9263 -> 0.9370 for 2 more false positives (the
# CRF alone misses hospitals and cities it never saw; docs/tagger.md).
DEFAULT_DETECTORS: tuple[str, ...] = ("rules", "dictionary", "crf", "gazetteer")

# The CRF's O-label bias when none is given. Recall first (a leaked name is a
# reportable breach): the lowest bias whose patient-grouped cross-validated
# precision is still 0.90 (see deid_pipeline/models/README.md).
DEFAULT_BIAS = -2.4


@dataclass(frozen=True, slots=True)
class TaggerConfig:
    """Everything needed to rebuild the detectors in another process.

    ``model_path`` None means the model shipped in the package; ``bias`` shifts
    the CRF's O-label score (negative = more recall, Carafe; None: the bias the
    model file records, else :data:`DEFAULT_BIAS`); ``rules_path`` is
    a site rules file (:mod:`deid_pipeline.tagger.rules.site`), None for none.
    """

    detectors: tuple[str, ...] = DEFAULT_DETECTORS
    model_path: str | None = None
    bias: float | None = DEFAULT_BIAS
    rules_path: str | None = None


@dataclass(frozen=True, slots=True)
class Detection:
    """What a detector found in one document, and how sure it is of each token.

    ``tokens``: a probabilistic detector's P(PHI) per token, from which the
    tagger computes the document's confidence once the spans of every
    detector are merged (:mod:`deid_pipeline.tagger.confidence`).
    """

    spans: tuple[PhiSpan, ...]
    # Arrays: two Detections are equal when their spans are (the tokens follow).
    tokens: TokenPhi | None = field(default=None, compare=False)


class Detector(ABC):
    """Finds PHI spans in one document.

    Subclasses set ``name`` (written as the span ``source``), ``labels`` (what
    they can emit) and ``version`` (recorded in run.json so a score can be tied
    to the code that produced it).
    """

    name: str = ""
    labels: tuple[str, ...] = ()
    version: str = "1"

    @abstractmethod
    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        """Return the spans this detector finds in ``doc.text``."""

    def analyze(self, doc: ClinicalDocument) -> Detection:
        """Spans plus a document confidence; only probabilistic detectors give one."""
        return Detection(self.detect(doc))
