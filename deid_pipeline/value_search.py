"""Finding a value wherever it stands in a text, as the leak guard defines a match.

A value is found case-insensitively with any run of whitespace where it has
a blank; a mostly-digit value (a phone, an ID) digit by digit with any
separators. :func:`value_pattern` is the definition; :class:`SearchText`
finds exactly its matches fast, for one value or hundreds of thousands (one
Aho-Corasick pass over a long text). The leak guard
(:mod:`deid_pipeline.leak_guard`) and the tagger's propagation
(:mod:`deid_pipeline.tagger.merge`) both search with it, so what the tagger
marks and what the guard looks for are the same matches.
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

import ahocorasick

from deid_pipeline.runtime.progress import DOCUMENT_PROGRESS, process_progress

# Shorter values (initials) collide with surrogate initials and ordinary words.
_MIN_ALNUM = 3
_MIN_DIGITS_FOR_LOOSE_MATCH = 5
_GAP_CHARS = r"\s\-./()+"  # what may stand between the digits of a phone or ID
_DIGIT_GAP = rf"[{_GAP_CHARS}]*"


class _Needle(NamedTuple):
    """How to search for one value: what a plain search needs, and its regex.

    A mostly-digit value (an ID, a phone) has its ``digits``, matched digit
    by digit with any separators between; any other value its blank-separated
    ``parts``, and, when it is ASCII, their lower-cased ``words``, of which
    ``whole`` are those made of letters and digits only: each of those
    stands in any match as a whole word of the text (between blanks or the
    value's own word boundaries). A non-ASCII value is searched with its
    regex (rare; Unicode case folding is the regex engine's job). A tuple,
    not a dataclass: one is made for every new value, hundreds per message.
    """

    digits: str = ""
    parts: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    left: bool = False  # the match must not follow a word character
    right: bool = False  # ... nor be followed by one
    whole: tuple[str, ...] = ()
    # A digit value made of runs of one or two digits ("1/10 - 1/17"): the
    # lengths of its runs, which a match's runs must have (see _needle).
    groups: tuple[int, ...] = ()

    @property
    def pattern(self) -> re.Pattern:
        return _pattern(self)


@functools.lru_cache(maxsize=4_096)
def _pattern(needle: _Needle) -> re.Pattern:
    """The regex that defines what a match of the needle is.

    Cached by needle, not value: ``895-955-2`` and ``8959552`` share one.
    """
    if needle.groups:
        runs, at = [], 0
        for n in needle.groups:
            runs.append(re.escape(needle.digits[at:at + n]))
            at += n
        body = f"[{_GAP_CHARS}]+".join(runs)
        return re.compile(rf"(?<!\d){body}(?!\d)")
    if needle.digits:
        body = _DIGIT_GAP.join(re.escape(d) for d in needle.digits)
        return re.compile(rf"(?<!\d){body}(?!\d)")
    body = r"\s+".join(re.escape(part) for part in needle.parts)
    left = r"(?<!\w)" if needle.left else ""
    right = r"(?!\w)" if needle.right else ""
    return re.compile(left + body + right, re.IGNORECASE)


_NOT_ALNUM = re.compile(r"[\W_]")
_NOT_DIGIT = re.compile(r"\D")
_DIGIT_RUN = re.compile(r"\d+")
_LONG_DIGIT_RUN = re.compile(r"\d{3}")
# The same classes for ASCII text, as bytes to delete: a new value's needle
# counts its letters and digits, and bytes.translate does that about ten
# times faster than the regexes (the tests check that they agree).
_ASCII_NOT_ALNUM = bytes(c for c in range(128) if _NOT_ALNUM.match(chr(c)))
_ASCII_NOT_DIGIT = bytes(c for c in range(128) if _NOT_DIGIT.match(chr(c)))


def _alnum_count_and_digits(value: str) -> tuple[int, str]:
    """How many letters and digits ``value`` has, and its digits."""
    if value.isascii():
        raw = value.encode("ascii")
        return (len(raw.translate(None, _ASCII_NOT_ALNUM)),
                raw.translate(None, _ASCII_NOT_DIGIT).decode("ascii"))
    return len(_NOT_ALNUM.sub("", value)), _NOT_DIGIT.sub("", value)


def _new_needle(fields: tuple) -> _Needle:
    """A needle from all its fields, in order.

    About a third of the time ``_Needle(...)`` takes (its keyword defaults go
    through a Python ``__new__``); a header makes hundreds per message.
    """
    return tuple.__new__(_Needle, fields)


@functools.lru_cache(maxsize=65_536)
def _needle(value: str) -> _Needle | None:
    """The search plan for ``value`` (None for values too short to search).

    Computing it compiles nothing: compiling one regex per value (and a
    header expands into hundreds of values per message) used to be the
    largest single CPU cost of the MLLP gateway.
    """
    parts = tuple(value.split())
    value = " ".join(parts)
    alnum, digits = _alnum_count_and_digits(value)
    if alnum < _MIN_ALNUM:
        return None
    if len(digits) >= _MIN_DIGITS_FOR_LOOSE_MATCH and len(digits) >= alnum - 1:
        # Phones and ids are written with any separators or none. A value of
        # short runs (a date range "1/10 - 1/17") is not: read loosely, it is
        # in every other blood pressure of a long document ("151/110-117/41").
        # Most digit values (dates with their year, phones) have a run of
        # three: those need no runs counted.
        if _LONG_DIGIT_RUN.search(value) is None:
            runs = tuple(map(len, _DIGIT_RUN.findall(value)))
            if len(runs) > 1:
                return _new_needle((digits, (), (), False, False, (), runs))
        return _new_needle((digits, (), (), False, False, (), ()))
    # ASCII lower-casing keeps every blank where it was.
    words = tuple(value.lower().split()) if value.isascii() else ()
    return _new_needle(("", parts, words, value[0].isalnum(), value[-1].isalnum(),
                        tuple(filter(str.isalnum, words)), ()))


def value_pattern(value: str) -> re.Pattern | None:
    """How a PHI value is found in text (None for values too short to search).

    Mostly-digit values (IDs, phones) match with any separators between
    their digits; other values case-insensitively, with any run of
    whitespace where they have a blank, as whole words. This regex is the
    definition of a match; :class:`SearchText` finds exactly its matches
    faster, and is what :func:`find_leaks` and
    :func:`deid_pipeline.tagger.merge.reconcile` use, so what the tagger marks and
    what the guard searches for are the same matches.
    """
    needle = _needle(value)
    return None if needle is None else needle.pattern


# The only non-ASCII characters that re.IGNORECASE matches to an ASCII
# character (dotted and dotless i, long s, Kelvin sign; the tests check this
# over all of Unicode). Mapping them first makes ``str.lower`` a fold that
# keeps every offset and agrees with the regex for ASCII values.
_ASCII_TWINS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s",
                              "\u212a": "k"})
_GAPS = re.compile(rf"[{_GAP_CHARS}]+")
_WORD_RUN = re.compile(r"\w+")
_NOT_GAPS = re.compile(rf"[^{_GAP_CHARS}]+")


def _is_word(ch: str) -> bool:
    r"""The regex ``\w`` for one character."""
    return ch.isalnum() or ch == "_"


_SUB_BLOCK = 1 << 20


def _sub_by_blocks(pattern: re.Pattern, replacement: str, text: str) -> str:
    """``pattern.sub(replacement, text)`` a megabyte at a time.

    ``re.sub`` gathers every piece of its result in a list before joining
    them: for a 35 MB text, 14 million strings, half a gigabyte for a moment
    (the peak of a whole run of one huge document). Only for patterns whose
    matches can be cut at any character: one character to one, or runs
    removed whole.
    """
    if len(text) <= _SUB_BLOCK:
        return pattern.sub(replacement, text)
    return "".join(pattern.sub(replacement, text[i:i + _SUB_BLOCK])
                   for i in range(0, len(text), _SUB_BLOCK))


def offsets(length: int) -> array:
    """An empty array for places in a text of ``length`` characters.

    Four bytes a place while they fit (any text under 4 GiB characters, so
    every file ``--max-file-bytes`` lets through by default): a document of
    40,000 notes holds millions of places, at eight bytes each a few hundred
    MB at the guard's peak.
    """
    return array("I" if length < 2**32 else "q")


class SearchText:
    """One text prepared for searching many PHI values in it.

    Each value is found with ``str.find`` on a case-folded copy (or on the
    text with digit separators squeezed out) plus boundary checks, instead of
    a compiled regex per value; the views are built lazily, once per text.
    The matches are exactly ``value_pattern(value).finditer(text)``'s,
    which the tests check on random and Unicode-edge texts.

    Most values searched for are not in the text, and a failed ``find``
    reads the whole text. So a word value is first looked up in the set of
    the text's words: a value one of whose ``whole`` words is not a word of
    the text cannot match (set lookups instead of a scan per value).
    """

    __slots__ = ("text", "_folded", "_words", "_squeezed", "_run_starts",
                 "_run_origins")

    def __init__(self, text: str) -> None:
        """Prepare nothing yet: most texts need only one of the two views."""
        self.text = text
        self._folded: str | None = None
        self._words: frozenset[str] = frozenset()
        self._squeezed: str | None = None
        self._run_starts: Sequence[int] = ()
        self._run_origins: Sequence[int] = ()

    def matches_all(self, values: Sequence[str]) -> list[list[tuple[int, int]]]:
        """:meth:`matches` of each value (see :meth:`find_all`)."""
        return list(self.iter_matches(values))

    def iter_matches(self, values: Sequence[str]
                     ) -> Iterator[list[tuple[int, int]]]:
        """:meth:`matches_all` one value at a time, so the caller can keep less."""
        return self.iter_find([_needle(value) for value in values])

    def matches(self, value: str) -> list[tuple[int, int]]:
        """(start, end) of every non-overlapping match of ``value``, in order."""
        needle = _needle(value)
        return [] if needle is None else self.find(needle)

    def find(self, needle: _Needle) -> list[tuple[int, int]]:
        """:meth:`matches` for a value's needle (see :func:`header_values`)."""
        if needle.digits:
            return self._digit_matches(needle.digits, groups=needle.groups)
        if needle.words:
            return self._word_matches(needle)
        return [m.span() for m in needle.pattern.finditer(self.text)]

    def find_all(self, needles: Sequence[_Needle | None]
                 ) -> list[list[tuple[int, int]]]:
        """:meth:`find` of each needle (see :meth:`iter_find`)."""
        return list(self.iter_find(needles))

    def iter_find(self, needles: Sequence[_Needle | None]
                  ) -> Iterator[list[tuple[int, int]]]:
        """:meth:`find` of each needle (None: no matches), in one pass if long.

        On a short text each needle is found on its own. On a text over
        :data:`BULK_CHARS` a ``find`` per value would read the text once per
        value (a 50 MB document holds hundreds of thousands): there, one
        Aho-Corasick automaton of every needle's first word (or digits)
        lists where each occurs in a single pass, and each needle is checked
        at those places only, with the same checks and in the same order as
        :meth:`find`, so the matches are the same.
        """
        if len(self.text) <= BULK_CHARS:
            for n in needles:
                yield [] if n is None else self.find(n)
            return
        words = [n for n in needles if n is not None and not n.digits and n.words]
        at_word: dict[str, Sequence[int]] = {}
        if words:
            self._fold()
            words = [n for n in words if self._words.issuperset(n.whole)]
            at_word = self._first_words(
                {key for n in words for key in _anchor_keys(n)})
        digits = {n.digits for n in needles if n is not None and n.digits}
        at_digits = _starts(self._squeezed_text(), digits) if digits else {}
        progress = process_progress(DOCUMENT_PROGRESS)
        for k, needle in enumerate(needles, 1):
            if not k % _PROGRESS_VALUES:
                # Hundreds of thousands of values: say how far (a count).
                progress.add(values_searched=_PROGRESS_VALUES)
            if needle is None:
                yield []
            elif needle.digits:
                yield self._digit_matches(
                    needle.digits, at_digits.get(needle.digits, ()), needle.groups)
            elif needle.words:
                yield self._word_matches(needle, self._anchored(needle, at_word))
            else:
                yield self.find(needle)

    def _first_words(self, keys: set[str]) -> dict[str, Sequence[int]]:
        r"""Where each :func:`_bounded` first word may start a match, in order.

        Searched in the folded text with every non-word character made
        ``\0`` (and one at each end), so a first word that must start or end
        at a word boundary is only found there: a name is not looked at
        inside every longer word that contains it. A superset of the places
        (the ``\0`` stands for any non-word character); each is checked.
        """
        folded = self._folded or ""
        bounded = "\0" + _sub_by_blocks(_NOT_WORD, "\0", folded) + "\0"
        found: dict[str, Sequence[int]] = {}
        for key, starts in _starts(bounded, keys).items():
            # ``bounded[i]`` is ``folded[i - 1]``; a leading \0 is no letter.
            if key.startswith("\0"):
                found[key] = starts
            else:
                found[key] = offsets(len(folded))
                found[key].extend(i - 1 for i in starts if i)
        return found

    def _anchored(self, needle: _Needle, at_word: dict[str, Sequence[int]]
                  ) -> list[int]:
        """Where a match of ``needle`` may start, from its rarest whole word.

        Anchoring every ``Dr. <name>`` on ``dr.`` would visit every ``Dr.``
        of the document once per doctor (quadratic); a whole word of the
        value stands as a word of the text in each match, so its places,
        walked back over the words before it, give every start.
        """
        if not needle.whole:
            return at_word.get(_bounded(needle), [])
        word = min(needle.whole, key=lambda w: len(at_word.get(f"\0{w}\0", ())))
        j = needle.words.index(word)
        starts = (self._start_before(at, needle.words[:j])
                  for at in at_word.get(f"\0{word}\0", ()))
        return sorted(at for at in starts if at is not None)

    def _start_before(self, at: int, before: tuple[str, ...]) -> int | None:
        """Where the words ``before`` start, each then blanks, ending at ``at``."""
        text, folded = self.text, self._folded or ""
        for word in reversed(before):
            blank = at
            while blank > 0 and text[blank - 1].isspace():
                blank -= 1
            if blank == at:  # words of a value stand apart
                return None
            at = blank - len(word)
            if at < 0 or not folded.startswith(word, at):
                return None
        return at

    def present(self, plan: HeaderPlan) -> list[HeaderValue]:
        """The values of ``plan`` that may occur in the text, in plan order.

        A superset of those that do (each still goes through :meth:`find`):
        a word value needs its whole words among the text's words and its
        first word in the folded text, a digit value its digits in the
        separator-free text: the first tests :meth:`find` would make. A header plans a
        few hundred values and a report holds a handful, so this replaces a
        call per value with one set intersection and one substring test each.
        """
        keep = []
        if plan.digits:
            squeezed = self._contains(self._squeezed_text(),
                                      [d for _, d in plan.digits])
            keep.extend(k for k, digits in plan.digits if digits in squeezed)
        if plan.by_word or plan.always:
            folded = self._contains(self._fold(), [f for _, f in plan.always])
            words = self._words
            for word in plan.by_word.keys() & words:
                keep.extend(k for k, whole in plan.by_word[word]
                            if words.issuperset(whole))
            keep.extend(k for k, first in plan.always if first in folded)
        keep.sort()
        return [plan[k] for k in keep]

    def _contains(self, view: str, subs: list[str]) -> str | set[str]:
        """``view``, or on a long text the set of the ``subs`` it contains (one pass).

        Either answers ``sub in`` for each of ``subs`` the same way.
        """
        if len(view) <= BULK_CHARS:
            return view
        return set(_starts(view, set(subs))) | {""}

    def _fold(self) -> str:
        folded = self._folded
        if folded is None:
            text = self.text
            folded = self._folded = (text if text.isascii()
                                     else text.translate(_ASCII_TWINS)).lower()
            # The fold keeps every character a word character or not (tests),
            # so these are the folded text's words wherever they stand. A long
            # text's go one at a time into the set: a list of every word of a
            # 35 MB text first (7 million strings) was the guard's peak memory;
            # a note's list costs less than a match object a word.
            self._words = frozenset(
                _WORD_RUN.findall(folded) if len(folded) <= BULK_CHARS
                else (m.group() for m in _WORD_RUN.finditer(folded)))
        return folded

    def _squeezed_text(self) -> str:
        squeezed = self._squeezed
        if squeezed is None:
            squeezed = self._squeezed = _sub_by_blocks(_GAPS, "", self.text)
        return squeezed

    def _word_matches(self, needle: _Needle, starts: Iterable[int] | None = None
                      ) -> list[tuple[int, int]]:
        """Matches of a word needle; ``starts``: every place its first word is."""
        folded = self._fold()
        if not self._words.issuperset(needle.whole):
            return []
        if starts is None:
            first = needle.words[0]
            if first not in folded or any(word not in folded
                                          for word in needle.words[1:]):
                return []
            starts = _found_at(folded, first)
        found = []
        first = needle.words[0]
        after = 0  # matches do not overlap: the next starts at or after this
        for at in starts:
            if at >= after and folded.startswith(first, at):
                end = self._word_match_end(at, needle)
                if end is not None:
                    found.append((at, end))
                    after = end
        return found

    def _word_match_end(self, at: int, needle: _Needle) -> int | None:
        """End of the match starting at ``at`` (its first word is there), or None."""
        text, folded = self.text, self._folded
        if needle.left and at > 0 and _is_word(text[at - 1]):
            return None
        end = at + len(needle.words[0])
        n = len(text)
        for word in needle.words[1:]:
            blank = end
            while blank < n and text[blank].isspace():
                blank += 1
            if blank == end or not folded.startswith(word, blank):
                return None
            end = blank + len(word)
        if needle.right and end < n and _is_word(text[end]):
            return None
        return end

    def _digit_matches(self, digits: str, starts: Iterable[int] | None = None,
                       groups: tuple[int, ...] = ()) -> list[tuple[int, int]]:
        """Matches of a digit needle; ``starts``: every place its digits are.

        With ``groups``, only where the text's digit runs have those lengths.
        """
        squeezed = self._squeezed_text()
        if starts is None:
            if digits not in squeezed:
                return []
            starts = _found_at(squeezed, digits)
        starts = iter(starts)
        at = next(starts, -1)
        if at < 0:
            return []
        text = self.text
        if not self._run_starts:
            # Where each separator-free run of the text starts, in both texts
            # (there is one: the digits were found). Machine integers: a run
            # is about a word, and a 35 MB text's millions of them as lists of
            # (start, end) tuples took 700 MB.
            origins, run_starts = offsets(len(text)), offsets(len(text))
            squeezed_at = 0
            for m in _NOT_GAPS.finditer(text):
                a, b = m.span()
                origins.append(a)
                run_starts.append(squeezed_at)
                squeezed_at += b - a
            self._run_origins, self._run_starts = origins, run_starts
        k = len(digits)
        found = []
        after = 0
        while at >= 0:
            if at >= after:
                start, end = self._origin(at), self._origin(at + k - 1) + 1
                if (start == 0 or not text[start - 1].isdecimal()) and (
                        end == len(text) or not text[end].isdecimal()) and (
                        not groups or _runs(text, start, end) == groups):
                    found.append((start, end))
                    after = at + k
            at = next(starts, -1)
        return found

    def _origin(self, index: int) -> int:
        """Offset in the text of the character at ``index`` of the squeezed text."""
        run = bisect.bisect_right(self._run_starts, index) - 1
        return self._run_origins[run] + index - self._run_starts[run]


def _runs(text: str, start: int, end: int) -> tuple[int, ...]:
    """The lengths of the digit runs of ``text[start:end]``."""
    return tuple(len(run) for run in _DIGIT_RUN.findall(text, start, end))


# Texts longer than this are searched for many values in one pass
# (:meth:`SearchText.find_all`); shorter ones a value at a time, which is
# faster for the few values of a note.
BULK_CHARS = 100_000
_PROGRESS_VALUES = 1_000  # ... and report every this many values searched


_NOT_WORD = re.compile(r"\W")


def _bounded(needle: _Needle) -> str:
    r"""A needle's first word as :meth:`SearchText._first_words` looks it up.

    Non-word characters are ``\0``; one more stands before it when the
    match must not follow a word character, and after it when the word is
    followed by a blank or must not be followed by a word character.
    """
    first = _NOT_WORD.sub("\0", needle.words[0])
    tail = len(needle.words) > 1 or needle.right
    return ("\0" if needle.left else "") + first + ("\0" if tail else "")


def _anchor_keys(needle: _Needle) -> list[str]:
    """The :meth:`SearchText._first_words` keys a needle may be anchored on."""
    if needle.whole:
        return [f"\0{w}\0" for w in needle.whole]
    return [_bounded(needle)]


def _found_at(text: str, sub: str) -> Iterator[int]:
    """Every place ``sub`` starts in ``text``, overlapping ones included."""
    at = text.find(sub)
    while at >= 0:
        yield at
        at = text.find(sub, at + 1)


def _starts(text: str, keys: set[str]) -> dict[str, Sequence[int]]:
    """Every place each of ``keys`` starts in ``text`` (overlaps included), in order.

    One pass of an Aho-Corasick automaton over the text, whatever the number
    of keys: time linear in the text plus the places found. The places are
    machine integers (8 bytes a place, 36 as a list of Python ints): a long
    document's values occur millions of times.
    """
    keys.discard("")
    if not keys:
        return {}
    automaton = ahocorasick.Automaton()
    for key in keys:
        automaton.add_word(key, key)
    automaton.make_automaton()
    starts: dict[str, array] = {}
    for end, key in automaton.iter(text):
        places = starts.get(key)
        if places is None:
            places = starts[key] = offsets(len(text))
        places.append(end - len(key) + 1)
    return starts


# A value to search for, its label, and its search plan (None: too short). A
# plain tuple: hundreds are made per message.
HeaderValue = tuple[str, str, _Needle | None]


class HeaderPlan(tuple):
    """The header values in order, indexed for :meth:`SearchText.present`.

    ``digits``: (position, digits) of each digit value; ``by_word``:
    (position, whole words) of each word value under its first whole word;
    ``always``: (position, first word) of the others, which a text can hold
    only if that word is a substring of its folded form ("" for a non-ASCII
    value: always searched). Values too short to search are in none of them.
    """

    def __new__(cls, values: Iterable[HeaderValue]) -> HeaderPlan:
        plan = super().__new__(cls, values)
        plan.digits = []
        plan.by_word = {}
        plan.always = []
        for k, (_value, _label, needle) in enumerate(plan):
            if needle is None:
                continue
            if needle.digits:
                plan.digits.append((k, needle.digits))
            elif needle.whole:
                plan.by_word.setdefault(needle.whole[0], []).append((k, needle.whole))
            else:
                # A regex needle (non-ASCII) has no words: "" is in any text.
                plan.always.append((k, needle.words[0] if needle.words else ""))
        return plan


# The last dictionary :func:`header_values` saw, and its answers per policy kind.
