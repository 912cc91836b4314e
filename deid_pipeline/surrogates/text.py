"""Shape-preserving text helpers shared by the generators: case and character classes.

A surrogate should read like the text it replaces (``SMITH`` -> ``JONES``,
``MRN 0012-34`` -> ``MRN 0586-17``), so both the case pattern and, for
identifiers, the class of every character are carried over.
"""

from __future__ import annotations

import random
import re
import string

from deid_pipeline.surrogates.keyed import MAX_REDRAWS, SurrogateError

UPPER, LOWER, TITLE, MIXED, NONE = "upper", "lower", "title", "mixed", "none"
_LETTER_RUN = re.compile(r"[^\W\d_]+")


def refuse_words(value: str, allowed: frozenset[str], label: str) -> None:
    """Raise if ``value`` holds a word its generator would keep as written.

    Generators that redraw only digits (a date, an age, a ZIP, an SSN, a
    room) pass the rest through, so a span the tagger ran into a town or a
    name (``3, Dorchester``, ``92 Dorchester``) would carry it into the
    output where the leak guard, comparing whole values, cannot see it. A
    word of two letters or more that ``allowed`` does not list makes the
    surrogate fail; the rewrite then masks the span.
    """
    for word in _LETTER_RUN.findall(value):
        if len(word) > 1 and word.lower() not in allowed:
            raise SurrogateError(f"{label}: holds a word it would keep as written")
_WORD_SPLIT = re.compile(r"[\s\-/.,;:&()]+")


def case_of(text: str) -> str:
    """Return the case pattern of ``text``: upper, lower, title, mixed or none."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return NONE
    if all(c.isupper() for c in letters):
        return UPPER
    if all(c.islower() for c in letters):
        return LOWER
    words = [w for w in _WORD_SPLIT.split(text) if any(c.isalpha() for c in w)]
    if all(_is_title_word(w) for w in words):
        return TITLE
    return MIXED


def _is_title_word(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return letters[0].isupper() and all(c.islower() for c in letters[1:])


def with_case(text: str, case: str) -> str:
    """``text`` in the case pattern ``case``.

    Title and mixed keep the generated form: Faker and gazetteer words are
    already written properly (``McDonald``, ``San Diego``), which ``str.title``
    would spoil.
    """
    if case == UPPER:
        return text.upper()
    if case == LOWER:
        return text.lower()
    if case == TITLE and text and text[0].islower():
        return text[0].upper() + text[1:]
    return text


_DIGITS = string.digits
_NONZERO = "123456789"
_UPPER = string.ascii_uppercase
_LOWER = string.ascii_lowercase


def random_like(text: str, rng: random.Random,
                keep_leading_nonzero: bool = True) -> str:
    """Digit for digit and letter for letter (same case); everything else kept.

    The first digit of each digit run stays non-zero when it was, so an ID
    does not gain a leading zero it never had (some systems strip those,
    which would change its length). Non-ASCII letters become ASCII letters
    of the same case.
    """
    out = []
    prev_digit = False
    for ch in text:
        if ch.isdigit():
            lead = not prev_digit and keep_leading_nonzero and ch != "0"
            out.append(rng.choice(_NONZERO if lead else _DIGITS))
            prev_digit = True
            continue
        prev_digit = False
        if ch.isalpha():
            out.append(rng.choice(_UPPER if ch.isupper() else _LOWER))
        else:
            out.append(ch)
    return "".join(out)


def redraw(make, original: str, label: str, *, same=None) -> str:
    """Call ``make()`` until its result differs from ``original``.

    ``same(a, b)`` decides equality (default: case-insensitive). Gives up
    with SurrogateError after MAX_REDRAWS tries, e.g. when the value has no
    letter or digit that could change.
    """
    same = same or (lambda a, b: a.casefold() == b.casefold())
    for _ in range(MAX_REDRAWS):
        candidate = make()
        if not same(candidate, original):
            return candidate
    raise SurrogateError(f"{label}: no surrogate different from the original")


def has_alnum(text: str) -> bool:
    """Whether ``text`` has any letter or digit a surrogate could change."""
    return any(c.isalnum() for c in text)
