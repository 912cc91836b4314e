"""Identifier recognizers: SSNs by shape, other IDs by the keyword before them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from deid_pipeline.labels import check_label
from deid_pipeline.tagger.rules.base import (
    _BLANKS,
    _G_NUM,
    Hit,
    Pattern,
    PatternRecognizer,
    _normal_words,
    _trie,
)

# ---------------------------------------------------------------------- SSN


class SsnRecognizer(PatternRecognizer):
    """US Social Security numbers: dashed anywhere, other layouts by an SSN word.

    Numbers the SSA never issues are rejected: area 000, 666 or 9xx, group
    00, serial 0000.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        """Build the SSN patterns with the context words of ``config``."""
        left = r"(?<![\w.-])"
        weak = {"confidence": 0.9, "needs_context": True, "guard": _G_NUM}
        patterns = [
            Pattern("dashed", rf"{left}(?P<a>\d{{3}})-(?P<g>\d{{2}})-(?P<s>\d{{4}})"
                              r"(?![\w-]|\.\d)", check_negative=False, guard=_G_NUM),
            Pattern("spaced", rf"{left}(?P<a>\d{{3}})[ .](?P<g>\d{{2}})[ .]"
                              r"(?P<s>\d{4})(?!\w|\.\d)", **weak),
            Pattern("digits", rf"{left}(?P<a>\d{{3}})(?P<g>\d{{2}})(?P<s>\d{{4}})"
                              r"(?!\w|\.\d)", **weak),
        ]
        super().__init__("ssn", "SSN", patterns,
                         context=config.get("context", ("ssn",)),
                         context_before=30, context_after=10,
                         prefilter=r"\d{3}[ .-]?\d{2}[ .-]?\d{4}")

    def validate(self, hit: Hit, text: str) -> bool:
        """Apply the SSA structural rules to area, group and serial."""
        area, group, serial = hit.group("a"), hit.group("g"), hit.group("s")
        return (area is not None and area not in ("000", "666")
                and not area.startswith("9") and group != "00" and serial != "0000")


# ---------------------------------------------------------------------- IDs

_ID_VALUE = r"(?P<phi>(?:[a-z]{1,3}-?)?\d(?:-?\d){3,29}[a-z]{0,2})(?![\w-])"
_ID_MARKERS = (r"(?:[ \t]*(?:#|:|no\.?(?![a-z])|num(?:ber)?\.?(?![a-z])|"
               r"nbr(?![a-z])|id(?![a-z])|is(?![a-z])))*")


class IdRecognizer(PatternRecognizer):
    """Identifiers a keyword introduces: ``MRN: 1234567``, ``Acct 12345``.

    The keyword picks the label (MEDICALRECORD, ACCOUNT, HEALTHPLAN, LICENSE,
    IDNUM) and is not part of the span. An ID needs four digits or more, so
    ``account 2`` or ``unit no 12`` is never tagged.
    """

    def __init__(self, keywords: Mapping[str, Iterable[str]]) -> None:
        """Build one keyword trie over every label's keywords."""
        self._label_of: dict[str, str] = {}
        for label, words in keywords.items():
            check_label(label)
            for word in _normal_words(words):
                self._label_of[self._key(word)] = label
        if not self._label_of:
            raise ValueError("the id recognizer needs keywords")
        every = [w for words in keywords.values() for w in words]
        initials = "".join(sorted({w[0] for w in _normal_words(every)}))
        pattern = Pattern(
            "keyword", rf"(?<![a-z0-9])(?P<kw>{_trie(every)})(?![a-z]){_ID_MARKERS}"
                       rf"[ \t]*[:#=.-]?[ \t]*{_ID_VALUE}",
            guard=rf"(?<![a-z0-9])(?=[{re.escape(initials)}])")
        super().__init__("id", "IDNUM", [pattern])

    @staticmethod
    def _key(word: str) -> str:
        return _BLANKS.sub("", word.lower())

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label a keyword maps to."""
        return tuple(sorted(set(self._label_of.values())))

    def label_for(self, hit: Hit, text: str) -> str:
        """Use the label its keyword maps to."""
        return self._label_of.get(self._key(hit.group("kw") or ""), self.label)
