"""Place recognizers: institutions by a facility noun or a saint, universities."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.rules.base import Hit, Pattern, PatternRecognizer, _trie
from deid_pipeline.tagger.rules.names import _name_key


class InstitutionRecognizer(PatternRecognizer):
    """Institutions named by a shape the CRF sees too rarely to learn.

    ``the Zagaria campus``, ``on mackerer campus`` (a name before
    ``campus``, ``pavilion`` or ``building``) and ``St. Mary's`` (a saint's
    name after ``St``). The name must not be an English word (``main
    campus``, ``leave building``), and the saint must be a first name:
    ``ST elevation`` and ``ST changes`` are ECG findings.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        nouns = _trie(config.get("institution_nouns", ("campus",)))
        super().__init__("institutions", "HOSPITAL", [
            Pattern("campus", rf"(?<![\w'])(?P<phi>[A-Za-z][A-Za-z'-]{{2,}})"
                              rf"(?=[ \t]+(?:{nouns})(?![\w]))", confidence=0.8),
            Pattern("saint", r"(?<![\w'])(?P<phi>(?:st|saint)\.?[ \t]+"
                             r"(?P<name>[A-Za-z]{3,})(?:'s)?)(?![\w'])",
                    confidence=0.8),
        ], prefilter=rf"(?:{nouns})|(?<![a-z])(?:st\b|saint)")

    def validate(self, hit: Hit, text: str) -> bool:
        """A campus name unknown to English; a saint that is a first name."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        if hit.pattern.name == "saint":
            name = (hit.group("name") or "").lower()
            return lex.english_band(name) <= 4 and "fn1" in lex.flags(name)
        word = _name_key(text[hit.start:hit.end])
        return lex.english_band(word) <= 2


_UNIVERSITY = re.compile(
    r"(?<![\w'])(?:univ(?:ersity)?\.?|u\.?)(?:[ \t]*(?P<of>of)[ \t]+|[ \t]+)"
    r"(?P<place>[a-z]+)(?:[ \t]+(?P<second>[a-z]+))?(?![\w'])", re.IGNORECASE)


class UniversityRecognizer(PatternRecognizer):
    """A university named after a state: ``U of MD``, ``UOf Maryland``, ``U of Ohio``.

    The academic medical centres patients come from; staff write them without
    a facility noun (``per U Maryland scale``). The place must be a US state
    by the lexicon, and a state code needs the ``of``: ``u of pt``, ``U of
    urine`` and ``tell u or me`` never match.
    """

    def __init__(self) -> None:
        super().__init__("universities", "HOSPITAL", [
            Pattern("university", _UNIVERSITY.pattern, confidence=0.9)])

    def analyze(self, text: str) -> list[PhiSpan]:
        """A HOSPITAL span for each university whose place is a state."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        spans = []
        for match in _UNIVERSITY.finditer(text):
            first = match.group("place").lower()
            second = (match.group("second") or "").lower()
            if second and any(len(parts) == 2 and "state" in flags
                              for parts, flags in lex.phrases.get((first, second), ())):
                end = match.end("second")
            elif {"state", "stab"} & set(lex.flags(first)) and (
                    match.group("of") or "state" in lex.flags(first)):
                end = match.end("place")
            else:
                continue
            spans.append(PhiSpan(match.start(), end, self.label, self.source,
                                 self.patterns[0].confidence))
        return spans
