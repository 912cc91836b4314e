"""The parts of a name written beside a part a detector found without them.

A detector that finds a surname from its shape or its cue (``Castellanos
34F``, ``Whitlock's mom``, ``Sean O'Brien had ...``) leaves the first name
before it in clear beside a replaced surname; one that stops at a surname's
particle (``dr. van der berg``) leaves the rest: a name half kept. Whether
the word before reads as that first name is decided here, once, for the
CRF's tokens (:mod:`~deid_pipeline.tagger.crf_tokens`) and the name rules'
spans (:mod:`~deid_pipeline.tagger.rules.names`); each passes the words its
own configuration refuses (titles, kin words) and rules.json's
``common_word_first_names``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from deid_pipeline.model import PhiSpan
from deid_pipeline.tagger import lexicons

# A first name this common in English (band 5: Will, Mark, Hope) says too
# little alone to widen a name to it, unless it is one of the common-word
# first names and written capitalised.
FIRST_NAME_MAX_BAND = 4
_PERSON_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE"})
# A capitalised word, one space before where a name starts.
_WORD_BEFORE = re.compile(r"(?<![\w'.-])(?P<first>[A-Z][a-z]{2,})[ ]$")
# A capitalised word one space after a first name: its surname?
_SURNAME_AFTER = re.compile(r"[ ](?P<last>[A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?)(?![\w'-])")
# The same in a line of capitals (``HCP IS DOLORES FENWICK``).
_CAPITALS_SURNAME_AFTER = re.compile(r"[ ](?P<last>[A-Z]{3,}(?:-[A-Z]+)?)(?![\w'-])")
# A word rare in English is a surname after a first name, but for these.
_NOT_SURNAME_FLAGS = frozenset({"drug", "dx", "city", "town", "state", "country",
                                "fn1", "fn2"})
# Particles a surname starts with (van der Berg, de la Cruz, von, di, bin).
_PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "di", "da",
                        "dos", "du", "la", "le", "ter", "ten", "bin", "ibn", "al",
                        "el"})
# Further particles, then the surname's word, after where a name stopped.
_REST_OF_SURNAME = re.compile(
    r"(?:[ ](?i:van|von|der|den|de|del|della|di|da|dos|du|la|le|ter|ten))*"
    r"[ ][A-Za-z]{2,}(?:-[A-Za-z]{2,})?(?![\w'-])")


def first_name_words(names: Mapping[str, Any]
                     ) -> tuple[frozenset[str], frozenset[str]]:
    """From rules.json's ``names``: the words refused, the common-word first names.

    Refused: titles, staff and doctor titles, kin words and ``not_names``.
    """
    refused = frozenset(w.lower() for key in ("titles", "staff_titles", "doctor_titles",
                                              "relations", "not_names")
                        for w in names.get(key, ()))
    common = names.get("common_word_first_names", ())
    return refused, frozenset(w.lower() for w in common)


def first_name_before_name(word: str, lex: lexicons.Lexicons,
                           refused: Collection[str],
                           common_word_names: Collection[str]) -> bool:
    """Whether ``word``, one space before a name in its case, is its first name.

    A listed first name no more common in English than band 4, never a
    ``refused`` word (a title, a kin word) or a clinical word; or, written
    capitalised, one of the ``common_word_names`` (first names English also
    uses as common words: ``Hope Castellanos``, ``Will Price``), which in
    lower case or in capitals say too little (``pt will need``, ``21 CM
    MARK``).
    """
    key = word.lower()
    if key in refused:
        return False  # "Drs Ferullo and Saeed": a title, listed or not
    if word[:1].isupper() and word[1:].islower() and key in common_word_names:
        return True
    flags = lex.flags(key)
    return (lex.english_band(key) <= FIRST_NAME_MAX_BAND
            and any(f in ("fn1", "fn2") for f in flags)
            and not lexicons.is_clinical_word(flags))


def _with_rest_of_surname(text: str, span: PhiSpan, lex: lexicons.Lexicons
                          ) -> PhiSpan:
    """``span`` widened over the surname after it when it ends at a particle.

    ``dr. van der berg``: a title's shape takes one word. The rest, in the
    particle's case (capitals after capitals), is taken unless its last word
    is a clinical word.
    """
    words = text[span.start:span.end].split()
    if not words or words[-1].lower() not in _PARTICLES:
        return span
    rest = _REST_OF_SURNAME.match(text, span.end)
    if rest is None or rest.group().isupper() != words[-1].isupper():
        return span
    if lexicons.is_clinical_word(lex.flags(rest.group().split()[-1].lower())):
        return span
    return dataclasses.replace(span, end=rest.end())


def _with_surname_after(text: str, span: PhiSpan, lex: lexicons.Lexicons,
                        refused: Collection[str]) -> PhiSpan:
    """``span``, a capitalised first name alone, widened to the surname after it.

    ``attorney Miriam Feldstein``: a title's shape took the first name. The
    word one space after, capitalised (in capitals after one), is its
    surname when it is listed as one no more common in English than band 3,
    or is a word of band 2 or rarer that no list calls a drug, a diagnosis,
    a place or a first name; never a clinical or a refused word.
    """
    name = text[span.start:span.end]
    if not (name.isalpha() and name[:1].isupper() and (
            name[1:].islower() or name.isupper() and len(name) > 2)):
        return span
    if not {"fn1", "fn2"}.intersection(lex.flags(name.lower())):
        return span
    after = (_SURNAME_AFTER if name[1:].islower() else _CAPITALS_SURNAME_AFTER
             ).match(text, span.end)
    if after is None:
        return span
    key = after.group("last").split("-")[0].lower()
    flags = lex.flags(key)
    band = lex.english_band(key)
    if key in refused or lexicons.is_clinical_word(flags) or not (
            band <= 3 and {"ln1", "ln2", "ln3"}.intersection(flags)
            or band <= 2 and not _NOT_SURNAME_FLAGS.intersection(flags)):
        return span
    return dataclasses.replace(span, end=after.end())


def with_first_names(text: str, spans: Sequence[PhiSpan], refused: Collection[str],
                     common_word_names: Collection[str]) -> list[PhiSpan]:
    """``spans`` with each person's name widened to the parts beside it.

    Before a capitalised name, the word one space before it, capitalised,
    in no other span, that :func:`first_name_before_name` reads as a first
    name; after a name that stops at a particle, the rest of the surname;
    after a first name alone, its surname (:func:`_with_surname_after`).
    """
    lex = None
    out = []
    for span in spans:
        if span.label in _PERSON_LABELS and text[span.end - 1:span.end].isalpha():
            lex = lex or lexicons.load()
            span = _with_rest_of_surname(text, span, lex)
            widened = _with_surname_after(text, span, lex, refused)
            if not any(o.start < widened.end and span.end < o.end for o in spans):
                span = widened
        name = text[span.start:span.end]
        if span.label in _PERSON_LABELS and name[:1].isupper() and name[1:2].islower():
            before = _WORD_BEFORE.search(text, max(0, span.start - 40), span.start)
            if before is not None and not any(
                    o.start < span.start and before.start() < o.end for o in spans):
                lex = lex or lexicons.load()
                if first_name_before_name(before.group("first"), lex, refused,
                                          common_word_names):
                    span = dataclasses.replace(span, start=before.start())
        out.append(span)
    return out
