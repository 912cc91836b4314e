"""Staff signing with a credential (``florencia cooke np``, ``FORMAN-LYONS, RRT``).

Apart from :mod:`deid_pipeline.tagger.rules.names` because it reads backwards
from the credential rather than forwards from a cue, with checks of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger.rules.base import Pattern, PatternRecognizer, _trie
from deid_pipeline.tagger.rules.names import (
    _NAME,
    _NOT_SHORTHAND,
    _name_key,
    _reads_as_first_name,
    _reads_as_surname,
)

_ZIP_AFTER = re.compile(r"[ \t]*\d{5}(?:-\d{4})?(?!\d)")
_NAME_BEFORE_CREDENTIAL = re.compile(
    rf"(?:(?<![\w'])(?P<first>[A-Za-z]{{2,}})[ \t]+(?:[A-Za-z]\.?[ \t]+)?)?"
    rf"(?<![\w'])(?P<last>{_NAME}(?:-{_NAME})?)[ \t]*,?[ \t]*$")


class CredentialNameRecognizer(PatternRecognizer):
    """Staff signing with a credential.

    ``florencia cooke np``, ``DAN A. FORMAN-LYONS, RRT``, ``Andrwe O'connell
    MD``. The credential is found first (a cheap search), then the one or two words
    before it on its line are read: the last must read as a surname and not
    as a place (``Annapolis, MD`` is a state), the first is kept only if it
    reads as a first name. ``by MD``, ``4L NP`` or ``renal MD`` fail the
    lexicon checks.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        credentials = _trie(config.get("credentials", ("md", "rn", "np")))
        super().__init__("credentials", "DOCTOR", [
            Pattern("credential", rf"{_NOT_SHORTHAND}(?:{credentials})(?![\w])",
                    confidence=0.8)])

    def analyze(self, text: str) -> list[PhiSpan]:
        """A DOCTOR span for the name before each credential that has one."""
        from deid_pipeline.tagger import lexicons

        lex = lexicons.load()
        spans = []
        for match in self._scanner.finditer(text):
            # The scan's whole match is its one pattern's wrapper group.
            begin, finish = match.span("p0")
            # "Lutherville, MD 21093": a state code before a ZIP, and the name
            # before it a town; still PHI, labelled as what it is.
            label = "CITY" if _ZIP_AFTER.match(text, finish) else self.label
            lo = max(text.rfind("\n", 0, begin) + 1, begin - 64)
            name = _NAME_BEFORE_CREDENTIAL.search(text, lo, begin)
            if name is None or _hyphenated_place(name.group("last"), lex) or not (
                    _reads_as_surname(name.group("last"), lex)
                    or _double_barrelled(name.group("last"), lex)
                    or _common_surname_after_first(name.group("first"),
                                                   name.group("last"), lex)):
                continue
            start = name.start("last")
            first = name.group("first")
            if first is not None and _reads_as_first_name(first, lex):
                start = name.start("first")
            spans.append(PhiSpan(start, name.end("last"), label, self.source,
                                 self.patterns[0].confidence))
        return spans

    @property
    def labels(self) -> tuple[str, ...]:
        """Staff names, and towns before a state code and a ZIP."""
        return ("DOCTOR", "CITY")


def _common_surname_after_first(first: str | None, last: str, lex: Any) -> bool:
    """``nicole young, R.N.``: a listed surname that is a word, after a first name.

    Alone before a credential ``young`` or ``Brown`` is too often a word;
    a common listed first name before it (not an unknown word, not ``pt``)
    makes the pair a signature.
    """
    if first is None or len(first) < 3 or not (
            _reads_as_first_name(first, lex)
            and {"fn1", "fn2"} & set(lex.flags(first.lower()))):
        return False  # not "pt young, RN", "pink" or an unknown word
    key = _name_key(last)
    return lex.english_band(key) <= 5 and bool(
        {"ln1", "ln2"} & set(lex.flags(key)))


def _double_barrelled(word: str, lex: Any) -> bool:
    """``MURPHY-WHITE``, ``Black-King``: two listed surnames joined by a hyphen.

    Each half alone may read as a word or a town (``white``, ``murphy``), so
    :func:`_reads_as_surname` refuses the first; joined, and before a
    credential, they are one person's name.
    """
    parts = word.lower().split("-")
    return len(parts) == 2 and all(
        len(p) >= 2 and p.isalpha() and any(f.startswith("ln") for f in lex.flags(p))
        for p in parts)


def _hyphenated_place(word: str, lex: Any) -> bool:
    """A hyphenated town the lexicon lists (``Wilkes-Barre, MD``: a state code)."""
    from deid_pipeline.tagger.lexicons import phrase_matches

    parts = word.lower().split("-")
    return len(parts) == 2 and any(phrase_matches([parts[0], "-", parts[1]], lex))
