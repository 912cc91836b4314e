"""Pluggable PHI detectors: one interface for rules, the header dictionary and the CRF.

A detector only proposes spans; it never rewrites text and never resolves
conflicts with other detectors. That happens once, in :mod:`deid_pipeline.tagger.merge`.
Detectors are built by name from a registry so that a pipeline option, not
code, chooses which run, and so a Beam worker can rebuild them from a small
picklable :class:`TaggerConfig`.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.tagger.confidence import TokenPhi

# The gazetteer joined after a patient-grouped 5-fold CV of the development
# notes: HIPAA token recall 0.9263 -> 0.9370 for 2 more false positives (the
# CRF alone misses hospitals and cities it never saw; docs/tagger.md).
DEFAULT_DETECTORS: tuple[str, ...] = ("rules", "dictionary", "crf", "gazetteer")

# The default detectors of a model of another language: the rules and the
# gazetteer are English (US phone shapes, month names, US places) and would
# fire on words of the other language; the header dictionary is not. A site
# that wants them anyway names them (``--detectors rules,dictionary,crf``).
LANGUAGE_DETECTORS: dict[str, tuple[str, ...]] = {"es": ("dictionary", "crf")}

# The CRF's O-label bias when none is given. Recall first (a leaked name is a
# reportable breach): the lowest bias whose patient-grouped cross-validated
# precision is still 0.90 (see deid_pipeline/models/README.md).
DEFAULT_BIAS = -2.4

# Where the built-in detectors live; importing the module registers the detector.
# Imported on demand so a run without the CRF never loads its model code.
_BUILTIN_MODULES = {
    "rules": "deid_pipeline.tagger.rules",
    "dictionary": "deid_pipeline.tagger.dictionary",
    "crf": "deid_pipeline.tagger.crf",
    "gazetteer": "deid_pipeline.tagger.gazetteers",
}


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


Factory = Callable[[TaggerConfig], Detector]
_REGISTRY: dict[str, Factory] = {}


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a detector factory (taking a TaggerConfig) under ``name``."""

    def wrap(factory: Factory) -> Factory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"detector {name!r} registered twice")
        _REGISTRY[name] = factory
        return factory

    return wrap


def _load_builtins(names: Iterable[str]) -> None:
    for name in names:
        if name in _BUILTIN_MODULES and name not in _REGISTRY:
            importlib.import_module(_BUILTIN_MODULES[name])


def create(config: TaggerConfig) -> list[Detector]:
    """Instantiate the detectors ``config`` names, in its order.

    The default set with a model of another language is that language's
    (:data:`LANGUAGE_DETECTORS`): the model file says its language.
    """
    if config.detectors == DEFAULT_DETECTORS:
        from deid_pipeline.tagger.crf import load_model

        language = load_model(config.model_path).language
        config = replace(config, detectors=LANGUAGE_DETECTORS.get(language,
                                                                  config.detectors))
    _load_builtins(config.detectors)
    unknown = [n for n in config.detectors if n not in _REGISTRY]
    if unknown:
        raise ValueError(f"unknown detector(s) {unknown}; known: {sorted(_REGISTRY)}")
    created = [_REGISTRY[n](config) for n in config.detectors]
    if config.rules_path is None:
        return created
    # A site's allow words bind every detector; the rules and the header
    # dictionary settle them themselves (rules.site).
    from deid_pipeline.tagger.rules.site import AllowListed, load_site_rules

    site = load_site_rules(config.rules_path)
    return [d if d.name in ("rules", "dictionary") else AllowListed(d, site)
            for d in created]


def registered() -> list[str]:
    """Names of all registered detectors."""
    return sorted(set(_REGISTRY) | set(_BUILTIN_MODULES))


def check_names(names: Iterable[str]) -> tuple[str, ...]:
    """Validate detector names early (at option parsing), before any worker starts."""
    names = tuple(names)
    known = registered()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown detector(s) {unknown}; known: {known}")
    return names
