"""Loading a CRF model file: one model per process, shared by every thread.

The file is read into the decoder's arrays (:mod:`deid_pipeline.tagger.crf_decoder`)
with its trailer (:mod:`deid_pipeline.tagger.model_metadata`: language, a
site's label map, its default bias) and a feature encoder over its
attributes. Cached by content hash, so every detector built from the same
file in a process shares one copy.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from deid_pipeline.label_maps import label_map_from_json
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tagger import languages
from deid_pipeline.tagger.bio import OUTSIDE
from deid_pipeline.tagger.crf_decoder import (
    Decoded,
    ModelFormatError,
    check_header,
    decode,
    decode_ids,
    read_model,
)
from deid_pipeline.tagger.detection import DEFAULT_BIAS
from deid_pipeline.tagger.features import DICTIONARY_FEATURE_PREFIX, FeatureEncoder
from deid_pipeline.tagger.model_metadata import ModelMetadata, read_metadata
from deid_pipeline.tokenizer import Token

DEFAULT_MODEL_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "models",
                                  "default.crfsuite")


class LoadedModel:
    """A model file read into the decoder's arrays (immutable, shared by threads)."""

    def __init__(self, data: bytes, path: str) -> None:
        self.path = path
        facts = _facts(data, path)
        self.sha256 = facts.sha256
        self.metadata = facts.metadata
        self.language = self.metadata.language
        self.default_bias = facts.default_bias
        self.weights = read_model(data)
        self.labels = self.weights.labels
        if OUTSIDE not in self.labels:
            raise ModelFormatError(f"model has no {OUTSIDE!r} label")
        self.outside = self.labels.index(OUTSIDE)
        self.kinds = tuple(sorted({lab.partition("-")[2] for lab in self.labels
                                   if lab != OUTSIDE}))
        # kind_of_label[l, k]: 1 where label l is B- or I- of kind k, so a row
        # of marginals times it sums each kind's probability.
        self.kind_of_label = np.zeros((len(self.labels), len(self.kinds)))
        for label_id, label in enumerate(self.labels):
            if label != OUTSIDE:
                kind = self.kinds.index(label.partition("-")[2])
                self.kind_of_label[label_id, kind] = 1.0
        # A model trained without header-bearing documents has no weight for
        # the IN_PATIENT_* features: computing them would be wasted work.
        self.uses_dictionary = any(attr.startswith(DICTIONARY_FEATURE_PREFIX)
                                   for attr in self.weights.attribute_ids)
        self.encoder = FeatureEncoder(self.weights.attribute_ids)

    def decode(self, features: Sequence[Sequence[str]]) -> Decoded:
        """Best path and marginals of one document's token features."""
        return decode(self.weights, features)

    def decode_document(self, doc: ClinicalDocument, tokens: Sequence[Token]
                        ) -> Decoded:
        """:meth:`decode` of ``document_features(doc, tokens)``, via their ids.

        Another language's features are looked up as strings (no id cache).
        """
        if self.language != "en":
            return self.decode(languages.feature_function(self.language)(doc, tokens))
        return decode_ids(self.weights, *self.encoder.encode(doc, tokens))

    @property
    def model_id(self) -> str:
        """Short identity written to run.json and pipeline versions."""
        return f"crf-{self.sha256[:12]}"


_MODELS: dict[str, LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def resolve_path(path: str | None) -> str:
    """The model file ``path`` means (None = the model shipped in the package)."""
    return os.path.abspath(path) if path else DEFAULT_MODEL_PATH


def load_model(path: str | None = None) -> LoadedModel:
    """The model at ``path``, loaded once per process (cached by content hash)."""
    resolved = resolve_path(path)
    if not os.path.exists(resolved):
        raise FileNotFoundError(f"CRF model not found: {resolved}")
    with open(resolved, "rb") as fh:
        data = fh.read()
    sha = hashlib.sha256(data).hexdigest()
    with _MODELS_LOCK:
        model = _MODELS.get(sha)
        if model is None:
            model = _MODELS[sha] = LoadedModel(data, resolved)
    return model


class ModelFacts(NamedTuple):
    """What a run's plan needs of a model file, read without its weights."""

    sha256: str
    metadata: ModelMetadata
    # The bias tagging uses when none is asked for: a site model's own
    # (chosen on its development data), else the English default.
    default_bias: float


def _facts(data: bytes, path: str) -> ModelFacts:
    """A model's bytes' facts; a site's label map in them is registered."""
    metadata = read_metadata(data)
    if metadata.get("label_map"):
        label_map_from_json(metadata["label_map"], path).register()
    return ModelFacts(hashlib.sha256(data).hexdigest(), metadata,
                      float(metadata.get("bias", DEFAULT_BIAS)))


def model_facts(path: str | None = None) -> ModelFacts:
    """The facts of the model at ``path`` without building its decoder.

    A driver that only plans the run (its bias, language and run.json's
    model id) would otherwise build the decoder's arrays and feature encoder
    that only its workers use (0.05 CPU-s). A file that is not a CRFsuite
    model fails here, before any output is touched.
    """
    resolved = resolve_path(path)
    with open(resolved, "rb") as fh:
        data = fh.read()
    check_header(data)
    return _facts(data, resolved)


def default_bias(path: str | None = None) -> float:
    """The bias the model at ``path`` records, else :data:`DEFAULT_BIAS`.

    A missing file gives the default: loading it later reports the error
    where it always did.
    """
    if not os.path.exists(resolve_path(path)):
        return DEFAULT_BIAS
    return model_facts(path).default_bias


def model_language(path: str | None = None) -> str:
    """The language the model at ``path`` records (``en`` for one without it).

    A missing file gives ``en``: loading it later reports the error where it
    always did.
    """
    if not os.path.exists(resolve_path(path)):
        return "en"
    return model_facts(path).metadata.language


def model_id(path: str | None = None) -> str:
    """``crf-<sha256 prefix>`` of the model at ``path`` (None = shipped model)."""
    return f"crf-{model_facts(path).sha256[:12]}"
