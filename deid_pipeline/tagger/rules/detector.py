"""The rule detector: every recognizer built from rules.json (or a site's copy)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.runtime import regex_programs
from deid_pipeline.tagger.detection import Detector, TaggerConfig
from deid_pipeline.tagger.rules.ages import AgeRecognizer
from deid_pipeline.tagger.rules.base import PatternRecognizer
from deid_pipeline.tagger.rules.contact import (
    EmailRecognizer,
    IpRecognizer,
    PhoneRecognizer,
    UrlRecognizer,
)
from deid_pipeline.tagger.rules.credentials import CredentialNameRecognizer
from deid_pipeline.tagger.rules.dates import DateRecognizer
from deid_pipeline.tagger.rules.fields import PatientFieldRecognizer
from deid_pipeline.tagger.rules.gate import GATES, GateGroup, group_for
from deid_pipeline.tagger.rules.ids import (
    IdNearWordRecognizer,
    IdRecognizer,
    SsnRecognizer,
)
from deid_pipeline.tagger.rules.names import NameRecognizer
from deid_pipeline.tagger.rules.places import (
    AddressTailRecognizer,
    EmployerRecognizer,
    FacilityRecognizer,
    InstitutionRecognizer,
    ResidenceRecognizer,
    TransferRecognizer,
    UniversityRecognizer,
)
from deid_pipeline.tagger.rules.scan import PLANS
from deid_pipeline.tagger.rules.site import (
    SiteRules,
    drop_allowed,
    load_site_rules,
)
from deid_pipeline.tagger.rules.streets import StreetRecognizer
from deid_pipeline.tagger.rules.subjects import SubjectNameRecognizer

# Bumped when a recognizer's code changes what it finds; rules.json has its own
# version and the detector reports both.
CODE_VERSION = "21"


@lru_cache(maxsize=1)
def _packaged_rules_text() -> str:
    path = resources.files("deid_pipeline").joinpath("data/rules.json")
    return path.read_text(encoding="utf-8")


def default_config() -> dict[str, Any]:
    """Return the packaged ``data/rules.json``, a fresh copy a caller may edit."""
    return json.loads(_packaged_rules_text())


def build_recognizers(config: Mapping[str, Any]) -> tuple[PatternRecognizer, ...]:
    """Build every built-in recognizer, plus ``custom`` ones, from ``config``."""
    units = tuple(config.get("units", ()))
    recognizers: list[PatternRecognizer] = [
        PhoneRecognizer(config.get("phone", {}), units),
        EmailRecognizer(),
        UrlRecognizer(config.get("url", {})),
        IpRecognizer(),
        SsnRecognizer(config.get("ssn", {})),
        DateRecognizer(config.get("date", {}), units),
        AgeRecognizer(units),
        IdRecognizer(config.get("ids", {})),
        IdNearWordRecognizer(config.get("id_near", {"IDNUM": ("id",)}), units),
        NameRecognizer(config.get("names", {})),
        PatientFieldRecognizer(),
        SubjectNameRecognizer(config.get("names", {})),
        CredentialNameRecognizer(config.get("names", {})),
        InstitutionRecognizer(config.get("places", {})),
        FacilityRecognizer(config.get("places", {})),
        TransferRecognizer(config.get("places", {})),
        UniversityRecognizer(),
        EmployerRecognizer(),
        ResidenceRecognizer(config.get("places", {})),
        AddressTailRecognizer(config.get("places", {})),
        StreetRecognizer(config.get("places", {}), units),
    ]
    recognizers.extend(PatternRecognizer.from_dict(c) for c in config.get("custom", ()))
    return tuple(recognizers)


@lru_cache(maxsize=1)
def _default_rules() -> tuple[tuple[PatternRecognizer, ...], str]:
    config = default_config()
    return build_recognizers(config), str(config.get("version", "0"))


def is_date_lookalike(text: str, start: int, end: int,
                      sure: bool = False) -> bool:
    """Whether the packaged date rules call a short date a clinical look-alike.

    See :meth:`DateRecognizer.is_lookalike`; it holds the CRF's dates to the
    same standard as the rules'.
    """
    recognizers, _ = _default_rules()
    dates = next(r for r in recognizers if isinstance(r, DateRecognizer))
    return dates.is_lookalike(text, start, end, sure)


def _keep_made() -> None:
    """Keep the expressions, scan plans and gates this process made, for the next."""
    regex_programs.save()
    PLANS.save()
    GATES.save()


class RuleDetector(Detector):
    """Runs every rule recognizer over a document; spans sorted, overlaps kept.

    Overlaps (an SSN-shaped MRN, a date inside a URL) are left to the central
    merge, which widens rather than drops. Recognizers never change after
    construction, so one detector serves every thread of a worker, and the
    packaged ones are compiled once per process however many detectors exist.
    """

    name = "rules"

    def __init__(self, recognizers: Sequence[PatternRecognizer] | None = None,
                 data_version: str = "custom", site: SiteRules | None = None) -> None:
        """Use ``recognizers``, or the packaged ones from rules.json.

        A ``site`` adds its deny list and patterns, drops the other
        recognizers' spans that are its allow words, and puts the sha256 of
        its file in :attr:`version`.
        """
        if recognizers is None:
            recognizers, data_version = _default_rules()
        self.recognizers = tuple(recognizers)
        self.site = site
        self.site_recognizers = site.recognizers() if site is not None else ()
        self.labels = tuple(sorted({label for r in (*self.recognizers,
                                                    *self.site_recognizers)
                                    for label in r.labels}))
        self.version = f"{CODE_VERSION}+data{data_version}" + (
            f"+site-sha256:{site.sha256}" if site is not None else "")
        self._gates = self._gate_group()
        _keep_made()

    def _gate_group(self) -> GateGroup | None:
        """One Hyperscan scan of a document for every recognizer's gates."""
        return group_for(gate for recognizer in (
            *self.recognizers, *self.site_recognizers)
            for gate in recognizer.gates())

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        # Grouped again where unpickled: some scans are module-level there.
        del state["_gates"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._gates = self._gate_group()

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> RuleDetector:
        """Build a detector from a rules.json-shaped mapping (a site's own words)."""
        return cls(build_recognizers(config), str(config.get("version", "0")))

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        """Return every recognizer's spans, sorted by offsets."""
        text = doc.text
        spans: list[PhiSpan] = []
        gates = self._gates
        if gates is not None:
            gates.expect(text)
        try:
            for recognizer in self.recognizers:
                spans.extend(recognizer.analyze(text))
            if self.site is not None:
                spans = list(drop_allowed(text, spans, self.site))
                for recognizer in self.site_recognizers:
                    spans.extend(recognizer.analyze(text))
        finally:
            if gates is not None:
                gates.expect(None)
        spans.sort()
        _keep_made()  # a new mix of patterns this text compiled
        return tuple(spans)


def from_config(config: TaggerConfig) -> Detector:
    """The detector ``config`` asks for (the registry's ``rules``)."""
    if config.rules_path is None:
        return RuleDetector()
    return RuleDetector(site=load_site_rules(config.rules_path))
