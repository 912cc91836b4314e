"""The CRF detector: biased tagging with the shared model.

Tagging follows Carafe's recall/precision bias, made monotone by construction:
a token is PHI iff ``logit(P(O at t)) + bias < 0``, with ``P(O at t)`` the
token's marginal probability of the outside label. Bias 0 is (almost always)
the Viterbi decision; a lower bias marks a superset of the tokens, so recall
never drops when the bias is lowered. The label of a PHI token is its Viterbi
label, or, when Viterbi said O, its most probable PHI label.

One model is loaded per process and shared by every detector and thread built
from it (:mod:`deid_pipeline.tagger.crf_model`). Models are trained with
python-crfsuite (:mod:`deid_pipeline.training.crf`) and decoded by
:mod:`deid_pipeline.tagger.crf_decoder` (the same path and marginals, without
pycrfsuite's per-string lookups and without the per-object sequence state that
made its ``Tagger`` need a lock). BIO tags and spans convert in
:mod:`deid_pipeline.tagger.bio`; an English model's token decisions and span
checks after decoding live in :mod:`~deid_pipeline.tagger.crf_tokens` and
:mod:`~deid_pipeline.tagger.crf_spans`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter

import numpy as np

from deid_pipeline.labels import LABELS
from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.bio import OUTSIDE, SOURCE, bio_to_spans
from deid_pipeline.tagger.confidence import TokenPhi
from deid_pipeline.tagger.crf_decoder import Decoded, decode_ids
from deid_pipeline.tagger.crf_model import LoadedModel, load_model
from deid_pipeline.tagger.crf_spans import checked_english, is_alnum_span
from deid_pipeline.tagger.crf_tokens import NAME_KINDS, adjust_english
from deid_pipeline.tagger.detection import Detection, Detector, TaggerConfig
from deid_pipeline.tagger.features import FEATURE_VERSION
from deid_pipeline.tagger.span_tidy import tidy_spans
from deid_pipeline.tokenizer import Token, tokenize

# The ids of a document with no token (a posterior of nothing).
_NO_IDS = (np.zeros(0, np.int64), np.zeros(1, np.int64))


@dataclass(frozen=True)
class Posterior:
    """The model's view of one document: enough to decode at any bias >= ``min_bias``.

    ``p_outside[t]`` is the marginal P(O) of token t; ``viterbi`` the best
    path (found when first read: a note with no token PHI at ``min_bias``
    never needs it); ``fallback[t]`` the most probable PHI type of a token
    Viterbi calls O (only for tokens that are PHI at ``min_bias``).
    """

    tokens: tuple[Token, ...]
    decoded: Decoded = field(repr=False, compare=False)
    labels: tuple[str, ...] = field(repr=False)
    p_outside: tuple[float, ...]
    fallback: dict[int, str]
    min_bias: float

    @cached_property
    def viterbi(self) -> tuple[str, ...]:
        return tuple(map(self.labels.__getitem__, self.decoded.path.tolist()))


def token_phi(posterior: Posterior) -> TokenPhi:
    """The posterior's tokens and their P(PHI) = 1 - P(O) (document confidence)."""
    tokens = posterior.tokens
    return TokenPhi(np.fromiter(map(itemgetter(1), tokens), np.int64, len(tokens)),
                    np.fromiter(map(itemgetter(2), tokens), np.int64, len(tokens)),
                    1.0 - np.asarray(posterior.p_outside, dtype=float))


def _after_hyphen(tokens: Sequence[Token], t: int) -> bool:
    """Whether token t follows a hyphen it touches (``Oyelowo-Price``: one name)."""
    dash = tokens[t - 1]
    return dash.text == "-" and dash.end == tokens[t].start


def outside_threshold(bias: float) -> float:
    """P(O) below which a token is PHI: ``logit(P(O)) + bias < 0``."""
    if bias > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(bias))


class CrfDetector(Detector):
    """PHI from the CRF model, at a recall/precision ``bias`` (negative = recall)."""

    name = SOURCE
    labels = LABELS
    version = FEATURE_VERSION

    def __init__(self, model: LoadedModel, bias: float = 0.0,
                 propagate: bool = True) -> None:
        self.model = model
        self.bias = float(bias)
        self.propagate = propagate
        self.version = f"{FEATURE_VERSION}+{model.model_id}"

    def posterior(self, doc: ClinicalDocument, min_bias: float | None = None
                  ) -> Posterior:
        """Run the model once over ``doc``; decode with :meth:`decode`."""
        min_bias = self.bias if min_bias is None else min_bias
        tokens = tuple(tokenize(doc.text))
        if not tokens:
            return Posterior((), decode_ids(self.model.weights, *_NO_IDS),
                             self.model.labels, (), {}, min_bias)
        if doc.dictionary is not None and not self.model.uses_dictionary:
            doc = dataclasses.replace(doc, dictionary=None)
        threshold = outside_threshold(min_bias)
        model = self.model
        decoded = model.decode_document(doc, tokens)
        outside = self.outside_of(doc, tokens, decoded.marginals[:, model.outside])
        marked = outside < threshold
        fallback = {}
        if marked.any():  # else no bias this posterior decodes at reads the path
            unsure = marked & (decoded.path == model.outside)
            fallback = {t: self._best_kind(decoded.marginals[t])
                        for t in np.flatnonzero(unsure).tolist()}
        return Posterior(tokens, decoded, model.labels, tuple(outside.tolist()),
                         fallback, min_bias)

    def outside_of(self, doc: ClinicalDocument, tokens: Sequence[Token],
                   crf_outside: np.ndarray) -> np.ndarray:
        """P(O) per token that decoding reads: the CRF's (a second view mixes in)."""
        return crf_outside

    def _best_kind(self, marginals: np.ndarray) -> str:
        """Most probable PHI type of a token (B- and I- summed; ties: first by name)."""
        scores = marginals @ self.model.kind_of_label
        return self.model.kinds[int(np.argmax(scores))]

    def decode(self, doc: ClinicalDocument, posterior: Posterior,
               bias: float | None = None) -> Detection:
        """Spans at ``bias`` (default: the detector's) from a posterior of ``doc``."""
        bias = self.bias if bias is None else bias
        if bias < posterior.min_bias:
            raise ValueError(f"posterior computed for bias >= {posterior.min_bias}")
        threshold = outside_threshold(bias)
        english = self.model.language == "en"
        marked = [t for t, p in enumerate(posterior.p_outside) if p < threshold]
        # No token marked (two notes in three): no span, and nothing for the
        # English rules, which only drop a marked token or widen from one.
        spans = self._spans(posterior, marked, english) if marked else []
        if not english:
            return Detection(tidy_spans(doc.text, (s for s in spans
                                                   if is_alnum_span(doc.text, s))),
                             token_phi(posterior))
        return Detection(checked_english(doc.text, spans), token_phi(posterior))

    def _spans(self, posterior: Posterior, marked: list[int], english: bool
               ) -> list[PhiSpan]:
        """The spans of the ``marked`` tokens, after the English rules."""
        tokens = posterior.tokens
        kinds: list[str | None] = [None] * len(tokens)
        for t in marked:
            tag = posterior.viterbi[t]
            kinds[t] = (tag.partition("-")[2] if tag != OUTSIDE
                        else posterior.fallback[t])
        confidences = [1.0 - p for p in posterior.p_outside]
        if english:  # English word lists and US places (crf_tokens)
            adjust_english(tokens, kinds, confidences, posterior.viterbi,
                           self.propagate)
        tags = []
        prev_kind = None
        for t, kind in enumerate(kinds):
            if kind is None:
                tags.append(OUTSIDE)
            else:
                tag = posterior.viterbi[t]
                if tag == OUTSIDE or tag.partition("-")[2] != kind or (
                        kind == prev_kind and _after_hyphen(tokens, t)
                        and kind in NAME_KINDS):
                    tag = ("I-" if kind == prev_kind else "B-") + kind
                tags.append(tag)
            prev_kind = kind
        return bio_to_spans(tokens, tags, SOURCE, confidences)

    def analyze(self, doc: ClinicalDocument) -> Detection:
        """Spans at this detector's bias plus each token's P(PHI)."""
        return self.decode(doc, self.posterior(doc))

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        """Spans at this detector's bias."""
        return self.analyze(doc).spans


def from_config(config: TaggerConfig) -> Detector:
    """The detector ``config`` asks for (the registry's ``crf``)."""
    model = load_model(config.model_path)
    return CrfDetector(model, model.default_bias if config.bias is None
                       else config.bias)
