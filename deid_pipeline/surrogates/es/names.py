"""Spanish person names: first names by sex and surnames from Faker's ``es_ES``.

The English generator's rules (:mod:`deid_pipeline.surrogates.names`) with
Spanish tables: each part is replaced on its own, keyed by (scope, part), so
``María José Gutiérrez Soto`` keeps two first names and two surnames and
``Gutiérrez`` alone gets the surname ``Gutiérrez`` got. A part that is a
known Spanish first name (accents ignored: ``Jose`` is ``José``) gets a first
name of the same sex; any other part a surname. Titles (``Dr.``, ``Dña.``,
``Sr.``) before a name and the particles inside one (``de``, ``del``, ``la``,
``y``) stay as written.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter

from deid_pipeline.surrogates.contact import EmailGenerator
from deid_pipeline.surrogates.halves import PoolHalf, restrict
from deid_pipeline.surrogates.keyed import NAME_PARTICLES, WeightedTable
from deid_pipeline.surrogates.names import NameGenerator, _NameTables, name_tables
from deid_pipeline.tagger import lexicons

TITLES = frozenset({"dr", "dra", "doctor", "doctora", "sr", "sra", "srta", "don",
                    "doña", "dña", "dª", "prof", "profa", "profesor", "profesora",
                    "enf", "lic", "lcdo", "lcda"})
PARTICLES = NAME_PARTICLES


def plain(word: str) -> str:
    """``word`` casefolded without accents (``José`` -> ``jose``; ``ñ`` -> ``n``)."""
    return "".join(c for c in unicodedata.normalize("NFD", word.casefold())
                   if not unicodedata.combining(c))


def _word_counts(names: tuple[str, ...]) -> Counter:
    """How many entries of a Faker list each word (accents ignored) appears in."""
    return Counter(plain(w) for n in names for w in n.split())


class SpanishNameTables(_NameTables):
    """Faker es_ES first names (by sex) and surnames, once per process and half.

    Faker's lists hold compounds (``María José``, ``José Luis``) and put some
    names in both (``María``, ``José``): a word's sex is the list it appears
    in more often, over all entries; draws are single words, so a part stays
    one part.
    """

    def __init__(self, pool: PoolHalf | None = None) -> None:
        from faker.providers.person.es_ES import Provider as SpanishPersons

        female = SpanishPersons.first_names_female
        male = SpanishPersons.first_names_male
        single_f = [n for n in female if " " not in n]
        single_m = [n for n in male if " " not in n]
        self.female = WeightedTable(restrict(single_f, pool))
        self.male = WeightedTable(restrict(single_m, pool))
        self.first = WeightedTable(restrict(sorted({*single_f, *single_m}), pool))
        self.last = WeightedTable(restrict(SpanishPersons.last_names, pool))
        in_f, in_m = _word_counts(female), _word_counts(male)
        self.female_keys = frozenset(w for w in in_f if in_f[w] >= in_m[w])
        self.male_keys = frozenset(w for w in in_m if in_m[w] >= in_f[w])
        self.last_keys = frozenset(plain(n) for n in SpanishPersons.last_names)

    key = staticmethod(plain)  # accents ignored: "Jose" is "José"

    def pool_for(self, part: str) -> WeightedTable:
        """First names (by sex) for a first name, surnames for a surname.

        Faker's Spanish lists decide when a word is in one of them only. A
        word in both (``Reyes``, ``Bautista``, ``Pastor``) or in neither
        (``Serafín``, ``Dylan``, ``Binelli``) is what the world's name lists
        (names-dataset's bands in the tagger's lexicons) call it more often:
        ``Serafín Guzmán`` is a first name and a surname, as a reader takes
        it. A tie keeps the lists' answer (a first name if in one, else a
        surname). A first name unknown to the Spanish lists takes its sex
        from the English ones (``Cynthia``), else from its ending.
        """
        key = self.key(part)
        in_f, in_m = key in self.female_keys, key in self.male_keys
        given, surname = in_f or in_m, key in self.last_keys
        if given == surname:
            first_band, last_band = _world_bands(part)
            if first_band != last_band:
                given = first_band < last_band
        if not given:
            return self.last
        if not (in_f or in_m):
            english = name_tables()
            in_f, in_m = key in english.female_keys, key in english.male_keys
        if not (in_f or in_m):
            # Unknown to both (Mikel, Serafín, Nayara): Spanish given names in
            # -a are women's, the rest men's, but for those the lists hold.
            in_f, in_m = key.endswith("a"), not key.endswith("a")
        if in_f != in_m:
            return self.female if in_f else self.male
        return self.first

    def is_name(self, word: str) -> bool:
        """Whether ``word`` is one of the tables' first names or surnames."""
        key = plain(word)
        return (key in self.female_keys or key in self.male_keys
                or key in self.last_keys)


# A word in no band of a kind: after every band.
_NO_BAND = 9


def _world_bands(part: str) -> tuple[int, int]:
    """The first-name and surname bands of ``part`` (1 most common).

    As written (``serafín``: a first name), else without accents.
    """
    lex = lexicons.load()
    for form in (part.casefold(), plain(part)):
        best = {"fn": _NO_BAND, "ln": _NO_BAND}
        for flag in lex.flags(form):
            kind, band = flag[:2], flag[2:]
            if kind in best and band.isdigit():
                best[kind] = min(best[kind], int(band))
        if best["fn"] != _NO_BAND or best["ln"] != _NO_BAND:
            break
    return best["fn"], best["ln"]


@functools.cache
def spanish_names(pool: PoolHalf | None = None) -> SpanishNameTables:
    """Return the process-wide Spanish name tables of ``pool``'s half."""
    return SpanishNameTables(pool)


class SpanishNameGenerator(NameGenerator):
    """Spanish names, part by part, with the original's case, initials and order."""

    titles = TITLES
    degrees = frozenset()
    particles = PARTICLES

    def tables(self, pool: PoolHalf | None = None) -> SpanishNameTables:
        """The Spanish tables."""
        return spanish_names(pool)


def unaccented(word: str) -> str:
    """``word`` without accents, case kept (``Núñez`` -> ``Nunez``)."""
    return "".join(c for c in unicodedata.normalize("NFD", word)
                   if not unicodedata.combining(c))


class _AsciiSpanishNames(SpanishNameGenerator):
    """Spanish name parts without accents: what an e-mail address's local part takes."""

    def part(self, word: str, key: bytes, scope: str,
             pool: PoolHalf | None = None) -> str:
        """The name part's surrogate (the one the text gets), accents removed."""
        return unaccented(super().part(word, key, scope, pool))


class SpanishEmailGenerator(EmailGenerator):
    """E-mail addresses whose local part takes the person's Spanish name parts."""

    names = _AsciiSpanishNames
