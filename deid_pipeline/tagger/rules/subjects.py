"""Who a line is about: a first name alone, first in its sentence, then a verb.

A clinician's question or a short note names its patient by a first name and
nothing else (``Aurelio lives alone in Pawtucket``, ``Fernando's CD4 is
45``): no title, no kin word, no age after it, and first in a sentence its
capital says nothing, so neither the model nor the other name shapes take
it. What does is what follows: a verb a person is the subject of
(rules.json ``names.subject_verbs``) or a possessive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deid_pipeline.tagger.name_extents import first_name_words
from deid_pipeline.tagger.rules.base import Hit, Pattern, PatternRecognizer, _trie

# First in a line, or one space after a sentence's end; a capitalised word;
# then a possessive or one of the verbs.
_START = r"(?:(?<![^\n])[ \t]*|(?<=[.!?][ ]))"
# Flags that make a capitalised word first in a sentence something else: a
# diagnosis or drug (``Heparin was``), a country or a state (``Georgia has``).
_NOT_SUBJECT_FLAGS = frozenset({"dx", "drug", "country", "state"})
# A first name this common in English (band 4: Ruth, Grace, Morgan) is too
# often a word first in a sentence.
_MAX_BAND = 3


class SubjectNameRecognizer(PatternRecognizer):
    """A first name, or a first name and a surname, as a sentence's subject.

    ``Lucienne needs her Depo shot``, ``Zephyrine Aucoin keeps pulling``;
    not ``Heparin was held``, ``Georgia has``, ``Patient is``, ``Grace is``
    (band 4), ``Social Work says`` nor a kin word or a title.
    """

    def __init__(self, names: Mapping[str, Any]) -> None:
        verbs = _trie(names.get("subject_verbs", ("is", "has")))
        self._refused = first_name_words(names)[0]
        super().__init__("subjects", "PATIENT", [
            Pattern("subject", rf"{_START}(?P<phi>(?-i:[A-Z][a-z]{{3,}}"
                               r"(?:[ ][A-Z][a-z]{2,}(?:-[A-Z][a-z]{2,})?)?))"
                               rf"(?='s[ \t]|[ \t]+(?:{verbs})(?![\w']))",
                    confidence=0.7),
            # "pt Fontaine in bed 12": a capitalised surname after a lower-case
            # pt; "pt WINIFRED prefers": a name in capitals before lower case.
            Pattern("pt_name", r"(?<![\w/])(?-i:pt)\.?[ \t]+(?P<phi>(?-i:"
                               r"[A-Z][a-z]{2,}(?:-[A-Z][a-z]{2,})?"
                               r"|[A-Z]{4,}(?=[ \t]+[a-z])))(?![\w'])",
                    confidence=0.7),
            # "my patient Zainab, 34 weeks", "my pt esperanza, 81": who a
            # clinician's question is about, by a first name in any case.
            Pattern("my_patient", r"(?<![\w/])(?:my|our)[ \t]+(?:pt|patient)\.?[ \t]+"
                                  r"(?P<phi>[a-z]{3,}(?:-[a-z]{2,})?)(?![\w'])",
                    confidence=0.7)])

    def validate(self, hit: Hit, text: str) -> bool:
        """The first word a first name, the second a name; one listed as one.

        A word is one when it is listed as such no more common in English
        than band 3, or no list knows it at all; never a clinical word, a
        drug, a diagnosis, a state, a country or a refused word.
        """
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        written = text[hit.start:hit.end]
        words = written.lower().split()
        if hit.pattern.name == "pt_name":
            flags = self._name_flags(words[0], lex)
            names = {"ln1", "ln2", "ln3"}
            if written.isupper():
                names |= {"fn1", "fn2"}
            return flags is not None and bool(names & flags)
        if hit.pattern.name == "my_patient":
            flags = self._name_flags(words[0], lex)
            return flags is not None and (
                any(f.startswith("fn") for f in flags) if flags
                else written[:1].isupper() and len(words[0]) >= 4)
        # A rare first name (fn3) only with a surname after it: alone it is
        # too often a word (``Aiyana Redcloud seen``).
        kinds = ((("fn1", "fn2", "fn3"), ("fn1", "fn2", "ln1", "ln2", "ln3"))
                 if len(words) == 2 else (("fn1", "fn2"),))
        listed = False
        for word, kind in zip(words, kinds):
            flags = self._name_flags(word, lex)
            if flags is None:
                return False
            if any(f in kind for f in flags):
                listed = True
            elif flags or len(words) == 1:
                return False  # a word English knows, and no name
        return listed

    def _name_flags(self, word: str, lex: Any) -> frozenset[str] | None:
        """The lexicon flags of a word that may be a name here; None if it may not.

        Not one more common in English than band 3, a refused word, a clinical
        word, a drug, a diagnosis, a state or a country. After a lower-case
        ``pt`` a capitalised word is a name or a verb or finding written so
        (``pt Denies``, ``pt Alert``): only a listed surname passes there; after
        ``my patient`` a listed first name or a capitalised unknown word.
        """
        from deid_pipeline.tagger import lexicons

        key = word.split("-")[0]
        flags = frozenset(lex.flags(key))
        if (key in self._refused or lex.english_band(key) > _MAX_BAND
                or _NOT_SUBJECT_FLAGS & flags or lexicons.is_clinical_word(flags)):
            return None
        return flags
