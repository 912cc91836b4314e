"""The CRF with the neural second view mixed in: detector ``crf-neural`` (opt-in).

Both views give each token a P(O); the mix (:func:`mix_outside`) is read by
the CRF's own decoding (:class:`~deid_pipeline.tagger.crf.CrfDetector`): the
same recall/precision bias, the same English checks after decoding, the same
span sources, so the bias stays the one knob. A token only the neural view
marks takes the CRF's most probable PHI kind.

Rules, measured on development hold-out folds (the model card, 2026-11-28):

- :attr:`MixRule.MEAN`: ``logit P(O) = (1 - w) logit P_crf(O) + w logit P_nn(O)``
  (``w`` 1: the neural view alone, read through the CRF's decoding);
- :attr:`MixRule.UNION`: ``P(O) = min(P_crf(O), P_nn(O))``, a token is PHI
  when either view says so at the bias (recall first);
- :attr:`MixRule.VETO`: the mean, but never below the CRF's own P(O): the
  second view can only take a mark away, never add one (it finds almost no PHI
  the CRF misses; the marks it adds were its false positives).

The neural weights travel with the CRF model: ``NAME.crfsuite`` reads
``NAME.neural.npz`` beside it (:func:`~deid_pipeline.tagger.neural.weights_beside`).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence

import numpy as np

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger.crf import CrfDetector
from deid_pipeline.tagger.crf_model import LoadedModel, load_model, resolve_path
from deid_pipeline.tagger.detection import Detector, TaggerConfig
from deid_pipeline.tagger.features import FEATURE_VERSION
from deid_pipeline.tagger.neural import NeuralModel, load_neural, weights_beside
from deid_pipeline.tokenizer import Token

_EPS = 1e-7


class MixRule(enum.Enum):
    """How the two views' P(O) combine."""

    MEAN = "mean"
    UNION = "union"
    VETO = "veto"


# The mean at 0.3 (chosen on fold 4, 2026-11-28) lost 6 of 660 PHI tokens on
# fold 3; the veto at 0.2 with the bias at -3.2 loses none on folds 3 and 4
# and takes 45 of 245 false-positive tokens away (chosen on both folds,
# deid_pipeline/models/README.md, 2026-11-29, night). crf-neural stays opt-in.
DEFAULT_RULE = MixRule.VETO
DEFAULT_WEIGHT = 0.2
# The bias the ensemble runs at, against the CRF model's own (-2.4 -> -3.2):
# the veto takes away most of what the lower bias adds.
BIAS_OFFSET = -0.8


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, _EPS, 1 - _EPS)
    return np.log(p) - np.log1p(-p)


def mix_outside(crf: np.ndarray, neural: np.ndarray, rule: MixRule = DEFAULT_RULE,
                weight: float = DEFAULT_WEIGHT) -> np.ndarray:
    """The ensemble's P(O) per token from the CRF's and the neural view's."""
    crf = np.asarray(crf, dtype=float)
    neural = np.asarray(neural, dtype=float)
    if rule is MixRule.UNION:
        return np.minimum(crf, neural)
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"mix weight {weight} outside [0, 1]")
    z = (1.0 - weight) * _logit(crf) + weight * _logit(neural)
    mean = 1.0 / (1.0 + np.exp(-z))
    return np.maximum(crf, mean) if rule is MixRule.VETO else mean


class EnsembleDetector(CrfDetector):
    """The CRF detector whose decoding reads the mixed P(O) of both views."""

    def __init__(self, model: LoadedModel, neural: NeuralModel, bias: float = 0.0,
                 propagate: bool = True, rule: MixRule = DEFAULT_RULE,
                 weight: float = DEFAULT_WEIGHT) -> None:
        super().__init__(model, bias, propagate)
        self.neural = neural
        self.rule = rule
        self.weight = float(weight)
        self.version = (f"{FEATURE_VERSION}+{model.model_id}+{neural.model_id}"
                        f"+{rule.value}:{self.weight:g}")

    def outside_of(self, doc: ClinicalDocument, tokens: Sequence[Token],
                   crf_outside: np.ndarray) -> np.ndarray:
        """The CRF's P(O) mixed with the neural view's (:func:`mix_outside`)."""
        return mix_outside(crf_outside, self.neural.p_outside(doc.text, tokens),
                           self.rule, self.weight)


def neural_for(model_path: str | None) -> NeuralModel:
    """The neural weights beside the CRF model at ``model_path`` (None: shipped)."""
    # Beside the file named, not LoadedModel.path: models are cached by content.
    path = weights_beside(resolve_path(model_path))
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"crf-neural: no neural weights beside the CRF model ({path}); "
            "train them with deid-pipeline train-neural")
    return load_neural(path)


def neural_id(model_path: str | None) -> str:
    """``nn-<sha256 prefix>`` of the weights beside the model (run.json's versions)."""
    return neural_for(model_path).model_id


def from_config(config: TaggerConfig) -> Detector:
    """The ``crf-neural`` detector: the CRF model and the weights beside it.

    Without ``--bias`` it runs :data:`BIAS_OFFSET` below the model's bias.
    """
    model = load_model(config.model_path)
    bias = model.default_bias + BIAS_OFFSET if config.bias is None else config.bias
    return EnsembleDetector(model, neural_for(config.model_path), bias)
