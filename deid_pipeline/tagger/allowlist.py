"""Clinical eponyms are not PHI: ``Framingham risk score``, ``Parkinson's disease``.

Scores, signs, tests, diseases and devices named after people and places
(``deid_pipeline/data/eponyms.tsv``, with its sources) look exactly like the
names and places every detector is built to find, and a search query full of
them lost a quarter of its words to redaction. Once all detectors have run,
:func:`~.eponym_spans.drop_eponyms` removes the spans that lie inside an
eponym standing in its clinical context (a clinical word after it, the
possessive of a disease eponym, or an eponym no one is called), whichever
detector proposed them. An
eponym after a person title (``Dr. Parkinson``, ``Mr. Graves``) is a person
and stays tagged; so does a span from the header dictionary, and a value
that is also tagged elsewhere in the same text, since the leak guard would
find it in the output there and refuse the whole document.

Some eponyms no list holds all of are found by their shape instead: a
compound of capitalised names before a clinical word (``Harris-Benedict
equation``), a name before a disease word (``Williams syndrome``) and a place
before a method word (``Hartford nomogram``, ``Ross River virus``).

Matching is one pass over the words with a dict of first words; no regex is
built per document.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from deid_pipeline.tagger import lexicons
from deid_pipeline.tagger.gazetteers import FACILITY_WORDS

DATA_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                         "eponyms.tsv")

# Words that, after an eponym (or one or two words before it), make it the
# name of a clinical thing: "Glasgow coma scale", "tetralogy of Fallot".
CLINICAL_WORDS = frozenset("""
score scores scale scales criteria criterion sign signs test tests testing
disease diseases syndrome syndromes palsy reflex reflexes maneuver maneuvers
manoeuvre phenomenon triad pentad classification class grade grading stage
staging index rule rules model questionnaire equation formula node nodes spot
spots murmur fracture fractures cyst cysts ulcer ulcers diverticulum esophagus
tumor tumour lymphoma sarcoma thyroiditis encephalopathy encephalitis dementia
chorea dystrophy anomaly angina paralysis fever virus infection position
procedure operation repair pouch incision point catheter cath tube drain block
type level risk calculator assessment inventory exam examination method
technique cell cells body bodies lesion lesions contracture deformity anemia
ataxia tremor neuralgia neuropathy arteritis vasculitis granulomatosis lines
ring rings rods tetralogy sarcoma carcinoma malformation gland glands duct
equation equations nomogram aphasia shunt frame diet guideline guidelines
protocol protocols variant variants subscore wave waves ophthalmopathy
orbitopathy surgery
""".split())
# Words that make the next name a person's.
PERSON_TITLES = frozenset({
    "dr", "doctor", "mr", "mrs", "ms", "miss", "mx", "mister", "prof",
    "professor", "sir", "dame", "rev",
})
_STANDALONE = "*"
_POSSESSIVE_OK = "'s"
# Clinical only with a clinical word right after it: eponyms that are also
# common first names, surnames or big cities ("Thomas splint", but "Thomas
# came in to test"; "Rochester criteria", but "from Rochester for staging").
_NEXT_WORD_ONLY = "!"
# Operations named after a surgeon are also written as a noun: "had a
# Whipple", "s/p Hartmann", "post Kasai", "after Whipple". After an article
# or a word that says an operation was done, such an eponym is the
# operation, not a person (no one writes "a Smith" for a person in a note).
_OPERATION = "op"
_MARKS = (_STANDALONE, _POSSESSIVE_OK, _NEXT_WORD_ONLY, _OPERATION)
_OPERATION_CUES = frozenset({
    "a", "an", "the", "p", "post", "underwent", "undergo", "undergoing",
    "undergone", "previous", "prior", "lap", "laparoscopic", "open",
    "bidirectional", "after", "following",
})
# A diagnosis is named after these: "hx Graves", "h/o Crohn", "history of
# Cushing" (no one writes "hx Smith" for a person).
_HISTORY_CUES = frozenset({"hx", "pmh", "pmhx", "dx", "h/o", "history of"})
_CUE_GAP = re.compile(r"[ \t]{1,3}|[ \t]*:[ \t]*")
# How far a clinical word may stand after the eponym ("Glasgow coma scale").
_WORDS_AFTER = 3
_WORDS_BEFORE = 2
# Words that end an eponym's reach after it: in "from Boston with Murphy's
# sign" the sign is Murphy's, and Boston is a place.
_CLAUSE_WORDS = frozenset({
    "with", "from", "to", "for", "and", "or", "at", "in", "on", "by", "who",
    "was", "is", "has", "had", "but", "w",
})
_WORD = re.compile(r"[^\W_]+")
_APOSTROPHES = "'\u2019"
# What may stand between two words of one eponym or its clinical words (an
# arrow too: a graft's ``LIMA->LAD``).
_JOINER = re.compile(r"[ \t\-'\u2019.>]{0,3}")
_HYPHEN = re.compile("-")
# A version or grade between an eponym and its clinical word: "Rome III
# criteria", "Rome 4 criteria", "Gleason 7 cancer".
_VERSION = re.compile(r"(?:[ivx]{1,4}|\d{1,2})")
# An eponym and its spelling with "Saint" for "St": "Saint John's wort".
_ALIASES = {"st": "saint"}


@dataclass(frozen=True, slots=True)
class Eponym:
    """One allowlisted term: its words (lower case) and what makes it clinical."""

    words: tuple[str, ...]
    standalone: bool
    possessive: bool
    clinical_words: frozenset[str]
    next_word_only: bool = False
    operation: bool = False


class Allowlist(dict[str, list[Eponym]]):
    """First word -> eponyms starting with it (longest first), and all words.

    ``words``: every word of an eponym or of its clinical words; a span that
    holds none lies in no eponym's region.
    """

    words: frozenset[str] = frozenset()


def _parse(lines: Iterable[str]) -> Allowlist:
    """The allowlist of a file's lines."""
    index = Allowlist()
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        term, _, context = line.partition("\t")
        words = tuple(w.lower() for w in _WORD.findall(term))
        marks = context.split()
        eponym = Eponym(
            words,
            standalone=_STANDALONE in marks,
            possessive=_POSSESSIVE_OK in marks,
            clinical_words=CLINICAL_WORDS | {m.lower() for m in marks
                                             if m not in _MARKS},
            next_word_only=_NEXT_WORD_ONLY in marks,
            operation=_OPERATION in marks,
        )
        index.setdefault(words[0], []).append(eponym)
        if words[0] in _ALIASES:
            alias = replace(eponym, words=(_ALIASES[words[0]], *words[1:]))
            index.setdefault(alias.words[0], []).append(alias)
    for entries in index.values():
        entries.sort(key=lambda e: -len(e.words))
    index.words = frozenset(w for entries in index.values() for e in entries
                            for w in (*e.words, *e.clinical_words))
    return index


_LOCK = threading.Lock()
_CACHE: dict[str, Allowlist] = {}


def load(path: str = DATA_FILE) -> Allowlist:
    """The allowlist at ``path``, read once per process."""
    cached = _CACHE.get(path)
    if cached is None:
        with _LOCK, open(path, encoding="utf-8") as fh:
            cached = _CACHE.setdefault(path, _parse(fh))
    return cached


def _after_title(words: _Words, i: int) -> bool:
    """Word ``i`` follows a person title, or one and an initial (``Dr. J Smith``)."""
    k = i - 1
    if k > 0 and len(words.bare[k]) == 1 and words.bare[k - 1] in PERSON_TITLES:
        return True
    return k >= 0 and words.bare[k] in PERSON_TITLES


class _Words:
    """Lower-cased words of a text with offsets; a possessive ``s`` is folded in."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[tuple[int, int]] = []
        self.possessive: list[bool] = []
        for m in _WORD.finditer(text):
            start, end = m.span()
            if (m[0] in ("s", "S") and self.spans and start >= 1
                    and text[start - 1] in _APOSTROPHES
                    and self.spans[-1][1] == start - 1):
                self.spans[-1] = (self.spans[-1][0], end)
                self.possessive[-1] = True
                continue
            self.spans.append((start, end))
            self.possessive.append(text[end:end + 1] in _APOSTROPHES)
        self.lower = [text[a:b].lower() for a, b in self.spans]
        self.bare = [w[:-2] if p and len(w) > 2 and w[-2] in _APOSTROPHES else w
                     for w, p in zip(self.lower, self.possessive)]

    def joined(self, i: int) -> bool:
        return _JOINER.fullmatch(self.text[self.spans[i - 1][1]:self.spans[i][0]]) \
            is not None


# A text is read for eponyms in parts of about this many characters, cut after
# a line end: the words of a part and their offsets take some 40 bytes per
# byte of text (1.4 GB for a 35 MB document held at once).
PART_CHARS = 100_000


def eponym_regions(text: str, allowlist: Allowlist | None = None,
                   part_chars: int = PART_CHARS) -> list[tuple[int, int]]:
    """``(start, end)`` of each eponym in its clinical context, with that context.

    The same regions as one pass over the text: no region crosses a line end
    (its words must be joined by blanks or hyphens), and each part starts
    with the word before it, so a title there (``Dr.`` then a line end)
    still makes the eponym a person.
    """
    index = load() if allowlist is None else allowlist
    regions = []
    start = 0
    while start < len(text):
        cut = text.find("\n", start + part_chars)
        end = len(text) if cut < 0 else cut + 1
        lo = start
        for word in _WORD.finditer(text, max(0, start - 1_000), start):
            lo = word.start()
        regions.extend((a + lo, b + lo) for a, b in _regions(text[lo:end], index)
                       if a + lo >= start)
        start = end
    return regions


def _regions(text: str, index: Allowlist) -> list[tuple[int, int]]:
    words = _Words(text)
    n = len(words.bare)
    # word index -> (the eponym there, the word after it, its region or None)
    found: dict[int, tuple[Eponym, int, tuple[int, int] | None]] = {}
    for i, first in enumerate(words.bare):
        for eponym in index.get(first, ()):
            end = i + len(eponym.words)
            if end > n or tuple(words.bare[i:end]) != eponym.words:
                continue
            if not all(words.joined(k) for k in range(i + 1, end)):
                continue
            found[i] = (eponym, end, _in_context(words, i, end, eponym))
            break
    for i in sorted(found, reverse=True):
        eponym, end, region = found[i]
        if region is None:
            found[i] = (eponym, end, _coordinated(words, i, end, eponym, found))
    regions = [region for _e, _end, region in found.values() if region is not None]
    return sorted({*regions, *_compound_regions(words, found),
                   *_place_method_regions(words), *_named_disease_regions(words),
                   *_institution_voice_regions(words), *_article_eponym_regions(words),
                   *_named_sign_regions(words), *_graft_regions(words)})


# Words that, right after a place, make it the name of a method, a guide or
# a germ rather than where someone is: "Hartford nomogram", "the Denver
# protocol", "Memphis criteria", "Sanford guide", "Ross River virus". A patient's
# town is not followed by these (a fever or a disease after a place may be
# where a patient caught it: "back from Haiti fever x3d", so those are not here).
METHOD_WORDS = frozenset("""
protocol protocols nomogram nomograms criteria criterion rule rules guide
guideline guidelines classification dosing regimen formula equation virus
encephalitis
""".split())
_PLACE_FLAGS = ("city", "uscity", "town", "state", "country")
# What a place's protocol may be named after besides the place: a clinic
# (not a hospital nor any other facility word, drug or diagnosis word though
# it be: "per Calvert Hospital protocol" names the patient's).
_INSTITUTION_WORDS = frozenset({"clinic"})
# Up to this many drug or diagnosis words may stand between the place and the
# method word ("Hartford insulin protocol").
_CLINICAL_BETWEEN = 2


def _place_method_regions(words: _Words) -> list[tuple[int, int]]:
    """A place of one or two words, then a method word: a named method.

    Found from the place lexicons, not a list: no list holds every city a
    protocol, nomogram or virus is named after. Read back from each method
    word, so a note without one costs no lexicon look-up. Not after a person
    title (``Dr. Denver protocol``).
    """
    bare = words.bare
    methods = [m for m, w in enumerate(bare) if w in METHOD_WORDS]
    if not methods:
        return []
    lex = lexicons.load()

    def place(k: int) -> bool:
        return any(f.startswith(_PLACE_FLAGS) for f in lex.flags(bare[k]))

    regions = []
    for m in methods:
        k = m - 1
        while (k >= 0 and m - 1 - k < _CLINICAL_BETWEEN and words.joined(k + 1)
               and bare[k] not in FACILITY_WORDS
               and lexicons.is_clinical_word(lex.flags(bare[k]))):
            k -= 1  # "Hartford insulin protocol"
        if k > 0 and bare[k] in _INSTITUTION_WORDS and words.joined(k + 1):
            k -= 1  # "Cleveland Clinic protocol"
        if k < 0 or not words.joined(k + 1) or not place(k):
            continue
        if k > 0 and words.joined(k) and place(k - 1):
            k -= 1  # "Ross River", "Rift Valley"
        if _after_title(words, k):
            continue
        regions.append((words.spans[k][0], words.spans[m][1]))
    return regions


# Present-tense verbs that, after "the <name> Clinic", quote the clinic as an
# authority (``does the Cleveland Clinic use tPA``, ``the Mayo Clinic
# defines``): a guideline's author, not where a patient was, which a note
# tells in the past (``Mayo Clinic recommended surgery``, ``seen at Mayo
# Clinic``).
_AUTHORITY_VERBS = frozenset("""
define defines recommend recommends suggest suggests use uses say says advise
advises endorse endorses
""".split())
# The longest institution name before its clinic word, in words.
_INSTITUTION_NAME_WORDS = 2


def _institution_voice_regions(words: _Words) -> list[tuple[int, int]]:
    """``the`` and a name of one or two words, ``Clinic``, then an authority verb.

    The name's region runs from the name to the clinic word; neither a
    facility word (``the Calvert Hospital Clinic says``) nor a past tense
    (``the Mayo Clinic recommended``) makes one.
    """
    bare = words.bare
    regions = []
    for m, word in enumerate(bare):
        if m < 2 or word not in _INSTITUTION_WORDS or m + 1 >= len(bare) \
                or bare[m + 1] not in _AUTHORITY_VERBS or not words.joined(m + 1):
            continue
        for a in range(m - 1, max(m - 1 - _INSTITUTION_NAME_WORDS, 0), -1):
            if not words.joined(a + 1) or not bare[a].isalpha() \
                    or bare[a] in FACILITY_WORDS:
                break
            if bare[a - 1] == "the" and words.joined(a):
                regions.append((words.spans[a][0], words.spans[m][1]))
                break
    return regions


# Words that, right after a name, make it the name of a disease: no one's
# name stands right before them in a note. Not "test", "sign", "score":
# "son Bill test results", "wife Ann sign consent".
DISEASE_WORDS = frozenset("""
syndrome syndromes disease diseases palsy anomaly phenomenon sarcoma lymphoma
thyroiditis encephalopathy dystrophy ataxia neuralgia arteritis granulomatosis
fracture fractures
""".split())


# Words that, right after a name, make it the name of a scoring tool, a
# reflex or a manoeuvre (``Ballard score``, ``Galant reflex``, ``Lund and
# Browder chart``): a note writes a person's name before none of them. Still
# not "test", "sign" or "type", which follow a relative's name in notes.
TOOL_WORDS = frozenset("""
score scores scoring scale scales reflex reflexes maneuver maneuvers manoeuvre
classification chart bodies rings
""".split())
_NAMED_WORDS = DISEASE_WORDS | TOOL_WORDS


def _named_disease_regions(words: _Words) -> list[tuple[int, int]]:
    """A name right before a disease or tool word, listed or not.

    The eponym list cannot hold every syndrome, score or reflex named after a
    person, and a name written right before ``syndrome``, ``disease``,
    ``score`` or ``reflex`` is the syndrome's (``Williams syndrome``,
    ``Perez reflex``); two names joined by ``and`` share the word (``Lund
    and Browder chart``). Not after a person title or a kin word (``Dr.
    Hunter``, ``wife Ann``).
    """
    bare = words.bare
    regions = []
    for m, word in enumerate(bare):
        if m == 0 or word not in _NAMED_WORDS or not words.joined(m):
            continue
        k = m - 1
        if not _named_word(bare[k]):
            continue
        if k > 1 and bare[k - 1] in _COORDINATORS and _named_word(bare[k - 2]) \
                and words.joined(k) and words.joined(k - 1):
            k -= 2  # "Lund and Browder chart"
        if _after_title(words, k) or (k > 0 and bare[k - 1] in _kin_words()):
            continue
        regions.append((words.spans[k][0], words.spans[m][1]))
    return regions


# "Sign" and "test" follow a relative's name as verbs ("wife Ann sign consent",
# "son Bill test results", "Hernandez test positive for flu"); as an
# eponym's noun they end the phrase or stand before a coordinator, and a sign
# also before a finding or a diagnosis word (``Schwartz sign otosclerosis``).
_SIGN_WORDS = frozenset({"sign", "signs", "test", "tests"})
_AFTER_TEST = frozenset({"and", "or", "vs", "versus"})
_AFTER_SIGN = _AFTER_TEST | {
    "positive", "negative", "pos", "neg", "present", "absent", "of"}
# Diagnosis words that are also what a person signs or is tested for.
_SIGNED_THINGS = frozenset({
    "result", "results", "form", "forms", "consent", "consents", "order",
    "orders", "note", "notes", "sheet", "paperwork",
})
# Words before a name that make "sign"/"test" its verb or the name a
# patient's: "can Ann sign?", "pt Okafor test positive".
_VERB_CUES = frozenset({
    "can", "could", "will", "would", "should", "may", "might", "must", "did",
    "does", "do", "to", "let", "have", "had", "has", "please", "pls", "need",
    "needs", "wants", "want", "pt", "pts", "patient",
})
_SENTENCE_ENDS = re.compile(r"\s*(?:[?!.,;:)]|$)")


# A graft from a mammary artery to a coronary one (``LIMA to LAD``, ``RIMA-RCA``):
# the city is never followed by "to" and a coronary artery.
_GRAFT_SOURCES = frozenset({"lima", "rima"})
_GRAFT_TARGETS = frozenset({"lad", "rca", "om", "om1", "om2", "om3", "pda", "d1",
                            "d2", "diag", "ramus", "plv", "lcx", "cx"})


def _graft_regions(words: _Words) -> list[tuple[int, int]]:
    """A mammary artery grafted to a coronary artery, ``to`` between or not."""
    bare, n = words.bare, len(words.bare)
    regions = []
    for i, word in enumerate(bare):
        if word not in _GRAFT_SOURCES or _after_title(words, i):
            continue
        k = i + 1
        if k < n - 1 and words.joined(k) and bare[k] == "to":
            k += 1
        if k < n and words.joined(k) and bare[k] in _GRAFT_TARGETS:
            regions.append((words.spans[i][0], words.spans[k][1]))
    return regions


def _named_sign_regions(words: _Words) -> list[tuple[int, int]]:
    """A name right before ``sign`` or ``test`` used as a noun: ``Westermark sign``.

    A noun when the text or clause ends or a coordinator follows, or after a
    sign a finding or a diagnosis word; not after a title, a kin word, a verb
    cue or ``pt``, nor on one of the commonest first names (``Bill``, ``Ann``,
    ``Robert``).
    """
    bare, n = words.bare, len(words.bare)
    lex = None
    regions = []
    for m, word in enumerate(bare):
        if m == 0 or word not in _SIGN_WORDS or not words.joined(m):
            continue
        k = m - 1
        if not _named_word(bare[k]) or _after_title(words, k) or (k > 0 and (
                bare[k - 1] in _kin_words() or bare[k - 1] in _VERB_CUES)):
            continue
        end = words.spans[m][1]
        if not _SENTENCE_ENDS.match(words.text, end):
            nxt = bare[m + 1] if m + 1 < n else ""
            if word.startswith("test"):
                if nxt not in _AFTER_TEST:
                    continue
            elif nxt not in _AFTER_SIGN:
                lex = lex or lexicons.load()
                if nxt in _SIGNED_THINGS \
                        or not lexicons.is_clinical_word(lex.flags(nxt)):
                    continue
        if _first_name(bare[k]):
            continue
        regions.append((words.spans[k][0], end))
    return regions


def _named_word(word: str) -> bool:
    """A word of three or more letters: how any name is written."""
    return len(word) >= 3 and word.isalpha()


# After an article, a name before one of these words is the thing's eponym:
# no note writes "a Smith" or "the Jones" for a person right before a sign, a
# lesion or a device ("a Cameron lesion", "the Somogyi effect", "the
# Blom-Singer valve"). Not "cath", "procedure" or "surgery": "the Calvert
# cath lab" is a hospital's.
ARTICLE_EPONYM_WORDS = frozenset("""
sign signs test score scale criteria classification staging stage grade index
rule maneuver manoeuvre reflex phenomenon effect triad pentad lesion lesions
ulcer node nodes body bodies ring rings cells spots fold folds striae papules
nodules pattern syndrome disease fracture deformity dehiscence placenta valve
button bar jacket filter balloon brace splint collar harness shunt formula
equation nomogram model level point triangle
""".split())
_ARTICLES = frozenset({"a", "an", "the"})
# The longest name between the article and its word, in words ("a Denis
# Browne bar").
_ARTICLE_NAME_WORDS = 2


def _article_eponym_regions(words: _Words) -> list[tuple[int, int]]:
    """An article, a name of one or two words, then an eponym's word.

    Read back from each such word; the name's words are letters, three or
    more, joined by blanks or hyphens (``a Dennie-Morgan fold``). A capital
    ``A`` after a title is an initial (``Dr. A Smith test``): no region.
    """
    bare = words.bare
    regions = []
    for m, word in enumerate(bare):
        if m < 2 or word not in ARTICLE_EPONYM_WORDS or not words.joined(m):
            continue
        names = 0
        k = m - 1
        while k > 0 and words.joined(k + 1) and _named_word(bare[k]):
            if bare[k - 1] in _ARTICLES and words.joined(k):
                if not _after_title(words, k - 1):
                    regions.append((words.spans[k][0], words.spans[m][1]))
                break
            if words.text[words.spans[k - 1][1]:words.spans[k][0]] != "-":
                names += 1
                if names >= _ARTICLE_NAME_WORDS:
                    break
            k -= 1
    return regions


@lru_cache(maxsize=1)
def _kin_words() -> frozenset[str]:
    from deid_pipeline.tagger.rules.detector import default_config

    return frozenset(w.lower() for w in default_config()["names"]["relations"])


# After a compound of names, also an eponym's word after an article ("Blom-Singer
# valve") and these: "Jarisch-Herxheimer reaction", "Essex-Lopresti injury"
# (after one name "injury" may be where it happened: "ottawa ankle injury").
_COMPOUND_WORDS = CLINICAL_WORDS | ARTICLE_EPONYM_WORDS | {
    "reaction", "reactions", "injury", "injuries"}


def _compound_regions(words: _Words, found: dict) -> list[tuple[int, int]]:
    """Hyphenated names right before a clinical word, listed or not.

    ``Harris-Benedict equation``, ``Sokolow-Lyon criteria``,
    ``Lown-Ganong-Levine syndrome``: two or more capitalised names joined by
    hyphens, then (after a version at most) a clinical word. No list holds
    them all, no one is called by such a compound and a clinical word, and
    the CRF took their parts for names or dates. After a person title or a
    kin word the compound is a person (``Dr. Smith-Jones test``, ``wife
    Ann-Marie sign`` stay tagged).

    Typed in lower case (``silverman-anderson score``) the compound must start
    with no common first name (``ann-marie sign consent`` stays tagged) and
    its word be no ``sign``, ``test`` or ``type``, which follow a relative.
    """
    regions = []
    n, text, i = len(words.bare), words.text, 0
    for candidate in _hyphened_to_next(words):
        if candidate < i:
            continue  # inside the compound before
        i = candidate
        if i >= n - 2:
            break
        lower = _is_lower_name(text, words.spans[i])
        end = i + 1
        while end < n and _hyphenated_name(words, end, lower):
            end += 1
        if end - i < 2 or i in found \
                or not (lower or _is_name(text, words.spans[i])) \
                or (lower and _first_name(words.bare[i])) \
                or _after_title(words, i) \
                or (i > 0 and words.bare[i - 1] in _kin_words()):
            i = end
            continue
        k = end
        if k < n - 1 and words.joined(k) and _VERSION.fullmatch(words.bare[k]):
            k += 1
        if k < n and words.joined(k) and words.bare[k] in _COMPOUND_WORDS \
                and not (lower and words.bare[k] in _PERSON_ACT_WORDS):
            regions.append((words.spans[i][0], words.spans[k][1]))
        i = end
    return regions


def _hyphened_to_next(words: _Words) -> list[int]:
    """The words followed by one hyphen and then the next word, in order.

    Only there can a compound start: every other word was a step of one in
    the walk over the whole text (a fifth of the eponym check, issue 45).
    """
    text = words.text
    if "-" not in text:
        return []
    after = {start: k for k, (start, _end) in enumerate(words.spans)}
    ends = {end for _start, end in words.spans}
    return sorted(after[m.start() + 1] - 1 for m in _HYPHEN.finditer(text)
                  if m.start() in ends and m.start() + 1 in after)


# Clinical words that also follow what a relative does or has: "son Bill test
# results", "wife Ann sign consent", "Ann-Marie type of question".
_PERSON_ACT_WORDS = frozenset({"sign", "signs", "test", "tests", "testing", "type"})
# A lexicon band of the commonest first names (Mary, Ann, Jean, Billy).
_COMMON_FIRST_NAME = "fn1"


def _first_name(word: str) -> bool:
    """``word`` is one of the commonest first names (``ann``, ``mary``)."""
    return _COMMON_FIRST_NAME in lexicons.load().flags(word)


def _is_name(text: str, span: tuple[int, int]) -> bool:
    """A capitalised word of letters, three or more: how a surname is written."""
    word = text[span[0]:span[1]]
    return len(word) >= 3 and word.isalpha() and word[0].isupper() \
        and word[1:].islower()


def _is_lower_name(text: str, span: tuple[int, int]) -> bool:
    """A lower-case word of letters, three or more: a surname as queries type it."""
    word = text[span[0]:span[1]]
    return len(word) >= 3 and word.isalpha() and word.islower()


def _hyphenated_name(words: _Words, k: int, lower: bool = False) -> bool:
    """Word ``k`` is a name joined by one hyphen to the word before it.

    ``lower``: the name is typed in lower case, as the compound's first was.
    """
    (_a, prev_end), (start, _b) = words.spans[k - 1], words.spans[k]
    is_name = _is_lower_name if lower else _is_name
    return words.text[prev_end:start] == "-" and is_name(words.text, words.spans[k])


# "Cullen and Grey Turner signs", "Phalen or Tinel test": one clinical word
# for both eponyms.
_COORDINATORS = frozenset({"and", "or"})


def _coordinated(words: _Words, i: int, end: int, eponym: Eponym,
                 found: dict[int, tuple[Eponym, int, tuple[int, int] | None]]
                 ) -> tuple[int, int] | None:
    """The region of an eponym joined by and/or to the next one's clinical words.

    Not for eponyms that are common names or big cities (``!``: "to Ottawa
    and Grey Turner sign noted"), after a person title, nor when the next
    eponym is clinical by itself alone (``Cullen and Swan-Ganz placed``).
    """
    if eponym.next_word_only or _after_title(words, i):
        return None
    if end + 1 >= len(words.bare) or words.bare[end] not in _COORDINATORS \
            or not (words.joined(end) and words.joined(end + 1)):
        return None
    _next, next_end, region = found.get(end + 1, (None, 0, None))
    if region is None or region[1] <= words.spans[next_end - 1][1]:
        return None
    return words.spans[i][0], region[1]


def _in_context(words: _Words, i: int, end: int, eponym: Eponym
                ) -> tuple[int, int] | None:
    """The eponym's region if its context is clinical and no title precedes it."""
    if _after_title(words, i):
        return None
    start, stop = words.spans[i][0], words.spans[end - 1][1]
    if eponym.operation and i > 0 and words.joined(i) \
            and words.bare[i - 1] in _OPERATION_CUES:
        return start, stop  # "a Whipple", "s/p Hartmann"
    if not eponym.next_word_only and _after_history_cue(words, i):
        return start, stop  # "hx Graves s/p RAI"
    after = end
    if after < len(words.bare) - 1 and words.joined(after) \
            and _VERSION.fullmatch(words.bare[after]):
        after += 1  # "Rome III criteria"
    if eponym.next_word_only and not (
            after < len(words.bare) and words.joined(after)
            and words.bare[after] in eponym.clinical_words):
        return None
    clinical = (eponym.next_word_only or eponym.standalone
                or eponym.possessive and words.possessive[end - 1])
    for k in range(end, min(end + _WORDS_AFTER, len(words.bare))):
        if not words.joined(k) or words.bare[k] in _CLAUSE_WORDS:
            break
        if words.bare[k] in eponym.clinical_words:
            clinical, stop = True, words.spans[k][1]
        # Otherwise the version ("Rome III criteria") or a word before a later
        # clinical word ("Denver Developmental Screening Test"): the reach
        # ends at the last clinical word ("ottawa ankle injury" keeps injury).
    for k in range(i - 1, max(i - 1 - _WORDS_BEFORE, -1), -1):
        if not words.joined(k + 1):
            break
        if words.bare[k] in eponym.clinical_words:
            clinical, start = True, words.spans[k][0]
    return (start, stop) if clinical else None


def _after_history_cue(words: _Words, i: int) -> bool:
    """Whether ``hx``, ``h/o`` or ``history of`` stands right before word ``i``."""
    if i == 0 or not _CUE_GAP.fullmatch(
            words.text[words.spans[i - 1][1]:words.spans[i][0]]):
        return False
    if words.bare[i - 1] in _HISTORY_CUES:
        return True
    if i == 1:
        return False
    between = words.text[words.spans[i - 2][1]:words.spans[i - 1][0]]
    space = " " if between.strip(" \t") == "" else between
    return f"{words.bare[i - 2]}{space}{words.bare[i - 1]}" in _HISTORY_CUES


# A word that starts a region found by shape: a text with none of them and no
# eponym's word or hyphen in a span has no region to read.
METHOD_OR_DISEASE_WORDS = frozenset(METHOD_WORDS | _NAMED_WORDS | _INSTITUTION_WORDS
                                     | ARTICLE_EPONYM_WORDS | _SIGN_WORDS)
