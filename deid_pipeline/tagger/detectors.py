"""The detector registry: detectors built by name from a picklable config.

A detector only proposes spans; it never rewrites text and never resolves
conflicts with other detectors. That happens once, in :mod:`deid_pipeline.tagger.merge`.
Detectors are built by name from this registry so that a pipeline option, not
code, chooses which run, and so a Beam worker can rebuild them from a small
picklable :class:`TaggerConfig`. The interface and the config live below it
(:mod:`deid_pipeline.tagger.detection`, re-exported here); the built-in
detectors' modules are imported only when one is built, so a run without the
CRF never loads its model code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from deid_pipeline.tagger.detection import (
    DEFAULT_BIAS,
    DEFAULT_DETECTORS,
    Detection,
    Detector,
    TaggerConfig,
)

__all__ = [
    "DEFAULT_BIAS",
    "DEFAULT_DETECTORS",
    "LANGUAGE_DETECTORS",
    "Detection",
    "Detector",
    "TaggerConfig",
    "check_names",
    "create",
    "effective_detectors",
    "register",
    "registered",
]

# The default detectors of a model of another language: the gazetteer is
# English (US places) and would fire on words of the other language; the
# header dictionary is not; ``rules`` with a Spanish model are the Spanish
# rules (rules.es: DNI/NIE, phones, postcodes, e-mails, dates in words).
LANGUAGE_DETECTORS: dict[str, tuple[str, ...]] = {"es": ("rules", "dictionary", "crf")}

Factory = Callable[[TaggerConfig], Detector]


# The built-in detectors; each imports its module on first use.


def _rules(config: TaggerConfig) -> Detector:
    # The shipped model is English; a site model's file says its language.
    if config.model_path is not None:
        from deid_pipeline.tagger.crf_model import model_language

        if model_language(config.model_path) == "es":
            from deid_pipeline.tagger.rules.es import from_config as spanish

            return spanish(config)
    from deid_pipeline.tagger.rules.detector import from_config

    return from_config(config)


def _dictionary(config: TaggerConfig) -> Detector:
    from deid_pipeline.tagger.dictionary import from_config

    return from_config(config)


def _crf(config: TaggerConfig) -> Detector:
    from deid_pipeline.tagger.crf import from_config

    return from_config(config)


def _crf_neural(config: TaggerConfig) -> Detector:
    from deid_pipeline.tagger.crf_neural import from_config

    return from_config(config)


def _gazetteer(config: TaggerConfig) -> Detector:
    from deid_pipeline.tagger.gazetteers import from_config

    return from_config(config)


_REGISTRY: dict[str, Factory] = {
    "rules": _rules,
    "dictionary": _dictionary,
    "crf": _crf,
    # Opt-in: the CRF with the neural second view mixed in (docs/tagger.md).
    "crf-neural": _crf_neural,
    "gazetteer": _gazetteer,
}


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a detector factory (taking a TaggerConfig) under ``name``."""

    def wrap(factory: Factory) -> Factory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"detector {name!r} registered twice")
        _REGISTRY[name] = factory
        return factory

    return wrap


def effective_detectors(config: TaggerConfig) -> tuple[str, ...]:
    """The detectors ``config`` runs: the default set is the model's language's.

    The default set with a model of another language is that language's
    (:data:`LANGUAGE_DETECTORS`): the model file says its language.
    """
    if config.detectors == DEFAULT_DETECTORS:
        from deid_pipeline.tagger.crf_model import model_language

        return LANGUAGE_DETECTORS.get(model_language(config.model_path),
                                      config.detectors)
    return config.detectors


def create(config: TaggerConfig) -> list[Detector]:
    """Instantiate the detectors ``config`` names (:func:`effective_detectors`)."""
    config = replace(config, detectors=effective_detectors(config))
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
    return sorted(_REGISTRY)


def check_names(names: Iterable[str]) -> tuple[str, ...]:
    """Validate detector names early (at option parsing), before any worker starts."""
    names = tuple(names)
    known = registered()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown detector(s) {unknown}; known: {known}")
    return names
