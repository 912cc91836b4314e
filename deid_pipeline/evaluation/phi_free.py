"""What a tagger does to documents that carry no PHI at all.

Token precision hides it: a question about the Framingham risk score with
``Framingham`` tagged costs one false positive token among thousands, but to
the user every word of that document was fine and the tool changed one. So
the genre set (:mod:`deid_pipeline.synthetic.genres`, about a fifth of it
PHI-free) is also scored per document: the share of PHI-free documents with
anything tagged. A bare year is not counted (Safe Harbor lets it through, and
the HIPAA metrics ignore it too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deid_pipeline.evaluation.metrics import is_bare_year
from deid_pipeline.model import ClinicalDocument, PhiSpan


@dataclass(frozen=True)
class PhiFreeScore:
    """PHI-free documents, and how many of them got any (non-year) span."""

    documents: int
    tagged: int

    @property
    def share(self) -> float:
        """The share of PHI-free documents with anything tagged (0 when none)."""
        return self.tagged / self.documents if self.documents else 0.0


def phi_free_score(docs: Sequence[ClinicalDocument],
                   predicted: Sequence[Sequence[PhiSpan]]) -> PhiFreeScore:
    """Count the documents without gold spans, and those of them tagged."""
    free = [(d, p) for d, p in zip(docs, predicted, strict=True) if not d.gold]
    tagged = sum(1 for d, p in free
                 if any(not is_bare_year(d.text, s) for s in p))
    return PhiFreeScore(len(free), tagged)


def format_phi_free(score: PhiFreeScore) -> str:
    """One line of counts (no text)."""
    return (f"PHI-free documents: {score.documents}; with anything tagged (bare "
            f"years aside): {score.tagged} ({score.share:.4f})")
