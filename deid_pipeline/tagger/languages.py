"""Languages a model can be trained for: each names its feature function.

The hook between the CRF code and the per-language feature modules: English
is :mod:`deid_pipeline.tagger.features` (the shipped model's), Spanish
:mod:`deid_pipeline.tagger.spanish`. The tokenizer is the same for all (it
cuts letters of any script, accents included).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from deid_pipeline.model import ClinicalDocument
from deid_pipeline.tokenizer import Token

__all__ = ["LANGUAGES", "FeatureFunction", "feature_function", "feature_version"]

LANGUAGES = ("en", "es")
FeatureFunction = Callable[[ClinicalDocument, Sequence[Token]], list[list[str]]]


def _check(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r}: choose from {', '.join(LANGUAGES)}")
    return language


def feature_function(language: str) -> FeatureFunction:
    """The ``document_features`` of ``language``."""
    if _check(language) == "es":
        from deid_pipeline.tagger.spanish import document_features
    else:
        from deid_pipeline.tagger.features import document_features
    return document_features


def feature_version(language: str) -> str:
    """The feature set's version for ``language`` (recorded in the model)."""
    if _check(language) == "es":
        from deid_pipeline.tagger.spanish import FEATURE_VERSION
    else:
        from deid_pipeline.tagger.features import FEATURE_VERSION
    return FEATURE_VERSION
