"""Keyed randomness: every surrogate draw is seeded from an HMAC of the secret key.

A surrogate must be a pure function of (key, scope, label, normalised value):
re-runs with the same key give the same bytes, and nobody without the key can
recompute or reverse it. So no generator ever touches the ``random`` module's
global state or the global Faker; each draws from a Faker instance it owns,
re-seeded per call with ``seed_instance`` (nedap/deidentify's ``RandomData(seed)``
idea). Faker instances are per thread as well as per generator, because Beam
may run several bundles of one worker process in threads, and two threads
re-seeding one shared instance would interleave their draws.
"""

from __future__ import annotations

import random
import re
import threading
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Protocol

from deid_pipeline.keys import keyed_hash
from deid_pipeline.policy import Policy

if TYPE_CHECKING:
    from faker.generator import Generator as FakerGenerator

# The scope of surrogates that must agree across the whole run rather than
# within one person (doctors, hospitals). Person ids are hex, so "*" never
# collides with one.
RUN_SCOPE = "*"
MAX_REDRAWS = 64


class SurrogateError(ValueError):
    """No safe surrogate could be made; the caller masks the span instead.

    Messages name the label and the reason only, never the value, because the
    rewrite step may log or quarantine them.
    """


class SurrogateContext(Protocol):
    """What a generator needs to know about the run and the person.

    ``deid_pipeline.rewrite.RewriteContext`` is the implementation; the
    protocol keeps this package free of an import cycle with ``rewrite``.
    """

    key: bytes
    person_id: str
    policy: Policy


def normalise(value: str) -> str:
    """Return the form two mentions of one value share (NFKC, casefolded, spaces)."""
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


def seed_of(key: bytes, scope: str, label: str, normalised: str) -> int:
    """Return a 256-bit seed: HMAC-SHA256(key, surrogate|scope|label|normalised)."""
    return int.from_bytes(keyed_hash(key, "surrogate", scope, label, normalised), "big")


class FakerPool:
    """One Faker generator per thread for one surrogate generator.

    Creating a Faker costs milliseconds, so it happens once per thread; a call
    only re-seeds it (microseconds). Faker itself is imported there: its
    import scans every locale of every provider (0.05 CPU-s), and a
    process that builds a pipeline but rewrites nothing (its client) never
    needs it.
    """

    def __init__(self, locale: str = "en_US") -> None:
        """Make an empty pool; each thread creates its instance on first use."""
        self._locale = locale
        self._local = threading.local()

    def seeded(self, seed: int) -> FakerGenerator:
        """Return the calling thread's instance, re-seeded with ``seed``."""
        fake = getattr(self._local, "fake", None)
        if fake is None:
            from faker import Factory

            fake = self._local.fake = Factory.create(self._locale)
        fake.seed_instance(seed)
        return fake

    def __getstate__(self) -> dict:
        """Pickle only the locale: thread-local Fakers are rebuilt where used."""
        return {"locale": self._locale}

    def __setstate__(self, state: dict) -> None:
        """Rebuild an empty pool after unpickling."""
        self.__init__(state["locale"])


# Words (casefolded) every table draw must avoid, set by :func:`avoiding` around
# a redraw: a document of 40,000 notes holds most of the name pool among its
# originals, so keyed redraws from the whole pool spelled one again and again.
_AVOIDED: ContextVar[frozenset[str]] = ContextVar("avoided_words",
                                                   default=frozenset())


@contextmanager
def avoiding(words: frozenset[str]) -> Iterator[None]:
    """Within the block, every ``WeightedTable.draw`` skips ``words`` (casefolded).

    A context variable, not a parameter, so every generator drawing from a
    table (names, city words, institution words) gets it without a second
    signature; per thread and per task, so concurrent bundles do not mix.
    """
    token = _AVOIDED.set(words)
    try:
        yield
    finally:
        _AVOIDED.reset(token)


class WeightedTable:
    """A weighted word list with precomputed cumulative weights.

    Faker's own weighted choice re-accumulates the weights on every call
    (tens of microseconds for a name list); a bisect over precomputed sums
    draws in about one.
    """

    def __init__(self, weights: Mapping[str, float] | Sequence[str]) -> None:
        """Build from ``{word: weight}`` or from a sequence (equal weights)."""
        if isinstance(weights, Mapping):
            items = tuple(weights.items())
            self.words: tuple[str, ...] = tuple(w for w, _ in items)
            self._cum = tuple(accumulate(p for _, p in items))
        else:
            self.words = tuple(weights)
            self._cum = tuple(range(1, len(self.words) + 1))
        if not self.words:
            raise ValueError("empty word table")
        self._total = self._cum[-1]
        self._set = frozenset(self.words)
        # The last avoided set and this table without it: one document's
        # originals are avoided for all of its redraws.
        self._without: tuple[frozenset[str], WeightedTable] | None = None

    def draw(self, rng: random.Random) -> str:
        """One word, drawn with the table's weights from ``rng``.

        Inside :func:`avoiding`, from the table without the avoided words
        (the whole table if they are all of it: the caller's check then fails).
        """
        avoided = _AVOIDED.get()
        table = self.without(avoided) if avoided else self
        i = bisect_right(table._cum, rng.random() * table._total)
        return table.words[min(i, len(table.words) - 1)]

    def without(self, avoided: frozenset[str]) -> WeightedTable:
        """The table less the words whose casefold is avoided, same weights."""
        last = self._without
        if last is not None and last[0] is avoided:
            return last[1]
        weights = dict(zip(self.words, (b - a for a, b in
                                        zip((0, *self._cum), self._cum))))
        kept = {w: p for w, p in weights.items() if w.casefold() not in avoided}
        table = WeightedTable(kept) if kept else self
        self._without = (avoided, table)  # one tuple: a thread sees old or new
        return table

    def __contains__(self, word: object) -> bool:
        """Tell whether ``word`` is in the table (a set lookup)."""
        return word in self._set

    def __len__(self) -> int:
        """Count the words."""
        return len(self.words)


_NAME_LABELS = frozenset({"PATIENT", "DOCTOR", "RELATIVE", "USERNAME"})
# Originals compared whole (letters and digits only, any case).
_WHOLE_LABELS = frozenset({"STREET", "CITY", "MEDICALRECORD", "SSN", "ACCOUNT",
                           "LICENSE", "HEALTHPLAN", "IDNUM", "DEVICE", "BIOID",
                           "VEHICLE", "PHONE", "FAX", "EMAIL"})
_PLACE_LABELS = frozenset({"LOCATION", "CITY", "STATE", "ZIP", "COUNTRY", "HOSPITAL",
                           "ORGANIZATION"})
_LETTERS = re.compile(r"[^\W\d_]{3,}")
_INSTITUTION_LABELS = frozenset({"HOSPITAL", "ORGANIZATION"})
# Name parts from two letters: a surrogate "Li" for one doctor is another's
# real surname Li (a 16,000-note document drew exactly that). Initials stay out.
_NAME_PART = re.compile(r"[^\W\d_]{2,}")
_NOT_ALNUM = re.compile(r"[\W_]+")
# Lower-case words inside a name that name no one and that Spanish names keep
# as written (``Francisco Arnaiz de las Revillas``): never a name part to avoid,
# or every surrogate keeping its ``de`` would spell an original and be masked.
NAME_PARTICLES = frozenset({"de", "del", "la", "las", "los", "y", "i", "e"})


def _squeezed(value: str) -> str:
    return _NOT_ALNUM.sub("", value.casefold())


@dataclass(frozen=True, slots=True)
class Originals:
    """What the surrogates of one message, document or person must not spell.

    ``words``: every name part (2+ letters) and city word (3+) of the
    originals; ``values``: streets, cities, ids and phones, letters and
    digits only. Case is
    ignored. A surrogate that spells one (the patient's surrogate surname
    being the attending's real one) is drawn again, keyed (see
    :func:`deid_pipeline.surrogates.surrogate`).
    """

    words: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    # Places and institutions (letters and digits only): what a Spanish place
    # surrogate must not spell (``places_spelled_by``; English does not ask).
    places: frozenset[str] = frozenset()
    # The words (3+ letters) of institutions' names: what a person's surrogate
    # must not be (``for_person_names``). A surname drawn for a name before an
    # untouched ``plc`` or ``and Sons`` spelled the employer ``Morrow PLC``
    # of another note; other surrogates keep them (a hospital's ``Medical``).
    institution_words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> Originals:
        """Collect the originals from ``(value, label)`` pairs."""
        words: set[str] = set()
        values: set[str] = set()
        places: set[str] = set()
        institution_words: set[str] = set()
        for value, label in pairs:
            if label in _PLACE_LABELS and len(_squeezed(value)) >= 3:
                places.add(_squeezed(value))
            if label in _INSTITUTION_LABELS:
                institution_words.update(w.casefold() for w in _LETTERS.findall(value))
            if label in _NAME_LABELS:
                if value.isalpha():  # most: one name part
                    if len(value) >= 2:
                        words.add(value.casefold())
                else:
                    words.update(w.casefold() for w in _NAME_PART.findall(value)
                                 if w not in NAME_PARTICLES)
            elif label in _WHOLE_LABELS:
                squeezed = _squeezed(value)
                if len(squeezed) >= 3:
                    values.add(squeezed)
                if label == "CITY":  # a street surrogate "Douglas Sullivan"
                    words.update(w.casefold() for w in _LETTERS.findall(value))
            elif label == "DATE" and sum(map(str.isdigit, value)) >= 5:
                # "7/30/35" is the digits "73035": a ZIP surrogate must not be.
                values.add(_squeezed(value))
        return cls(frozenset(words), frozenset(values), frozenset(places),
                   frozenset(institution_words))

    @classmethod
    def union(cls, parts: Iterable[Originals]) -> Originals:
        """All of ``parts`` in one; the largest part itself when it holds the others.

        A person's originals usually hold those of each of its messages: the
        same object then comes back, so callers keyed on it (a rewriter's
        context) keep it.
        """
        parts = [p for p in parts
                 if p.words or p.values or p.places or p.institution_words]
        if not parts:
            return cls()
        largest = max(parts, key=lambda p: len(p.words) + len(p.values))
        if all(p.words <= largest.words and p.values <= largest.values
               and p.places <= largest.places
               and p.institution_words <= largest.institution_words
               for p in parts):
            return largest
        return cls(frozenset().union(*(p.words for p in parts)),
                   frozenset().union(*(p.values for p in parts)),
                   frozenset().union(*(p.places for p in parts)),
                   frozenset().union(*(p.institution_words for p in parts)))

    def for_person_names(self) -> Originals:
        """These originals as a person's surrogate must avoid them.

        Institutions' words are name parts too.
        """
        if self.institution_words <= self.words:
            return self
        return Originals(self.words | self.institution_words, self.values,
                         self.places, self.institution_words)

    def spelled_by(self, surrogate: str) -> bool:
        """Whether ``surrogate`` is an original value or holds an original name part."""
        if self.values and _squeezed(surrogate) in self.values:
            return True
        return self.names_in(surrogate)

    def places_spelled_by(self, surrogate: str) -> bool:
        """Whether ``surrogate`` is an original place or institution, whole."""
        return bool(self.places) and _squeezed(surrogate) in self.places

    def names_in(self, surrogate: str) -> bool:
        """Whether a word of ``surrogate`` is an original name part (``May``)."""
        words = self.words
        return bool(words) and any(w.casefold() in words
                                   for w in _NAME_PART.findall(surrogate))

