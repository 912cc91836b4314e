"""A document's confidence: the F-score its tagging is expected to have.

Carafe (Wellner et al. 2007) sends a reviewer the records whose confidence is
lowest, and its confidence tracked the record's F-score. The figure used here
before, the CRF's Viterbi path probability, falls exponentially with length:
16 synthetic HL7 reports tagged without a miss scored 0.05 to 0.18 and a line of
100,000 tokens 0.0, so no floor on it could tell a doubtful document from a
long one.

Here the CRF's marginal P(PHI) of each token is read against what the
document's *final* spans mark (every detector, after the merge): a marked token
is a true positive with probability max(P(PHI), the marking span's own
confidence) (a date rule is sure where the CRF may not be), an unmarked one a
missed PHI token with probability P(PHI). With those expectations

    confidence = (2 E[TP] + s) / (2 E[TP] + E[FP] + E[FN] + s)

which is the expected token F-score, smoothed by ``s`` so that a document with
nothing marked and nothing doubtful scores near 1 (there is nothing to get
wrong) and a document of one doubtful token does not score 0. Missed PHI is
what a floor is for (a leak), so E[FN] weighs ``MISS_WEIGHT`` times E[FP].
The figures that chose ``s`` and the weight, on notes of patients the model
never saw, are in docs/tagger.md ("Document confidence").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from deid_pipeline.model import PhiSpan

SMOOTHING = 1.0
MISS_WEIGHT = 1.0
# Documents below this confidence are held for review, not published
# (``run --review-floor``); the share it holds and the PHI it catches on notes
# of patients the model never saw are in docs/tagger.md.
DEFAULT_REVIEW_FLOOR = 0.5


class HeldForReviewError(Exception):
    """The tagger was too unsure of a document to publish it unread.

    Its message holds the figures only (no text): it is logged and counted.
    """


class TokenPhi(NamedTuple):
    """Each token's offsets and the CRF's marginal probability that it is PHI."""

    starts: np.ndarray
    ends: np.ndarray
    p_phi: np.ndarray

    @classmethod
    def concatenate(cls, parts: Sequence[TokenPhi]) -> TokenPhi | None:
        """One view of several windows' tokens (already in document offsets)."""
        parts = [p for p in parts if len(p.starts)]
        if not parts:
            return None
        return cls(*(np.concatenate([getattr(p, f) for p in parts])
                     for f in cls._fields))

    def shifted(self, offset: int) -> TokenPhi:
        return TokenPhi(self.starts + offset, self.ends + offset, self.p_phi)

    def within(self, start: int, end: int) -> TokenPhi:
        """The tokens that start in ``[start, end)``."""
        keep = (self.starts >= start) & (self.starts < end)
        return TokenPhi(self.starts[keep], self.ends[keep], self.p_phi[keep])


def marked_confidence(tokens: TokenPhi, spans: Iterable[PhiSpan]) -> np.ndarray:
    """Per token: the highest confidence of a span overlapping it, -1 if none.

    A span without a confidence (a header value, a site phrase) counts as sure.
    """
    marked = np.full(len(tokens.starts), -1.0)
    for span in spans:
        lo = np.searchsorted(tokens.ends, span.start, side="right")
        hi = np.searchsorted(tokens.starts, span.end, side="left")
        if lo < hi:
            sure = 1.0 if span.confidence is None else float(span.confidence)
            np.maximum(marked[lo:hi], sure, out=marked[lo:hi])
    return marked


def document_confidence(tokens: TokenPhi | None, spans: Iterable[PhiSpan],
                        smoothing: float = SMOOTHING,
                        miss_weight: float = MISS_WEIGHT) -> float | None:
    """The expected F-score of ``spans`` under the CRF's marginals (None: no tokens)."""
    if tokens is None or not len(tokens.starts):
        return None
    starts = tokens.starts
    if not (starts[1:] >= starts[:-1]).all():  # parts out of order: sorted, stably
        order = np.argsort(starts, kind="stable")
        tokens = TokenPhi(*(a[order] for a in tokens))
    marked = marked_confidence(tokens, spans)
    is_marked = marked >= 0
    p = np.clip(tokens.p_phi, 0.0, 1.0)
    surest = np.maximum(p, marked)
    true_positive = surest[is_marked].sum()
    false_positive = (1.0 - surest)[is_marked].sum()
    missed = p[~is_marked].sum()
    score = (2 * true_positive + smoothing) / (
        2 * true_positive + false_positive + miss_weight * missed + smoothing)
    return float(score)
