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
    _window_end,
    _window_start,
)

# ---------------------------------------------------------------------- SSN


_SSN_WORD = (r"(?:ssn|ss[ \t]*#|social(?:[ \t]+security)?(?:[ \t]+(?:number|no\.?|#))?)"
             r"(?![a-z])")
_LAST_FOUR = (r"[ \t]*(?:(?:ends?|ending)[ \t]+(?:in|with)[ \t]*:?"
              r"|last[ \t]+(?:4|four)(?:[ \t]+digits)?[ \t]*(?:is|are|:|#)?)")
_LAST_FOUR_OF = (r"last[ \t]+(?:4|four)(?:[ \t]+digits)?[ \t]+of[ \t]+"
                 r"(?:(?:his|her|their|the|pt'?s|patient'?s)[ \t]+)?")


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
            # Its last four, said to be them: "SSN ends in 4471", "last 4 of
            # SSN 4471" (still an identifier's part, and a key to the rest).
            Pattern("last_four", rf"(?<![a-z])(?:{_SSN_WORD}{_LAST_FOUR}"
                                 rf"|{_LAST_FOUR_OF}{_SSN_WORD}(?:[ \t]*(?:is|:|#))?)"
                                 r"[ \t]*(?P<phi>\d{4})(?![\w-]|\.\d)",
                    check_negative=False),
        ]
        super().__init__("ssn", "SSN", patterns,
                         context=config.get("context", ("ssn",)),
                         context_before=30, context_after=10,
                         prefilter=r"\d{3}[ .-]?\d{2}[ .-]?\d{4}"
                                   r"|(?i:ssn|ss[ \t]*#|social)[^\n]{0,40}\d{4}")

    def validate(self, hit: Hit, text: str) -> bool:
        """Apply the SSA structural rules to area, group and serial."""
        if hit.pattern.name == "last_four":
            return hit.group("phi") != "0000"
        area, group, serial = hit.group("a"), hit.group("g"), hit.group("s")
        return (area is not None and area not in ("000", "666")
                and not area.startswith("9") and group != "00" and serial != "0000")


# ---------------------------------------------------------------------- IDs

# A check letter may follow a dash: "MED REC NO.: 320215-M". Or letters and
# digits interleaved (a digit, later a letter, later a digit), six or more,
# as Medicare's beneficiary ids are ("Medicare # 1EG4-TE5-MK72"); not "ID:
# TMAX-99" (a section and a temperature), not "id: 12mg" nor "2x3cm".
_ID_VALUE = (r"(?P<phi>(?:[a-z]{1,3}-?)?\d(?:-?\d){3,29}(?:[a-z]{0,2}|-[a-z]{1,3})"
             r"|(?=[a-z0-9-]{6,40}(?![\w-]))(?=[a-z0-9-]*?\d[0-9-]*[a-z][a-z-]*\d)"
             r"(?![0-9]+x[0-9])"
             r"[a-z0-9]+(?:-[a-z0-9]+){0,5})"
             r"(?![\w-])")
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
        self._label_of = _labels_of_words(keywords, "id")
        every = [w for words in keywords.values() for w in words]
        initials = "".join(sorted({w[0] for w in _normal_words(every)}))
        pattern = Pattern(
            "keyword", rf"(?<![a-z0-9])(?P<kw>{_trie(every)})(?![a-z]){_ID_MARKERS}"
                       rf"[ \t]*[:#=.-]?[ \t]*{_ID_VALUE}",
            guard=rf"(?<![a-z0-9])(?=[{re.escape(initials)}])")
        super().__init__("id", "IDNUM", [pattern])

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label a keyword maps to."""
        return tuple(sorted(set(self._label_of.values())))

    def label_for(self, hit: Hit, text: str) -> str:
        """Use the label its keyword maps to."""
        return self._label_of.get(_key(hit.group("kw") or ""), self.label)


def _key(word: str) -> str:
    return _BLANKS.sub("", word.lower())


def _labels_of_words(words_by_label: Mapping[str, Iterable[str]],
                     name: str) -> dict[str, str]:
    """Keyword (blanks removed, lower case) -> the label it implies."""
    label_of: dict[str, str] = {}
    for label, words in words_by_label.items():
        check_label(label)
        for word in _normal_words(words):
            label_of[_key(word)] = label
    if not label_of:
        raise ValueError(f"the {name} recognizer needs keywords")
    return label_of


# Letters and digits joined: "AB-123456", "HMO-234567", "12345-XY", "XYZ12345".
# Digits then letters need the dash ("1000cc" is a volume); letters then digits
# without one need five digits after two letters, six after one ("q2000",
# "x10000" are not IDs; "H1234567" is).
_MIXED_ID = (r"(?<![\w-])(?P<phi>[a-z]{1,4}-\d{4,12}|\d{4,12}-[a-z]{1,3}"
             r"|[a-z]{2,4}\d{5,12}|[a-z]\d{6,12})(?![\w-])")


# Digits enough that a unit-like letter after them is a check letter.
_MIN_ID_DIGITS = 6


# A letter, maybe a hyphen, then four digits; or four digits, a hyphen and a
# letter: ``[a-z]-?\d{4}|\d{4}-[a-z]``, written to start at a digit so that
# re skips to digits (a text has one exactly when it has the other:
# tests/test_rules_scan.py).
_MIXED_HINT = r"\d(?:(?:(?<=[a-z]\d)|(?<=[a-z]-\d))\d{3}|\d{3}-[a-z])"


class IdNearWordRecognizer(PatternRecognizer):
    """Identifiers of letters and digits with an ID word near, before or after.

    ``member AB-123456``, ``HMO-234567 (member number)``, ``policy 12345-XY``,
    ``plan id on card: XYZ12345``: the words that name an ID stand apart from
    it, or after it, where :class:`IdRecognizer` needs them right before. The
    mix of letters and digits is what makes the shape rare in clinical text
    (a dose, a volume or a vent setting is digits and a unit); the nearest ID
    word on the line picks the label.
    """

    def __init__(self, words_by_label: Mapping[str, Iterable[str]],
                 units: Iterable[str] = ()) -> None:
        """Build the shape with ``words_by_label`` (label -> ID words) as context.

        ``units`` may not be the letters after the digits (``1250-mg``).

        A ``comment`` key, as rules.json sections have, is not a label.
        """
        words_by_label = {k: v for k, v in words_by_label.items() if k != "comment"}
        self._label_of = _labels_of_words(words_by_label, "id_near")
        self._units = frozenset(_normal_words(units))
        every = [w for words in words_by_label.values() for w in words]
        super().__init__("id_near", "IDNUM", [Pattern(
            "mixed", _MIXED_ID, confidence=0.9, needs_context=True,
            check_negative=False, guard=r"(?<![\w-])(?=\w)")],
            context=every, context_before=40, context_after=25,
            prefilter=_MIXED_HINT)

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label an ID word maps to."""
        return tuple(sorted(set(self._label_of.values())))

    def validate(self, hit: Hit, text: str) -> bool:
        """Not digits and a unit (``1250-mg``, ``2000-cc``).

        A number of :data:`_MIN_ID_DIGITS` digits or more is no dose or volume
        whatever letter follows it: ``113374-L`` and ``93142344-H`` are an
        account and a member number (check letters), not litres and hours.
        """
        head, _, tail = text[hit.start:hit.end].rpartition("-")
        return tail.lower() not in self._units or sum(c.isdigit() for c in head) \
            >= _MIN_ID_DIGITS

    def label_for(self, hit: Hit, text: str) -> str:
        """The label of the nearest ID word: the last before, else the first after."""
        assert self._context is not None
        start, end = hit.whole
        before = list(self._context.finditer(
            text, _window_start(text, start, self.context_before), start))
        word = before[-1] if before else self._context.search(
            text, end, _window_end(text, end, self.context_after))
        return self._label_of.get(_key(word.group()) if word else "", self.label)
